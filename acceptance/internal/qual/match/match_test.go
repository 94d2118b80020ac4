package match

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/device/identity"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// d7 is the controller identity of a D7-PS1010 as nvme-cli prints it
// (fixtures/nvme/id-ctrl-solidigm-sbfpf2bu153t.json: its model and
// firmware; the serial there is masked).
func d7(t *testing.T) nvme.Controller {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "fixtures", "nvme", "id-ctrl-solidigm-sbfpf2bu153t.json"))
	require.NoError(t, err)
	c, err := nvme.ParseIDCtrl(data)
	require.NoError(t, err)
	return c
}

// bay is 24 NVMe namespaces of D7-PS1010s as a 24-bay server shows them
// after a boot: namespace 1 of controller nvme<ctrl[i]>, reached at
// /dev/nvme<ctrl[i]>n1 with minor minor[i], and by its by-id link. The
// serials and NGUIDs are invented, one per drive, in the shapes those
// drives report (a 16-character serial, a 128-bit NGUID).
func bay(c nvme.Controller, ctrl, minor []int) []plan.Drive {
	var out []plan.Drive
	for i := range ctrl {
		serial := fmt.Sprintf("PHAX%08dXX15PGN", 4100+i)
		info := device.Info{Path: fmt.Sprintf("/dev/nvme%dn1", ctrl[i]), Name: fmt.Sprintf("nvme%dn1", ctrl[i]),
			Block: true, Major: 259, Minor: uint32(minor[i]), Size: 15_362_991_415_296, LogicalBlockSize: 4096,
			Model: c.Model, Serial: serial, Firmware: c.Firmware, Controller: fmt.Sprintf("nvme%d", ctrl[i]), NSID: 1,
			NGUID: fmt.Sprintf("5cd2e4%010x0100000000000000", 0x4a1b00+i), Subsystem: "nqn.2023-04.com.solidigm:" + serial}
		out = append(out, plan.Drive{Info: info, Capacity: "15.36TB"})
	}
	return out
}

// byID is the drive as given by its /dev/disk/by-id link.
func byID(d plan.Drive) plan.Drive {
	d.Path = "/dev/disk/by-id/nvme-" + strings.ReplaceAll(d.Model, " ", "_") + "_" + d.Serial
	return d
}

