package verdict

import (
	"reflect"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/plan"
)

type stderrIOTest struct {
	line  string
	drive int
	msg   string
	ok    bool
}

var stderrPaths = []string{"/dev/loop1", "/dev/loop10", "/dev/disk/by-path/pci-0000:01:00.0-nvme-1"}

var stderrIOTests = []stderrIOTest{
	// fio-3.33 on a loop device cut short mid-cell.
	{"fio: io_u error on file /dev/loop10: Input/output error: read offset=33554432, buflen=131072\n",
		1, "errno 5 (input/output error): read offset=33554432, buflen=131072", true},
	{"fio: io_u error on file /dev/loop1: No space left on device: write offset=8388608, buflen=4096",
		0, "errno 28 (no space left on device): write offset=8388608, buflen=4096", true},
	// A path with ':' as the job file escapes it, and as given.
	{`fio: io_u error on file /dev/disk/by-path/pci-0000\:01\:00.0-nvme-1: Remote I/O error: read offset=0, buflen=4096`,
		2, "errno 121 (remote I/O error): read offset=0, buflen=4096", true},
	{"fio: io_u error on file /dev/disk/by-path/pci-0000:01:00.0-nvme-1: Connection timed out: read offset=0, buflen=4096",
		2, "errno 110 (connection timed out): read offset=0, buflen=4096", true},
	// The job's own error is not the drive's.
	{"fio: io_u error on file /dev/loop1: Invalid argument: read offset=0, buflen=512", 0, "", false},
	// A file that is not one of the step's drives.
	{"fio: io_u error on file /dev/loop2: Input/output error: read offset=0, buflen=4096", 0, "", false},
	{"fio: pid=123, err=5/file:io_u.c:1889, func=io_u error, error=Input/output error", 0, "", false},
	{"", 0, "", false},
}

func TestStderrIOError(t *testing.T) {
	for _, tt := range stderrIOTests {
		drive, msg, ok := StderrIOError(tt.line, stderrPaths)
		if drive != tt.drive || msg != tt.msg || ok != tt.ok {
			t.Errorf("StderrIOError(%q) = %d, %q, %v, want %d, %q, %v", tt.line, drive, msg, ok, tt.drive, tt.msg, tt.ok)
		}
	}
}

// Each drive's first I/O error is its failure, named by its index in the
// run's drives; the next lines on it are not new.
func TestStderrIOErrorsEachDriveOnce(t *testing.T) {
	var list []plan.Drive
	for _, p := range []string{"/dev/nvme0n1", "/dev/nvme1n1", "/dev/nvme2n1"} {
		var d plan.Drive
		d.Path = p
		list = append(list, d)
	}
	s := NewStderrIOErrors(list, []int{2, 0})
	var out [][]DriveIOError
	for _, line := range []string{
		"fio: io_u error on file /dev/nvme2n1: Input/output error: read offset=0, buflen=4096",
		"fio: io_u error on file /dev/nvme2n1: Input/output error: read offset=4096, buflen=4096",
		"fio: io_u error on file /dev/nvme1n1: Input/output error: read offset=0, buflen=4096",
		"fio: io_u error on file /dev/nvme0n1: No data available: read offset=8192, buflen=4096",
	} {
		out = append(out, s.Next(line))
	}
	want := [][]DriveIOError{
		{{2, "fio's jobs on /dev/nvme2n1 failed: errno 5 (input/output error): read offset=0, buflen=4096 (named on fio's stderr as it happened)"}},
		nil,
		nil, // not a drive of this step
		{{0, "fio's jobs on /dev/nvme0n1 failed: errno 61 (no data available): read offset=8192, buflen=4096 (named on fio's stderr as it happened)"}},
	}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("Next = %+v, want %+v", out, want)
	}
}
