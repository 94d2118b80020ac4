//go:build !linux

package fiojob

import (
	"strings"
	"testing"
)

func TestRunNeedsLinux(t *testing.T) {
	_, _, err := Runner{}.Run(t.Context(), "job.fio")
	if err == nil || !strings.Contains(err.Error(), "needs Linux") {
		t.Errorf("Run() error = %v, want one saying running fio needs Linux", err)
	}
}
