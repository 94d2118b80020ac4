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
	pass := purgeproof.Result{Drive: "/dev/loop1", Command: "discard /dev/loop1 (BLKDISCARD)", BytesRead: 1 << 20, Sectors: 2048, Verdict: purgeproof.Pass}
	fail := purgeproof.Result{Drive: "/dev/loop1", Verdict: purgeproof.Fail, Bad: 1, LBAs: []string{"0"}}
	if err := Check([]purgeproof.Result{pass}, []string{"/dev/loop1"}); err != nil {
		t.Errorf("Check of a run's own pass: %v", err)
	}
	if err := Check([]purgeproof.Result{fail, pass}, []string{"/dev/loop1"}); err == nil || !strings.Contains(err.Error(), "a second verdict") {
		t.Errorf("Check of two verdicts of a drive = %v", err)
	}
}
