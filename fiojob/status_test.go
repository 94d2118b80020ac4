package fiojob

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func watchAll(t *testing.T, data []byte) []Progress {
	t.Helper()
	var ps []Progress
	if err := WatchStatus(bytes.NewReader(data), func(p Progress) { ps = append(ps, p) }); err != nil {
		t.Fatalf("WatchStatus: %v", err)
	}
	return ps
}

// TestWatchStatusFixture: status-interval.json is a 3 s run with
// --status-interval=1 that printed 4 reports, the final one last.
func TestWatchStatusFixture(t *testing.T) {
	data := readFixture(t, "status-interval.json")
	ps := watchAll(t, data)
	if len(ps) != 4 {
		t.Fatalf("%d reports, want 4", len(ps))
	}
	// The figures fio printed for the one job of each report (read
	// runtime in ms, total_ios, io_bytes).
	want := []struct{ runtime, ios, bytes int64 }{
		{885, 16005, 65372160},
		{1885, 30755, 125837312},
		{2885, 55985, 229183488},
		{3002, 57859, 236990464},
	}
	var prev struct{ runtime, ios, bytes int64 }
	for i, p := range ps {
		w := want[i]
		if p.N != i+1 || p.Elapsed != ms(w.runtime) || p.Total.Read.TotalIOs != w.ios || len(p.Groups) != 1 {
			t.Errorf("report %d: N %d, Elapsed %v, %d I/Os, %d groups; want N %d, %v, %d I/Os, 1 group",
				i, p.N, p.Elapsed, p.Total.Read.TotalIOs, len(p.Groups), i+1, ms(w.runtime), w.ios)
			continue
		}
		// The cumulative rate is fio's own running average.
		if got, fio := p.Groups[0].Read.IOPS, float64(w.ios)*1000/float64(w.runtime); math.Abs(got-fio) > 1e-6*fio {
			t.Errorf("report %d: cumulative IOPS %v, want %v", i, got, fio)
		}
		span := w.runtime - prev.runtime
		iv := p.Interval[0]
		wantIOPS := float64(w.ios-prev.ios) * 1000 / float64(span)
		wantBW := float64(w.bytes-prev.bytes) * 1000 / float64(span)
		if iv.Span != ms(span) || !closeRel(iv.ReadIOPS, wantIOPS) || !closeRel(iv.ReadBytesPerSec, wantBW) ||
			iv.WriteIOPS != 0 || iv.IOPS() != iv.ReadIOPS || !closeRel(iv.MBps(), wantBW/1e6) {
			t.Errorf("report %d: Interval = %+v, want span %v, %.1f read IOPS, %.0f read bytes/s", i, iv, ms(span), wantIOPS, wantBW)
		}
		prev = w
	}
}

func closeRel(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Abs(want) }

// TestWatchStatusLastIsParse: Parse of the whole stdout judges the last
// report, the same one WatchStatus passes last; so progress read from a
// recording leaves replay's verdicts as they were.
func TestWatchStatusLastIsParse(t *testing.T) {
	for _, name := range []string{"status-interval.json", "iops-log.json"} {
		data := readFixture(t, name)
		ps := watchAll(t, data)
		whole, err := Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(whole, ps[len(ps)-1].Output); diff != "" {
			t.Errorf("%s: Parse(all) differs from the last report (-Parse +last):\n%s", name, diff)
		}
		if diff := cmp.Diff(whole.Groups(), ps[len(ps)-1].Groups); diff != "" {
			t.Errorf("%s: groups differ (-Parse +last):\n%s", name, diff)
		}
	}
}

// TestWatchStatusTwoTargets: iops-log.json is two targets (groups 0 and 1)
// × 2 jobs of random write, 7 reports; each group's interval rates add up
// to its final I/O count.
func TestWatchStatusTwoTargets(t *testing.T) {
	ps := watchAll(t, readFixture(t, "iops-log.json"))
	if len(ps) != 7 {
		t.Fatalf("%d reports, want 7", len(ps))
	}
	last := ps[len(ps)-1]
	for g := range 2 {
		var ios float64
		for _, p := range ps {
			if len(p.Interval) != 2 || p.Interval[g].GroupID != g || p.Interval[g].ReadIOPS != 0 {
				t.Fatalf("report %d: Interval = %+v, want write-only rates for groups 0 and 1", p.N, p.Interval)
			}
			ios += p.Interval[g].WriteIOPS * p.Interval[g].Span.Seconds()
		}
		if want := float64(last.Groups[g].Write.TotalIOs); math.Abs(ios-want) > 1e-6*want {
			t.Errorf("group %d: Σ interval IOPS × span = %.3f, want the final report's %v I/Os", g, ios, want)
		}
	}
}

