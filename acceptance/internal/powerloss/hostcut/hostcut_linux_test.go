package hostcut

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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

// cutAfter is how long each drive's fio writes before the cut: long
// enough that two fio runs started together overlap on a loaded host,
// where one started at least 2.1 s after the other (it began 1.1 s after
// the other's 1 s run had ended, in make test beside the guests). At the
// throttle's 300 writes a second, neither job writes its 1024 blocks.
const cutAfter = 5 * time.Second

// config is a cycle of d's: fio's writes to d are held to 300 a second
// (blk-throttle), so that neither job writes its 1024 blocks in
// cut_after.
func config(t *testing.T, d cycle.Drive, tag uint32) cycle.Config {
	return cycle.Config{Dir: filepath.Join(t.TempDir(), "cycle_1"), Tag: tag, Fio: testenv.WriteThrottle(t, d.Path, 300).Script(t, "fio"),
		Test: specs.PowerLoss{Cycles: 1, ReadyWithin: 5 * time.Second, CutAfter: cutAfter, Size: 8 << 20, BS: 4096, FlushEvery: 4}}
}

// fioSpan is when fio's run in dir wrote, in ms since the epoch: from
// its output's time less its longest job's runtime (no earlier than its
// writes began) to its output's time (no earlier than they ended).
func fioSpan(t *testing.T, dir string) (start, end int64) {
	data, err := os.ReadFile(filepath.Join(dir, "fio.json"))
	require.NoError(t, err)
	var out struct {
		TimestampMS int64 `json:"timestamp_ms"`
		Jobs        []struct {
			Runtime int64 `json:"job_runtime"`
		} `json:"jobs"`
	}
	require.NoError(t, json.Unmarshal(data, &out))
	require.Len(t, out.Jobs, 2)
	var longest int64
	for _, j := range out.Jobs {
		require.GreaterOrEqual(t, j.Runtime, cutAfter.Milliseconds()-100, "each job writes for cut_after")
		longest = max(longest, j.Runtime)
	}
	return out.TimestampMS - longest, out.TimestampMS
}

