package verdict

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/integrity"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// killedPass is a verify pass of two drives listed as it started and
// killed before fio wrote its report: only the stderr fio streamed until
// then is on disk.
func killedPass(t *testing.T, stderr string) (evidence.ReadBack, []plan.Drive) {
	t.Helper()
	dir := t.TempDir()
	raw := "prepare/003-verify_pass.json"
	base := strings.TrimSuffix(filepath.Join(dir, raw), record.OutputExt)
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base+record.StderrExt, []byte(stderr), 0o644); err != nil {
		t.Fatal(err)
	}
	const size = 1920383410176
	pass := record.Verify{Step: 3, Name: "verify pass", Raw: raw, Running: true, Drives: []record.VerifyDrive{
		{Path: "/dev/nvme0n1", Target: "/dev/nvme0n1", Bytes: size, LBASize: 4096},
		{Path: "/dev/nvme1n1", Target: "/dev/nvme1n1", Bytes: size, LBASize: 4096},
	}}
	var drives []plan.Drive
	for _, d := range pass.Drives {
		drives = append(drives, plan.Drive{})
		drives[len(drives)-1].Path = d.Path
	}
	return evidence.ReadBack{Dir: dir, Pass: pass}, drives
}

// An I/O error fio printed while reading a drive back, seen on its
// streamed stderr before the run was killed, fails that drive's read-back
// (cause "read-back failed"): a resume does not fill and read it again.
// Its neighbour, read without error until the kill, is interrupted.
func TestAKilledReadBackKeepsAnIOErrorFioPrinted(t *testing.T) {
	rb, drives := killedPass(t, "fio: io_u error on file /dev/nvme1n1: Input/output error: read offset=1048576000, buflen=131072\n"+
		"fio: pid=4242, err=5/file:io_u.c:1889, func=io_u error, error=Input/output error\n")
	got := ReadBack(rb, drives)
	if len(got) != 2 {
		t.Fatalf("ReadBack() = %d drives, want 2", len(got))
	}
	if got[0].Verdict != integrity.Inconclusive || got[0].Cause != report.CauseInterrupted {
		t.Errorf("the drive read without error: %s %q, want inconclusive %q", got[0].Verdict, got[0].Cause, report.CauseInterrupted)
	}
	if got[1].Verdict != integrity.Fail || got[1].Cause != report.CauseReadBack {
		t.Fatalf("the drive fio named an I/O error on: %s %q (%s), want fail %q", got[1].Verdict, got[1].Cause, got[1].Message, report.CauseReadBack)
	}
	if !strings.Contains(got[1].Message, "io_u error on file /dev/nvme1n1: Input/output error: read offset=1048576000") {
		t.Errorf("the failure does not quote fio: %s", got[1].Message)
	}
}

// An I/O fio failed because it was being stopped is not the drive's.
func TestAKilledReadBackIgnoresAnIOCanceledByTheStop(t *testing.T) {
	rb, drives := killedPass(t, "fio: io_u error on file /dev/nvme1n1: Operation canceled: read offset=0, buflen=131072\n")
	for _, d := range ReadBack(rb, drives) {
		if d.Verdict != integrity.Inconclusive {
			t.Errorf("%s: %s %q, want inconclusive", d.Path, d.Verdict, d.Message)
		}
	}
}
