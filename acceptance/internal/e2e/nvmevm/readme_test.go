package nvmevm

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/google/go-cmp/cmp"
)

// The README's QEMU section, and docs/testing.md's, name every boot of
// configs and each of its scenarios; checked here without booting, so
// that a machine without QEMU checks it too.
func TestReadmeListsEveryBoot(t *testing.T) {
	wd, _ := os.Getwd()
	root, err := cmdline.ModuleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	for file, section := range map[string]string{"README.md": readmeSection, "docs/testing.md": testingSection} {
		text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range readmeProblems(string(text), section, configs) {
			t.Errorf("%s: %s", file, p)
		}
	}
}

func TestReadmeProblems(t *testing.T) {
	cs := []config{
		{name: "one", tests: []string{"TestGuestA", "TestGuestB"}, reboot: &config{name: "one-again", tests: []string{"TestGuestC"}}},
		{name: "two", tests: []string{"TestGuestD"}},
	}
	good := "# x\n\n" + readmeSection + "\n\n| boot | scenarios |\n|---|---|\n| `one`, then `one-again` | `A`, `B`; then `C` |\n| `two` | `D` |\n\n## Next\n\n| `three` | `E` |\n"
	if got := readmeProblems(good, readmeSection, cs); len(got) != 0 {
		t.Errorf("a table naming every boot and scenario: %q", got)
	}
	bad := "# x\n\n" + readmeSection + "\n\n| `one` | `A` |\n\n## Next\n\n| `two` | `D` |\n"
	want := []string{
		readmeSection + ": the row of `one` does not name its scenario `B` (TestGuestB): add it",
		readmeSection + ": no row names the boot `one-again`: add | `one-again` | its scenarios |",
		readmeSection + ": no row names the boot `two`: add | `two` | its scenarios |",
	}
	if diff := cmp.Diff(want, readmeProblems(bad, readmeSection, cs)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if got := readmeProblems("# x\n", readmeSection, cs); len(got) != 1 {
		t.Errorf("no section: %q, want one problem", got)
	}
}
