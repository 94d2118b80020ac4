package firmware

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The load counts as running once the kernel saw the drive complete an
// I/O more than before fio started: waitLoad waits for it (not past its
// limit), and does not wait for a device the kernel keeps no statistics
// of.
func TestWaitLoad(t *testing.T) {
	dir := t.TempDir()
	defer func(old string) { sysBlock = old }(sysBlock)
	sysBlock = dir
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "nvme2n1"), 0o755))
	stat := filepath.Join(dir, "nvme2n1", "stat")
	// Written whole and renamed over, as the kernel's stat file is read
	// whole: a reader that came between os.WriteFile's truncation and its
	// write saw no statistics, and waitLoad rightly returned at once (a
	// loaded make test once caught the second wait below there).
	write := func(s string) { // also from a goroutine: t.Error, not FailNow
		tmp := stat + ".tmp"
		if err := os.WriteFile(tmp, []byte(s), 0o644); err != nil {
			t.Error(err)
		} else if err := os.Rename(tmp, stat); err != nil {
			t.Error(err)
		}
	}
	write("     100        0     800       12       50        0      400        7        0       20       19        0        0        0        0        0        0\n")
	n, err := completed("/dev/nvme2n1")
	require.NoError(t, err)
	assert.Equal(t, int64(150), n)

	// start is taken before the goroutine that writes 300 ms later is
	// started: taken after it, the goroutine's sleep could begin first,
	// and the write come less than 300 ms after start (299.2 ms in a
	// loaded make test), failing a wait that was right.
	start := time.Now()
	go func() {
		time.Sleep(300 * time.Millisecond)
		write("     100        0     800       12       51        0      408        7        0       20       19        0        0        0        0        0        0\n")
	}()
	waitLoad(context.Background(), "/dev/nvme2n1", n, 10*time.Second)
	assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond, "returned before the drive completed an I/O")
	assert.Less(t, time.Since(start), 10*time.Second, "returned only at its limit")

	start = time.Now()
	waitLoad(context.Background(), "/dev/nvme2n1", 151, 200*time.Millisecond)
	assert.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond, "an idle drive waits out the limit")

	start = time.Now()
	waitLoad(context.Background(), "/dev/nothere", 0, 10*time.Second)
	assert.Less(t, time.Since(start), time.Second, "a device without statistics is not waited for")
}
