package firmware

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// sysBlock is where the kernel lists block devices with their I/O
// statistics.
var sysBlock = "/sys/class/block"

// completed is how many I/Os the kernel saw dev (/dev/nvme0n1, or a link
// to it) complete: its stat file's reads and writes completed.
func completed(dev string) (int64, error) {
	if p, err := filepath.EvalSymlinks(dev); err == nil {
		dev = p
	}
	b, err := os.ReadFile(filepath.Join(sysBlock, filepath.Base(dev), "stat"))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 5 {
		return 0, &os.PathError{Op: "parse", Path: filepath.Join(sysBlock, filepath.Base(dev), "stat"), Err: os.ErrInvalid}
	}
	r, err1 := strconv.ParseInt(f[0], 10, 64)
	w, err2 := strconv.ParseInt(f[4], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, &os.PathError{Op: "parse", Path: filepath.Join(sysBlock, filepath.Base(dev), "stat"), Err: os.ErrInvalid}
	}
	return r + w, nil
}

// waitLoad returns once dev has completed an I/O more than it had at
// since (the load is running), when ctx ends, or after limit; at once
// when the kernel gives no statistics for dev. fio takes its time to
// start (64 libraries to load, under an emulator seconds), and an
// activation before its first I/O is a stall it never sees.
func waitLoad(ctx context.Context, dev string, since int64, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		n, err := completed(dev)
		if err != nil || n > since {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}
