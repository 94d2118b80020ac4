package health

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/specs"
)

func limit(n uint64) *uint64 { return &n }

// strict is a [receipt] for new drives: at most 100 power-on hours and
// 1 TB written, no media error.
var strict = specs.Receipt{MaxPowerOnHours: limit(100), MaxDataWritten: limit(1e12), MaxMediaErrors: limit(0)}

type receiptTest struct {
	name   string
	log    nvme.SmartLog
	limits specs.Receipt
	want   []Check
}

var receiptTests = []receiptTest{
	{"a used drive", nvme.SmartLog{PowerOnHours: nvme.Uint128{Lo: 9000}, DataUnitsWritten: nvme.Uint128{Lo: 40_000_000},
		DataUnitsRead: nvme.Uint128{Lo: 1000}, UnsafeShutdowns: nvme.Uint128{Lo: 7}, MediaErrors: nvme.Uint128{Lo: 1}, PercentUsed: 4}, strict,
		[]Check{
			{"power_on_hours", Fail, "power_on_hours: 9,000 h on receipt, above the limit of 100 h ([receipt] max_power_on_hours): the drive has been used; return it or raise the limit"},
			{"data_written", Fail, "data_written: 20,480,000,000,000 bytes (20.48 TB) on receipt, above the limit of 1,000,000,000,000 bytes (1.00 TB) ([receipt] max_data_written): the drive has been used; return it or raise the limit"},
			{"data_read", Skip, "data_read: 512,000,000 bytes on receipt; no limit set ([receipt] max_data_read)"},
			{"unsafe_shutdowns", Skip, "unsafe_shutdowns: 7 on receipt; no limit set ([receipt] max_unsafe_shutdowns)"},
			{"media_errors", Fail, "media_errors: 1 on receipt, above the limit of 0 ([receipt] max_media_errors): the drive has been used; return it or raise the limit"},
			{"percent_used", Skip, "percent_used: 4 % on receipt; no limit set ([receipt] max_percent_used)"},
		}},
	{"a new drive", nvme.SmartLog{PowerOnHours: nvme.Uint128{Lo: 12}, DataUnitsWritten: nvme.Uint128{Lo: 2000}}, strict,
		[]Check{
			{"power_on_hours", Pass, "power_on_hours: 12 h on receipt, limit ≤ 100 h"},
			{"data_written", Pass, "data_written: 1,024,000,000 bytes (1.02 GB) on receipt, limit ≤ 1,000,000,000,000 bytes (1.00 TB)"},
			{"data_read", Skip, "data_read: 0 bytes on receipt; no limit set ([receipt] max_data_read)"},
			{"unsafe_shutdowns", Skip, "unsafe_shutdowns: 0 on receipt; no limit set ([receipt] max_unsafe_shutdowns)"},
			{"media_errors", Pass, "media_errors: 0 on receipt, limit ≤ 0"},
			{"percent_used", Skip, "percent_used: 0 % on receipt; no limit set ([receipt] max_percent_used)"},
		}},
}

func TestReceipt(t *testing.T) {
	for _, tt := range receiptTests {
		if diff := cmp.Diff(tt.want, Receipt(tt.log, tt.limits)); diff != "" {
			t.Errorf("%s: Receipt mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

// A real nvme-cli 2.3 smart-log (fixtures/nvme) of a drive 8,766 hours
// old fails a limit of 100 hours, naming the figure; with no [receipt] at
// all every figure is reported and none judged.
func TestReceiptOfRealSmartLog(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "fixtures", "nvme", "smart-log-v2.3-quoted-decimal.json"))
	if err != nil {
		t.Fatal(err)
	}
	log, err := nvme.ParseSmartLog(data)
	if err != nil {
		t.Fatal(err)
	}
	got := Receipt(log, specs.Receipt{MaxPowerOnHours: limit(100)})
	if got[0].Verdict != Fail || got[0].Message != "power_on_hours: 8,766 h on receipt, above the limit of 100 h ([receipt] max_power_on_hours): the drive has been used; return it or raise the limit" {
		t.Errorf("power_on_hours = %+v", got[0])
	}
	for _, c := range Receipt(log, specs.Receipt{}) {
		if c.Verdict != Skip {
			t.Errorf("no [receipt]: %s = %s (%s), want SKIP", c.Name, c.Verdict, c.Message)
		}
	}
}
