package nvmevm

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// runSuiteWatching is runSuite with each line the suite prints (stdout
// and stderr) given to watch as it comes, with the path of the log of
// nvme-cli commands; it returns the run's result and report directory.
func runSuiteWatching(t *testing.T, env []string, watch func(line, nvmeLog string), args ...string) (result, string) {
	t.Helper()
	wd, _ := os.Getwd()
	root, err := cmdline.ModuleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "nvme.log")
	rep := filepath.Join(dir, "report")
	all := append([]string{"-test.count=1", "-test.v=true", suiteTimeout, "-report=" + rep}, args...)
	cmd := exec.Command(os.Getenv(envSuite), all...)
	cmd.Dir = filepath.Join(root, "acceptance")
	cmd.Env = append(append(os.Environ(), env...), "DRIVEQUAL_NVME_LOG="+log)
	var stdout, stderr bytes.Buffer
	var wg sync.WaitGroup
	var mu sync.Mutex
	pipe := func(into *bytes.Buffer) io.Writer {
		pr, pw := io.Pipe()
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := bufio.NewScanner(pr)
			sc.Buffer(make([]byte, 1<<20), 16<<20)
			for sc.Scan() {
				mu.Lock()
				into.WriteString(sc.Text() + "\n")
				mu.Unlock()
				watch(sc.Text(), log)
			}
			io.Copy(io.Discard, pr)
		}()
		return pw
	}
	so, se := pipe(&stdout), pipe(&stderr)
	cmd.Stdout, cmd.Stderr = so, se
	start := time.Now()
	err = cmd.Run()
	so.(*io.PipeWriter).Close()
	se.(*io.PipeWriter).Close()
	wg.Wait()
	res := result{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running the suite: %v", err)
	}
	if b, err := os.ReadFile(log); err == nil {
		res.NVMe = strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	t.Logf("suite %s: exit %d in %s", strings.Join(args, " "), res.Code, time.Since(start).Round(100*time.Millisecond))
	return res, rep
}

// lineCount is the number of lines in the file at path (0 when missing).
func lineCount(path string) int {
	b, _ := os.ReadFile(path)
	return bytes.Count(b, []byte("\n"))
}

