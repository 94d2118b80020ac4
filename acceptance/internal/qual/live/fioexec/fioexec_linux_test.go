package fioexec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/fiojob"
)

// A live run asks fio for json+ in a measurement, whose latency bins are
// judged, and for plain json in every preparation step, whose recording
// keeps no bins; each recording is what fio printed, byte for byte.
func TestLiveOutputFormats(t *testing.T) {
	dir := t.TempDir()
	final, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "..", "fixtures", "fio", "randread-8jobs-group.json"))
	if err != nil {
		t.Fatal(err)
	}
	// A stand-in for fio: its first argument, then a report.
	fio := filepath.Join(dir, "fio")
	report := filepath.Join(dir, "report.json")
	if err := os.WriteFile(report, final, 0o644); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho \"$1\"\ncat '" + report + "'\n"
	if err := os.WriteFile(fio, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	l := &Fio{Dir: filepath.Join(dir, "raw"), Runner: fiojob.Runner{Binary: fio}}
	target := []fiojob.Target{{Path: filepath.Join(dir, "target"), Size: 1 << 20}}
	ctx := context.Background()

	cell := fiojob.RandomPrecondition(target, 4096, time.Second, "", 0)
	cell.Name = "4KB Random Read"
	stdout, err := l.Measure(ctx, "TestSingleDrive/1GiB/4KB_Random_Read", cell, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := firstLine(stdout); got != "--output-format=json+" {
		t.Errorf("a measurement ran fio with %q, want --output-format=json+", got)
	}

	for _, st := range []plan.Step{
		{N: 2, Kind: plan.StepFill, Name: "sequential fill", Job: fiojob.Fill(target, 1, 1)},
		{N: 3, Kind: plan.StepRandom, Name: "random preconditioning", Job: fiojob.RandomPrecondition(target, 4096, time.Second, "", 0)},
	} {
		if _, err := l.Prepare(ctx, st, nil, t.Logf, nil); err != nil {
			t.Fatalf("%s: %v", st.Name, err)
		}
		raw := filepath.Join(l.Dir, "prepare", fmt.Sprintf("%03d-%s.json", st.N, Slug(st.Name)))
		rec, err := os.ReadFile(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := firstLine(rec); got != "--output-format=json" {
			t.Errorf("%s ran fio with %q, want --output-format=json", st.Name, got)
		}
		if !strings.HasSuffix(string(rec), string(final)) {
			t.Errorf("%s: %s is not fio's stdout as printed", st.Name, raw)
		}
	}
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	return s
}

// fio's stderr is on disk while fio runs: a stand-in prints a verify
// error line and waits, and the line is in <base>.stderr before it
// exits; once it has, the file holds all of stderr, and a run that
// printed nothing there leaves no .stderr.
func TestStderrIsStreamedWhileFioRuns(t *testing.T) {
	dir := t.TempDir()
	fio := filepath.Join(dir, "fio")
	release := filepath.Join(dir, "release")
	const line = "verify: bad magic header 0, wanted acca at file /dev/loop0 offset 1048576, length 131072"
	script := "#!/bin/sh\necho '" + line + "' >&2\nwhile [ ! -e '" + release + "' ]; do sleep 0.01; done\necho done >&2\necho '{}'\n"
	if err := os.WriteFile(fio, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	l := &Fio{Dir: filepath.Join(dir, "raw"), Runner: fiojob.Runner{Binary: fio}}
	target := []fiojob.Target{{Path: filepath.Join(dir, "target"), Size: 1 << 20}}
	st := plan.Step{N: 3, Kind: plan.StepVerify, Name: "verify pass", Job: fiojob.Fill(target, 1, 1)}
	stderr := strings.TrimSuffix(l.PreparedRaw(st), ".json") + ".stderr"
	done := make(chan error, 1)
	go func() {
		_, err := l.Prepare(context.Background(), st, nil, t.Logf, nil)
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, _ := os.ReadFile(stderr)
		if strings.Contains(string(data), line) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not hold fio's stderr while fio runs: %q", stderr, data)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	<-done
	data, err := os.ReadFile(stderr)
	if err != nil {
		t.Fatal(err)
	}
	if want := line + "\ndone\n"; string(data) != want {
		t.Errorf("%s = %q once fio ended, want %q", stderr, data, want)
	}

	quiet := filepath.Join(dir, "quiet")
	if err := os.WriteFile(quiet, []byte("#!/bin/sh\necho '{}'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	l.Runner.Binary = quiet
	st.N = 4
	_, _ = l.Prepare(context.Background(), st, nil, t.Logf, nil)
	if _, err := os.Stat(strings.TrimSuffix(l.PreparedRaw(st), ".json") + ".stderr"); !os.IsNotExist(err) {
		t.Errorf("a fio that printed nothing on stderr leaves a .stderr: %v", err)
	}
}
