package device

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// buildTree builds the fake tree described by testdata/NAME (see the format
// at the top of testdata/two-sockets.tree) in a new temporary directory and
// returns a System rooted there.
func buildTree(t *testing.T, name string) System {
	t.Helper()
	src := filepath.Join("testdata", name)
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
	return System{Root: root}
}

// packages names the Debian package of each command the tests run.
var packages = map[string]string{
	"losetup": "util-linux", "mount": "util-linux", "umount": "util-linux",
	"partx": "util-linux", "wipefs": "util-linux",
	"mkswap": "util-linux", "swapon": "util-linux", "swapoff": "util-linux",
	"mkfs.ext4": "e2fsprogs", "sfdisk": "fdisk",
	"sh": "dash", "sleep": "coreutils",
}

// needTools needs every command on PATH (see testenv.MustHave).
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		testenv.MustHave(t, tool, "apt-get install "+packages[tool])
	}
}
