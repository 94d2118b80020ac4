package powertest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/powerloss/hostcut"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

// TestHealth's allowance of new OCP incomplete shutdowns after the
// cycles: one a cut each drive saw for a drive without the promise of
// power-loss protection (two drives cut twice each: 2 a drive; with the
// whole host cut, once a cycle for both drives, each saw the host's 2
// cuts), and none for a drive that promises it: its protection must
// complete every shutdown.
func TestIncompleteShutdownAllowance(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	var drives []Drive
	for _, name := range []string{"nvme0n1", "nvme1n1"} {
		drives = append(drives, ns(name, "nvme0"))
		for k := 1; k <= 2; k++ {
			rel := fmt.Sprintf("powerloss/%s/cycle_%d.json", name, k)
			if err := os.MkdirAll(filepath.Join(dir, "powerloss", name), 0o755); err != nil {
				t.Fatal(err)
			}
			c := fmt.Sprintf(`{"drive": "/dev/%s", "cycle": %d, "acknowledged": 10}`, name, k)
			if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
			files[rel] = "listed"
		}
	}
	for _, tt := range []struct {
		name      string
		plp, host bool
		want      uint64
	}{
		{"no plp, drive cuts", false, false, 1 + 2},
		{"no plp, host cuts", false, true, 1 + 2},
		{"plp, drive cuts", true, false, 1},
		{"plp, host cuts", true, true, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			health := specs.Health{OCP: specs.OCPHealth{IncompleteShutdownsMaxIncrease: 1}}
			pt := &Test{Cfg: &cmdline.Config{PowerCutHost: tt.host}, Dir: dir, Files: files, Health: &health, Drives: drives,
				Spec: &specs.PowerLoss{Cycles: 2, PLP: tt.plp}, Add: func([]report.HealthCheck) {}}
			if _, why := pt.Run(context.Background(), t.Logf); why != "" {
				t.Fatal(why)
			}
			if got := health.OCP.IncompleteShutdownsMaxIncrease; got != tt.want {
				t.Errorf("incomplete shutdowns allowed = %d, want %d", got, tt.want)
			}
		})
	}
}

