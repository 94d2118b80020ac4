package qual

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device/fabric"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// The recorded 6-drive sequential read, each drive at 9,700 MB/s against
// a 14,500 MB/s spec, judged as if the drives were reached over NVMe/TCP
// (the fabric paths a live run keeps in the cell's link.json): through
// 80 Gb/s interfaces (10 GB/s) that carried 9.8 GB/s each, the network
// bounds the figure, and the cell is INCONCLUSIVE `transport bound`, not
// a FAIL blaming the drives; through 400 Gb/s it fails, saying how the
// drives were reached; through interfaces of unknown speed it fails and
// says the network's share is not known.
func TestTransportBoundCells(t *testing.T) {
	for _, tt := range []struct {
		name  string
		speed int64
		want  [2]string
		says  []string
	}{
		{"near the interface's speed", 80_000, [2]string{report.Inconclusive, report.CauseTransportBound},
			[]string{"9.70 GB/s moved, 9.80 GB/s carried by eth0, within 10 % of its 10.00 GB/s", "the network, not the drive, bounds this figure"}},
		{"far from it", 400_000, [2]string{report.Fail, report.CauseBelowSpec},
			[]string{"not PCIe-attached (tcp): NVMe over tcp to traddr=10.0.0.2,trsvcid=4420 through eth0, 400000 Mb/s"}},
		{"speed unknown", 0, [2]string{report.Fail, report.CauseBelowSpec},
			[]string{"through eth0 (speed not reported)", "the network's share of this figure is not known"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := lotCopy(t, "fabric")
			setDriveFigures(t, dir, lotRead, []float64{9_700, 9_700, 9_700, 9_700, 9_700, 9_700})
			var paths []fabric.Path
			for _, p := range lotPaths(t) {
				paths = append(paths, fabric.Path{Drive: p, Transport: "tcp", Address: "traddr=10.0.0.2,trsvcid=4420",
					Interface: "eth0", SpeedMbps: tt.speed, Carried: 9.8e9})
			}
			data, err := json.Marshal(record.Link{Fabric: paths})
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.FromSlash(lotRead)+record.LinkExt), data, 0o644))
			text := strings.Replace(string(lotSpecText(t)), `"128KB Sequential Read"  = 100`, `"128KB Sequential Read"  = 14_500`, 1)
			_, replayed := judgeLotRun(t, writeSpec(t, text), dir)
			r := replayed.results[lotRead]
			require.Equal(t, tt.want, [2]string{r.Verdict, r.Cause}, r.Error)
			for _, s := range tt.says {
				assert.Contains(t, r.Error, s)
			}
		})
	}
}
