package recording

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
	"github.com/drivequal/drivequal/acceptance/internal/qual/verdict"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "fixtures", "nvme", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReadOCPFromARecording(t *testing.T) {
	files := func(m map[string][]byte) func(string) ([]byte, error) {
		return func(what string) ([]byte, error) {
			if b, ok := m[what]; ok {
				return b, nil
			}
			return nil, errors.New("not recorded")
		}
	}
	if o := readOCP(files(nil), "2.3"); o.Read || o.Skip != "" {
		t.Errorf("a recording without C0 reads: %+v, want no OCP checks at all", o)
	}
	o := readOCP(files(map[string][]byte{"c0-before": []byte(`{"error":"ERROR : OCP : Failure reading the C0 Log Page, ret = 16386"}`)}), "2.3")
	if o.Read || !strings.HasPrefix(o.Skip, "no OCP C0 log (ERROR : OCP : Failure reading the C0 Log Page") {
		t.Errorf("a drive without C0: %+v", o)
	}
	o = readOCP(files(map[string][]byte{"c0-before": fixture(t, "ocp-smart-add-log-v2.3-autoval-values.json")}), "2.3")
	if o.Read || !strings.Contains(o.Skip, "stopped before the end") {
		t.Errorf("no C0 after the run: %+v", o)
	}
	o = readOCP(files(map[string][]byte{"c0-before": fixture(t, "ocp-smart-add-log-v2.3-autoval-values.json"),
		"c0-after": fixture(t, "ocp-smart-add-log-v2.3-worn.json")}), "2.3")
	if !o.Read || o.Skip != "" || o.Before.BadUserNANDBlocks != 0 || o.Last.BadUserNANDBlocks != 3 {
		t.Errorf("both recorded: %+v", o)
	}
	// C0 given on receipt and not after the run: recorded as an "error"
	// object, it fails the drive in a replay as it did live.
	o = readOCP(files(map[string][]byte{"c0-before": fixture(t, "ocp-smart-add-log-v2.3-autoval-values.json"),
		"c0-after": []byte(`{"error":"the OCP C0 log read on receipt could not be read after the run: signal: killed"}`)}), "2.3")
	if o.Lost != "the OCP C0 log read on receipt could not be read after the run: signal: killed" || o.Skip != "" || o.Read {
		t.Errorf("C0 lost after the run: %+v", o)
	}
	drives := []plan.Drive{{Info: device.Info{Path: "/dev/nvme0n1", Block: true}}}
	_, checks := verdict.Health(drives, []evidence.DriveHealth{{OCP: o}}, specs.DefaultHealth())
	found := false
	for _, c := range checks {
		if c.Check == "ocp" {
			found = true
			if c.Verdict != report.Fail || !strings.Contains(c.Message, "could not be read after the run") {
				t.Errorf("C0 lost after the run: %+v, want it failed", c)
			}
		}
	}
	if !found {
		t.Errorf("no ocp check: %+v", checks)
	}
}

// A replay reads the C0 logs by the nvme-cli version the run recorded:
// nvme-cli 2.3 printed the 5 end-to-end errors a drive detected as
// "End to end corrected errors", and the replay fails the drive for
// them as the live run did.
func TestReadOCPByTheRecordedNVMeCLIVersion(t *testing.T) {
	files := map[string][]byte{"c0-before": fixture(t, "ocp-smart-add-log-v2.3-autoval-values.json"),
		"c0-after": fixture(t, "ocp-smart-add-log-v2.3-e2e-detected.json")}
	o := readOCP(func(what string) ([]byte, error) { return files[what], nil }, "2.3")
	if !o.Read || o.Last.EndToEndDetected != 5 || o.Last.EndToEndCorrected != 0 {
		t.Fatalf("replayed C0 of nvme-cli 2.3: %+v, want detected 5, corrected 0", o)
	}
	drives := []plan.Drive{{Info: device.Info{Path: "/dev/nvme0n1", Block: true}}}
	_, checks := verdict.Health(drives, []evidence.DriveHealth{{OCP: o}}, specs.DefaultHealth())
	for _, c := range checks {
		if c.Check == "ocp_end_to_end_errors" && c.Verdict != report.Fail {
			t.Errorf("%+v, want failed", c)
		}
	}
}

// A drive that reports Bad system nand blocks as all ones (a KIOXIA CD8's
// 0xFFFFFFFFFFFF, as nvme-cli 2.3 printed it from such a page) is not
// judged on them: results.json and summary.md say the drive does not
// report them, never 281,474,976,710,655 blocks, and its other C0 checks
// stand.
func TestUnreportedC0FieldInTheReport(t *testing.T) {
	c0 := fixture(t, "ocp-smart-add-log-v2.3-system-blocks-not-reported.json")
	files := map[string][]byte{"c0-before": c0, "c0-after": c0}
	o := readOCP(func(what string) ([]byte, error) { return files[what], nil }, "2.3")
	drives := []plan.Drive{{Info: device.Info{Path: "/dev/nvme0n1", Block: true}}}
	_, checks := verdict.Health(drives, []evidence.DriveHealth{{OCP: o}}, specs.DefaultHealth())
	run := report.Run{Health: checks}
	js, err := run.JSON()
	if err != nil {
		t.Fatal(err)
	}
	const want = "Bad system nand blocks - Raw: not reported by the drive (all ones: 0xffffffffffff before and after); not judged"
	for name, out := range map[string]string{"results.json": string(js), "summary.md": string(run.Summary())} {
		if !strings.Contains(out, want) {
			t.Errorf("%s does not say %q:\n%s", name, want, out)
		}
		if strings.Contains(out, "281474976710655") || strings.Contains(out, "281,474,976,710,655") {
			t.Errorf("%s counts all ones as bad blocks:\n%s", name, out)
		}
	}
	for _, c := range checks {
		switch c.Check {
		case "ocp_bad_system_blocks":
			if c.Verdict != report.Skip {
				t.Errorf("%+v, want skipped", c)
			}
		case "ocp_bad_user_blocks", "ocp_end_to_end_errors":
			if c.Verdict != report.Pass {
				t.Errorf("%+v, want judged and passed", c)
			}
		}
	}
}