// TestGuestPulledMidStep: of two drives in the 2-drive scaling step, one
// is removed (QMP device_del of its controller) while fio runs on both.
// That drive's cells FAIL saying it disappeared and when; the other
// drive's figure in the step is still judged; the pulled drive's
// TestHealth FAILs, saying its health log could not be read; the run
// exits NOT QUALIFIED. A controller hot-added after the pull, with a
// namespace of its own (its backing file hashed), gets nothing from the
// run: no nvme-cli command and no write, whatever name the kernel gives
// it.
func TestGuestPulledMidStep(t *testing.T) {
	guest(t)
	start := time.Now()
	devA := mustNamespace(t, controllers(t, serialPullA)[0], 1)
	ctrlB := controllers(t, serialPullB)[0]
	devB := mustNamespace(t, ctrlB, 1)
	// The namespace that appears after the pull is backed by a file of the
	// work directory, which the guest sees: hashed before and after.
	img := filepath.Join(os.Getenv(envWork), "images", "reinserted.raw")
	buf := make([]byte, mpBytes)
	rand.Read(buf)
	if err := os.WriteFile(img, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	before := testenv.MD5(t, img)

	var (
		once     sync.Once
		pulled   = make(chan struct{})
		pullErr  error
		pulledAt time.Time
		logAt    int    // nvme-cli commands sent before the pull
		newDev   string // the hot-added namespace
	)
	pull := func(nvmeLog string) {
		defer close(pulled)
		// fio has both drives open, and has run a second.
		for i := 0; i < 300 && !(fioHas(devA) && fioHas(devB)); i++ {
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(time.Second)
		logAt = lineCount(nvmeLog)
		pulledAt = time.Now()
		if _, pullErr = hostQMP("device_del", map[string]any{"id": pulledID}); pullErr != nil {
			return
		}
		for i := 0; i < 300; i++ {
			if _, err := os.Stat("/sys/class/nvme/" + ctrlB); errors.Is(err, os.ErrNotExist) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		// A drive inserted in its place, backed by the file hashed above.
		if _, pullErr = hostQMP("blockdev-add", map[string]any{"driver": "raw", "node-name": "reinserted",
			"file": map[string]any{"driver": "file", "filename": img}}); pullErr != nil {
			return
		}
		if _, pullErr = hostQMP("device_add", map[string]any{"driver": "nvme", "id": "reinserted", "serial": "DQPULL003", "drive": "reinserted"}); pullErr != nil {
			return
		}
		for i := 0; i < 300 && newDev == ""; i++ {
			for _, c := range ctrlsBySerial("DQPULL003") {
				newDev = namespace(c, 1)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	r, rep := runSuiteWatching(t, nil, func(line, nvmeLog string) {
		if stepStart.MatchString(line) && strings.Contains(line, "TestScaling/2_drives/") {
			once.Do(func() { go pull(nvmeLog) })
		}
	}, "-spec="+specFile(t, "pull.toml"), "-drives="+devA+","+devB, "-capacity=16MiB", "-scaling=2", "-destructive")
	select {
	case <-pulled:
	case <-time.After(3 * time.Minute):
		t.Fatalf("the pull did not finish\n%s", r.output())
	}
	if pullErr != nil {
		t.Fatalf("pulling %s: %v\n%s", devB, pullErr, r.output())
	}
	if pulledAt.IsZero() {
		t.Fatalf("the run never reached TestScaling/2_drives\n%s", r.output())
	}
	t.Logf("pulled %s (controller %s) %s after the run started; %s appeared after", devB, ctrlB, pulledAt.Sub(start).Round(100*time.Millisecond), orNone(newDev))
	if newDev == "" {
		t.Errorf("the controller hot-added after the pull has no namespace")
	}

	if r.Code == 0 {
		t.Errorf("exit 0 with a drive pulled mid-step\n%s", r.output())
	}
	mustContain(t, r.output(), "NOT QUALIFIED",
		devB+" disappeared during TestScaling/2_drives/128KB_Sequential_Write",
		"--- FAIL: TestScaling/2_drives/128KB_Sequential_Write",
		"--- FAIL: TestHealth/"+strings.TrimPrefix(devB, "/dev/"),
		"--- PASS: TestSingleDrive/16MiB/128KB_Sequential_Write",
		"--- FAIL: TestHealth/"+strings.TrimPrefix(devB, "/dev/")+"/health_log",
		devB+": its health log could not be read after the run",
		"--- PASS: TestHealth/"+strings.TrimPrefix(devA, "/dev/")+"/critical_warning")
	t.Logf("the run's output:\n%s", r.output())

	// The other drive's figure in the step is judged.
	var res struct {
		Results []struct {
			Test     string `json:"test"`
			Verdict  string `json:"verdict"`
			Error    string `json:"error"`
			PerDrive []struct {
				Path    string  `json:"path"`
				Actual  float64 `json:"actual"`
				Verdict string  `json:"verdict"`
				Error   string  `json:"error"`
			} `json:"per_drive"`
		} `json:"results"`
	}
	data, err := os.ReadFile(filepath.Join(rep, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Results {
		t.Logf("%s: %s %s", c.Test, c.Verdict, c.Error)
		for _, d := range c.PerDrive {
			t.Logf("  %s: %.1f %s %s", d.Path, d.Actual, d.Verdict, d.Error)
		}
	}

	// Nothing for the drive that appeared after the pull, and nothing
	// the pulled drive's path answered after it (a read that found it gone
	// before the run knew is harmless; one that was answered read another
	// drive).
	for _, c := range r.NVMe[min(logAt, len(r.NVMe)):] {
		switch {
		case newDev != "" && (strings.Contains(c, newDev+" ") || strings.HasSuffix(c, newDev)):
			t.Errorf("sent to %s, which appeared after the pull: %s", newDev, c)
		case strings.Contains(c, devB+" ") && (strings.HasSuffix(c, "-> exit 0") || strings.HasPrefix(c, "format ") || strings.HasPrefix(c, "sanitize ")):
			t.Errorf("sent to the pulled drive's path after the pull, and answered: %s", c)
		}
	}
	if after := testenv.MD5(t, img); after != before {
		t.Errorf("the namespace hot-added after the pull (%s, backed by %s) changed: md5 %s before, %s after", orNone(newDev), img, before, after)
	}
	t.Logf("scenario took %s", time.Since(start).Round(100*time.Millisecond))
}

// stepStart is the line the suite prints on the terminal as a step starts.
var stepStart = regexp.MustCompile(`^drivequal: \d\d:\d\d:\d\d step \d+ of \d+: `)

// fioHas reports whether a running fio has dev open.
func fioHas(dev string) bool {
	procs, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err != nil || strings.TrimSpace(string(b)) != "fio" {
			continue
		}
		fds, _ := filepath.Glob(filepath.Join(filepath.Dir(p), "fd", "*"))
		for _, fd := range fds {
			if l, err := os.Readlink(fd); err == nil && l == dev {
				return true
			}
		}
	}
	return false
}

// ctrlsBySerial is controllers without failing when there is none.
func ctrlsBySerial(serial string) []string {
	ents, _ := filepath.Glob("/sys/class/nvme/nvme*")
	var out []string
	for _, e := range ents {
		if b, err := os.ReadFile(filepath.Join(e, "serial")); err == nil && strings.TrimSpace(string(b)) == serial {
			out = append(out, filepath.Base(e))
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
