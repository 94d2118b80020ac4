package live

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
	final, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "fixtures", "fio", "randread-8jobs-group.json"))
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