// The C0 log's PLP start count is evidence of a cut only for a drive
// that reports a PLP capacitor and the count itself.
func TestPLPCounted(t *testing.T) {
	all := nvme.Uint128{Hi: ^uint64(0), Lo: ^uint64(0)}
	for _, tt := range []struct {
		name string
		c0   nvme.OCPSmart
		want bool
	}{
		{"capacitor and count", nvme.OCPSmart{CapacitorHealth: 100, PLPStartCount: nvme.Uint128{Lo: 287}}, true},
		{"no capacitor", nvme.OCPSmart{CapacitorHealth: 0xffff, PLPStartCount: nvme.Uint128{Lo: 0}}, false},
		{"count not reported", nvme.OCPSmart{CapacitorHealth: 100, PLPStartCount: all}, false},
		{"count past 64 bits", nvme.OCPSmart{CapacitorHealth: 100, PLPStartCount: nvme.Uint128{Hi: 1}}, false},
	} {
		if got := plpCounted(tt.c0); got != tt.want {
			t.Errorf("%s: plpCounted = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// With the whole host's power cut, every drive is written before each
// cut: the dry run says the host is cut once a cycle, whatever the
// number of drives, and the estimate does not grow with them.
func TestHostPrint(t *testing.T) {
	one := cmdTest(t, "ipmitool chassis power off", "", nvmeNone(t), ns("nvme0n1", "nvme0"))
	one.Cfg.PowerCutHost = true
	two := cmdTest(t, "ipmitool chassis power off", "", nvmeNone(t), ns("nvme0n1", "nvme0"), ns("nvme1n1", "nvme1"))
	two.Cfg.PowerCutHost = true
	var b bytes.Buffer
	two.Print(&b)
	for _, want := range []string{
		"the whole host's power is cut 3 time(s), every drive written before each cut (2 drive(s), their writes at once): ipmitool chassis power off",
		"run the same command line with -resume to judge every drive's cycle",
		"the cut must start within 5s of each drive's last write (measured), else its cycle is not judged",
		"/dev/nvme0n1: data at risk: the first 1024 MiB",
		"/dev/nvme1n1: data at risk: the first 1024 MiB",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("Print = %s\nwant %q in it", b.String(), want)
		}
	}
	if strings.Contains(b.String(), "time(s) (") || strings.Contains(b.String(), "one drive written a cut") {
		t.Errorf("Print = %s\nwant one cut a cycle", b.String())
	}
	// 3 cycles: 5 s of writes, up to a minute to return, 1 GiB read
	// twice (6 s each): 3 × 77 s expected; at most 3 × 202 s, with the
	// cut command (up to a minute, and 5 s for its output) and a minute
	// for the host to go down.
	if got, want := two.Estimate(), 3*77*time.Second; got != want || one.Estimate() != want {
		t.Errorf("Estimate = %s (one drive %s), want %s for one or two drives", got, one.Estimate(), want)
	}
	if got, want := two.Bound(), 3*202*time.Second; got != want || one.Bound() != want {
		t.Errorf("Bound = %s (one drive %s), want %s for one or two drives", got, one.Bound(), want)
	}
}

// The host's cut runs once for every drive: with several drives, a
// command that names one drive is refused, before anything runs; with
// one drive, or naming none, it is not.
func TestHostCommandNamesNoDrive(t *testing.T) {
	for _, tt := range []struct {
		cut    string
		drives []Drive
		want   []string
	}{
		{"ipmitool chassis power off", []Drive{ns("nvme0n1", "nvme0"), ns("nvme1n1", "nvme1")}, nil},
		{"pdu off {slot}", []Drive{ns("nvme0n1", "nvme0")}, nil},
		{"pdu off {slot}; echo $DQ_NAME", []Drive{ns("nvme0n1", "nvme0"), ns("nvme1n1", "nvme1")}, []string{
			"parsing -power-cut: with -power-cut-host it runs once a cycle to cut the host's power under all 2 drives, so it cannot use a drive's slot ({slot})",
			"cannot use a drive's name ({name})"}},
	} {
		pt := cmdTest(t, tt.cut, "", nvmeNone(t), tt.drives...)
		pt.Cfg.PowerCutHost = true
		errs := pt.hostCommand()
		if len(errs) != len(tt.want) {
			t.Errorf("%s on %d drive(s): hostCommand = %v, want %d", tt.cut, len(tt.drives), errs, len(tt.want))
			continue
		}
		for i, w := range tt.want {
			if !strings.Contains(errs[i].Error(), w) {
				t.Errorf("%s: hostCommand[%d] = %v, want %q", tt.cut, i, errs[i], w)
			}
		}
	}
}

// The bound the dry run prints of a cut of each drive is an upper bound: with the
// defaults (cut_after 5 s, ready_within 60 s, 16 GiB) a cycle waits for
// fio's first writes (35 s), cut_after (5 s), the cut command (60 s, and
// 5 s for its output), fio's end after it (100 s: twice cut_after,
// ready_within and 30 s, longer than what is left of fio's runtime) and
// its stop (10 s after SIGINT, 10 s after SIGKILL), the restore command
// (65 s), the drive (60 s) and a killed fio's exit once the drive is back
// (10 s), and reads 16 GiB twice (82 s each at 200 MiB/s): 524 s a cycle
// and drive.
func TestEstimateBound(t *testing.T) {
	pt := cmdTest(t, "true", "true", nvmeNone(t), ns("nvme0n1", "nvme0"), ns("nvme1n1", "nvme1"))
	pt.Spec = &specs.PowerLoss{Cycles: 1, ReadyWithin: specs.DefaultPowerLossReadyWithin, CutAfter: specs.DefaultPowerLossCutAfter,
		Size: specs.DefaultPowerLossSize, BS: specs.DefaultPowerLossBS, FlushEvery: specs.DefaultPowerLossFlushEvery}
	if got, want := pt.Bound(), 2*524*time.Second; got != want {
		t.Errorf("Bound = %s, want %s (two drives, one cycle each)", got, want)
	}
}

// PendingHost: a drive whose run.json-listed cycle the host's cut left
// pending, after a judged one, may be absent from the resume; one whose
// cycles are all judged, whose pending cycle is not listed (planted), or
// whose folder run.json gives as a path out of powerloss/ may not.
func TestPendingHost(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	write := func(folder string, k int, body string, listed bool) {
		t.Helper()
		rel := fmt.Sprintf("powerloss/%s/cycle_%d.json", folder, k)
		if err := os.MkdirAll(filepath.Join(dir, "powerloss", folder), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if listed {
			files[rel] = "listed"
		}
	}
	pending := fmt.Sprintf(`{"drive": "/dev/nvme%%dn1", "cycle": 2, "not_run": %q}`, hostcut.Pending)
	judged := `{"drive": "/dev/nvme%dn1", "cycle": 1, "acknowledged": 10}`
	write("nvme0n1", 1, fmt.Sprintf(judged, 0), true)
	write("nvme0n1", 2, fmt.Sprintf(pending, 0), true)
	write("nvme1n1", 1, fmt.Sprintf(judged, 1), true)
	write("nvme2n1", 1, fmt.Sprintf(judged, 2), true)
	write("nvme2n1", 2, fmt.Sprintf(pending, 2), false)
	samples := &record.Samples{}
	for i, folder := range []string{"nvme0n1", "nvme1n1", "nvme2n1", "../powerloss/nvme0n1"} {
		samples.Drives = append(samples.Drives, record.DriveSample{PowerLoss: folder, PowerLossPaths: []string{fmt.Sprintf("/dev/nvme%dn1", i%3)}})
	}
	for i, want := range []bool{true, false, false, false, false} {
		if got := PendingHost(dir, files, samples, i); got != want {
			t.Errorf("drive %d: PendingHost = %v, want %v", i, got, want)
		}
	}
	if PendingHost(dir, files, nil, 0) {
		t.Error("no samples: PendingHost = true, want false")
	}
}
