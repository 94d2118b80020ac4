package hostcut

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/powerloss"
	"github.com/drivequal/drivequal/acceptance/internal/powerloss/cycle"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
	"github.com/drivequal/drivequal/specs"
)

func loopDrive(t *testing.T) (cycle.Drive, string) {
	testenv.MustHaveFio(t)
	testenv.MustHaveLoop(t)
	dev := testenv.Loop(t, 16<<20)
	out, err := exec.Command("losetup", "-n", "-O", "BACK-FILE", dev).Output()
	require.NoError(t, err)
	t.Cleanup(func() { exec.Command("blockdev", "--setrw", dev).Run() })
	d := cycle.Drive{Path: dev, Name: strings.TrimPrefix(dev, "/dev/"), LBA: 512,
		Counters: func(context.Context) ([]powerloss.Counter, string) {
			return nil, "a loop device keeps no count of power losses"
		},
		Identity: func(context.Context) (string, error) {
			f, err := os.Open(dev)
			if err != nil {
				return "", err
			}
			defer f.Close()
			n, err := f.Seek(0, 2)
			return fmt.Sprintf("%d bytes", n), err
		}}
	return d, strings.TrimSpace(string(out))
}

func config(t *testing.T, cut string) cycle.Config {
	return cycle.Config{Cut: cut, Dir: filepath.Join(t.TempDir(), "cycle_1"), Tag: 0x5eed0002,
		Test: specs.PowerLoss{Cycles: 1, ReadyWithin: 5 * time.Second, CutAfter: time.Second, Size: 8 << 20, BS: 4096, FlushEvery: 4}}
}

// A cut command that returns with the host still up is no cut: Cut says
// so after HostDown. Its state was saved before the command ran (save
// sees it), and Finish judges from it after the "reboot": the device
// refused writes and lost its first 64 KiB, which its ledger held as
// flushed, so it fails naming zeros; every acknowledged write is one
// completed before its job's last completed flush (no final flush).
func TestCutThenFinish(t *testing.T) {
	old := HostDown
	HostDown = 200 * time.Millisecond
	t.Cleanup(func() { HostDown = old })
	d, img := loopDrive(t)
	c := config(t, "blockdev --setro "+d.Path+"; dd if=/dev/zero of="+img+" bs=64k count=1 conv=notrunc,fsync status=none")
	saved := false
	out := Cut(context.Background(), d, c, 1, func() error {
		_, err := os.Stat(filepath.Join(c.Dir, StateFile))
		saved = err == nil
		return err
	}, t.Logf)
	assert.True(t, saved, "the state is on disk when the cycle is recorded, before the cut")
	assert.Contains(t, out.NotRun, "the host's power was not cut: the cut command returned and the host ran on for 200ms")
	require.NoError(t, exec.Command("blockdev", "--setrw", d.Path).Run())

	got := Finish(context.Background(), d, c.Dir, 5*time.Second)
	require.Empty(t, got.NotRun+got.NotReturned+got.Error)
	assert.Equal(t, "host: "+c.Cut, got.Method)
	assert.Equal(t, "a loop device keeps no count of power losses; the host did not restart since the cut (the same boot id): the cut did not cut its power", got.NoCounters)
	jobs, err := Ledger(c.Dir, 4)
	require.NoError(t, err)
	want := 0
	for _, j := range jobs {
		require.Greater(t, len(j.Writes), 8)
		want += (len(j.Writes) - 1) / 4 * 4
	}
	assert.Equal(t, want, got.Acknowledged)
	assert.Less(t, got.Acknowledged, got.Completed, "writes completed after a job's last flush are not held")
	require.NotEmpty(t, got.Lost)
	assert.Equal(t, powerloss.Lost{Offset: 0, Len: 65536, Found: powerloss.Zeros}, got.Lost[0])
	v := powerloss.Judge(got)
	assert.Equal(t, powerloss.Fail, v.Verdict)
	assert.Contains(t, v.Message, "first lost range: LBA 0, 128 blocks (65536 bytes at offset 0), came back as zeros")

	// Another drive in its place after the reboot did not return.
	other := d
	other.Identity = func(context.Context) (string, error) { return "another drive", nil }
	swapped := Finish(context.Background(), other, c.Dir, 5*time.Second)
	assert.Contains(t, swapped.NotReturned, "came back as another drive")
	assert.Equal(t, powerloss.Fail, powerloss.Judge(swapped).Verdict)

	// Saved in another boot: the host restarted since.
	st, _, err := LoadState(c.Dir)
	require.NoError(t, err)
	st.BootID = "00000000-0000-0000-0000-000000000000"
	data, err := json.Marshal(st)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(c.Dir, StateFile), data, 0o644))
	rebooted := Finish(context.Background(), d, c.Dir, 5*time.Second)
	assert.Contains(t, rebooted.NoCounters, "; the host restarted since the cut (another boot id)")

	// A ledger shortened after the cut (a write's line removed) is not
	// judged as the drive's: the state saved before the cut counts it.
	logs, _ := filepath.Glob(filepath.Join(c.Dir, "sequential_lat.*.log"))
	require.Len(t, logs, 1)
	data, err = os.ReadFile(logs[0])
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	require.NoError(t, os.WriteFile(logs[0], []byte(strings.Join(lines[1:], "")), 0o644))
	altered := Finish(context.Background(), d, c.Dir, 5*time.Second)
	assert.Contains(t, altered.Error, "the recording was altered")
	assert.Equal(t, powerloss.Fail, powerloss.Judge(altered).Verdict)
}

// A failing cut command is said, the cycle not judged.
func TestCutCommandFails(t *testing.T) {
	d, _ := loopDrive(t)
	c := config(t, "echo no outlet >&2; exit 3")
	out := Cut(context.Background(), d, c, 1, func() error { return nil }, t.Logf)
	assert.Contains(t, out.NotRun, "the cut command failed (exit status 3: no outlet)")
	assert.Equal(t, powerloss.Inconclusive, powerloss.Judge(out).Verdict)
}