// Three drives, one cut of the host for all. A cut command that returns
// with the host still up is no cut: Cut says so after HostDown, for
// every drive it cut. The cut ran once, after both drives' writes (fio
// on each at once: their runs overlap) and their states were on disk,
// each recorded pending before it; the third drive refused writes
// before the cut (fio failed), and is recorded as not run, the others
// cut all the same. Finish judges each drive from its own state after
// the "reboot": the one whose image lost its first 64 KiB (held by its
// ledger as flushed) fails naming zeros; the other passes. Every
// acknowledged write is one completed before its job's last completed
// flush (no final flush).
func TestCutThenFinish(t *testing.T) {
	old := HostDown
	HostDown = 200 * time.Millisecond
	t.Cleanup(func() { HostDown = old })
	lossy, img := loopDrive(t)
	kept, _ := loopDrive(t)
	refused, _ := loopDrive(t)
	require.NoError(t, exec.Command("blockdev", "--setro", refused.Path).Run())
	count := filepath.Join(t.TempDir(), "cuts")
	cut := "blockdev --setro " + lossy.Path + "; blockdev --setro " + kept.Path + "; echo cut >> " + count +
		"; " + testenv.LoopWritesLanded(img) + "; dd if=/dev/zero of=" + img + " bs=64k count=1 oflag=direct conv=notrunc,fsync status=none"
	drives := []Drive{{Drive: lossy, Config: config(t, lossy, 0x5eed0002)}, {Drive: kept, Config: config(t, kept, 0x5eed0003)}, {Drive: refused, Config: config(t, refused, 0x5eed0004)}}
	// What a recording lists of each drive's cycle: its directory when
	// the cycle is recorded, and the files list is given.
	listed := make([]map[string]bool, len(drives))
	for i := range drives {
		listed[i] = map[string]bool{}
	}
	lists := 0
	list := func(files []string) error {
		lists++
		assert.Len(t, files, 2, "every pending drive's cut times at once")
		_, err := os.Stat(count)
		assert.True(t, os.IsNotExist(err), "%q are listed before the cut", files)
		for _, f := range files {
			for i, d := range drives {
				if filepath.Dir(f) == d.Config.Dir {
					listed[i][filepath.Base(f)] = true
				}
			}
		}
		return nil
	}
	recorded := map[int]powerloss.Cycle{}
	out := Cut(context.Background(), drives, 1, cut, nil, func(i int, c powerloss.Cycle) error {
		if c.NotRun == Pending {
			_, err := os.Stat(filepath.Join(drives[i].Config.Dir, StateFile))
			require.NoError(t, err, "the state is on disk when the cycle is recorded, before the cut")
		}
		entries, _ := os.ReadDir(drives[i].Config.Dir)
		for _, e := range entries {
			listed[i][e.Name()] = true
		}
		_, err := os.Stat(count)
		assert.True(t, os.IsNotExist(err), "every drive is recorded before the cut")
		recorded[i] = c
		return nil
	}, list, t.Logf)
	data, err := os.ReadFile(count)
	require.NoError(t, err)
	assert.Equal(t, "cut\n", string(data), "one cut for every drive")
	require.Len(t, out, 3)
	require.Len(t, recorded, 3)
	for i := range 2 {
		assert.Equal(t, Pending, recorded[i].NotRun)
		assert.Equal(t, "host: "+cut, recorded[i].Method)
		assert.Contains(t, out[i].NotRun, "the host's power was not cut: the cut command returned and the host ran on for 200ms")
		_, err := os.Stat(filepath.Join(drives[i].Config.Dir, "cut.log"))
		assert.NoError(t, err, "each cut drive keeps the cut's output")
	}
	assert.Contains(t, recorded[2].NotRun, refused.Path+": fio did not end normally before the cut")
	assert.Equal(t, recorded[2].NotRun, out[2].NotRun)
	start0, end0 := fioSpan(t, drives[0].Config.Dir)
	start1, end1 := fioSpan(t, drives[1].Config.Dir)
	assert.Less(t, start0, end1, "the drives are written at once")
	assert.Less(t, start1, end0, "the drives are written at once")
	for _, d := range []string{lossy.Path, kept.Path, refused.Path} {
		require.NoError(t, exec.Command("blockdev", "--setrw", d).Run())
	}

	// In the boot the state was saved in, the host's power was not cut:
	// nothing is judged.
	same := Finish(context.Background(), lossy, drives[0].Config.Dir, 5*time.Second)
	assert.Contains(t, same.NotRun, "the host's power was not cut: the host did not restart since the cut (the same boot id ")
	v := powerloss.Judge(same)
	assert.Equal(t, powerloss.Inconclusive, v.Verdict)
	assert.Contains(t, v.Message, "not judged: the host's power was not cut")
	// After a reboot (another boot id) each is judged.
	for _, d := range drives[:2] {
		otherBoot(t, d.Config.Dir)
	}
	got := Finish(context.Background(), lossy, drives[0].Config.Dir, 5*time.Second)
	require.Empty(t, got.NotRun+got.NotReturned+got.Error)
	assert.Equal(t, "host: "+cut, got.Method)
	assert.Equal(t, "a loop device keeps no count of power losses; the host restarted since the cut (another boot id)", got.NoCounters)
	jobs, err := Ledger(drives[0].Config.Dir, 4)
	require.NoError(t, err)
	want := 0
	// The 4 KiB blocks of the zeroed first 64 KiB that acknowledged writes
	// hold: how far fio's writes reached into it before the cut depends on
	// the host's load.
	zeroed := map[int64]bool{}
	for _, j := range jobs {
		require.Greater(t, len(j.Writes), 8)
		ack := (len(j.Writes) - 1) / 4 * 4
		want += ack
		for _, w := range j.Writes[:ack] {
			for b := w.Offset; b < w.Offset+w.Len && b < 65536; b += 4096 {
				zeroed[b] = true
			}
		}
	}
	assert.Equal(t, want, got.Acknowledged)
	assert.Less(t, got.Acknowledged, got.Completed, "writes completed after a job's last flush are not held")
	require.NotEmpty(t, zeroed, "acknowledged writes reached the zeroed first 64 KiB")
	first := int64(65536)
	for b := range zeroed {
		first = min(first, b)
	}
	n := int64(0)
	for zeroed[first+n] {
		n += 4096
	}
	require.NotEmpty(t, got.Lost)
	assert.Equal(t, powerloss.Lost{Offset: first, Len: n, Found: powerloss.Zeros}, got.Lost[0])
	v = powerloss.Judge(got)
	assert.Equal(t, powerloss.Fail, v.Verdict)
	assert.Contains(t, v.Message, fmt.Sprintf("first lost range: LBA %d, %d blocks (%d bytes at offset %d), came back as zeros", first/512, n/512, n, first))

	other := Finish(context.Background(), kept, drives[1].Config.Dir, 5*time.Second)
	require.Empty(t, other.NotRun+other.NotReturned+other.Error)
	assert.Greater(t, other.Acknowledged, 0)
	assert.Equal(t, 0, other.LostWrites)
	assert.Equal(t, powerloss.Pass, powerloss.Judge(other).Verdict, powerloss.Judge(other).Message)
	assert.NotEmpty(t, other.CutGap, "the gap between the drive's last write and the cut is measured")
	assert.Contains(t, powerloss.Judge(other).Message, "after the drive's last write")
	t.Logf("cut gap %s", other.CutGap)
	assert.True(t, listed[1][CutFile], "the cut's times are listed")
	assert.Equal(t, 1, lists, "in one listing")
	resumed(t, kept, drives[1].Config.Dir, listed[1], other)

	// Another drive in its place after the reboot did not return.
	swapped := lossy
	swapped.Identity = func(context.Context) (string, error) { return "another drive", nil }
	gone := Finish(context.Background(), swapped, drives[0].Config.Dir, 5*time.Second)
	assert.Contains(t, gone.NotReturned, "came back as another drive")
	assert.Equal(t, powerloss.Fail, powerloss.Judge(gone).Verdict)

	dir := drives[0].Config.Dir
	// Held to every completed write (plp = true), the drive is told how
	// many of its lost writes a flush had followed: the zeroed 64 KiB
	// held flushed writes.
	st, _, err := LoadState(dir)
	require.NoError(t, err)
	st.Cycle.Rule = powerloss.Completed.String()
	data, err = json.Marshal(st)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, StateFile), data, 0o644))
	plp := Finish(context.Background(), lossy, dir, 5*time.Second)
	require.Empty(t, plp.NotRun+plp.NotReturned+plp.Error)
	require.NotNil(t, plp.LostFlushed)
	assert.Greater(t, *plp.LostFlushed, 0)
	assert.LessOrEqual(t, *plp.LostFlushed, plp.LostWrites)
	assert.Contains(t, powerloss.Judge(plp).Message, "of them before a completed flush, which a drive must keep whatever it promises")

	// A ledger shortened after the cut (a write's line removed) is not
	// judged as the drive's: the state saved before the cut counts it.
	logs, _ := filepath.Glob(filepath.Join(dir, "sequential_lat.*.log"))
	require.Len(t, logs, 1)
	data, err = os.ReadFile(logs[0])
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	require.NoError(t, os.WriteFile(logs[0], []byte(strings.Join(lines[1:], "")), 0o644))
	altered := Finish(context.Background(), lossy, dir, 5*time.Second)
	assert.Contains(t, altered.Error, "the recording was altered")
	assert.Equal(t, powerloss.Fail, powerloss.Judge(altered).Verdict)
}