// recordOf is run.json's record of drives, in boot bootID.
func recordOf(drives []plan.Drive, bootID string) record.Run {
	r := record.Run{Format: record.Format, BootID: bootID, Identities: Identities(drives)}
	for _, d := range drives {
		r.Drives = append(r.Drives, report.Drive{Path: d.Path, Model: d.Model, Serial: d.Serial, Firmware: d.Firmware, Bytes: d.Size, Capacity: d.Capacity})
		r.Devices = append(r.Devices, DevNumber(d))
	}
	return r
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func errText(errs []error) string {
	var s []string
	for _, e := range errs {
		s = append(s, e.Error())
	}
	return strings.Join(s, "\n")
}

// After a reboot the 24 namespaces came up under other controller
// numbers and minors (they register in the order their controllers
// answer). Given by their new kernel paths in any order, or by their
// by-id links, each is matched to its recorded drive by NGUID, and put
// back in the recorded order; device numbers of another boot are not
// compared.
func TestDrivesAfterReboot(t *testing.T) {
	c := d7(t)
	first := bay(c, seq(24), seq(24))
	prior := recordOf(first, "boot-1")
	rng := rand.New(rand.NewPCG(1, 2))
	ctrl, minor := rng.Perm(24), rng.Perm(24)
	second := bay(c, seq(24), seq(24))
	for i := range second {
		// The same drive i, now nvme<ctrl[i]> at minor[i].
		second[i].Path, second[i].Name = fmt.Sprintf("/dev/nvme%dn1", ctrl[i]), fmt.Sprintf("nvme%dn1", ctrl[i])
		second[i].Controller, second[i].Minor = fmt.Sprintf("nvme%d", ctrl[i]), uint32(minor[i])
	}
	order := rng.Perm(24)
	given := make([]plan.Drive, 24)
	for j, i := range order {
		given[j] = second[i]
	}
	m, errs := Drives(given, prior, "boot-2", "raw", "FIX")
	require.Empty(t, errs, errText(errs))
	require.Len(t, m.Order, 24)
	for i, j := range m.Order {
		assert.Equal(t, first[i].Serial, given[j].Serial, "recorded drive %d", i+1)
	}
	assert.Empty(t, m.Warnings, "device numbers of another boot are not compared")
	assert.Equal(t, make([]bool, 24), m.ByPosition, "every drive matched by its NGUID")
	assert.Equal(t, fmt.Sprintf("drive 1 (recorded at /dev/nvme0n1) is /dev/nvme%dn1", ctrl[0]), m.Lines[0])

	// By-id links, in the recorded order, as a run given them both times.
	linked := make([]plan.Drive, 24)
	for i := range second {
		linked[i] = byID(second[i])
	}
	prior = recordOf(func() []plan.Drive {
		out := make([]plan.Drive, 24)
		for i := range first {
			out[i] = byID(first[i])
		}
		return out
	}(), "boot-1")
	m, errs = Drives(linked, prior, "boot-2", "raw", "FIX")
	require.Empty(t, errs, errText(errs))
	assert.Equal(t, seq(24), m.Order)
	assert.Equal(t, "drive 1 is "+linked[0].Path+", as recorded", m.Lines[0])

	// The same boot: a drive at another number was attached again.
	m, errs = Drives(linked, prior, "boot-1", "raw", "FIX")
	require.Empty(t, errs, errText(errs))
	assert.Len(t, m.Warnings, 24-countSame(first, second))
}

func countSame(a, b []plan.Drive) int {
	n := 0
	for i := range a {
		if DevNumber(a[i]) == DevNumber(b[i]) {
			n++
		}
	}
	return n
}

type refusalTest struct {
	name  string
	edit  func(given []plan.Drive) []plan.Drive
	boot  string
	wants []string
}

var refusalTests = []refusalTest{
	{"another drive in a recorded bay", func(g []plan.Drive) []plan.Drive {
		// The by-id path of bay 3 now leads to a drive of another serial.
		g[2].NGUID, g[2].Serial = "5cd2e4ffffffffff0100000000000000", "PHAX99999999XX15PGN"
		return g
	}, "boot-2", []string{
		"parsing -drives: /dev/nvme2n1 is not the drive the interrupted run in raw measured at /dev/nvme2n1: it is NVMe namespace 1 (NGUID 5cd2e4ffffffffff0100000000000000) of SOLIDIGM SBFPF2BU153T serial PHAX99999999XX15PGN, firmware 6CV10100, 15362991415296 bytes, 4096-byte blocks; the run measured NVMe namespace 1 (NGUID 5cd2e4",
		"these are not given: drive 3, recorded at /dev/nvme2n1: NVMe namespace 1 (NGUID 5cd2e4"}},
	{"another firmware", func(g []plan.Drive) []plan.Drive {
		g[5].Firmware = "6CV10200"
		return g
	}, "boot-2", []string{`parsing -drives: /dev/nvme5n1 is drive 6 of the interrupted run in raw (NVMe namespace 1 (NGUID `, `, but changed since: firmware "6CV10200", was "6CV10100"; FIX`}},
	{"formatted to another LBA format", func(g []plan.Drive) []plan.Drive {
		g[0].LogicalBlockSize, g[0].Size = 512, 15_362_991_415_296
		return g
	}, "boot-2", []string{"logical block size 512 bytes, was 4096 (formatted since); FIX"}},
	{"a drive missing", func(g []plan.Drive) []plan.Drive { return g[:23] }, "boot-2",
		[]string{"parsing -drives: the interrupted run in raw measured 24 drives and these are not given: drive 24, recorded at /dev/nvme23n1: NVMe namespace 1"}},
	{"a drive twice", func(g []plan.Drive) []plan.Drive { return append(g, byID(g[0])) }, "boot-2",
		[]string{"parsing -drives: /dev/nvme0n1 and /dev/disk/by-id/nvme-SOLIDIGM_SBFPF2BU153T_PHAX00004100XX15PGN are the same drive of the interrupted run in raw"}},
	{"another drive at a recorded device number in the same boot", func(g []plan.Drive) []plan.Drive {
		g[7].Path, g[7].NGUID, g[7].Serial = "/dev/disk/by-id/nvme-other", "5cd2e4eeeeeeeeee0100000000000000", "PHAX88888888XX15PGN"
		return g
	}, "boot-1", []string{"parsing -drives: /dev/disk/by-id/nvme-other is not the drive the interrupted run in raw measured at device number 259:7 in this boot (recorded at /dev/nvme7n1)"}},
}

// A drive that is not the recorded one is refused, naming both
// identities; a matched drive that changed is refused saying what.
func TestDrivesRefused(t *testing.T) {
	c := d7(t)
	prior := recordOf(bay(c, seq(24), seq(24)), "boot-1")
	for _, tt := range refusalTests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := Drives(tt.edit(bay(c, seq(24), seq(24))), prior, tt.boot, "raw", "FIX")
			require.NotEmpty(t, errs)
			for _, w := range tt.wants {
				assert.Contains(t, errText(errs), w)
			}
		})
	}
}

