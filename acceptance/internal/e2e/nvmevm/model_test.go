package nvmevm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGuestModelRefused: the built-in spec (what `make qualify` runs)
// names the D7-PS1010's model numbers; QEMU's "QEMU NVMe Ctrl" is refused
// at setup, naming its model, the spec and both fixes, and left byte for
// byte as it was.
func TestGuestModelRefused(t *testing.T) {
	guest(t)
	dev := mustNamespace(t, controllers(t, serialFormat)[0], 1)
	scribble(t, dev)
	before := hashes(t, dev)
	r := runSuite(t, nil, "-drives="+dev, "-capacity=1.92TB", "-destructive")
	refused(t, r, dev, `"QEMU NVMe Ctrl"`, "solidigm-d7-ps1010.toml", "SOLIDIGM SB5PH27X*", "-spec", "-any-model")
	if strings.Contains(r.Stdout, "=== RUN   TestSingleDrive") {
		t.Errorf("cells ran on a refused drive:\n%s", r.Stdout)
	}
	unchanged(t, before, dev)
}

// TestGuestAnyModel: with -any-model the same drive is judged against a
// spec for another model, and summary.md and junit.xml say so.
func TestGuestAnyModel(t *testing.T) {
	guest(t)
	dev := mustNamespace(t, controllers(t, serialFormat)[0], 1)
	text, err := os.ReadFile(specFile(t, "format.toml"))
	if err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(t.TempDir(), "format-solidigm.toml")
	named := strings.Replace(string(text), "\n[method]", "\nmodels = [\"SOLIDIGM SB5PH27X*\"]\n\n[method]", 1)
	if err := os.WriteFile(spec, []byte(named), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-spec=" + spec, "-drives=" + dev, "-capacity=32MiB", "-destructive"}
	if r := runSuite(t, nil, args...); r.Code == 0 || !strings.Contains(r.output(), "-any-model") {
		t.Fatalf("without -any-model: exit %d, want a refusal naming -any-model\n%s", r.Code, r.output())
	}
	r := runSuite(t, nil, append(args, "-any-model")...)
	if r.Code != 0 {
		t.Fatalf("-any-model: exit %d\n%s", r.Code, r.output())
	}
	mustContain(t, r.Stdout, "--- PASS: TestSingleDrive/32MiB/128KB_Sequential_Write")
	report := reportDir(t, r)
	summary, err := os.ReadFile(filepath.Join(report, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, string(summary), "**-any-model:** "+dev+" (QEMU NVMe Ctrl) judged against QEMU NVMe (format)",
		"- "+dev+": model \"QEMU NVMe Ctrl\" is not one of format-solidigm's models; judged against it with -any-model")
	junit, err := os.ReadFile(filepath.Join(report, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, string(junit), `<property name="any_model" value="`+dev+` (QEMU NVMe Ctrl) judged against`,
		"any model: "+dev+" (QEMU NVMe Ctrl)")
	if n := strings.Count(string(junit), "any model: "); n < 2 {
		t.Errorf("junit.xml: %d cells say any model, want every cell (2)", n)
	}
}

// reportDir is the report directory the suite printed ("report: DIR").
func reportDir(t *testing.T, r result) string {
	t.Helper()
	for _, l := range strings.Split(r.output(), "\n") {
		if dir, ok := strings.CutPrefix(strings.TrimSpace(l), "report: "); ok {
			return dir
		}
	}
	t.Fatalf("the suite printed no report directory:\n%s", r.output())
	return ""
}
