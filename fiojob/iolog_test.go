package fiojob

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The IOPS logs below were written by the run that recorded iops-log.json:
// two targets × 2 jobs of 4 KiB random write for 6 s, log_avg_msec=1000,
// write_iops_log=iops-log-driveI in target I's section (see the fixtures
// README).

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

func TestParseIOPSLogFixture(t *testing.T) {
	got, err := ReadIOPSLog(filepath.Join(fixtureDir, "iops-log-drive0_iops.1.log"))
	if err != nil {
		t.Fatal(err)
	}
	// The file's lines: "1000, 4870, 1, 0, 0" ... "5079, 2281, 1, 0, 0".
	want := []Sample{
		{ms(1000), 4870, DirWrite},
		{ms(2000), 6707, DirWrite},
		{ms(3000), 7471, DirWrite},
		{ms(4000), 9727, DirWrite},
		{ms(5079), 2281, DirWrite},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadIOPSLog mismatch (-want +got):\n%s", diff)
	}
}

type parseIOPSLogTest struct {
	name string
	in   string
	want []Sample
	err  string // error substring; "" for none
}

var parseIOPSLogTests = []parseIOPSLogTest{
	{"fio 3.33, no offset", "1000, 4870, 1, 0, 0\n", []Sample{{ms(1000), 4870, DirWrite}}, ""},
	{"log_offset=1", "1000, 4870, 0, 0, 0, 0\n", []Sample{{ms(1000), 4870, DirRead}}, ""},
	{"older fio, 4 columns", "1000, 4870, 2, 0\n", []Sample{{ms(1000), 4870, DirTrim}}, ""},
	{"mixed, blank line, CRLF", "1000, 70, 0, 0, 0\r\n1000, 30, 1, 0, 0\r\n\n",
		[]Sample{{ms(1000), 70, DirRead}, {ms(1000), 30, DirWrite}}, ""},
	{"empty", "", nil, ""},
	{"too few fields", "1000, 4870, 1\n", nil, "line 1: \"1000, 4870, 1\" has 3 fields"},
	{"bad time", "1000, 1, 1, 0, 0\nsoon, 1, 1, 0, 0\n", nil, "line 2: time \"soon\""},
	{"bad value", "1000, -3, 1, 0, 0\n", nil, "line 1: value \"-3\""},
	{"bad direction", "1000, 3, 7, 0, 0\n", nil, "line 1: direction \"7\""},
}

func TestParseIOPSLog(t *testing.T) {
	for _, tt := range parseIOPSLogTests {
		got, err := ParseIOPSLog(strings.NewReader(tt.in))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: ParseIOPSLog(%q) error = %v, want one containing %q", tt.name, tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: ParseIOPSLog(%q): %v", tt.name, tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: ParseIOPSLog(%q) mismatch (-want +got):\n%s", tt.name, tt.in, diff)
		}
	}
}

func TestReadIOPSLogErrorNamesFileAndLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x_iops.1.log")
	if err := os.WriteFile(p, []byte("1000, 1, 1, 0, 0\n2000, x, 1, 0, 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadIOPSLog(p)
	if want := p + ":2: value \"x\""; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("ReadIOPSLog error = %v, want prefix %q", err, want)
	}
}

func TestIOPSLogFiles(t *testing.T) {
	for _, tt := range []struct {
		prefix string
		want   []string
	}{
		{"iops-log-drive0", []string{"iops-log-drive0_iops.1.log", "iops-log-drive0_iops.2.log"}},
		{"iops-log-drive1", []string{"iops-log-drive1_iops.3.log", "iops-log-drive1_iops.4.log"}},
		{"./iops-log-drive1", []string{"iops-log-drive1_iops.3.log", "iops-log-drive1_iops.4.log"}},
	} {
		got, err := IOPSLogFiles(fixtureDir + "/" + tt.prefix)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			got[i] = filepath.Base(got[i])
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("IOPSLogFiles(%q) mismatch (-want +got):\n%s", tt.prefix, diff)
		}
	}
	if _, err := IOPSLogFiles(filepath.Join(fixtureDir, "iops-log-drive")); err == nil {
		t.Error("IOPSLogFiles(iops-log-drive) found logs; it must not take another prefix's")
	}

	// Job numbers sort as numbers; per_job_logs=0 writes PREFIX_iops.log.
	dir := t.TempDir()
	for _, f := range []string{"p[1]_iops.10.log", "p[1]_iops.9.log", "p[1]_iops.x.log", "q_iops.log"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := IOPSLogFiles(filepath.Join(dir, "p[1]"))
	if want := []string{filepath.Join(dir, "p[1]_iops.9.log"), filepath.Join(dir, "p[1]_iops.10.log")}; err != nil || !cmp.Equal(got, want) {
		t.Errorf("IOPSLogFiles(p[1]) = %q, %v, want %q", got, err, want)
	}
	got, err = IOPSLogFiles(filepath.Join(dir, "q"))
	if want := []string{filepath.Join(dir, "q_iops.log")}; err != nil || !cmp.Equal(got, want) {
		t.Errorf("IOPSLogFiles(q) = %q, %v, want %q", got, err, want)
	}
}
