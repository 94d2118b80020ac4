//go:build !unix

package record

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// openBeneath opens rel (cleaned, with slashes) below dir, refusing a
// symlink at any component below dir (checked with Lstat: without
// openat, a race remains).
func openBeneath(dir, rel string) (*os.File, error) {
	parts := strings.Split(rel, "/")
	for i := range parts {
		p := filepath.Join(dir, filepath.FromSlash(strings.Join(parts[:i+1], "/")))
		fi, err := os.Lstat(p)
		if err != nil {
			return nil, err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return nil, &RefusedError{Why: "is a symlink, not a regular file: a recording holds only regular files, and a replay follows no symlink; copy the file itself into the recording"}
		}
		if i == len(parts)-1 && !fi.Mode().IsRegular() {
			return nil, &RefusedError{Why: "is a " + kind(fi.Mode()) + ", not a regular file: a recording holds only regular files"}
		}
	}
	return os.Open(filepath.Join(dir, filepath.FromSlash(rel)))
}

// links is how many hard links the file fi describes has: not told here.
func links(fs.FileInfo) uint64 { return 1 }