// Namespaces without an NGUID are told apart by what they have: an
// EUI-64, a UUID, and else their controller's serial with the namespace
// ID (two namespaces of one controller).
func TestKeys(t *testing.T) {
	ns := func(nsid int, eui, uuid string) device.Info {
		return device.Info{Block: true, Controller: "nvme0", NSID: nsid, Serial: "S1", EUI64: eui, UUID: uuid}
	}
	for _, tt := range []struct {
		info device.Info
		want string
	}{
		{ns(1, "0025388b71b0a01e", ""), "eui64 0025388b71b0a01e"},
		{ns(1, "", "4A1B0CE7-52DA-4A4D-9F44-60B1D87D5B2F"), "uuid 4a1b0ce7-52da-4a4d-9f44-60b1d87d5b2f"},
		{ns(1, "", ""), "serial S1 namespace 1"},
		{ns(2, "", ""), "serial S1 namespace 2"},
		{device.Info{Block: true, Model: "loop", BackingFile: "/img/a.img", File: identity.FileID{Dev: "8:1", Inode: 12}}, "loop inode 12 on device 8:1"},
		{device.Info{Block: true, Model: "loop", BackingFile: "/img/a.img (deleted)"}, ""},
		{device.Info{File: identity.FileID{Dev: "0:45", Inode: 7}}, "file inode 7 on device 0:45"},
		{device.Info{Block: true, Serial: "ZA1", WWID: "naa.5000c500a1b2c3d4"}, "wwid naa.5000c500a1b2c3d4"},
	} {
		if got := tt.info.Identity().Key(); got != tt.want {
			t.Errorf("%+v.Identity().Key() = %q, want %q", tt.info, got, tt.want)
		}
	}
}

// A loop device is its backing file: a blank image attached at the
// recorded loop number is refused, and the filled image at another
// number is the recorded drive.
func TestDrivesLoop(t *testing.T) {
	loop := func(n int, img string, inode uint64) plan.Drive {
		return plan.Drive{Info: device.Info{Path: fmt.Sprintf("/dev/loop%d", n), Block: true, Major: 7, Minor: uint32(n), Size: 64 << 20,
			LogicalBlockSize: 512, Model: "loop", BackingFile: img, File: identity.FileID{Dev: "254:0", Inode: inode}}}
	}
	prior := recordOf([]plan.Drive{loop(0, "/t/a.img", 100), loop(1, "/t/b.img", 101)}, "boot-1")
	_, errs := Drives([]plan.Drive{loop(0, "/t/blank.img", 200), loop(2, "/t/b.img", 101)}, prior, "boot-2", "raw", "FIX")
	require.Len(t, errs, 2, errText(errs))
	assert.Equal(t, "parsing -drives: /dev/loop0 is not the drive the interrupted run in raw measured at /dev/loop0: it is loop device over /t/blank.img (inode 200 on device 254:0), 67108864 bytes, 512-byte blocks; the run measured loop device over /t/a.img (inode 100 on device 254:0), 67108864 bytes, 512-byte blocks there (drive 1); FIX", errs[0].Error())
	m, errs := Drives([]plan.Drive{loop(3, "/t/b.img", 101), loop(2, "/t/a.img", 100)}, prior, "boot-2", "raw", "FIX")
	require.Empty(t, errs, errText(errs))
	assert.Equal(t, []int{1, 0}, m.Order)

	// The kernel's file, its size recorded: a file that grew behind the
	// loop device since is refused as changed.
	sized := func(n int, img string, inode uint64, size int64) plan.Drive {
		d := loop(n, img, inode)
		d.File.Size = size
		return d
	}
	prior = recordOf([]plan.Drive{sized(0, "/t/a.img", 100, 64<<20)}, "boot-1")
	_, errs = Drives([]plan.Drive{sized(0, "/t/a.img", 100, 128<<20)}, prior, "boot-2", "raw", "FIX")
	require.Len(t, errs, 1, errText(errs))
	assert.Contains(t, errs[0].Error(), "but changed since: its file holds 134,217,728 bytes, was 67,108,864; FIX")
}

// Renamed rewrites the paths the recording names its drives by to the
// paths they are given under now, swapped ones included, and leaves the
// fio targets as fio read them.
func TestRenamed(t *testing.T) {
	prior := record.Run{
		Drives: []report.Drive{{Path: "/dev/loop0"}, {Path: "/dev/loop1"}},
		Verify: []record.Verify{{Drives: []record.VerifyDrive{{Path: "/dev/loop0", Target: "/dev/loop0"}, {Path: "/dev/loop1", Target: "/dev/loop1"}}}},
		Steady: []report.Steady{{Drive: "/dev/loop1"}},
	}
	now := []plan.Drive{{Info: device.Info{Path: "/dev/loop1"}}, {Info: device.Info{Path: "/dev/loop0"}}}
	got := Renamed(prior, now)
	assert.Equal(t, []string{"/dev/loop1", "/dev/loop0"}, []string{got.Drives[0].Path, got.Drives[1].Path})
	assert.Equal(t, []record.VerifyDrive{{Path: "/dev/loop1", Target: "/dev/loop0"}, {Path: "/dev/loop0", Target: "/dev/loop1"}}, got.Verify[0].Drives)
	assert.Equal(t, "/dev/loop0", got.Steady[0].Drive)
	assert.Equal(t, "/dev/loop0", prior.Drives[0].Path, "the recording read is left as it was")
	assert.True(t, slices.Equal([]string{"/dev/loop0", "/dev/loop1"}, []string{prior.Verify[0].Drives[0].Path, prior.Verify[0].Drives[1].Path}))
}

