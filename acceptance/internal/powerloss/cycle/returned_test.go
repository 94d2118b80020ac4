package cycle

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/powerloss"
)

// A drive whose path opens as another drive after the cut did not
// return (FAIL), unless it came back as itself under another name (a
// kernel name given, the controller named anew): then its cycle is not
// judged (INCONCLUSIVE), never failed for the harness's path.
func TestReturnedRenamed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nvme0n1")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	d := Drive{Path: path, Identity: func(context.Context) (string, error) { return "another drive", nil }}
	for _, tt := range []struct {
		at      string
		verdict string
		want    string
	}{
		{"", powerloss.Fail, "did not return after the power cut: " + path + " came back as another drive"},
		{"/dev/nvme4n1", powerloss.Inconclusive, "not judged: " + path + " came back as /dev/nvme4n1, the same drive under another name (" + path + " came back as another drive"},
	} {
		d.Find = func(_ context.Context, id string) string {
			if id != "the drive" {
				t.Errorf("Find(%q), want the identity before the cut", id)
			}
			return tt.at
		}
		var out powerloss.Cycle
		if returned(context.Background(), d, "the drive", time.Second, &out) {
			t.Fatalf("%s returned as %q", path, "another drive")
		}
		v := powerloss.Judge(out)
		if v.Verdict != tt.verdict || !strings.Contains(v.Message, tt.want) {
			t.Errorf("found at %q: %s %q, want %s with %q", tt.at, v.Verdict, v.Message, tt.verdict, tt.want)
		}
		if tt.at != "" && !strings.Contains(v.Message, "give the drives by /dev/disk/by-id paths") {
			t.Errorf("%q does not say how to give drives that follow a rename", v.Message)
		}
	}
}
