package cmdline

import "testing"

type resumeCommandTest struct {
	args []string // the test binary's arguments, as go test gives them
	want string
}

var resumeCommandTests = []resumeCommandTest{
	{
		[]string{"-test.paniconexit0", "-test.timeout=12h0m0s", "-test.count=1", "-drives=/dev/nvme0n1,/dev/nvme1n1", "-destructive", "-report=/srv/qual/report"},
		"go test ./acceptance -timeout=12h0m0s -count=1 -args -drives=/dev/nvme0n1,/dev/nvme1n1 -destructive -report=/srv/qual/report -resume",
	},
	{
		// go test -v and -run, and a flag given as two words; -overwrite
		// started the run anew and goes.
		[]string{"-test.testlogfile=/tmp/go-build1/b001/testlog.txt", "-test.v=true", "-test.run=TestSingleDrive/1.92TB", "-drives", "/dev/nvme0n1", "-destructive", "-overwrite", "-runtime=2s"},
		"go test ./acceptance -v -run=TestSingleDrive/1.92TB -args -drives /dev/nvme0n1 -destructive -runtime=2s -resume",
	},
	{
		// A resumed run interrupted again: -resume once; a value with a
		// space quoted.
		[]string{"-test.timeout=1h", "-spec=/home/me/my specs/x.toml", "-drives=/dev/loop3", "-destructive", "-resume"},
		"go test ./acceptance -timeout=1h -args -spec='/home/me/my specs/x.toml' -drives=/dev/loop3 -destructive -resume",
	},
}

func TestResumeCommand(t *testing.T) {
	for _, tt := range resumeCommandTests {
		if got := ResumeCommand(tt.args); got != tt.want {
			t.Errorf("ResumeCommand(%q) =\n%s\nwant\n%s", tt.args, got, tt.want)
		}
	}
}
