package longstep

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/e2e/suiterun"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

const spec = `# One 3-minute sequential read on a 64 MiB loop device: the long step of
# TestLongStepShowsProgress. Not a drive's published figures.
model  = "Loop device (long step)"
source = "drivequal test data"

[method]
runtime = "3m"

[precondition]
purge          = "discard"
fill_passes    = 1

[[workload]]
name    = "128KB Sequential Read"
rw      = "read"
bs      = "128k"
iodepth = 1
numjobs = 1
metric  = "MBps"

[[capacity]]
name  = "64MiB"
bytes = 67108864
[capacity.spec]
"128KB Sequential Read" = 1
`

// progressLine is a progress line of the measurement with both ETAs;
// a line that would be too long names the cell by its workload alone.
var progressLine = regexp.MustCompile(`(?m)^drivequal: \d\d:\d\d:\d\d step \d+ of \d+ \((?:TestSingleDrive/64MiB/)?128KB_Sequential_Read\): \d+m?\d*s elapsed, step ETA [0-9ms]+, run ETA [0-9ms]+; fio now [0-9,]+ IOPS, [0-9,]+ MB/s$`)

func TestLongStepShowsProgress(t *testing.T) {
	testenv.MustHaveLoop(t)
	dev := testenv.Loop(t, 64<<20)
	dir := t.TempDir()
	specFile := filepath.Join(dir, "long.toml")
	if err := os.WriteFile(specFile, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := suiterun.Build(t, dir)
	record := filepath.Join(dir, "record")
	live := suiterun.Run(t, bin, 10*time.Minute, "-spec="+specFile, "-drives="+dev, "-destructive", "-record="+record, "-report="+filepath.Join(dir, "live"))
	lines := progressLine.FindAllString(live, -1)
	// Every 30 s of 3 minutes: 5 or 6; beside the rest of make test one
	// tick was late enough to be skipped.
	if len(lines) < 4 {
		t.Fatalf("%d progress lines of the 3-minute step on the terminal, want at least 4:\n%s", len(lines), live)
	}
	t.Logf("%d progress lines, the first: %s", len(lines), lines[0])
	suiterun.Run(t, bin, 10*time.Minute, "-replay="+record, "-report="+filepath.Join(dir, "replay"))
	want, got := verdicts(t, filepath.Join(dir, "live")), verdicts(t, filepath.Join(dir, "replay"))
	if len(want) == 0 || strings.Join(want, "\n") != strings.Join(got, "\n") {
		t.Errorf("replay verdicts %q, live %q", got, want)
	}
}

func verdicts(t *testing.T, reportDir string) []string {
	t.Helper()
	var out []string
	for _, r := range suiterun.Results(t, reportDir).Results {
		out = append(out, r.Test+" "+r.Verdict)
	}
	return out
}