func TestWatchStatusResetAfterRamp(t *testing.T) {
	before := Result{GroupID: 0, Runtime: 2 * time.Second, Read: Direction{TotalIOs: 5000, IOBytes: 5000 * 4096}}
	// fio zeroes a job's counters when its ramp_time ends.
	after := Result{GroupID: 0, Runtime: 500 * time.Millisecond, Read: Direction{TotalIOs: 1000, IOBytes: 1000 * 4096}}
	got := rateSince(after, before)
	want := Rate{GroupID: 0, Span: 500 * time.Millisecond, ReadIOPS: 2000, ReadBytesPerSec: 2000 * 4096}
	if got != want {
		t.Errorf("rateSince(after reset) = %+v, want %+v", got, want)
	}
}

type watchErrorTest struct {
	name    string
	data    func(t *testing.T) []byte
	reports int    // reports passed to fn
	err     string // error substring
}

var watchErrorTests = []watchErrorTest{
	{"killed inside the last report", fixtureCut("status-interval.json", 0.95), 3,
		"fio's output ends inside the status report that starts at line 2353"},
	{"one bad report among good ones", func(t *testing.T) []byte {
		d := readFixture(t, "status-interval.json")
		return bytes.Replace(d, []byte(`"jobname" : "drive0"`), []byte(`"jobname" : drive0`), 1)
	}, 3, "fio status report at line 1: "},
	{"notes only", func(*testing.T) []byte { return []byte("fio: terminating on signal 2\n") }, 0, ""},
}

func TestWatchStatusErrors(t *testing.T) {
	for _, tt := range watchErrorTests {
		n := 0
		err := WatchStatus(bytes.NewReader(tt.data(t)), func(Progress) { n++ })
		if n != tt.reports {
			t.Errorf("%s: %d reports, want %d", tt.name, n, tt.reports)
		}
		if tt.err == "" {
			if err != nil {
				t.Errorf("%s: WatchStatus error = %v, want none", tt.name, err)
			}
		} else if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: WatchStatus error = %v, want one containing %q", tt.name, err, tt.err)
		}
	}
}

// errAfter returns data, then err instead of EOF.
type errAfter struct {
	r   io.Reader
	err error
}

func (e *errAfter) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		return n, e.err
	}
	return n, err
}

func TestWatchStatusReadError(t *testing.T) {
	boom := errors.New("boom")
	n := 0
	err := WatchStatus(&errAfter{bytes.NewReader(readFixture(t, "status-interval.json")), boom}, func(Progress) { n++ })
	if !errors.Is(err, boom) || n != 4 {
		t.Errorf("WatchStatus = %v after %d reports, want boom after 4", err, n)
	}
}

// TestWatchStatusLive runs fio on a loop device with --status-interval=1
// for 3 s and checks that reports arrive while fio runs, not when it ends.
func TestWatchStatusLive(t *testing.T) {
	dev := loopDevice(t, 64<<20)
	job := writeJobFile(t, `[global]
ioengine=libaio
direct=1
thread=1
rw=randread
bs=4096
iodepth=4
time_based=1
runtime=3

[drive0]
filename=`+dev+`
`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, needFio(t), "--output-format=json+", "--status-interval=1", job)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var at []time.Duration
	werr := WatchStatus(stdout, func(Progress) { at = append(at, time.Since(start)) })
	if err := cmd.Wait(); err != nil {
		t.Fatalf("fio: %v", err)
	}
	ended := time.Since(start)
	if werr != nil {
		t.Fatal(werr)
	}
	if len(at) < 3 {
		t.Fatalf("%d reports at %v, want at least 3 (one a second and the final one)", len(at), at)
	}
	if ended-at[0] < time.Second {
		t.Errorf("first report at %v, fio ended at %v: reports did not arrive while fio ran", at[0], ended)
	}
}