// resumed checks that a cycle judged from the files the recording
// listed (listed) is judged as want, and that one whose directory holds
// a file the recording does not list, or lacks one it lists, fails: a
// ledger planted in the place of the listed one (a drive that lost
// writes passed so), a FIFO (the judgement hung). The cut's times,
// unlisted, are not read: the cycle is not judged kept.
func resumed(t *testing.T, d cycle.Drive, dir string, listed map[string]bool, want powerloss.Cycle) {
	t.Helper()
	finish := func(listed map[string]bool) powerloss.Cycle {
		return FinishGap(context.Background(), d, dir, 5*time.Second, MaxCutGap, listed)
	}
	got := finish(listed)
	assert.Equal(t, want.Acknowledged, got.Acknowledged)
	assert.Equal(t, powerloss.Judge(want), powerloss.Judge(got), "judged from the listed files as from all")

	noTimes := maps.Clone(listed)
	delete(noTimes, CutFile)
	v := powerloss.Judge(finish(noTimes))
	assert.Equal(t, powerloss.Inconclusive, v.Verdict, v.Message)
	assert.Contains(t, v.Message, "the gap between the drive's last write and the host's cut was not measured")

	logs, _ := filepath.Glob(filepath.Join(dir, "sequential_lat.*.log"))
	require.Len(t, logs, 1)
	planted := filepath.Join(dir, "sequential_lat.9.log")
	require.NoError(t, os.Rename(logs[0], planted))
	c := finish(listed)
	assert.Contains(t, c.Error, planted+" is not listed in run.json")
	assert.Equal(t, powerloss.Fail, powerloss.Judge(c).Verdict)
	require.NoError(t, os.Rename(planted, logs[0]))

	extra := filepath.Join(dir, "random_lat.7.log")
	require.NoError(t, syscall.Mkfifo(extra, 0o644))
	c = finish(listed)
	assert.Contains(t, c.Error, extra+" is not a regular file")
	assert.Equal(t, powerloss.Fail, powerloss.Judge(c).Verdict)
	require.NoError(t, os.Remove(extra))

	state := filepath.Join(dir, StateFile)
	require.NoError(t, os.Rename(state, state+".gone"))
	c = finish(listed)
	require.NoError(t, os.Rename(state+".gone", state))
	assert.Contains(t, c.Error, state+".gone is not listed")
	gone := maps.Clone(listed)
	gone["missing.log"] = true
	c = finish(gone)
	assert.Contains(t, c.Error, filepath.Join(dir, "missing.log")+", listed in run.json before the cut, is missing")
	assert.Equal(t, powerloss.Fail, powerloss.Judge(c).Verdict)
}

