package live

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// keptVerify is an executor whose verify pass keeps the 24-drive loop
// fixture's read-back (fixtures/loop24) where the real one keeps it.
type keptVerify struct {
	dir string
	t   *testing.T
}

func (k keptVerify) Measure(context.Context, string, fiojob.Job, *Watch) ([]byte, error) {
	return nil, nil
}

func (k keptVerify) RawPath(test string) string { return record.Base(k.dir, test) + record.OutputExt }

func (k keptVerify) Prepare(_ context.Context, st plan.Step, _ []plan.Drive, _ func(string, ...any), _ *Watch) (Prepared, error) {
	const name = "003-verify_pass__read_back_every_crc32c_block_the_fill_wrote_"
	base := filepath.Join(k.dir, "prepare", name)
	require.NoError(k.t, os.MkdirAll(filepath.Dir(base), 0o755))
	for _, ext := range []string{record.OutputExt, record.JobExt} {
		data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "fixtures", "loop24", "prepare", name+ext))
		require.NoError(k.t, err)
		require.NoError(k.t, os.WriteFile(base+ext, data, 0o644))
	}
	return Prepared{Raw: base + record.OutputExt}, nil
}

// A verify pass is listed in run.json in the same rewrite as the sha256
// of its files: a kill right after it is listed (before the step's files
// are hashed once it ends) leaves no read-back that a resume would trust
// and nothing vouches for.
func TestVerifyListedWithItsHashes(t *testing.T) {
	dir := t.TempDir()
	spec, err := specs.Load("solidigm-d7-ps1010")
	require.NoError(t, err)
	drives := []plan.Drive{{Info: device.Info{Path: "/dev/loop0", Size: 64 << 20, LogicalBlockSize: 512}}}
	r := &Runner{Spec: spec, Drives: drives, Exec: keptVerify{dir: dir, t: t}, Record: dir, Planner: &plan.Planner{}}
	r.init()
	require.NoError(t, r.rec.Start(record.Run{Format: record.Format, Mode: "record"}))
	st := plan.Step{N: 3, Kind: plan.StepVerify, Name: "verify pass", Drives: []int{0}}
	r.verifyStep(context.Background(), &st, func(string, ...any) {}, nil)

	var onDisk record.Run
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &onDisk))
	require.Len(t, onDisk.Verify, 1)
	raw := onDisk.Verify[0].Raw
	require.NotEmpty(t, onDisk.Files[raw], "run.json lists the verify pass %s with its sha256: %v", raw, onDisk.Files)
	require.NotEmpty(t, onDisk.Files[raw[:len(raw)-len(record.OutputExt)]+record.JobExt])
	changed, err := record.Check(dir, onDisk)
	require.NoError(t, err)
	require.Empty(t, changed)
}
