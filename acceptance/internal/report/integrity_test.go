package report

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// A live run whose second drive returned a changed block in its verify
// pass (../junit/testdata/runs/integrity.json, a real results.json): the
// capacity's gate is NOT QUALIFIED by that drive's integrity result, which
// summary.md shows in its own section and not as a workload row.
func TestIntegrityFailsTheCapacity(t *testing.T) {
	data, err := os.ReadFile("../junit/testdata/runs/integrity.json")
	if err != nil {
		t.Fatal(err)
	}
	var r Run
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	gates := r.Gates()
	if len(gates) != 2 || gates[0].Name != "64MiB" || gates[0].Verdict != NotQualified {
		t.Fatalf("Gates() = %+v, want 64MiB NOT QUALIFIED first", gates)
	}
	if g := gates[0]; g.Cells != 4 || g.Failed != 1 || !strings.Contains(g.Reason, "returned different data than was written") {
		t.Errorf("64MiB gate = %+v, want 1 of 4 cells failed, the integrity result first", g)
	}
	sum := string(r.Summary())
	for _, want := range []string{
		"## Data integrity\n\n- /dev/loop5: **PASS**: 67,108,864 bytes read back as written (crc32c of every block, step 3)\n",
		"- /dev/loop8: **FAIL**: /dev/loop8 returned different data than was written: crc32c: verify failed at offset 1,048,576 (LBA 2,048, 256 blocks of 512 bytes)",
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("Summary() lacks %q:\n%s", want, sum)
		}
	}
	if strings.Contains(sum, "| Data integrity |") {
		t.Errorf("Summary() shows the verify pass as a workload row:\n%s", sum)
	}
}
