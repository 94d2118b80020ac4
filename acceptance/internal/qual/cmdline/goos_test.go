package cmdline

import (
	"path/filepath"
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

// TestValidateOffLinux: off Linux, Validate refuses -drives, with or
// without -dry-run, in one error naming the flag, and takes a replay, of
// the spec's fixtures or of a recording, as on Linux.
func TestValidateOffLinux(t *testing.T) {
	defer func(g string) { goos = g }(goos)
	goos = "darwin"
	dir := t.TempDir()
	report := filepath.Join(dir, "report")
	for _, tc := range []struct {
		name  string
		flags Flags
		want  string // the one error; "": none
	}{
		{"live", Flags{Drives: "/dev/disk4", Destructive: true}, "parsing -drives: live runs need Linux; on darwin drivequal can only replay"},
		{"dry run", Flags{Drives: "/dev/disk4", DryRun: true}, "parsing -drives: live runs need Linux; on darwin drivequal can only replay"},
		{"replay of the fixtures", Flags{}, ""},
		{"replay of a recording", Flags{Replay: dir}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.flags
			f.Spec, f.Precondition, f.Report = "solidigm-d7-ps1010", "full", report
			_, errs := f.Validate(dir)
			switch {
			case tc.want == "" && len(errs) != 0:
				t.Errorf("Validate(%+v) = %v, want no error", f, errs)
			case tc.want != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want)):
				t.Errorf("Validate(%+v) = %v, want one error holding %q", f, errs, tc.want)
			}
		})
	}
}
