package purge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
)

// tcpNS is a namespace reached over NVMe/TCP, as sysfs shows Linux's
// target through nvme-tcp.
func tcpNS() device.Info {
	t := ns("nvme5n1", "nvme5", "nvme5n1")
	t.Transport, t.Address, t.Subsystem, t.NSID = "tcp", "traddr=127.0.0.1,trsvcid=4420", "nqn.2014-08.org.drivequal:tcp", 1
	return t
}

// Linux's NVMe target implements no Format NVM (OACS 0): the purge is
// what the target allows, a discard, and the note names the transport.
func TestPlanFabricWithoutFormat(t *testing.T) {
	steps, errs := Plan([]device.Info{tcpNS()}, Format, map[string]nvme.Controller{"nvme5": {Model: "Linux"}})
	if len(errs) != 0 || len(steps) != 1 || steps[0].Kind != DiscardBlocks {
		t.Fatalf("Plan = %v, %v; want one discard", steps, errs)
	}
	want := "/dev/nvme5n1: controller nvme5 (Linux) is an NVMe over tcp target (traddr=127.0.0.1,trsvcid=4420) that does not support Format NVM (OACS bit 1 clear): its purge is what the target allows; discarding instead"
	if !strings.HasPrefix(steps[0].Note, want) {
		t.Errorf("note %q, want it to start %q", steps[0].Note, want)
	}
}

// A target that claims Format NVM and refuses it: one error naming the
// transport, the target and the purge it allows.
func TestRunFabricFormatRefused(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\necho 'NVMe status: Invalid Command Opcode: A reserved coded value or an unsupported value in the command opcode field(0x4001)' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "nvme"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	steps, errs := Plan([]device.Info{tcpNS()}, Format, map[string]nvme.Controller{"nvme5": {Model: "Linux", OACS: 1 << 1}})
	if len(errs) != 0 || len(steps) != 1 || steps[0].Kind != FormatNVM {
		t.Fatalf("Plan = %v, %v; want one format", steps, errs)
	}
	err := Runner{NVMe: nvme.CLI{Binary: filepath.Join(dir, "nvme")}}.Run(context.Background(), steps, nil, nil)
	want := "purging /dev/nvme5n1: the NVMe over tcp target at traddr=127.0.0.1,trsvcid=4420 (nqn.2014-08.org.drivequal:tcp) refused Format NVM (nvme format /dev/nvme5n1 --ses=1 --force: NVMe status: Invalid Command Opcode"
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), `purge it with discard ([precondition] purge = "discard")`) {
		t.Errorf("err = %v\nwant it to start %q and name the fix", err, want)
	}
}
