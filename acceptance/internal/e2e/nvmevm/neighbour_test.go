package nvmevm

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/qual/verdict"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// envPullTries is how many times TestGuestNeighbourPulled pulls a
// neighbour during the fill and during the read-back (default 1; the
// repeated tries run outside make test).
const envPullTries = "DRIVEQUAL_QEMU_PULL_TRIES"

// pullTries is envPullTries, at least 1.
func pullTries() int {
	n, err := strconv.Atoi(os.Getenv(envPullTries))
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// neighbourBps is the bytes per second (reads and writes) QEMU lets
// through to each drive of TestGuestNeighbourPulled: a 16 MiB fill or
// read-back takes about 11 s, so that the neighbour is pulled while the
// survivor is still being written or read, whatever the host's load (at
// 4 MB/s, 4 s, a loaded host's guest once saw fio on both drives too late
// to pull mid-step), and goes before fio has read it whole: the guest's
// kernel removes it 5 s after device_del at the earliest (pciehp's
// attention button), 7 s beside make test; at 2 MB/s, 8 s, fio once read
// the neighbour whole first.
const neighbourBps = 1_500_000

// hotAdd hot-adds an NVMe controller (QMP device_add) whose namespace is
// a fresh mpBytes image, throttled to neighbourBps, and returns its
// namespace's device.
func hotAdd(t *testing.T, id, serial string) string {
	t.Helper()
	img := filepath.Join(os.Getenv(envWork), "images", id+".raw")
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, mpBytes); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		cmd  string
		args map[string]any
	}{
		{"object-add", map[string]any{"qom-type": "throttle-group", "id": "tg-" + id,
			"limits": map[string]any{"bps-total": neighbourBps}}},
		{"blockdev-add", map[string]any{"driver": "throttle", "node-name": id, "throttle-group": "tg-" + id, "discard": "unmap",
			"file": map[string]any{"driver": "raw", "discard": "unmap",
				"file": map[string]any{"driver": "file", "filename": img, "discard": "unmap"}}}},
		{"device_add", map[string]any{"driver": "nvme", "id": id, "serial": serial, "drive": id}},
	}
	for _, s := range steps {
		if _, err := hostQMP(s.cmd, s.args); err != nil {
			t.Fatalf("hot-adding %s: QMP %s: %v", id, s.cmd, err)
		}
	}
	for i := 0; i < 600; i++ {
		for _, c := range ctrlsBySerial(serial) {
			if dev := namespace(c, 1); dev != "" {
				if _, err := os.Stat(dev); err == nil {
					return dev
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the controller hot-added as %s (serial %s) has no namespace after 60 s", id, serial)
	return ""
}

// pullCtrl removes the controller QEMU knows as id (QMP device_del) and
// waits until the guest's controller of serial is gone.
func pullCtrl(id, serial string) error {
	if _, err := hostQMP("device_del", map[string]any{"id": id}); err != nil {
		return err
	}
	for i := 0; i < 600; i++ {
		if len(ctrlsBySerial(serial)) == 0 {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the controller of serial %s is still there 60 s after device_del %s", serial, id)
}

// TestGuestNeighbourPulled: a good drive never fails because its
// neighbour vanished. Of two drives in a 2-drive fill, the neighbour is
// removed (QMP device_del) while both are written; in another run, of
// two drives in a 2-drive read-back, the neighbour is removed while both
// are read. Each time the survivor's read-back passes (every block read
// back as written), it is in no failure of run.json, and the pulled
// drive's cells say it disappeared, its only failure in run.json. Both drives are hot-added, throttled
// to neighbourBps so that the pull lands mid-step; DRIVEQUAL_QEMU_PULL_TRIES
// repeats each pull (a new neighbour each time).
func TestGuestNeighbourPulled(t *testing.T) {
	guest(t)
	survivor := hotAdd(t, "keep", "DQKEEP001")
	tries := pullTries()
	for i := 1; i <= tries; i++ {
		for _, during := range []string{"fill", "readback"} {
			t.Run(fmt.Sprintf("%s_%d", during, i), func(t *testing.T) {
				// A pull that missed the step (fio done with the survivor
				// before the neighbour could go, on a loaded host) proves
				// nothing either way: again with a new neighbour.
				for attempt := range 3 {
					id := fmt.Sprintf("nbr%s%d%c", during[:1], i, 'a'+attempt)
					serial := fmt.Sprintf("DQNBR%s%d%02d", strings.ToUpper(during[:1]), attempt, i)
					if !neighbourPulled(t, survivor, id, serial, during) {
						return
					}
				}
				t.Fatalf("three neighbours in a row could not be pulled during the %s", during)
			})
		}
	}
}

// neighbourPulled runs the suite on survivor and a neighbour hot-added
// as id, and pulls the neighbour once the step named by during ("fill":
// the sequential fill, "readback": the verify pass) has fio on both;
// missed when fio was done with the survivor before the pull (the
// neighbour is then removed after the run, and nothing judged).
func neighbourPulled(t *testing.T, survivor, id, serial, during string) (missed bool) {
	start := time.Now()
	nbr := hotAdd(t, id, serial)
	step := map[string]string{"fill": "sequential fill", "readback": "verify pass"}[during]
	var (
		once     sync.Once
		pulled   = make(chan struct{})
		pullErr  error
		pulledAt time.Time
	)
	pull := func() {
		defer close(pulled)
		for i := 0; i < 300 && !(fioHas(survivor) && fioHas(nbr)); i++ {
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond)
		if !fioHas(survivor) {
			pullErr = errMissed
			return
		}
		pulledAt = time.Now()
		pullErr = pullCtrl(id, serial)
	}
	r, rep := runSuiteWatching(t, nil, func(line, _ string) {
		if stepStart.MatchString(line) && strings.Contains(line, step) {
			once.Do(func() { go pull() })
		}
	}, "-spec="+specFile(t, "pull.toml"), "-drives="+survivor+","+nbr, "-capacity=16MiB", "-scaling=2",
		"-runtime=2s", "-destructive", "-test.run=^(TestScaling|TestIntegrity|TestHealth)$")
	select {
	case <-pulled:
	case <-time.After(3 * time.Minute):
		t.Fatalf("the pull did not finish\n%s", r.output())
	}
	if errors.Is(pullErr, errMissed) {
		t.Logf("fio no longer had %s open 0.3 s into the %s: the neighbour %s was not pulled mid-step", survivor, step, nbr)
		if err := pullCtrl(id, serial); err != nil {
			t.Fatalf("removing the neighbour %s: %v", nbr, err)
		}
		return true
	}
	if pulledAt.IsZero() || pullErr != nil {
		t.Fatalf("pulling %s during the %s: %v\n%s", nbr, step, pullErr, r.output())
	}
	t.Logf("pulled %s %s into the run, during the %s", nbr, pulledAt.Sub(start).Round(100*time.Millisecond), step)
	t.Logf("the run's output:\n%s", r.output())

	s, n := verdict.IntegrityTest(survivor), verdict.IntegrityTest(nbr)
	if during == "readback" && strings.Contains(r.output(), "--- PASS: "+n) {
		// The guest's kernel removes the controller 5 s after QEMU's
		// device_del (pciehp's attention button): fio had read the
		// neighbour back whole, and rightly passed it, before it went.
		t.Logf("fio read %s back whole before it went: the pull missed the read-back", nbr)
		return true
	}
	mustContain(t, r.output(), "--- PASS: "+s, nbr+" disappeared")
	for _, bad := range []string{"--- FAIL: " + s, survivor + " returned", "--- PASS: " + n} {
		if strings.Contains(r.output(), bad) {
			t.Errorf("the output says %q", bad)
		}
	}
	data, err := os.ReadFile(filepath.Join(rep, "raw", "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var run record.Run
	if err := json.Unmarshal(data, &run); err != nil {
		t.Fatal(err)
	}
	for _, f := range run.Failures {
		switch {
		case f.Path == survivor:
			t.Errorf("run.json holds a failure of the survivor %s: %+v", survivor, f)
		case f.Cause != report.CauseDriveChanged:
			// What fio made of the removal (ENOSPC writing, reads of no
			// bytes compared as zeros) is not the pulled drive's media.
			t.Errorf("run.json holds a failure of the pulled %s other than its disappearance: %+v", nbr, f)
		}
	}
	if _, err := os.Stat(nbr); err == nil && len(ctrlsBySerial(serial)) > 0 {
		t.Errorf("%s is still there after the pull", nbr)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s: %v", nbr, err)
	}
	return false
}

// errMissed is a pull that came after fio was done with the survivor.
var errMissed = errors.New("fio was done with the survivor before the pull")
