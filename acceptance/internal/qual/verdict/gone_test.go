package verdict

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// goneRecording keeps fio's read-back of two drives (fixtures/fio/NAME:
// real fio output, the second drive's data changed) as a recording's
// verify pass, the second drive recorded as gone by the pass's end.
func goneRecording(t *testing.T, name string) (string, record.Verify) {
	t.Helper()
	dir := t.TempDir()
	fixture := filepath.Join("..", "..", "..", "..", "fixtures", "fio", name)
	for _, ext := range []string{record.OutputExt, record.StderrExt} {
		data, err := os.ReadFile(fixture + ext)
		require.NoError(t, err)
		p := filepath.Join(dir, "prepare", "003-verify"+ext)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prepare", "003-verify"+record.StatusExt), []byte(`{"interrupted": false, "error": "fio exited with status 1 (1 jobs failed)"}`), 0o644))
	const bytes = 32<<20 + 90112
	return dir, record.Verify{Step: 3, Name: "verify pass", Raw: "prepare/003-verify.json", Pattern: "0xdeadbeef",
		Drives: []record.VerifyDrive{{Path: "/dev/nvme2n1", Target: "/dev/loop55", Bytes: bytes, LBASize: 512},
			{Path: "/dev/nvme3n1", Target: "/dev/loop56", Bytes: bytes, LBASize: 4096, Gone: "/dev/nvme3n1 disappeared during verify pass (noticed at 15:57:22): its device node /dev/nvme3n1 is gone"}}}
}

// A drive gone by the end of its read-back, recorded so in the pass and
// in the run's failures: zeros, or another block's data (what fio
// compares in a buffer no read of a removed namespace filled), fail it
// as disappeared, not as a mismatch of its media. Data of an earlier
// write is the drive's own, gone or not: still a mismatch. A pass that
// says gone while the run's failures do not is judged on what fio read
// (a recording's word alone excuses nothing), as is a pass that does not
// say gone of a drive that disappeared later in the run.
func TestAReadBackOfAGoneDrive(t *testing.T) {
	disappeared := map[string]bool{"/dev/nvme3n1": true}
	for _, c := range []struct {
		fixture     string
		disappeared map[string]bool
		cause       string
		says        string
		notGone     bool
	}{
		{"readback-zeros", disappeared, report.CauseDriveChanged, "disappeared during verify pass", false},
		{"readback-offset", disappeared, report.CauseDriveChanged, "disappeared during verify pass", false},
		{"readback-earlier", disappeared, report.CauseIntegrity, "returned data of an earlier write", false},
		{"readback-tail", disappeared, report.CauseIntegrity, "returned other data", false},
		{"readback-zeros", nil, report.CauseIntegrity, "returned zeros", false},
		{"readback-zeros", disappeared, report.CauseIntegrity, "returned zeros", true},
	} {
		dir, v := goneRecording(t, c.fixture)
		if c.notGone {
			// It disappeared later in the run: its read-back stands.
			v.Drives[1].Gone = ""
		}
		got := ReadBack(evidence.ReadBack{Dir: dir, Pass: v, Disappeared: c.disappeared}, nil)
		require.Len(t, got, 2, c.fixture)
		assert.Equal(t, report.Pass, got[0].Verdict, "%s: the other drive", c.fixture)
		d := got[1]
		assert.Equal(t, report.Fail, d.Verdict, c.fixture)
		assert.Equal(t, c.cause, d.Cause, "%s: %s", c.fixture, d.Message)
		assert.Contains(t, d.Message, c.says, c.fixture)
		assert.Equal(t, d.Cause, d.Result.Cause, c.fixture)
		assert.Equal(t, d.Message, d.Result.Error, c.fixture)
		if c.cause == report.CauseDriveChanged {
			assert.Zero(t, d.Result.Integrity.Mismatches, "%s: no mismatch counted", c.fixture)
			assert.Contains(t, d.Message, "no evidence of its media (fio: ", c.fixture)
		} else {
			assert.NotZero(t, d.Result.Integrity.Mismatches, "%s: the mismatch is counted", c.fixture)
		}
	}
}
