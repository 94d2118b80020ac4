package testenv

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// BuildTree builds the fake file tree described by file src under a new
// temporary directory and returns that directory. Each line of src is
// blank, a "#" comment or one of
//
//	dir  PATH
//	file PATH "Go-quoted contents"
//	link PATH TARGET        (a symlink; TARGET relative to PATH's directory)
//
// PATH relative to the tree's root.
func BuildTree(t testing.TB, src string) string {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	root := t.TempDir()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		verb, rest, _ := strings.Cut(text, " ")
		rest = strings.TrimSpace(rest)
		fail := func(err error) { t.Fatalf("%s:%d: %v", src, line, err) }
		switch verb {
		case "dir":
			if err := os.MkdirAll(filepath.Join(root, rest), 0o755); err != nil {
				fail(err)
			}
		case "file":
			path, quoted, _ := strings.Cut(rest, " ")
			contents, err := strconv.Unquote(strings.TrimSpace(quoted))
			if err != nil {
				fail(err)
			}
			full := filepath.Join(root, path)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				fail(err)
			}
			if err := os.WriteFile(full, []byte(contents), 0o644); err != nil {
				fail(err)
			}
		case "link":
			path, target, _ := strings.Cut(rest, " ")
			full := filepath.Join(root, path)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				fail(err)
			}
			if err := os.Symlink(strings.TrimSpace(target), full); err != nil {
				fail(err)
			}
		default:
			t.Fatalf("%s:%d: unknown directive %q", src, line, verb)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return root
}
