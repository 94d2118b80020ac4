package nvmevm

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/qemu"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
	"github.com/google/go-cmp/cmp"
)

// Resumes that must not write the drive behind a recorded name, in the
// interrupted boot: each a real run of the suite on one 16 MiB drive,
// killed as it starts measuring its cell (the drive filled and read back),
// then -resume.
//
//	two SCSI disks      scsi-hd on virtio-scsi, each its own serial= and
//	                    wwn=; hot-swapped (QMP device_del, device_add)
//	                    after the kill, so that each takes the other's
//	                    kernel name and device number
//	two NVMe drives     one serial= on two controllers (each its own NVM
//	                    subsystem, so that Linux takes both), their
//	                    namespaces without NGUID, EUI-64 or UUID
//
// Before drives were known by what they report, both resumes wrote a
// drive the run had not recorded: the SCSI disk, which reported nothing
// the suite read, was matched by its path and device number within the
// boot, and the NVMe drive by the serial and namespace ID its twin
// reports too.

const (
	serialTwin = "DQTWIN001"

	serialSCSIA = "DQSCSIA01"
	wwnSCSIA    = "0x5000c500dd0000a1"
	serialSCSIB = "DQSCSIB01"
	wwnSCSIB    = "0x5000c500dd0000b1"

	// identityBytes is each of those drives' size: the 16MiB capacity of
	// testdata/identity.toml.
	identityBytes = 16 << 20
	cellW16       = "TestSingleDrive/16MiB/128KB_Sequential_Write"

	// nullUUID turns QEMU's namespace UUID off: QEMU 7.2 draws a random
	// one unless given one, and does not report the null UUID (its
	// eui64-default is off since 7.1, and it has no nguid).
	nullUUID = "00000000-0000-0000-0000-000000000000"
)

// scsiDisk is one of the two SCSI disks: its QEMU device, the block node
// of its image (a -blockdev, which outlives the device, so that the disk
// can be added again after a device_del), and what it reports.
type scsiDisk struct {
	id, node, serial, wwn string
	target                int // SCSI target ID on the virtio-scsi bus
}

var scsiDisks = [2]scsiDisk{
	{id: "dqscsia", node: "dqscsia-img", serial: serialSCSIA, wwn: wwnSCSIA, target: 0},
	{id: "dqscsib", node: "dqscsib-img", serial: serialSCSIB, wwn: wwnSCSIB, target: 1},
}

// scsiBus is the virtio-scsi controller's SCSI bus.
const scsiBus = "dqscsi.0"

// withIdentityDrives adds the two SCSI disks (their images created under
// images) and the two NVMe drives of one serial to m, and returns the NVMe
// drives' namespaces, which the caller passes with its own to
// withNamespaces.
func withIdentityDrives(m qemu.Machine, images string) (qemu.Machine, []sizedNamespace) {
	m.Extra = append(m.Extra, "-device", "virtio-scsi-pci,id=dqscsi")
	for _, d := range scsiDisks {
		img := filepath.Join(images, d.id+".raw")
		if err := os.WriteFile(img, nil, 0o644); err != nil {
			panic(err)
		}
		if err := os.Truncate(img, identityBytes); err != nil {
			panic(err)
		}
		m.Extra = append(m.Extra,
			"-blockdev", "driver=raw,node-name="+d.node+",discard=unmap,file.driver=file,file.filename="+img,
			"-device", fmt.Sprintf("scsi-hd,id=%s,bus=%s,scsi-id=%d,lun=0,drive=%s,serial=%s,wwn=%s", d.id, scsiBus, d.target, d.node, d.serial, d.wwn))
	}
	var ns []sizedNamespace
	for _, x := range []string{"a", "b"} {
		// One subsystem each: two controllers of one serial and no
		// subsystem would share QEMU's NQN, nqn.2019-08.org.qemu:SERIAL,
		// and Linux takes only the first of a subsystem that does not
		// say it has more than one controller.
		m.Subsystems = append(m.Subsystems, qemu.Subsystem{ID: "twin" + x, NQN: "drivequal-twin-" + x})
		m.Controllers = append(m.Controllers, qemu.Controller{ID: "twinctl" + x, Serial: serialTwin, Subsys: "twin" + x})
		ns = append(ns, sizedNamespace{qemu.Namespace{Controller: "twinctl" + x, NSID: 1, Image: filepath.Join(images, "twin-"+x+".raw"), UUID: nullUUID}, identityBytes})
	}
	return m, ns
}

