package qual

import (
	"strings"
	"testing"
)

func TestLiveRefusal(t *testing.T) {
	if got := liveRefusal("linux"); got != "" {
		t.Errorf("liveRefusal(linux) = %q, want none", got)
	}
	for _, goos := range []string{"darwin", "windows", "freebsd"} {
		got := liveRefusal(goos)
		if !strings.Contains(got, "live runs need Linux; on "+goos+" drivequal can only replay") || !strings.Contains(got, "drop -drives") || !strings.Contains(got, "-replay=DIR") {
			t.Errorf("liveRefusal(%s) = %q, want it to say only replay runs, and how", goos, got)
		}
	}
}
