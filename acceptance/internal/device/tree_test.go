package device

import (
	"path/filepath"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// buildTree builds the fake tree described by testdata/NAME (see the format
// at the top of testdata/two-sockets.tree) in a new temporary directory and
// returns a System rooted there.
func buildTree(t *testing.T, name string) System {
	t.Helper()
	return System{Root: testenv.BuildTree(t, filepath.Join("testdata", name))}
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
