package report

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// tempFiles lists the files WriteFileAtomic would have left behind in dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp-") {
			found = append(found, path)
		}
		return nil
	})
	return found
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "dir", "results.json") // parents missing
	if err := WriteFileAtomic(path, []byte("first\n")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, []byte("second\n")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "second\n" {
		t.Errorf("after two writes the file holds %q, want %q", got, "second\n")
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o644 {
		t.Errorf("mode = %v, want 0644", perm)
	}
	if left := tempFiles(t, dir); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only results.json", len(entries))
	}
}

func TestWriteFileAtomicErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	isDir := filepath.Join(dir, "isdir")
	if err := os.MkdirAll(filepath.Join(isDir, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		filepath.Join(file, "results.json"),         // parent is a regular file
		filepath.Join(file, "a", "b", "summary.md"), // ancestor is a regular file
		isDir, // a non-empty directory cannot be replaced by a file
	} {
		err := WriteFileAtomic(path, []byte("data"))
		if err == nil {
			t.Errorf("WriteFileAtomic(%s) succeeded", path)
			continue
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("WriteFileAtomic(%s) error %q does not name the path", path, err)
		}
	}
	if left := tempFiles(t, dir); len(left) > 0 {
		t.Errorf("temporary files left after failed writes: %v", left)
	}
}

var chartLink = regexp.MustCompile(`\]\((charts/[^)]+\.svg)\)`)

func TestWrite(t *testing.T) {
	r := fixedRun()
	dir := filepath.Join(t.TempDir(), "report") // Write creates it
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	// Writing again replaces every file in place.
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}

	js, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	charts, err := r.Charts()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{ResultsFile: js, SummaryFile: r.Summary()}
	for name, svg := range charts {
		want[filepath.Join(ChartsDir, name)] = svg
	}

	var files []string
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files = append(files, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var wantFiles []string
	for name := range want {
		wantFiles = append(wantFiles, name)
	}
	slices.Sort(files)
	slices.Sort(wantFiles)
	if !slices.Equal(files, wantFiles) {
		t.Fatalf("Write wrote %v, want %v", files, wantFiles)
	}
	for name, data := range want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		// Charts are compared only in size: rendering need not be
		// byte-for-byte repeatable.
		if strings.HasSuffix(name, ".svg") {
			if len(got) == 0 {
				t.Errorf("%s is empty", name)
			}
			continue
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%s differs from what the Run renders", name)
		}
	}

	// Every chart summary.md links to is there.
	links := chartLink.FindAllStringSubmatch(string(want[SummaryFile]), -1)
	if len(links) != len(charts) {
		t.Errorf("summary.md links %d charts, Charts made %d", len(links), len(charts))
	}
	for _, m := range links {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(m[1]))); err != nil {
			t.Errorf("summary.md links %s: %v", m[1], err)
		}
	}
}

func TestWriteErrors(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// results.json as a non-empty directory: the report directory exists
	// and is writable, yet results.json cannot be replaced.
	blocked := filepath.Join(base, "blocked")
	if err := os.MkdirAll(filepath.Join(blocked, ResultsFile, "x"), 0o755); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		dir  string
		path string // the path the error must name
	}{
		{filepath.Join(file, "report"), filepath.Join(file, "report")},
		{file, file},
		{blocked, filepath.Join(blocked, ResultsFile)},
	}
	for _, tt := range tests {
		err := fixedRun().Write(tt.dir)
		if err == nil {
			t.Errorf("Write(%s) succeeded", tt.dir)
			continue
		}
		if !strings.Contains(err.Error(), tt.path) {
			t.Errorf("Write(%s) error %q does not name %s", tt.dir, err, tt.path)
		}
	}
	if left := tempFiles(t, base); len(left) > 0 {
		t.Errorf("temporary files left after failed writes: %v", left)
	}
}
