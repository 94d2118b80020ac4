package live

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
)

// A purge that erases a whole controller resets every drive of the run on
// it, so that none is measured as if it were still filled.
func TestPurgeReachesTheController(t *testing.T) {
	d := func(name string, siblings ...string) plan.Drive {
		return plan.Drive{Info: device.Info{Path: "/dev/" + name, Name: name, Block: true, Controller: "nvme0", Siblings: siblings}}
	}
	drives := []plan.Drive{d("nvme0n1", "nvme0n2"), d("nvme0n2", "nvme0n1")}
	ctrls := map[string]nvme.Controller{"nvme0": {OACS: 1 << 1, SANICAP: 1 << 1}}
	require.Equal(t, []int{0, 1}, PurgeReach(drives, []int{0}, "sanitize", ctrls), "sanitize erases the controller")
	require.Equal(t, []int{0}, PurgeReach(drives, []int{0}, "format", ctrls), "format without FNA bits erases one namespace")
	ctrls["nvme0"] = nvme.Controller{OACS: 1 << 1, FNA: 1}
	require.Equal(t, []int{0, 1}, PurgeReach(drives, []int{0}, "format", ctrls), "FNA bit 0: format applies to all namespaces")
	require.Equal(t, []int{0}, PurgeReach(drives, []int{0}, "discard", ctrls))
}
