//go:build !linux

package nvme

import (
	"fmt"
	"os/exec"
	"runtime"
)

// run cannot start nvme-cli here: CLI ties nvme-cli to the life of this
// process with Linux's parent-death signal, and an nvme-cli started
// without it (a format or a sanitize) could outlive the test.
func run(cmd *exec.Cmd) (started bool, err error) {
	return false, fmt.Errorf("running nvme-cli needs Linux, not %s (nvme-cli is tied to this process with a parent-death signal)", runtime.GOOS)
}
