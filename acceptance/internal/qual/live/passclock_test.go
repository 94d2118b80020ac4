package live

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// A drive that went before fio first named a failed read of it, or
// within goneSlack after (seen by a later look), was pulled: its failed
// reads are what reads of a drive going give. One that went later than
// that failed first and died after: what fio read of it is its own. A
// drive fio named no failed read of went without a word from fio.
func TestWentFirst(t *testing.T) {
	at := time.Date(2026, 12, 4, 15, 57, 15, 0, time.UTC)
	for _, c := range []struct {
		name         string
		gone, failed time.Time
		want         bool
	}{
		{"gone, then a failed read", at, at.Add(time.Millisecond), true},
		{"a failed read, gone seen at the next look", at.Add(goneSeenEvery), at, true},
		{"a failed read, gone seen as late as the slack allows", at.Add(goneSlack), at, true},
		{"a failed read, gone seen just after the slack", at.Add(goneSlack + time.Millisecond), at, false},
		{"a failed read, gone 10 s later", at.Add(10 * time.Second), at, false},
		{"a failed read, never seen gone during the pass", time.Time{}, at, false},
		{"gone, no failed read named", at, time.Time{}, true},
	} {
		assert.Equal(t, c.want, wentFirst(c.gone, c.failed), c.name)
	}
}

// The clock maps fio's stderr lines to drives by the file fio names (the
// step's target, or the drive's path: a by-id link, a ":" in a path, as
// fio prints it unescaped) and sees a drive go: here one drive goes and
// then fio names a failed read of it (a pull), and fio names a mismatch
// of another that never goes. The watch's own stderr callback still gets
// every line.
func TestClockPass(t *testing.T) {
	drives := fileDrives(t, "a:b.img", "c.img")
	r := &Runner{Drives: drives, Record: t.TempDir(), Spec: &specs.Spec{}, Planner: &plan.Planner{}, Guard: heldStandin{}}
	r.init()
	st := &plan.Step{N: 3, Kind: plan.StepVerify, Drives: []int{0, 1},
		Job: fiojob.Job{Targets: []fiojob.Target{{Path: drives[0].Path}, {Path: "/dev/disk/by-id/nvme-c"}}}}
	var seen []string
	clock, w := r.clockPass(st, &Watch{Stderr: func(line string) { seen = append(seen, line) }})
	require.NoError(t, os.Remove(drives[0].Path))
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		clock.mu.Lock()
		g := clock.gone[0]
		clock.mu.Unlock()
		if !g.IsZero() {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	lines := []string{
		"fio: io_u error on file " + drives[0].Path + ": Input/output error: read offset=34734080, buflen=131072",
		"pattern: verify failed at file /dev/disk/by-id/nvme-c offset 0, length 825248844 (requested block: offset=0, length=131072, flags=8)",
	}
	for _, l := range lines {
		w.Stderr(l)
	}
	clock.end()
	assert.Equal(t, lines, seen, "the watch's own callback gets every line")
	clock.mu.Lock()
	gone0, failed0, gone1, failed1 := clock.gone[0], clock.failed[0], clock.gone[1], clock.failed[1]
	clock.mu.Unlock()
	require.False(t, gone0.IsZero(), "drive 0 seen gone")
	require.False(t, failed0.IsZero(), "fio's I/O error named drive 0 by its path")
	assert.False(t, gone0.After(failed0), "drive 0 went before its failed read")
	assert.True(t, clock.wentFirst(0))
	assert.True(t, gone1.IsZero(), "drive 1 never went")
	assert.False(t, failed1.IsZero(), "fio's mismatch named drive 1 by its target")
	assert.False(t, clock.wentFirst(1), "a drive that never went is not excused")

	// No watch given: the clock still reads fio's stderr.
	c2, w := r.clockPass(&plan.Step{Drives: []int{1}}, nil)
	c2.end()
	require.NotNil(t, w.Stderr)
}
