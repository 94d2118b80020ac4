package hostcut

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/powerloss"
	"github.com/drivequal/drivequal/acceptance/internal/powerloss/cycle"
	"github.com/drivequal/drivequal/specs"
)

// The job writes for cut_after and ends without a final flush, so that
// its last writes may still be in a volatile cache at the cut.
func TestJob(t *testing.T) {
	c := cycle.Config{Dir: "/rec/cycle_1", Tag: 0xabcdef01,
		Test: specs.PowerLoss{CutAfter: 3 * time.Second, Size: 1 << 30, BS: 4096, FlushEvery: 32}}
	job := Job(c, "/dev/nvme1n1")
	for _, want := range []string{"end_fsync=0\n", "fsync=32\n", "thread=1\n", "runtime=3000ms\n", "verify_pattern=0xabcdef01%o\n",
		"[sequential]\nrw=write\noffset=0\nsize=536870912\nwrite_lat_log=/rec/cycle_1/sequential\n",
		"[random]\nrw=randwrite\noffset=536870912\nsize=536870912\nwrite_lat_log=/rec/cycle_1/random\n"} {
		assert.Contains(t, job, want)
	}
	assert.NotContains(t, job, "end_fsync=1")
}

// A state whose sizes or hashes were altered does not load.
func TestLoadStateRefusesAltered(t *testing.T) {
	dir := t.TempDir()
	st := State{Identity: "x", Size: 8192, BS: 4096, FlushEvery: 4}
	require.NoError(t, saveState(dir, st, []uint64{1, 2}))
	got, snap, err := LoadState(dir)
	require.NoError(t, err)
	assert.Equal(t, []uint64{1, 2}, snap)
	assert.Equal(t, "x", got.Identity)

	require.NoError(t, os.WriteFile(filepath.Join(dir, BeforeFile), make([]byte, 8), 0o644))
	_, _, err = LoadState(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "8 bytes, want 8 a block of 2: the recording was altered")

	require.NoError(t, saveState(dir, State{Size: 8192, BS: 0, FlushEvery: 4}, nil))
	_, _, err = LoadState(dir)
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "bs 0"), err)
}

// A drive's path with a ':' (a /dev/disk/by-path link) is escaped in
// fio's filename=, where an unescaped ':' separates files.
func TestJobEscapesFilename(t *testing.T) {
	c := cycle.Config{Dir: t.TempDir(), Tag: 1, Test: specs.PowerLoss{Size: 8 << 20, BS: 4096, FlushEvery: 4, CutAfter: time.Second}}
	job := Job(c, "/dev/disk/by-path/pci-0000:00:1f.2-nvme-1")
	assert.Contains(t, job, "\nfilename=/dev/disk/by-path/pci-0000\\:00\\:1f.2-nvme-1\n")
}

// A pending cycle whose saved state is gone (host.json deleted between
// the cut and the resume) fails, as a missing ledger does: the drive is
// not let off as untested by deleting what the cut was judged by.
func TestFinishWithoutStateFails(t *testing.T) {
	got := Finish(context.Background(), cycle.Drive{Path: "/dev/x"}, t.TempDir(), time.Second)
	v := powerloss.Judge(got)
	assert.Equal(t, powerloss.Fail, v.Verdict, v.Message)
	assert.Contains(t, v.Message, "the state saved before the host's power cut does not read")
}
