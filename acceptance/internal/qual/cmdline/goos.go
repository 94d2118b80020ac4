package cmdline

import (
	"fmt"
	"runtime"
)

// goos is the system Validate judges -drives for: runtime.GOOS, which
// tests set to check the refusal elsewhere.
var goos = runtime.GOOS

// liveRefusal is why -drives is refused on the system goos, or "" on
// Linux: a live run holds block devices with O_EXCL and flock, reads
// sysfs, and ties fio and nvme-cli to the suite with Linux's parent-death
// signal. Elsewhere (a laptop replaying a recording) only replay runs.
func liveRefusal(goos string) string {
	if goos == "linux" {
		return ""
	}
	return fmt.Sprintf("live runs need Linux; on %s drivequal can only replay: drop -drives to replay the spec's fixtures, or give -replay=DIR for a recording", goos)
}
