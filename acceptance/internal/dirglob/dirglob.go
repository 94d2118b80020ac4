// Package dirglob lists the files of one directory whose names match a pattern, never reading the directory's own path as one.
package dirglob

import (
	"os"
	"path"
	"path/filepath"
)

// Match is the paths of the entries of dir whose names match pattern
// (path.Match's), in name order; nil when dir does not read. Unlike
// filepath.Glob of filepath.Join(dir, pattern), a dir whose path holds a
// pattern's metacharacters (a -record directory "run[1]") matches only
// its own entries, never another directory's ("run1").
func Match(dir, pattern string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if ok, _ := path.Match(pattern, e.Name()); ok {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}
