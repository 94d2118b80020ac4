package fiojob

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fixtureDir holds the recorded fio outputs (see its README.md).
const fixtureDir = "../fixtures/fio"

// unavailable skips t because something a live test needs (fio, root, loop
// devices) is missing, or fails it when DRIVEQUAL_REQUIRE_LOOP=1 says that
// this machine must have it.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("DRIVEQUAL_REQUIRE_LOOP") == "1" {
		t.Fatalf("DRIVEQUAL_REQUIRE_LOOP=1 but %s", msg)
	}
	t.Skip(msg)
}

// needFio returns the path of the fio on PATH.
func needFio(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("fio")
	if err != nil {
		unavailable(t, "fio is not installed: %v", err)
	}
	return p
}

// loopDevice attaches a loop device with direct I/O over a new image of
// size bytes and detaches it when t ends.
func loopDevice(t testing.TB, size int64) string {
	t.Helper()
	needFio(t)
	if os.Geteuid() != 0 {
		unavailable(t, "loop devices need root")
	}
	for _, c := range []string{"losetup", "flock"} {
		if _, err := exec.LookPath(c); err != nil {
			unavailable(t, "%s is not installed: %v", c, err)
		}
	}
	img := filepath.Join(t.TempDir(), "loop.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, size); err != nil {
		t.Fatal(err)
	}
	// Under the lock the acceptance tests take around losetup (their
	// testenv.LosetupLock), so that attaching here never holds open a
	// device one of them has just attached.
	out, err := exec.Command("flock", "-w", "60", "/run/drivequal-losetup.lock",
		"losetup", "--direct-io=on", "-f", "--show", img).CombinedOutput()
	if err != nil {
		unavailable(t, "losetup cannot attach a loop device: %v: %s", err, bytes.TrimSpace(out))
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup -d %s: %v: %s", dev, err, out)
		}
	})
	return dev
}

// writeJobFile writes content to a job file in t's temporary directory.
func writeJobFile(t testing.TB, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "job.fio")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// fixtures lists the recorded fio stdout files.
func fixtures(t testing.TB) []string {
	t.Helper()
	fs, err := filepath.Glob(filepath.Join(fixtureDir, "*.json"))
	if err != nil || len(fs) == 0 {
		t.Fatalf("no fixtures in %s: %v", fixtureDir, err)
	}
	return fs
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fioJSON is fio's final JSON object decoded generically, independent of
// Parse: the text from the last line that starts with '{'.
type fioJSON map[string]any

func lastObject(t testing.TB, data []byte) fioJSON {
	t.Helper()
	i := bytes.LastIndex(data, []byte("\n{"))
	switch {
	case i >= 0:
		i++
	case bytes.HasPrefix(data, []byte("{")):
		i = 0
	default:
		t.Fatal("no line starts with {")
	}
	d := json.NewDecoder(bytes.NewReader(data[i:]))
	d.UseNumber()
	var v fioJSON
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decoding fio's last JSON object: %v", err)
	}
	return v
}

// jobs returns the job entries, from jobs or client_stats, fio's
// "All clients" summary included.
func (v fioJSON) jobs() []fioJSON {
	list, ok := v["jobs"].([]any)
	if !ok || len(list) == 0 {
		list, _ = v["client_stats"].([]any)
	}
	out := make([]fioJSON, len(list))
	for i, j := range list {
		out[i] = j.(map[string]any)
	}
	return out
}

func (v fioJSON) obj(key string) fioJSON {
	o, _ := v[key].(map[string]any)
	return o
}

func (v fioJSON) num(key string) float64 {
	n, ok := v[key].(json.Number)
	if !ok {
		return 0
	}
	f, err := n.Float64()
	if err != nil {
		panic(err)
	}
	return f
}

func (v fioJSON) int(key string) int64 {
	n, ok := v[key].(json.Number)
	if !ok {
		return 0
	}
	i, err := n.Int64()
	if err != nil {
		panic(err)
	}
	return i
}

func (v fioJSON) str(key string) string {
	s, _ := v[key].(string)
	return s
}
