package nvmevm

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/qemu"
)

// The host's side of the interruption scenarios: the namespaces' images,
// the requests a guest test makes of the machine while it runs, and the
// second boot with two controllers swapped.

// swapDir is the work directory's subdirectory that keeps the swapped
// reboot's recording and what the first boot saw, across the two boots.
const swapDir = "swap"

// reqDir is the work directory's subdirectory of requests (see request).
const reqDir = "requests"

// writeImages creates every namespace image of m (sparse, nsBytes or its
// nsSize) and the bad namespace's blkdebug rules: reads of badSector fail
// until the namespace's first flush.
func writeImages(t *testing.T, m qemu.Machine) {
	t.Helper()
	for _, n := range m.Namespaces {
		size := int64(nsBytes)
		if s, ok := nsSize[strings.TrimSuffix(filepath.Base(n.Image), ".raw")]; ok {
			size = s
		}
		if err := os.WriteFile(n.Image, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(n.Image, size); err != nil {
			t.Fatal(err)
		}
		if n.Blkdebug != "" {
			if err := qemu.WriteBlkdebug(n.Blkdebug, []qemu.MediaError{{Sector: badSector, UntilFlush: true}}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// swappedMachine is the second boot of TestGuestSwappedReboot: the swapped
// drives alone, their controllers in each other's PCI slot (so the guest's
// nvme0 and nvme1 are exchanged), the same images.
func swappedMachine(m qemu.Machine) (qemu.Machine, error) {
	keep := map[string]bool{"swapa": true, "swapb": true}
	sm := m
	sm.QMP = ""
	sm.Subsystems = nil
	sm.Controllers, sm.Namespaces = nil, nil
	for _, c := range m.Controllers {
		if keep[c.ID] {
			sm.Controllers = append(sm.Controllers, c)
		}
	}
	for _, n := range m.Namespaces {
		if keep[n.Controller] {
			sm.Namespaces = append(sm.Namespaces, n)
		}
	}
	return sm.Swapped("swapa", "swapb")
}

// hostRequest is what a guest test asks of the host: set controller's
// critical warning byte.
type hostRequest struct {
	Controller string `json:"controller"` // qemu.Controller.ID
	Warning    uint8  `json:"warning"`
}

// serveRequests answers the guest's requests until ctx is done: each
// requests/NAME.json (see request) is carried out over QMP and answered in
// requests/NAME.done with "ok" or the error.
func serveRequests(ctx context.Context, t *testing.T, work, socket string) {
	dir := filepath.Join(work, reqDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Error(err)
		return
	}
	done := map[string]bool{}
	for ctx.Err() == nil {
		reqs, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, p := range reqs {
			if done[p] {
				continue
			}
			done[p] = true
			answer := "ok"
			var r hostRequest
			if b, err := os.ReadFile(p); err != nil {
				answer = err.Error()
			} else if err := json.Unmarshal(b, &r); err != nil {
				answer = fmt.Sprintf("%s: %v", p, err)
			} else if err := qemu.SetCriticalWarning(ctx, socket, r.Controller, r.Warning); err != nil {
				answer = err.Error()
			}
			tmp := strings.TrimSuffix(p, ".json") + ".tmp"
			if err := os.WriteFile(tmp, []byte(answer), 0o644); err == nil {
				_ = os.Rename(tmp, strings.TrimSuffix(p, ".json")+".done")
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}