// A drive's recorded failure follows the drive, not its old path: after
// a reboot that swapped nvme0n1 and nvme1n1, the failure of the drive now
// at /dev/nvme0n1 names /dev/nvme0n1 (its path, its TestIntegrity name)
// and keeps what was seen as written, saying where the drive was then:
// the neighbour now at /dev/nvme1n1 did not fail.
func TestRenamedFailures(t *testing.T) {
	prior := record.Run{
		Drives: []report.Drive{{Path: "/dev/nvme0n1"}, {Path: "/dev/nvme1n1"}},
		Failures: []record.DriveFailure{{Drive: 1, Path: "/dev/nvme1n1", Cause: report.CauseIntegrity,
			Step:    "the verify pass (TestIntegrity/nvme1n1)",
			Message: "/dev/nvme1n1 returned different data than was written: ...; fio: verify: bad magic header at file /dev/nvme1n1 offset 0"}},
	}
	now := []plan.Drive{{Info: device.Info{Path: "/dev/nvme1n1"}}, {Info: device.Info{Path: "/dev/nvme0n1"}}}
	got := Renamed(prior, now).Failures[0]
	assert.Equal(t, 1, got.Drive)
	assert.Equal(t, "/dev/nvme0n1", got.Path)
	assert.Equal(t, "the verify pass (TestIntegrity/nvme0n1)", got.Step)
	assert.Equal(t, "[recorded at /dev/nvme1n1, this drive's path then] /dev/nvme1n1 returned different data than was written: ...; fio: verify: bad magic header at file /dev/nvme1n1 offset 0", got.Message)
	assert.Equal(t, "/dev/nvme1n1", prior.Failures[0].Path, "the recording read is left as it was")
}

// ext4 and XFS give a deleted file's inode to the next file created: an
// image deleted and made again blank, at the same path, has the recorded
// device and inode. Its inode generation and birth time tell it from the
// filled image, and it is refused; the filled image itself, whose
// generation and birth time are those recorded, resumes.
func TestDrivesRecreatedImage(t *testing.T) {
	loop := func(n int, img string, id identity.FileID) plan.Drive {
		return plan.Drive{Info: device.Info{Path: fmt.Sprintf("/dev/loop%d", n), Block: true, Major: 7, Minor: uint32(n), Size: 64 << 20,
			LogicalBlockSize: 512, Model: "loop", BackingFile: img, File: id}}
	}
	a := identity.FileID{Dev: "254:0", Inode: 100, Generation: 861594370, Born: "2026-12-02T01:00:00.715102707Z"}
	b := identity.FileID{Dev: "254:0", Inode: 101, Generation: 2528355357, Born: "2026-12-02T01:00:01.1Z"}
	prior := recordOf([]plan.Drive{loop(0, "/t/a.img", a), loop(1, "/t/b.img", b)}, "boot-1")
	blank := a
	blank.Generation, blank.Born = 2833078424, "2026-12-02T03:30:00.5Z"
	_, errs := Drives([]plan.Drive{loop(2, "/t/a.img", blank), loop(3, "/t/b.img", b)}, prior, "boot-2", "raw", "FIX")
	require.NotEmpty(t, errs)
	assert.Equal(t, "parsing -drives: /dev/loop2 is not the drive 1 the interrupted run in raw measured: its file has the recorded inode but is another file (inode generation 2833078424, was 861594370; created 2026-12-02T03:30:00.5Z, was 2026-12-02T01:00:00.715102707Z): it was deleted and created again since, and holds none of what the run wrote; FIX", errs[0].Error())

	// Only a birth time (tmpfs keeps no generation) tells it just as well.
	blank.Generation, prior.Identities[0].File.Generation = 0, 0
	_, errs = Drives([]plan.Drive{loop(2, "/t/a.img", blank), loop(3, "/t/b.img", b)}, prior, "boot-2", "raw", "FIX")
	require.NotEmpty(t, errs)
	assert.Contains(t, errs[0].Error(), "(created 2026-12-02T03:30:00.5Z, was 2026-12-02T01:00:00.715102707Z)")

	// A recording without either (a file system that keeps neither, an
	// image deleted once attached) matches by device and inode, but
	// only provisionally: that inode may be another file's now, and the
	// data check must confirm it (Unconfirmed). b, whose generation and
	// birth time both sides know, is confirmed by its identity.
	prior.Identities[0].File.Born = ""
	m, errs := Drives([]plan.Drive{loop(3, "/t/b.img", b), loop(2, "/t/a.img", blank)}, prior, "boot-2", "raw", "FIX")
	require.Empty(t, errs, errText(errs))
	assert.Equal(t, []int{1, 0}, m.Order)
	assert.Equal(t, []bool{false, false}, m.ByPosition, "matched by its file's device and inode, not by position")
	require.Len(t, m.Unconfirmed, 2)
	assert.Equal(t, "is known only by its file's device and inode (inode 100 on device 254:0), which the file system gives the next file created once that file is deleted: neither an inode generation nor a birth time of both the recorded file and this one could be read (a deleted image, a file system that keeps neither), so its identity cannot tell it from a file created since at that inode", m.Unconfirmed[0])
	assert.Empty(t, m.Unconfirmed[1], "its generation and birth time say it is the recorded file")

	// The recorded file, deleted since (its generation and birth time no
	// longer read): the same.
	prior.Identities[0].File.Generation, prior.Identities[0].File.Born = a.Generation, a.Born
	deleted := identity.FileID{Dev: a.Dev, Inode: a.Inode}
	m, errs = Drives([]plan.Drive{loop(2, "/t/a.img (deleted)", deleted), loop(3, "/t/b.img", b)}, prior, "boot-2", "raw", "FIX")
	require.Empty(t, errs, errText(errs))
	assert.Contains(t, m.Unconfirmed[0], "is known only by its file's device and inode")
	assert.Empty(t, m.Unconfirmed[1])
}

