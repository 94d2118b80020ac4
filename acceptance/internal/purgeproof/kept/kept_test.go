package kept

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/purgeproof"
)

// A verdict kept is read back as written; a later pass of the same drive
// replaces a pass but never a failure.
func TestSaveKeepsAFailure(t *testing.T) {
	dir := t.TempDir()
	if rs, err := Load(dir); err != nil || rs != nil {
		t.Fatalf("Load(empty) = %v, %v; want nothing", rs, err)
	}
	fail := purgeproof.Result{Drive: "/dev/loop1", Verdict: purgeproof.Fail, LBAs: []string{"0-2047"}, Message: "the purge did not erase"}
	pass := purgeproof.Result{Drive: "/dev/loop2", Verdict: purgeproof.Pass}
	if err := Save(dir, []purgeproof.Result{fail, pass}); err != nil {
		t.Fatal(err)
	}
	again := []purgeproof.Result{{Drive: "/dev/loop1", Verdict: purgeproof.Pass}, {Drive: "/dev/loop2", Verdict: purgeproof.Pass, Message: "again"}}
	if err := Save(dir, again); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []purgeproof.Result{fail, again[1]}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Load = %+v, want %+v", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "."+File+".tmp")); !os.IsNotExist(err) {
		t.Errorf("the temporary file is left: %v", err)
	}
}

// A purge.json that does not parse is an error naming it.
func TestLoadBad(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, File), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil {
		t.Error("Load of a broken purge.json: no error")
	}
}

// Check refuses a second verdict for a drive (Save never writes one) and
// takes a run's own.
func TestCheckSecondEntry(t *testing.T) {
	pass := purgeproof.Result{Drive: "/dev/loop1", Command: "discard /dev/loop1 (BLKDISCARD)", BytesRead: 1 << 20, Sectors: 2048, FillBefore: 2048, Verdict: purgeproof.Pass}
	fail := purgeproof.Result{Drive: "/dev/loop1", Verdict: purgeproof.Fail, Bad: 1, LBAs: []string{"0"}}
	if err := Check([]purgeproof.Result{pass}, []string{"/dev/loop1"}, nil); err != nil {
		t.Errorf("Check of a run's own pass: %v", err)
	}
	if err := Check([]purgeproof.Result{fail, pass}, []string{"/dev/loop1"}, nil); err == nil || !strings.Contains(err.Error(), "a second verdict") {
		t.Errorf("Check of two verdicts of a drive = %v", err)
	}
}

// Check takes each verdict a run writes, inconclusive among them (the
// drive held none of the fill, and the read-back found nothing wrong), and
// refuses one whose own counts contradict it: a pass with nothing of the
// fill before the purge, or with less read back than its read-back reads
// of the drive; an inconclusive verdict with a bad sector or with fill
// before the purge.
func TestCheckCounts(t *testing.T) {
	const size = 64 << 20 // read whole by a sample
	sectors := int64(size / 512)
	ok := purgeproof.Result{Drive: "/dev/loop1", Command: "discard /dev/loop1 (BLKDISCARD)", Promise: "zeros", ReadBack: purgeproof.Sample,
		BytesRead: size, SectorBytes: 512, Sectors: sectors, FillBefore: sectors, Verdict: purgeproof.Pass}
	inconclusive := ok
	inconclusive.FillBefore, inconclusive.Verdict = 0, purgeproof.Inconclusive
	for _, c := range []struct {
		name string
		r    purgeproof.Result
		want string // "" when Check takes it
	}{
		{"a pass", ok, ""},
		{"an inconclusive verdict", inconclusive, ""},
		{"a fail saying why", purgeproof.Result{Drive: "/dev/loop1", Verdict: purgeproof.Fail, Message: "the purge failed"}, ""},
		{"a pass with no fill before", with(ok, func(r *purgeproof.Result) { r.FillBefore = 0 }), "held none of the fill before the purge"},
		{"a pass with one sector read", with(ok, func(r *purgeproof.Result) { r.Sectors, r.BytesRead = 1, 512 }), "less than the 67108864 bytes its read-back (sample) reads"},
		{"a pass whose sectors are not its bytes", with(ok, func(r *purgeproof.Result) { r.Sectors = 1 }), "are not the 67108864 bytes it read back"},
		{"a pass with a bad sector", with(ok, func(r *purgeproof.Result) { r.Bad, r.LBAs = 1, []string{"7"} }), "contradicts its 1 bad sectors"},
		{"an inconclusive verdict with a bad sector", with(inconclusive, func(r *purgeproof.Result) { r.Bad, r.LBAs = 1, []string{"7"} }), "that is a fail"},
		{"an inconclusive verdict with fill before", with(inconclusive, func(r *purgeproof.Result) { r.FillBefore = 5 }), "held 5 sectors of the fill"},
		{"an inconclusive verdict with nothing read", with(inconclusive, func(r *purgeproof.Result) { r.Sectors, r.BytesRead = 0, 0 }), "nothing read back"},
		{"another verdict", with(ok, func(r *purgeproof.Result) { r.Verdict = "skipped" }), `verdict "skipped" is none of`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Check([]purgeproof.Result{c.r}, []string{"/dev/loop1"}, []int64{size})
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Check refuses a verdict a run writes: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("Check = %v, want an error saying %q", err, c.want)
			}
		})
	}
}

func with(r purgeproof.Result, f func(*purgeproof.Result)) purgeproof.Result {
	f(&r)
	return r
}

// Moved gives each verdict to the path its drive has now, a swap of two
// drives' paths included, and leaves the file as it is when no drive
// moved.
func TestMoved(t *testing.T) {
	dir := t.TempDir()
	a := purgeproof.Result{Drive: "/dev/loop1", Verdict: purgeproof.Fail, Message: "/dev/loop1: the purge did not erase"}
	b := purgeproof.Result{Drive: "/dev/loop2", Verdict: purgeproof.Pass, Message: "/dev/loop2: all sectors as promised"}
	c := purgeproof.Result{Drive: "/dev/loop3", Verdict: purgeproof.Pass, Message: "/dev/loop3: all sectors as promised"}
	if err := Save(dir, []purgeproof.Result{a, b, c}); err != nil {
		t.Fatal(err)
	}
	if changed, err := Moved(dir, map[string]string{"/dev/loop9": "/dev/loop8"}); changed || err != nil {
		t.Errorf("Moved of no drive kept = %v, %v; want the file left", changed, err)
	}
	changed, err := Moved(dir, map[string]string{"/dev/loop1": "/dev/loop2", "/dev/loop2": "/dev/loop1"})
	if !changed || err != nil {
		t.Fatalf("Moved = %v, %v", changed, err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	a.Drive, a.Message = "/dev/loop2", "[recorded at /dev/loop1, this drive's path then] "+a.Message
	b.Drive, b.Message = "/dev/loop1", "[recorded at /dev/loop2, this drive's path then] "+b.Message
	if want := []purgeproof.Result{a, b, c}; !reflect.DeepEqual(got, want) {
		t.Errorf("after Moved: %+v, want %+v", got, want)
	}
}
