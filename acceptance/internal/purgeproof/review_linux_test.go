package purgeproof

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/purge"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// A crypto erase that leaves the cells' data (not the fill) fails, read
// back as a sample or whole: each 4 KiB block read as it was before is
// counted, however the read-back's chunks fall, and one block rewritten
// does not hide the rest of its MiB.
func TestProveCryptoEraseLeavesCellData(t *testing.T) {
	testenv.MustHaveLoop(t)
	done := fixture(t, "sanitize-log-v2.3-completed.json")
	sampling := Sampling{Edge: MiB, Extent: 64 << 10, Share: Share}
	for _, c := range []struct{ name, mode, erase string }{
		{"sample, nothing erased", Sample, "true"},
		{"full, nothing erased", Full, "true"},
		{"full, only the edges rewritten", Full, "dd if=/dev/urandom of=$DEV bs=1M count=1 oflag=direct conv=notrunc 2>/dev/null; dd if=/dev/urandom of=$DEV bs=1M count=1 seek=63 oflag=direct conv=notrunc 2>/dev/null"},
		{"sample, one 4 KiB block a MiB rewritten", Sample, `i=0; while [ $i -lt 64 ]; do dd if=/dev/urandom of=$DEV bs=4k count=1 seek=$((i*256)) oflag=direct conv=notrunc 2>/dev/null; i=$((i+1)); done`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dev := testenv.Loop(t, loopSize)
			if out, err := exec.Command("dd", "if=/dev/urandom", "of="+dev, "bs=1M", "count=64", "oflag=direct").CombinedOutput(); err != nil {
				t.Fatalf("%v %s", err, out)
			}
			cli := standIn(t, `DEV=`+dev+`; case "$1" in sanitize) `+c.erase+`;; sanitize-log) cat `+done+`;; *) exit 1;; esac`)
			s := purge.Step{Kind: purge.SanitizeNVM, Device: dev, SanAct: purge.SanActCryptoErase, Targets: []string{dev}}
			in := Input{Mode: c.mode, Targets: []Target{{Path: dev, Size: loopSize, Sector: 512}}, Steps: []purge.Step{s},
				Runner: purge.Runner{NVMe: cli, Poll: 1}, Fills: Fills{fillID}, Sampling: sampling}
			r := Prove(context.Background(), in, t.Logf)[0]
			if r.Verdict != Fail || !strings.Contains(r.Message, "what they held before the purge") {
				t.Errorf("a crypto erase that left the data: %s: %s", r.Verdict, r.Message)
			}
		})
	}
}

// A drive that held none of the fill before the purge (never filled, or
// purged already) shows no erase: inconclusive, not a pass.
func TestProveNothingToErase(t *testing.T) {
	testenv.MustHaveLoop(t)
	dev := testenv.Loop(t, loopSize)
	cli := standIn(t, `[ "$1" = format ] && exit 0; exit 1`)
	r := proveOne(t, dev, purge.Step{Kind: purge.FormatNVM, Device: dev}, cli)
	if r.Verdict != Inconclusive || !strings.Contains(r.Message, "held none of the run's fill before the purge, so the erase is not shown") {
		t.Errorf("a format on a drive holding none of the fill: %s: %s, want inconclusive", r.Verdict, r.Message)
	}
}

// A sanitize still in progress (the interrupted run's own, at its end) is
// waited for, not sent again (the controller refuses one then), and the
// drive is read back after it.
func TestProveSanitizeInProgress(t *testing.T) {
	dev := filledLoop(t)
	inprog := fixture(t, "sanitize-log-v2.8-in-progress.json")
	done := fixture(t, "sanitize-log-v2.3-completed.json")
	n := filepath.Join(t.TempDir(), "reads")
	// The log says in progress twice, then completed; the erase (a
	// discard) happens when the sanitize ends.
	cli := standIn(t, `DEV=`+dev+`; N=`+n+`
case "$1" in
sanitize) echo "NVMe status: Sanitize In Progress" >&2; exit 1;;
sanitize-log) echo x >>$N; if [ $(wc -l <$N) -le 2 ]; then cat `+inprog+`; else blkdiscard $DEV; cat `+done+`; fi;;
*) exit 1;; esac`)
	r := proveOne(t, dev, purge.Step{Kind: purge.SanitizeNVM, Device: dev, SanAct: purge.SanActBlockErase}, cli)
	if r.Verdict != Pass || r.Sectors != sectors {
		t.Errorf("a sanitize in progress: %s: %s, want a pass read after it", r.Verdict, r.Message)
	}
}

// Two namespaces of one subsystem are formatted one after the other, as
// purge.Runner.Run sends them, never at once: the stand-in for nvme-cli
// holds a lock for the second its format takes, and notes a format sent
// while another holds it.
func TestProveOneSubsystemAtATime(t *testing.T) {
	testenv.MustHaveLoop(t)
	dir := t.TempDir()
	lock, overlap := filepath.Join(dir, "lock"), filepath.Join(dir, "overlap")
	cli := standIn(t, `[ "$1" = format ] || exit 1
mkdir `+lock+` 2>/dev/null || echo "$2" >>`+overlap+`
sleep 1; rmdir `+lock+` 2>/dev/null; exit 0`)
	var in Input
	for _, dev := range []string{testenv.Loop(t, loopSize), testenv.Loop(t, loopSize)} {
		in.Targets = append(in.Targets, Target{Path: dev, Size: loopSize, Sector: 512, DLFEAT: 1})
		in.Steps = append(in.Steps, purge.Step{Kind: purge.FormatNVM, Device: dev, Controller: "/dev/nvme9", Subsystem: "nqn.2014-08.org.example:one", Targets: []string{dev}})
	}
	in.Mode, in.Runner, in.Fills = Sample, purge.Runner{NVMe: cli, Poll: 1}, Fills{fillID}
	for _, r := range Prove(context.Background(), in, t.Logf) {
		if r.Command == "" || strings.Contains(r.Message, "failed") {
			t.Errorf("%s: %s: %s", r.Drive, r.Verdict, r.Message)
		}
	}
	if b, err := os.ReadFile(overlap); err == nil {
		t.Errorf("a format of %s was sent while another of the same subsystem ran", strings.TrimSpace(string(b)))
	}
}