// A namespace that reports no NGUID, EUI-64 or UUID and a serial of
// spaces (sysfs shows it trimmed to nothing, as some drives and
// emulators report it) is known only by its path and device number. After
// a reboot those name whichever drive came up there: two such drives
// swapped are refused rather than taken for each other. Within the boot
// that recorded them, the same path at the same device number is the
// same drive.
func TestDrivesWithoutIdentity(t *testing.T) {
	anon := func(n, minor int) plan.Drive {
		return plan.Drive{Info: device.Info{Path: fmt.Sprintf("/dev/nvme%dn1", n), Block: true, Major: 259, Minor: uint32(minor),
			Size: 1_920_383_410_176, LogicalBlockSize: 4096, Model: "NVMe SSD", Controller: fmt.Sprintf("nvme%d", n), NSID: 1}}
	}
	first := []plan.Drive{anon(0, 0), anon(1, 1)}
	prior := recordOf(first, "boot-1")
	require.Equal(t, "", prior.Identities[0].Key(), "nothing tells the drive")

	// After the reboot nvme0n1 is the drive that was nvme1n1: nothing
	// says so, and nothing may be assumed.
	_, errs := Drives([]plan.Drive{anon(0, 0), anon(1, 1)}, prior, "boot-2", "raw", "FIX")
	require.NotEmpty(t, errs, "drives known by path only, after a reboot")
	assert.Contains(t, errText(errs), "parsing -drives: /dev/nvme0n1 reports nothing that tells it from another drive (NVMe namespace 1 (no NGUID, EUI-64 or UUID) of NVMe SSD serial (unknown), firmware (unknown), 1920383410176 bytes, 4096-byte blocks), and the machine has booted since the interrupted run in raw: ")

	// The same boot, the same paths and numbers: matched, but only by
	// position, which the data check must confirm.
	m, errs := Drives([]plan.Drive{anon(1, 1), anon(0, 0)}, prior, "boot-1", "raw", "FIX")
	require.Empty(t, errs, errText(errs))
	assert.Equal(t, []int{1, 0}, m.Order)
	assert.Equal(t, []bool{true, true}, m.ByPosition, "matched by path and device number alone")
	// The same boot, but the path now at another device number.
	moved := anon(0, 5)
	_, errs = Drives([]plan.Drive{moved, anon(1, 1)}, prior, "boot-1", "raw", "FIX")
	require.NotEmpty(t, errs)
}

// qemuNVMe is namespace 1 of a QEMU NVMe controller nvme<n> at minor n,
// reached at /dev/nvme<n>n1: serial as given to QEMU, and an NGUID and
// EUI-64 that sysfs shows as zeros unless set (nguid=, eui64=).
func qemuNVMe(n int, serial, nguid string) plan.Drive {
	if nguid == "" {
		nguid = "00000000-0000-0000-0000-000000000000"
	}
	return plan.Drive{Info: device.Info{Path: fmt.Sprintf("/dev/nvme%dn1", n), Name: fmt.Sprintf("nvme%dn1", n), Block: true, Major: 259, Minor: uint32(n),
		Size: 1 << 30, LogicalBlockSize: 512, Model: "QEMU NVMe Ctrl", Serial: serial, Firmware: "9.2.0", Controller: fmt.Sprintf("nvme%d", n), NSID: 1,
		NGUID: nguid, EUI64: "0000000000000000"}}
}

