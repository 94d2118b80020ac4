//go:build linux

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc64"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// The suite is killed with SIGKILL in the middle of a cell, as the OOM
// killer or a CI runner's hard cancel would: only the suite's own pid, not
// its process group, and nothing of the suite gets to clean up. The fio it
// started must die with it, not go on writing the drive for the rest of its
// 60 s runtime.
func TestSuiteKilledStopsFio(t *testing.T) {
	// Its checks are of verdicts and recordings, not of speed.
	runParallel(t)
	uncapped(t)
	dev := newLoop(t, safetySize)
	rep := filepath.Join(t.TempDir(), "report")
	job := filepath.Join(rep, "raw", filepath.FromSlash(cellWrite)+".fio")
	mine := ours(t)
	t.Cleanup(func() {
		// A fio the suite left behind must not write for a minute more.
		for _, pid := range fioProcesses(mine) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})

	type kill struct {
		fio []int // the suite's fio when it was killed
		err error
	}
	killed := make(chan kill, 1)
	r := runSuiteCtx(context.Background(), t, func(cmd *exec.Cmd) {
		go func() {
			var k kill
			_, k.err = fioRunning(job, 30*time.Second)
			if k.err == nil {
				k.err = beingWritten(dev, 5*time.Second)
			}
			k.fio = fioProcesses(mine)
			// Killed in any case: on an error above, the cell would
			// otherwise run its whole minute.
			if err := syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); k.err == nil {
				k.err = err
			}
			killed <- k
		}()
	}, nil, []string{"-test.run=^TestSingleDrive$/^64MiB$/^4KB_Random_Write$"},
		"-spec="+faultSpec(t), "-drives="+dev, "-destructive", "-precondition=none",
		"-runtime=60s", "-report="+rep)
	ended := time.Now()
	k := <-killed
	require.NoError(t, k.err, "suite stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	require.NotEmpty(t, k.fio)
	assert.Equal(t, -1, r.Code, "the suite ended by SIGKILL, not on its own")

	for {
		left := fioProcesses(mine)
		for _, pid := range k.fio {
			if alive(pid) && !contains(left, pid) {
				left = append(left, pid)
			}
		}
		if len(left) == 0 {
			break
		}
		// A killed fio's threads exit once their queued I/O completes,
		// which on a starved machine can take seconds, not its minute.
		if time.Since(ended) > 5*time.Second {
			t.Fatalf("fio processes the suite started still run 5 s after it was killed: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("no fio left %v after the suite was killed", time.Since(ended).Round(time.Millisecond))

	// Nothing writes the device any more. Writes the kernel had queued
	// when fio died may still complete (a loop device completes one only
	// when its backing file has it, and a machine under load may take a
	// while): the test waits for them to settle, so that they do not fail
	// it. The check is what follows: neither the device's data, block by
	// block, nor the kernel's counts of sectors written and discarded
	// change over a second.
	counts := settled(t, dev)
	blocks := deviceBlocks(t, dev)
	time.Sleep(time.Second)
	assert.Equal(t, "", changedBlocks(blocks, deviceBlocks(t, dev)), "%s changed after the suite was killed", dev)
	assert.Equal(t, counts, ioCounts(t, dev), "%s was written after the suite was killed (sectors written, discarded)", dev)
}

// settled waits, up to 20 s, until dev has no request in flight
// (/sys/block/<dev>/inflight) and its counts of sectors written and
// discarded have not moved over three polls 20 ms apart (the kernel
// counts a completed request's sectors a moment after it leaves the
// in-flight count), and returns those counts. A test that killed a run
// calls it before it takes a device's "before" state: writes the killed
// fio had queued are the run's, not what the test checks next. It is
// no check itself: a writer with gaps between its I/Os can look settled.
func settled(t *testing.T, dev string) [2]uint64 {
	t.Helper()
	p := filepath.Join("/sys/block", filepath.Base(dev), "inflight")
	deadline := time.Now().Add(20 * time.Second)
	var last [2]uint64
	still := 0
	for {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		counts := ioCounts(t, dev)
		if f := strings.Fields(string(b)); len(f) == 2 && f[0] == "0" && f[1] == "0" && counts == last {
			still++
		} else {
			still = 0
		}
		if still == 3 {
			return counts
		}
		last = counts
		if time.Now().After(deadline) {
			t.Fatalf("%s did not settle within 20 s: in flight (reads, writes) %s, sectors written and discarded %v", dev, strings.TrimSpace(string(b)), counts)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ioCounts is the kernel's count of sectors written to dev and of sectors
// discarded from it (fields 7 and 14 of /sys/block/<dev>/stat).
func ioCounts(t *testing.T, dev string) [2]uint64 {
	t.Helper()
	var n [2]uint64
	for i, field := range []int{6, 13} {
		var err error
		n[i], err = statField(dev, field)
		require.NoError(t, err)
	}
	return n
}

// block is one 4 KiB block of a device: its CRC-64 and whether it is
// all zeros.
type block struct {
	sum  uint64
	zero bool
}

// deviceBlocks reads dev as it holds it now (its cached pages dropped
// first, BLKFLSBUF), block by block.
func deviceBlocks(t *testing.T, dev string) []block {
	t.Helper()
	f, err := os.Open(dev)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, unix.IoctlSetInt(int(f.Fd()), unix.BLKFLSBUF, 0), "BLKFLSBUF %s", dev)
	table := crc64.MakeTable(crc64.ECMA)
	zeros := make([]byte, 4096)
	var blocks []block
	buf := make([]byte, 1<<20)
	for {
		n, err := io.ReadFull(f, buf)
		for b := buf[:n]; len(b) > 0; {
			k := min(len(b), 4096)
			blocks = append(blocks, block{crc64.Checksum(b[:k], table), bytes.Equal(b[:k], zeros[:k])})
			b = b[k:]
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return blocks
		}
		require.NoError(t, err, "reading %s", dev)
	}
}

// changedBlocks names the blocks that differ between before and after
// (how many, the first's byte offset, and whether each side of it was
// zeros), or is "" when none does.
func changedBlocks(before, after []block) string {
	if len(before) != len(after) {
		return fmt.Sprintf("%d blocks of 4 KiB before, %d after", len(before), len(after))
	}
	first, n := -1, 0
	for i := range before {
		if before[i] != after[i] {
			if first < 0 {
				first = i
			}
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d blocks of 4 KiB changed, the first at byte %d (zeros before: %t, after: %t)",
		n, int64(first)*4096, before[first].zero, after[first].zero)
}

// deviceSum is sha256File of a block device as the device holds it now:
// the kernel's cached pages of it are dropped first (BLKFLSBUF).
func deviceSum(t *testing.T, dev string) string {
	t.Helper()
	f, err := os.Open(dev)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, unix.IoctlSetInt(int(f.Fd()), unix.BLKFLSBUF, 0), "BLKFLSBUF %s", dev)
	return testenv.SHA256(t, dev)
}

// beingWritten waits up to within for the kernel's count of sectors written
// to dev to grow.
func beingWritten(dev string, within time.Duration) error {
	first, err := readSectorsWritten(dev)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		n, err := readSectorsWritten(dev)
		if err != nil {
			return err
		}
		if n > first {
			return nil
		}
	}
	return fmt.Errorf("nothing was written to %s within %s of fio starting", dev, within)
}

// readSectorsWritten reads field 7 of /sys/block/<dev>/stat: sectors
// (512 bytes) written since the device appeared.
func readSectorsWritten(dev string) (uint64, error) { return statField(dev, 6) }

// statField is field i (from 0) of /sys/block/<dev>/stat.
func statField(dev string, i int) (uint64, error) {
	p := filepath.Join("/sys/block", filepath.Base(dev), "stat")
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) <= i {
		return 0, fmt.Errorf("%s: %d fields, want at least %d", p, len(f), i+1)
	}
	return strconv.ParseUint(f[i], 10, 64)
}

func contains(pids []int, pid int) bool {
	for _, p := range pids {
		if p == pid {
			return true
		}
	}
	return false
}