// identityArgs is the command line of a run on drives (comma-separated).
func identityArgs(t *testing.T, drives string) []string {
	return []string{"-spec=" + specFile(t, "identity.toml"), "-drives=" + drives, "-destructive"}
}

// killedRun runs the suite on drive with its report under a new
// directory, and kills it as it starts measuring its cell, once the
// drive was filled and the fill read back: what a resume would trust.
// It returns the run, after waiting for its fio to end.
func killedRun(t *testing.T, drive string) runAt {
	t.Helper()
	dir, err := os.MkdirTemp("", "identity-")
	if err != nil {
		t.Fatal(err)
	}
	r := suiteAt(t, filepath.Join(dir, "report"), func(_, stdout string) bool {
		return strings.Contains(stdout, "measuring "+cellW16+" ")
	}, identityArgs(t, drive)...)
	if !r.killed {
		t.Fatalf("the run on %s ended (exit %d) before it measured %s\n%s", drive, r.Code, cellW16, r.output())
	}
	noFio(t)
	return r
}

// noFio waits until no fio is left in the guest: a killed suite's fio, in
// a process group of its own, runs on to the end of its runtime, writing.
func noFio(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		busy := ""
		comms, _ := filepath.Glob("/proc/[0-9]*/comm")
		for _, c := range comms {
			if b, err := os.ReadFile(c); err == nil && strings.TrimSpace(string(b)) == "fio" {
				busy = filepath.Dir(c)
			}
		}
		if busy == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("fio (%s) still runs 30 s after the suite was killed", busy)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// treeSums is the sha256 of every file under dir, by its path in dir.
func treeSums(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = testenv.SHA256(t, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// refusedResume checks that a -resume was refused before it touched a
// drive: non-zero exit, no step of a plan started, no fio run, the
// recording's files as they were (before: treeSums of raw), and its
// output holding each of want.
func refusedResume(t *testing.T, r runAt, raw string, before map[string]string, want ...string) {
	t.Helper()
	if r.Code == 0 || r.killed {
		t.Errorf("-resume: exit %d (killed %v), want a refusal\n%s", r.Code, r.killed, r.output())
	}
	for _, l := range strings.Split(r.Stdout, "\n") {
		if stepLine.MatchString(l) || strings.Contains(l, "measuring ") {
			t.Errorf("the refused -resume started: %s", l)
		}
	}
	mustContain(t, r.output(), want...)
	if diff := cmp.Diff(before, treeSums(t, raw)); diff != "" {
		t.Errorf("the recording %s changed (-before +after):\n%s", raw, diff)
	}
}

// scsiPath is the kernel path of the SCSI disk that reports wwn (its
// device/wwid, "naa." and the WWN in hex), "" when there is none.
func scsiPath(wwn string) string {
	want := "naa." + strings.TrimPrefix(wwn, "0x")
	names, _ := filepath.Glob("/sys/block/sd*")
	for _, n := range names {
		if b, err := os.ReadFile(filepath.Join(n, "device", "wwid")); err == nil && strings.HasPrefix(strings.TrimSpace(string(b)), want) {
			return "/dev/" + filepath.Base(n)
		}
	}
	return ""
}

// waitUntil polls ok every 50 ms until it holds, failing t after within.
func waitUntil(t *testing.T, within time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s", what, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// settle waits for udev to have handled the kernel's events.
func settle() { exec.Command("udevadm", "settle", "--timeout=30").Run() }

// swapDisks pulls both SCSI disks (QMP device_del) and inserts them again
// (device_add) each in the other's slot, in the order that gives each the
// other's kernel name: the kernel names a new disk sdX with the lowest
// letter free, and a device number to match. It returns the kernel paths
// of disks 0 and 1 after the swap.
func swapDisks(t *testing.T, before [2]string) [2]string {
	t.Helper()
	for _, d := range scsiDisks {
		if _, err := hostQMP("device_del", map[string]any{"id": d.id}); err != nil {
			t.Fatalf("QMP device_del %s: %v", d.id, err)
		}
	}
	waitUntil(t, 30*time.Second, "the pulled SCSI disks "+before[0]+" and "+before[1]+" gone from /sys/block", func() bool {
		_, errA := os.Stat("/sys/block/" + filepath.Base(before[0]))
		_, errB := os.Stat("/sys/block/" + filepath.Base(before[1]))
		return os.IsNotExist(errA) && os.IsNotExist(errB)
	})
	settle()
	// The disk that is to take the lower name goes in first.
	order := []int{1, 0}
	if before[1] < before[0] {
		order = []int{0, 1}
	}
	for _, i := range order {
		d, slot := scsiDisks[i], scsiDisks[1-i].target
		wwn, err := strconv.ParseUint(strings.TrimPrefix(d.wwn, "0x"), 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		args := map[string]any{"driver": "scsi-hd", "id": d.id, "bus": scsiBus, "scsi-id": slot, "lun": 0, "drive": d.node, "serial": d.serial, "wwn": wwn}
		// QEMU lets go of the image's node once the pulled device is
		// gone from its main loop: a permission conflict until then.
		for try := 0; ; try++ {
			_, err = hostQMP("device_add", args)
			if err == nil || try == 20 || !strings.Contains(err.Error(), "Permission conflict") {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("QMP device_add %s: %v", d.id, err)
		}
		waitUntil(t, 30*time.Second, "SCSI disk "+d.serial+" back in /sys/block", func() bool { return scsiPath(d.wwn) != "" })
		settle()
	}
	after := [2]string{scsiPath(scsiDisks[0].wwn), scsiPath(scsiDisks[1].wwn)}
	if after[0] != before[1] || after[1] != before[0] {
		t.Fatalf("after the swap %s is %s and %s is %s; before it they were %s and %s: the kernel did not give each the other's name",
			serialSCSIA, after[0], serialSCSIB, after[1], before[0], before[1])
	}
	for _, p := range after {
		waitUntil(t, 10*time.Second, p+" in /dev", func() bool { _, err := os.Stat(p); return err == nil })
	}
	return after
}

// TestGuestDisksSwappedRefused: a run on SCSI disk A (16 MiB, scsi-hd
// with serial= and wwn=) is killed as it starts its cell, A filled and
// read back; then A and B, a disk of the same model and size, are pulled
// and inserted again each in the other's slot, in the order that gives B
// A's kernel name and device number (sda, 8:0, say) and A B's. -resume
// given A's recorded name is refused before anything starts, naming the
// path, the disk found there (B's serial and WWN) and the one recorded
// (A's); both disks and the recording hash as before. -resume given A's
// new name then continues the run on A, QUALIFIED, and B is still
// unchanged.
func TestGuestDisksSwappedRefused(t *testing.T) {
	guest(t)
	needModules(t, "sd_mod", "virtio_scsi")
	start := time.Now()
	var was [2]string
	for i, d := range scsiDisks {
		if was[i] = scsiPath(d.wwn); was[i] == "" {
			names, _ := filepath.Glob("/sys/block/*")
			t.Fatalf("no SCSI disk reports WWN %s (serial %s) among %v", d.wwn, d.serial, names)
		}
	}
	a, b := was[0], was[1]
	scribble(t, b)
	r := killedRun(t, a)
	rep, raw := r.rep, filepath.Join(r.rep, "raw")
	killedAt := time.Since(start)

	now := swapDisks(t, was)
	t.Logf("the run on %s (%s) killed after %s; after the swap %s is %s, %s is %s (%s)",
		a, serialSCSIA, killedAt.Round(100*time.Millisecond), serialSCSIA, now[0], serialSCSIB, now[1], time.Since(start).Round(100*time.Millisecond))
	disks := []string{now[1], now[0]} // B at A's old name, A at B's
	before, rec := hashes(t, disks...), treeSums(t, raw)

	refused := suiteAt(t, rep, nil, append(identityArgs(t, a), "-resume")...)
	refusedResume(t, refused, raw, rec,
		a+" is not the drive the interrupted run in "+raw+" measured at "+a+": it is ",
		"WWN naa."+strings.TrimPrefix(wwnSCSIB, "0x")+" serial "+serialSCSIB+",",
		"; the run measured ", "WWN naa."+strings.TrimPrefix(wwnSCSIA, "0x")+" serial "+serialSCSIA+",", " there (drive 1)")
	unchanged(t, before, disks...)

	// A, found at its new name: the same run goes on, on A alone.
	ok := suiteAt(t, rep, nil, append(identityArgs(t, now[0]), "-resume")...)
	if ok.Code != 0 {
		t.Errorf("-resume with %s, the recorded disk's name after the swap: exit %d, want 0\n%s", now[0], ok.Code, ok.output())
	}
	mustContain(t, ok.Stdout, "drivequal: resuming the run recorded in "+raw,
		"drivequal: drives matched by identity: drive 1 (recorded at "+a+") is "+now[0], "drivequal: QUALIFIED")
	verdictIs(t, ok.results(t), cellW16, report.Pass, "measured on the recorded disk at its new name")
	unchanged(t, before[:1], now[1])
	t.Logf("whole scenario: %s", time.Since(start).Round(100*time.Millisecond))
}

// TestGuestSameSerialRefused: two NVMe drives report one serial, their
// namespaces the same ID and no NGUID, EUI-64 or UUID (nvme-cli reads
// what the controller reports, whatever the kernel keeps of it). A run on
// drive A is killed as it starts its cell; -resume given A is refused
// naming A and B, which is not given but reports everything A does: the
// run could have been on either. Given both, it is refused naming both
// too. Neither drive, nor the recording, changes.
func TestGuestSameSerialRefused(t *testing.T) {
	guest(t)
	start := time.Now()
	cs := controllers(t, serialTwin)
	if len(cs) != 2 {
		t.Fatalf("serial %s: controllers %v, want 2", serialTwin, cs)
	}
	a, b := mustNamespace(t, cs[0], 1), mustNamespace(t, cs[1], 1)
	for _, dev := range []string{a, b} {
		noNamespaceIDs(t, dev)
	}
	scribble(t, b)
	r := killedRun(t, a)
	rep, raw := r.rep, filepath.Join(r.rep, "raw")
	before, rec := hashes(t, a, b), treeSums(t, raw)

	alone := suiteAt(t, rep, nil, append(identityArgs(t, a), "-resume")...)
	same := "serial " + serialTwin + " namespace 1"
	refusedResume(t, alone, raw, rec,
		a+" and "+b+" (on this machine, not given) both report the serial and namespace of drive 1 of the interrupted run in "+raw+" ("+same+") and nothing that tells them apart")
	// Given both: the kernel gives the two namespaces one wwid (vendor,
	// serial, model and namespace ID, for want of an ID), on which the
	// safety checks refuse them before the drives are matched.
	both := suiteAt(t, rep, nil, append(identityArgs(t, a+","+b), "-resume")...)
	refusedResume(t, both, raw, rec, "drivequal: refusing to run", a, b)
	unchanged(t, before, a, b)
	t.Logf("whole scenario: %s", time.Since(start).Round(100*time.Millisecond))
}

// noNamespaceIDs fails t unless namespace dev reports no NGUID, EUI-64 or
// UUID, as nvme-cli reads them from the controller: Identify Namespace's
// NGUID and EUI-64 fields zero, and no such descriptor in its
// Namespace Identification Descriptor list.
func noNamespaceIDs(t *testing.T, dev string) {
	t.Helper()
	out, err := exec.Command("nvme", "id-ns", dev, "-o", "json").Output()
	var ns struct{ NGUID, EUI64 string }
	if err == nil {
		err = json.Unmarshal(out, &ns)
	}
	if err != nil || strings.Trim(ns.NGUID, "0") != "" || strings.Trim(ns.EUI64, "0") != "" {
		t.Fatalf("nvme id-ns %s: NGUID %q, EUI-64 %q (%v), want both zero", dev, ns.NGUID, ns.EUI64, err)
	}
	out, err = exec.Command("nvme", "ns-descs", dev, "-o", "json").Output()
	var descs map[string]any
	if err == nil {
		err = json.Unmarshal(out, &descs)
	}
	if err != nil {
		t.Fatalf("nvme ns-descs %s: %v\n%s", dev, err, out)
	}
	for _, k := range []string{"nguid", "eui64", "uuid"} {
		if v, ok := descs[k]; ok {
			t.Fatalf("nvme ns-descs %s reports a %s (%v), want none", dev, k, v)
		}
	}
}
