package device

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// nvmetConfig is where the kernel's NVMe target (nvmet) is configured.
const nvmetConfig = "/sys/kernel/config/nvmet"

// nvmetExports says which enabled namespaces of this host's NVMe target
// export the target in (a block device or file given as a namespace's
// device_path): "namespace 1 of nqn.2014-08.org.example:jbof"; nil when
// none does. nvmet opens what it exports without holding it
// exclusively, so only its configuration tells.
func (s System) nvmetExports(in Info) []string {
	var want os.FileInfo
	if fi, err := os.Stat(s.p(in.Path)); err == nil {
		want = fi
	}
	paths, _ := filepath.Glob(s.p(nvmetConfig + "/subsystems/*/namespaces/*/device_path"))
	var out []string
	for _, p := range paths {
		ns := filepath.Dir(p)
		if v, err := readString(filepath.Join(ns, "enable")); err != nil || v != "1" {
			continue
		}
		dev, err := readString(p)
		if err != nil || dev == "" {
			continue
		}
		fi, err := os.Stat(s.p(dev))
		if err != nil {
			continue
		}
		same := want != nil && os.SameFile(fi, want)
		if d, ok := s.devOf(dev); ok && in.Block && d == (devnum{in.Major, in.Minor}) {
			same = true
		}
		if same {
			nqn := filepath.Base(filepath.Dir(filepath.Dir(ns)))
			out = append(out, fmt.Sprintf("namespace %s of %s (%s)", filepath.Base(ns), nqn, strings.TrimPrefix(p, s.Root)))
		}
	}
	return out
}
