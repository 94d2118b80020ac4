package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// A drive named with -capacity as a capacity larger than it is refused
// before anything is written, by the dry run too, naming the drive, its
// size, the capacity's bytes and the fix: a 64 MiB loop device of random
// bytes named as the built-in spec's 1.92TB, and as faults.toml's 64MiB
// when it is 32 MiB. A larger drive judged as a smaller capacity is
// allowed with its warning, as before.
func TestCapacityLargerThanTheDriveIsRefused(t *testing.T) {
	runParallel(t)         // refusals on loop devices of its own; nothing it checks is timed
	testenv.MustHaveFio(t) // a live run's flags are checked with fio's version
	dev := guardedLoop(t)
	before := testenv.SHA256(t, dev)
	want := []string{"parsing -capacity: " + dev + ": holds 67,108,864 bytes (0.07 GB), fewer than the 1,920,383,410,176 bytes of 1.92TB it is to be judged as",
		"give a spec with a capacity of 67,108,864 bytes"}
	for _, extra := range []string{"-destructive", "-dry-run"} {
		r := runSuite(t, nil, "-drives="+dev, "-capacity=1.92TB", extra)
		assertRefused(t, r, want...)
	}
	assert.Equal(t, before, testenv.SHA256(t, dev), "%s changed", dev)

	// A 32 MiB file named as 64MiB, the spec's one capacity.
	small := filepath.Join(t.TempDir(), "small.img")
	require.NoError(t, os.WriteFile(small, nil, 0o644))
	require.NoError(t, os.Truncate(small, 32<<20))
	r := runSuite(t, nil, "-spec="+faultSpec(t), "-drives="+small, "-capacity=64MiB", "-dry-run")
	assertRefused(t, r, "parsing -capacity: "+small+": holds 33,554,432 bytes", "fewer than the 67,108,864 bytes of 64MiB",
		"give a spec with a capacity of 33,554,432 bytes")

	// The 64 MiB loop device judged as a 64MiB drive, and a 128 MiB file
	// judged as one: allowed; the file is warned about.
	large := filepath.Join(t.TempDir(), "large.img")
	require.NoError(t, os.WriteFile(large, nil, 0o644))
	require.NoError(t, os.Truncate(large, 128<<20))
	r = runSuite(t, nil, "-spec="+faultSpec(t), "-drives="+dev+","+large, "-capacity=64MiB", "-dry-run")
	noFioLeft(t)
	require.Equal(t, 0, r.Code, "stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	assert.Contains(t, r.Stdout+r.Stderr, large+" holds 134,217,728 bytes, not the 67,108,864 bytes of 64MiB: its figures are not comparable with the spec's")
	assert.NotContains(t, r.Stdout+r.Stderr, dev+" holds")
	assert.Equal(t, before, testenv.SHA256(t, dev), "%s changed by a dry run", dev)
}
