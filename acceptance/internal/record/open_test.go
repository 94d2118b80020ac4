package record

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openCase is one file a hostile recording may hold at a.json, and what
// Open says of it ("" for a file it reads).
type openCase struct {
	name  string
	make  func(t *testing.T, dir, outside string)
	rel   string
	limit int64
	want  string
}

var openCases = []openCase{
	{"regular file", func(t *testing.T, dir, _ string) { write(t, filepath.Join(dir, "a.json"), "{}") }, "a.json", 10, ""},
	{"in a subdirectory", func(t *testing.T, dir, _ string) { write(t, filepath.Join(dir, "T/1/a.json"), "{}") }, "T/1/a.json", 10, ""},
	{"missing", func(*testing.T, string, string) {}, "a.json", 10, "no such file"},
	{"symlink outside", func(t *testing.T, dir, outside string) { symlink(t, outside, filepath.Join(dir, "a.json")) }, "a.json", 10, "a.json: is a symlink (to "},
	{"symlink inside", func(t *testing.T, dir, _ string) {
		write(t, filepath.Join(dir, "b.json"), "{}")
		symlink(t, "b.json", filepath.Join(dir, "a.json"))
	}, "a.json", 10, "is a symlink"},
	{"symlink to /proc/self/environ", func(t *testing.T, dir, _ string) { symlink(t, "/proc/self/environ", filepath.Join(dir, "a.json")) }, "a.json", 1 << 20, "is a symlink"},
	{"symlink to /dev/zero", func(t *testing.T, dir, _ string) { symlink(t, "/dev/zero", filepath.Join(dir, "a.json")) }, "a.json", 1 << 20, "is a symlink"},
	{"symlinked directory", func(t *testing.T, dir, outside string) {
		symlink(t, filepath.Dir(outside), filepath.Join(dir, "T"))
	}, "T/" + "canary", 10, "its directory T is a symlink"},
	{"hard link to a file outside", func(t *testing.T, dir, outside string) {
		// O_NOFOLLOW does not see a hard link: the canary would be read,
		// and its first line quoted in the cell's error.
		require.NoError(t, os.Link(outside, filepath.Join(dir, "a.json")))
	}, "a.json", 10, "a.json: has 2 hard links"},
	{"FIFO", func(t *testing.T, dir, _ string) {
		require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "a.json"), 0o644))
	}, "a.json", 10, "a.json: is a FIFO, not a regular file"},
	{"socket", func(t *testing.T, dir, _ string) {
		l, err := net.Listen("unix", filepath.Join(dir, "a.json"))
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
	}, "a.json", 10, "is a socket"},
	{"directory", func(t *testing.T, dir, _ string) { require.NoError(t, os.Mkdir(filepath.Join(dir, "a.json"), 0o755)) }, "a.json", 10, "is a directory"},
	{"2 GiB sparse", func(t *testing.T, dir, _ string) {
		write(t, filepath.Join(dir, "a.json"), "{")
		require.NoError(t, os.Truncate(filepath.Join(dir, "a.json"), 2<<30))
	}, "a.json", MaxOutput, "holds 2147483648 bytes, above the 64 MiB a recording's fio output may hold"},
	{"one byte over", func(t *testing.T, dir, _ string) { write(t, filepath.Join(dir, "a.json"), "12345678901") }, "a.json", 10, "holds 11 bytes, above the 10 bytes"},
	{"dot dot", func(*testing.T, string, string) {}, "T/../../canary", 10, "climbs out of the recording"},
	{"absolute", func(*testing.T, string, string) {}, "/etc/passwd", 10, "is an absolute path"},
	{"empty", func(*testing.T, string, string) {}, "", 10, "is not a file name"},
	{"dot", func(*testing.T, string, string) {}, ".", 10, "is the recording's directory"},
}

// Open opens only regular files inside the recording within their
// limit, and names the file and why for everything else, at once (a
// FIFO with no writer does not block it).
func TestOpen(t *testing.T) {
	for _, tt := range openCases {
		t.Run(tt.name, func(t *testing.T) {
			top := t.TempDir()
			dir, outside := filepath.Join(top, "rec"), filepath.Join(top, "canary")
			require.NoError(t, os.Mkdir(dir, 0o755))
			write(t, outside, "CANARY")
			tt.make(t, dir, outside)
			data, err := ReadFileLimit(dir, tt.rel, tt.limit)
			if tt.want == "" {
				require.NoError(t, err)
				assert.Equal(t, "{}", string(data))
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, string(data), "CANARY")
			if tt.rel != "" {
				assert.Contains(t, err.Error(), strings.TrimPrefix(tt.rel, "/"), "the error names the file")
			}
			if tt.name == "missing" {
				assert.True(t, errors.Is(err, fs.ErrNotExist), "missing is fs.ErrNotExist: %v", err)
			} else {
				assert.True(t, errors.Is(err, ErrRefused), "refused is ErrRefused: %v", err)
			}
			if tt.name != "missing" && tt.name != "one byte over" {
				_, herr := HashIn(dir, tt.rel)
				assert.True(t, errors.Is(herr, ErrRefused), "hashing is refused the same: %v", herr)
			}
		})
	}
}

// Each kind of file a recording holds has the limit docs/results.md gives.
func TestLimitOf(t *testing.T) {
	for rel, want := range map[string]int64{
		"run.json": MaxRunJSON,
		"TestSingleDrive/1.92TB/4KB_Random_Read.json":        MaxOutput,
		"TestSingleDrive/1.92TB/4KB_Random_Read.stderr":      MaxStderr,
		"TestSingleDrive/1.92TB/4KB_Random_Read.fio":         MaxSidecar,
		"TestSingleDrive/1.92TB/4KB_Random_Read.steady.json": MaxSidecar,
		"TestScaling/24_drives/4KB_Random_Read.cpu.json":     MaxSidecar,
		"health/0.before.json":                               MaxSidecar,
		"prepare/003-verify_pass.json":                       MaxPrepare,
		"prepare/003-verify_pass.stderr":                     MaxStderr,
		"prepare/008-random.drive0_iops.1.log":               MaxPrepare,
		"prepare/008-random.log.gz":                          MaxLog,
		"TestScaling/24_drives/4KB_Random_Read.log.gz":       MaxLog,
	} {
		if got := LimitOf(rel); got != want {
			t.Errorf("LimitOf(%q) = %d, want %d", rel, got, want)
		}
	}
}

// A file that grows past its limit after it was opened is not read past
// it.
func TestReadStopsAtLimit(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.json"), "12345")
	f, _, err := Open(dir, "a.json", 10)
	require.NoError(t, err)
	defer f.Close()
	write(t, filepath.Join(dir, "a.json"), strings.Repeat("x", 100))
	_, err = Read(f, 10)
	assert.ErrorContains(t, err, "grew past the 10 bytes")
}

func write(t *testing.T, path, s string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(s), 0o644))
}

func symlink(t *testing.T, target, path string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.Symlink(target, path))
}
