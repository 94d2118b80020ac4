//go:build unix

package record

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/drivequal/drivequal/fiojob"
)

// openBeneath opens rel (cleaned, with slashes) below dir one component
// at a time, each with O_NOFOLLOW from the directory opened before it:
// no symlink is followed below dir, whatever replaces a directory while
// it is walked. The file itself is opened with O_NONBLOCK, so that a FIFO
// is opened, and then refused, rather than waited on.
func openBeneath(dir, rel string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	parts := strings.Split(rel, "/")
	for i, c := range parts {
		last := i == len(parts)-1
		flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NOCTTY
		if last {
			flags |= unix.O_NONBLOCK
		} else {
			flags |= unix.O_DIRECTORY
		}
		next, err := unix.Openat(fd, c, flags, 0)
		if err != nil {
			why := describe(fd, c, last, err)
			unix.Close(fd)
			if why != "" {
				where := strings.Join(parts[:i+1], "/")
				if last {
					return nil, &RefusedError{Why: why}
				}
				return nil, &RefusedError{Why: "its directory " + where + " " + why}
			}
			return nil, err
		}
		unix.Close(fd)
		fd = next
	}
	return os.NewFile(uintptr(fd), filepath.Join(dir, filepath.FromSlash(rel))), nil
}

// describe says why the component name of the directory fd did not open
// with O_NOFOLLOW, when it is something a recording may not hold: ""
// for any other error (not there, not allowed).
func describe(fd int, name string, last bool, err error) string {
	if !errors.Is(err, unix.ELOOP) && !errors.Is(err, unix.ENOTDIR) && !errors.Is(err, unix.EMLINK) && !errors.Is(err, unix.ENXIO) && !errors.Is(err, unix.EOPNOTSUPP) {
		return ""
	}
	var st unix.Stat_t
	if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return ""
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		target := make([]byte, 256)
		if n, err := unix.Readlinkat(fd, name, target); err == nil {
			return "is a symlink (to " + fiojob.Quote(string(target[:n])) + "), not a regular file: a recording holds only regular files, and a replay follows no symlink; copy the file itself into the recording"
		}
		return "is a symlink, not a regular file: a recording holds only regular files, and a replay follows no symlink; copy the file itself into the recording"
	case unix.S_IFSOCK:
		return "is a socket, not a regular file: a recording holds only regular files"
	case unix.S_IFREG:
		if !last {
			return "is a file, not a directory"
		}
	}
	return ""
}

// links is how many hard links the file fi describes has.
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
