package cycle

import (
	"context"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/powerloss"
)

// The steps of a cycle, for a cycle whose cut and read-back are not in
// one process (package powerloss/hostcut: the whole host's power cut,
// the cycle judged after the reboot).

// RunFio runs fio on the job file job to its end, its JSON output in
// c.Dir/fio.json and its stderr in c.Dir/fio.stderr; the error says how
// it did not end normally.
func RunFio(ctx context.Context, c Config, job string) error {
	f := startFio(ctx, c, job)
	if f.err != nil {
		return f.err
	}
	<-f.done
	return f.wait
}

// Snapshot is the FNV-64 hash of each bs block of the first size bytes
// of path, read past the page cache: what the blocks held before the
// cycle, to tell "old data" when one comes back.
func Snapshot(path string, size, bs int64) ([]uint64, error) { return snapshot(path, size, bs) }

// Returned waits up to within for d to open and identify as id, and
// says whether it did; when not, out says how (NotRun, Renamed or
// NotReturned).
func Returned(ctx context.Context, d Drive, id string, within time.Duration, out *powerloss.Cycle) bool {
	return returned(ctx, d, id, within, out)
}

// Pair is each counter read before with its reading after, and what read
// before but not after (why: why none read after).
func Pair(before, after []powerloss.Counter, why string) ([]powerloss.Counter, string) {
	return pair(before, after, why)
}

// Command runs cmd by sh with the drive's values env in the suite's
// environment less its own DQ_ variables, its output in logPath (env
// first), within a minute.
func Command(ctx context.Context, cmd string, env []string, logPath string) error {
	return command(ctx, cmd, env, logPath)
}

// LastWrite watches the count of writes the kernel completed to the
// block device at path (/sys/block/NAME/stat) every 10 ms until stop is
// closed, and returns when it last rose (the zero time where the kernel
// keeps no count, or it never rose).
func LastWrite(path string, stop <-chan struct{}) <-chan time.Time {
	out := make(chan time.Time, 1)
	go func() {
		var last time.Time
		n, ok := writesDone(path)
		for ok {
			select {
			case <-stop:
				out <- last
				return
			case <-time.After(10 * time.Millisecond):
			}
			var now int64
			if now, ok = writesDone(path); ok && now != n {
				n, last = now, time.Now()
			}
		}
		<-stop
		out <- last
	}()
	return out
}
