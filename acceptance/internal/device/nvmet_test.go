package device

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A namespace this host's NVMe target exports (nvmet opens it without
// holding it exclusively) is refused naming the export; a disabled
// export does not count.
func TestCheckNvmetExport(t *testing.T) {
	sys := buildTree(t, "two-sockets.tree")
	ns := filepath.Join(sys.Root, nvmetConfig, "subsystems", "nqn.2014-08.org.example:jbof", "namespaces")
	for id, enable := range map[string]string{"1": "1", "2": "0"} {
		dir := filepath.Join(ns, id)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		dev := map[string]string{"1": "/dev/nvme1n1", "2": "/dev/nvme0n1"}[id]
		if err := os.WriteFile(filepath.Join(dir, "device_path"), []byte(dev+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "enable"), []byte(enable+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var infos []Info
	for _, p := range []string{"/dev/nvme0n1", "/dev/nvme1n1"} {
		in, err := sys.Inspect(p)
		if err != nil {
			t.Fatal(err)
		}
		infos = append(infos, in)
	}
	got := sys.Check(infos, destructive)
	want := []string{"/dev/nvme1n1: is exported by this host's NVMe target (nvmet) as namespace 1 of nqn.2014-08.org.example:jbof " +
		"(/sys/kernel/config/nvmet/subsystems/nqn.2014-08.org.example:jbof/namespaces/1/device_path): " +
		"nvmet does not hold it exclusively, and writing it changes what the target's hosts read"}
	if diff := cmp.Diff(want, reasons(got)); diff != "" {
		t.Errorf("Check mismatch (-want +got):\n%s", diff)
	}
}