// otherBoot makes the state saved in dir one of another boot: the
// "reboot" of a test, which cannot restart the host.
func otherBoot(t *testing.T, dir string) {
	st, _, err := LoadState(dir)
	require.NoError(t, err)
	st.BootID = "00000000-0000-0000-0000-000000000000"
	data, err := json.Marshal(st)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, StateFile), data, 0o644))
}

// A failing cut command is said for every drive, the cycle not judged;
// with no drive's writes saved, nothing is cut.
func TestCutCommandFails(t *testing.T) {
	d, _ := loopDrive(t)
	e, _ := loopDrive(t)
	drives := []Drive{{Drive: d, Config: config(t, d, 1)}, {Drive: e, Config: config(t, e, 2)}}
	out := Cut(context.Background(), drives, 1, "echo no outlet >&2; exit 3", nil, func(int, powerloss.Cycle) error { return nil }, nil, t.Logf)
	for _, c := range out {
		assert.Contains(t, c.NotRun, "the cut command failed (exit status 3: no outlet)")
		assert.Equal(t, powerloss.Inconclusive, powerloss.Judge(c).Verdict)
	}

	require.NoError(t, exec.Command("blockdev", "--setro", d.Path).Run())
	count := filepath.Join(t.TempDir(), "cuts")
	out = Cut(context.Background(), drives[:1], 1, "echo cut >> "+count, nil, func(int, powerloss.Cycle) error { return nil }, nil, t.Logf)
	assert.Contains(t, out[0].NotRun, "fio did not end normally before the cut")
	_, err := os.Stat(count)
	assert.True(t, os.IsNotExist(err), "no drive's writes were saved: the host is not cut")
}