// An NGUID and EUI-64 of zeros say nothing: a namespace that reports
// only those and a blank serial is anonymous. Within the boot that
// recorded it, at its recorded path and device number, it is matched
// only provisionally (ByPosition, for the data check to confirm); after
// a reboot it is refused. A drive that reports an identifier is never
// matched by position.
func TestDrivesByPosition(t *testing.T) {
	first := []plan.Drive{qemuNVMe(0, "", ""), qemuNVMe(1, "QEMU0001", "")}
	prior := recordOf(first, "boot-1")
	require.True(t, prior.Identities[0].Anonymous(), "zeros and a blank serial")

	m, errs := Drives([]plan.Drive{qemuNVMe(1, "QEMU0001", ""), qemuNVMe(0, "", "")}, prior, "boot-1", "raw", "FIX")
	require.Empty(t, errs, errText(errs))
	assert.Equal(t, []int{1, 0}, m.Order)
	assert.Equal(t, []bool{true, false}, m.ByPosition)
	assert.Equal(t, []string{"reports nothing that tells it from another drive (it was matched by its path and device number alone)", ""}, m.Unconfirmed)

	_, errs = Drives([]plan.Drive{qemuNVMe(0, "", ""), qemuNVMe(1, "QEMU0001", "")}, prior, "boot-2", "raw", "FIX")
	require.Len(t, errs, 2, errText(errs))
	assert.Contains(t, errs[0].Error(), "parsing -drives: /dev/nvme0n1 reports nothing that tells it from another drive (NVMe namespace 1 (no NGUID, EUI-64 or UUID) of QEMU NVMe Ctrl serial (unknown), firmware 9.2.0, 1073741824 bytes, 512-byte blocks), and the machine has booted since the interrupted run in raw")

	// In the same boot, an anonymous drive at another device number is
	// not matched by its path alone.
	_, errs = Drives([]plan.Drive{qemuNVMe(1, "QEMU0001", ""), func() plan.Drive { d := qemuNVMe(0, "", ""); d.Minor = 7; return d }()}, prior, "boot-1", "raw", "FIX")
	require.NotEmpty(t, errs)
	assert.Contains(t, errText(errs), "parsing -drives: /dev/nvme0n1 is not the drive the interrupted run in raw measured at /dev/nvme0n1: it is NVMe namespace 1 (no NGUID, EUI-64 or UUID)")
}

type alikeTest struct {
	name  string
	rec   []plan.Drive
	given []plan.Drive
	boot  string
	want  string
}

var alikeTests = []alikeTest{
	// Two QEMU controllers given the same serial= (and no nguid=): what
	// they report is the same serial and namespace and zeros.
	{"both given, same boot", []plan.Drive{qemuNVMe(0, "QEMU0001", ""), qemuNVMe(1, "QEMU0002", "")},
		[]plan.Drive{qemuNVMe(0, "QEMU0001", ""), qemuNVMe(1, "QEMU0001", "")}, "boot-1",
		"parsing -drives: /dev/nvme0n1 and /dev/nvme1n1 report the same serial and namespace (serial QEMU0001 namespace 1) and nothing that tells them apart"},
	{"both given, after a reboot", []plan.Drive{qemuNVMe(0, "QEMU0001", "")},
		[]plan.Drive{qemuNVMe(0, "QEMU0001", ""), qemuNVMe(1, "QEMU0001", "")}, "boot-2",
		"parsing -drives: /dev/nvme0n1 and /dev/nvme1n1 report the same serial and namespace (serial QEMU0001 namespace 1) and nothing that tells them apart"},
	{"both recorded, after a reboot", []plan.Drive{qemuNVMe(0, "QEMU0001", ""), qemuNVMe(1, "QEMU0001", "")},
		[]plan.Drive{qemuNVMe(1, "QEMU0001", "")}, "boot-2",
		"parsing -drives: the interrupted run in raw recorded drive 1 (at /dev/nvme0n1) and drive 2 (at /dev/nvme1n1) with the same serial and namespace (serial QEMU0001 namespace 1) and nothing that tells them apart"},
	{"both recorded, same boot", []plan.Drive{qemuNVMe(0, "QEMU0001", ""), qemuNVMe(1, "QEMU0001", "")},
		[]plan.Drive{qemuNVMe(1, "QEMU0001", ""), qemuNVMe(0, "QEMU0001", "")}, "boot-1",
		"parsing -drives: the interrupted run in raw recorded drive 1 (at /dev/nvme0n1) and drive 2 (at /dev/nvme1n1) with the same serial and namespace"},
}

// Two drives, both given or both recorded, that share their only key (the
// same serial and namespace ID, no NGUID, EUI-64 or UUID) are refused,
// naming both, in the same boot and after a reboot: which is which
// cannot be told.
func TestDrivesAlike(t *testing.T) {
	for _, tt := range alikeTests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := Drives(tt.given, recordOf(tt.rec, "boot-1"), tt.boot, "raw", "FIX")
			require.NotEmpty(t, errs, "drives nothing tells apart")
			assert.Contains(t, errText(errs), tt.want)
			assert.Contains(t, errText(errs), "FIX")
		})
	}
	// The same serial and namespace with distinct NGUIDs are told apart.
	rec := []plan.Drive{qemuNVMe(0, "QEMU0001", "5cd2e4aa00000001"), qemuNVMe(1, "QEMU0001", "5cd2e4aa00000002")}
	m, errs := Drives([]plan.Drive{qemuNVMe(3, "QEMU0001", "5cd2e4aa00000002"), qemuNVMe(2, "QEMU0001", "5cd2e4aa00000001")}, recordOf(rec, "boot-1"), "boot-2", "raw", "FIX")
	require.Empty(t, errs, errText(errs))
	assert.Equal(t, []int{1, 0}, m.Order)
}

