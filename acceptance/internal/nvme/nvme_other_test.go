//go:build !linux

package nvme

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestRunNeedsLinux(t *testing.T) {
	cli := CLI{Binary: fakeNVMe(t, `echo "nvme version 2.9.1"`)}
	_, err := cli.Version(context.Background())
	var ce *CommandError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "needs Linux") {
		t.Errorf("Version() error = %v, want a *CommandError saying running nvme-cli needs Linux", err)
	}
}
