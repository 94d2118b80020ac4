//go:build !linux

package fiojob

import (
	"context"
	"fmt"
	"runtime"
)

// run cannot start fio here: Runner ties fio to the life of this process
// with Linux's parent-death signal and finds fio's job processes through
// /proc, and a fio started without them could outlive the test.
func (r Runner) run(ctx context.Context, bin string, args []string, watch bool) (stdout, stderr []byte, err error) {
	return nil, nil, fmt.Errorf("starting fio: running fio needs Linux, not %s (fio is tied to this process with a parent-death signal)", runtime.GOOS)
}