// A drive is matched on every identifier both sides report, and refused
// on any that disagrees, naming both values: a recording that knew a
// namespace by its serial and namespace ID only matches the drive that
// now reports an NGUID too (new firmware); an NGUID that differs is
// another drive.
func TestDrivesChangedIdentifiers(t *testing.T) {
	prior := recordOf([]plan.Drive{qemuNVMe(0, "QEMU0001", "")}, "boot-1")
	m, errs := Drives([]plan.Drive{qemuNVMe(0, "QEMU0001", "5cd2e4aa00000001")}, prior, "boot-2", "raw", "FIX")
	require.Empty(t, errs, errText(errs))
	assert.Equal(t, []int{0}, m.Order)
	assert.Equal(t, []bool{false}, m.ByPosition)

	prior = recordOf([]plan.Drive{qemuNVMe(0, "QEMU0001", "5cd2e4aa00000001")}, "boot-1")
	_, errs = Drives([]plan.Drive{qemuNVMe(0, "QEMU0001", "5cd2e4aa00000002")}, prior, "boot-2", "raw", "FIX")
	require.Len(t, errs, 2, errText(errs))
	assert.Contains(t, errs[0].Error(), "parsing -drives: /dev/nvme0n1 is not the drive the interrupted run in raw measured: it is NVMe namespace 1 (NGUID 5cd2e4aa00000002) of QEMU NVMe Ctrl serial QEMU0001")
	assert.Contains(t, errs[0].Error(), "drive 1 (recorded at /dev/nvme0n1) has the same serial and namespace (serial QEMU0001 namespace 1), but its NGUID is 5cd2e4aa00000002, the recorded drive's 5cd2e4aa00000001")
	assert.Contains(t, errs[0].Error(), "; FIX")
	assert.Contains(t, errs[1].Error(), "these are not given: drive 1, recorded at /dev/nvme0n1")

	// A SATA disk recorded by its unit serial and the kernel's t10 wwid
	// matches it again; another WWN on a SAS disk of the same serial does
	// not.
	sata := func(n int, serial, wwn string) plan.Drive {
		wwid := "t10.ATA     QEMU HARDDISK                           " + serial
		if wwn != "" {
			wwid = wwn
		}
		return plan.Drive{Info: device.Info{Path: fmt.Sprintf("/dev/sd%c", 'a'+n), Block: true, Major: 8, Minor: uint32(16 * n), Size: 1 << 30,
			LogicalBlockSize: 512, Model: "QEMU HARDDISK", Serial: serial, Firmware: "2.5+", WWID: wwid, WWN: wwn}}
	}
	prior = recordOf([]plan.Drive{sata(0, "QM00001", ""), sata(1, "QM00002", "")}, "boot-1")
	m, errs = Drives([]plan.Drive{sata(0, "QM00002", ""), sata(1, "QM00001", "")}, prior, "boot-2", "raw", "FIX")
	require.Empty(t, errs, errText(errs))
	assert.Equal(t, []int{1, 0}, m.Order, "swapped between boots, told by their serials")
	prior = recordOf([]plan.Drive{sata(0, "SCSI0001", "naa.5000c500a1b2c3d4")}, "boot-1")
	_, errs = Drives([]plan.Drive{sata(0, "SCSI0001", "naa.5000c500a1b2c3d5")}, prior, "boot-2", "raw", "FIX")
	require.NotEmpty(t, errs)
	assert.Contains(t, errs[0].Error(), "but its WWN is naa.5000c500a1b2c3d5, the recorded drive's naa.5000c500a1b2c3d4")
}

// A one-drive run recorded on one of two namespaces that report the same
// serial and namespace and nothing unique (QEMU controllers given the
// same serial=, no nguid=) is refused at a resume given the other, which
// is on the machine though not given: nothing tells which the run
// measured. A drive told from every other present drive resumes, and
// the same namespace through another controller (multipath off) is not
// another drive.
func TestDrivesAmongPresent(t *testing.T) {
	a, b := qemuNVMe(0, "QEMU0001", ""), qemuNVMe(1, "QEMU0001", "")
	prior := recordOf([]plan.Drive{a}, "boot-1")
	for _, boot := range []string{"boot-1", "boot-2"} {
		_, errs := DrivesAmong([]plan.Drive{b}, []plan.Drive{a, b}, prior, boot, "raw", "FIX")
		require.Len(t, errs, 1, "%s: %s", boot, errText(errs))
		assert.Contains(t, errs[0].Error(), "parsing -drives: /dev/nvme1n1 and /dev/nvme0n1 (on this machine, not given) both report the serial and namespace of drive 1 of the interrupted run in raw (serial QEMU0001 namespace 1) and nothing that tells them apart", boot)
		assert.Contains(t, errs[0].Error(), "; FIX")
	}
	// Without the other drive present (Drives), the match cannot know.
	m, errs := Drives([]plan.Drive{b}, prior, "boot-2", "raw", "FIX")
	require.Empty(t, errs, errText(errs))
	assert.Equal(t, []int{0}, m.Order)

	other := qemuNVMe(2, "QEMU0002", "")
	m, errs = DrivesAmong([]plan.Drive{a}, []plan.Drive{a, other}, prior, "boot-2", "raw", "FIX")
	require.Empty(t, errs, errText(errs))
	assert.Equal(t, []int{0}, m.Order)

	path := b
	a.Reach, path.Reach = map[string]int{"nvme0n1": 1, "nvme1n1": 1}, map[string]int{"nvme0n1": 1, "nvme1n1": 1}
	_, errs = DrivesAmong([]plan.Drive{a}, []plan.Drive{a, path}, prior, "boot-2", "raw", "FIX")
	require.Empty(t, errs, errText(errs))
	// Both paths given: one drive given twice.
	_, errs = DrivesAmong([]plan.Drive{a, path}, []plan.Drive{a, path}, prior, "boot-2", "raw", "FIX")
	require.Len(t, errs, 1, errText(errs))
	assert.Contains(t, errs[0].Error(), "parsing -drives: /dev/nvme0n1 and /dev/nvme1n1 are the same drive of the interrupted run in raw")
}

// A 24-bay resume after the host's power cut with two drives not back:
// their by-id links (given) are gone. Taken for absent only when both
// have a cycle the cut left pending and two paths are given where
// nothing is; each path at its drive's recorded path pairs with it, the
// rest in order. Otherwise both are refused as not given.
func TestDrivesReturning(t *testing.T) {
	c := d7(t)
	all := bay(c, seq(24), seq(24))
	for i := range all {
		all[i] = byID(all[i])
	}
	prior := recordOf(all, "boot-1")
	var given []plan.Drive
	for i, d := range all {
		if i != 5 && i != 17 {
			given = append(given, d)
		}
	}
	// The paths given in another order than recorded, one renamed.
	paths := []string{"/dev/disk/by-id/renamed", all[5].Path}
	pending := func(i int) bool { return i == 5 || i == 17 }
	m, errs := DrivesReturning(given, nil, Returning{Paths: paths, Pending: pending}, prior, "boot-2", "raw", "FIX")
	require.Empty(t, errs)
	assert.Equal(t, map[int]string{5: all[5].Path, 17: "/dev/disk/by-id/renamed"}, m.Absent)
	assert.Equal(t, -1, m.Order[5])
	assert.Equal(t, -1, m.Order[17])
	assert.Equal(t, 21, m.Order[23], "the others matched by identity: the last given is the last recorded")
	assert.Contains(t, m.Lines[17], "drive 18 (recorded at "+all[17].Path+": ")
	assert.Contains(t, m.Lines[17], "did not come back after the host's power cut: nothing is at /dev/disk/by-id/renamed")

	// Drive 18 is on the machine, not gone: given at a path where
	// nothing is (its by-id link not made yet), it is refused naming
	// where it is; the renamed kernel name of a drive is no path of it.
	moved := all[17]
	moved.Path, moved.Name, moved.Minor = "/dev/nvme30n1", "nvme30n1", 30
	_, errs = DrivesReturning(given, []plan.Drive{moved}, Returning{Paths: paths, Pending: pending}, prior, "boot-2", "raw", "FIX")
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "nothing is at /dev/disk/by-id/renamed, taken for drive 18 of the interrupted run in raw (")
	assert.Contains(t, errs[0].Error(), "but that drive is on this machine at /dev/nvme30n1: give it at that path")

	// Every drive given where nothing is: not the run's host, or before
	// its drives are; each refused as not given.
	var every []string
	for _, d := range all {
		every = append(every, d.Path)
	}
	_, errs = DrivesReturning(nil, nil, Returning{Paths: every, Pending: func(int) bool { return true }}, prior, "boot-2", "raw", "FIX")
	require.NotEmpty(t, errs)
	assert.Contains(t, errText(errs), "measured 24 drives and these are not given: drive 1, recorded at ")

	for name, back := range map[string]Returning{
		"one without a pending cycle": {Paths: paths, Pending: func(i int) bool { return i == 5 }},
		"one path for two drives":     {Paths: paths[:1], Pending: pending},
		"a path given twice":          {Paths: []string{paths[1], paths[1]}, Pending: pending},
		"no paths where nothing is":   {Pending: pending},
	} {
		_, errs := DrivesReturning(given, nil, back, prior, "boot-2", "raw", "FIX")
		require.Len(t, errs, 1, name)
		assert.Contains(t, errs[0].Error(), "these are not given: drive 6, recorded at "+all[5].Path, name)
		assert.Contains(t, errs[0].Error(), "; drive 18, recorded at "+all[17].Path, name)
	}
}
