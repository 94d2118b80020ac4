package e2e

import (
	"crypto/rand"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// newTargetFile makes a regular-file target of size bytes whose first MiB
// is random, so that "unchanged" means something.
func newTargetFile(t *testing.T, size int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "target.img")
	head := make([]byte, 1<<20)
	_, _ = rand.Read(head)
	require.NoError(t, os.WriteFile(path, head, 0o644))
	require.NoError(t, os.Truncate(path, size))
	return path
}

func requireFio(t *testing.T) {
	t.Helper()
	if lookPath("fio") == nil {
		return
	}
	if os.Getenv("DRIVEQUAL_REQUIRE_LOOP") == "1" {
		t.Fatal("DRIVEQUAL_REQUIRE_LOOP=1 but fio is not installed")
	}
	t.Skip("needs fio (apt-get install fio)")
}

// A regular file is a target like a drive: refused without -destructive
// (it is not empty), measured with it. Needs fio but not root.
func TestRegularFileTarget(t *testing.T) {
	requireFio(t)
	file := newTargetFile(t, 256<<20)
	before := sha256File(t, file)

	r := runSuite(t, nil, "-spec="+loopSpec(t), "-drives="+file, "-capacity=1GiB")
	assert.NotEqual(t, 0, r.Code)
	assert.Contains(t, r.Stderr, file)
	assert.Contains(t, r.Stderr, "-destructive")
	assert.Equal(t, before, sha256File(t, file), "a refused run leaves the file unchanged")
	assert.NoFileExists(t, filepath.Join(r.Report, "results.json"))

	r = runSuite(t, []string{"-test.run=TestSingleDrive/1GiB/4KB_Random_(Read|Write)$"},
		"-spec="+loopSpec(t), "-drives="+file, "-capacity=1GiB", "-destructive")
	noFioLeft(t)
	require.Equal(t, 0, r.Code, "stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	assert.Contains(t, r.Stderr, "not comparable", "a 256 MiB file judged as 1GiB is warned about")
	v := r.verdicts(t)
	assert.Equal(t, map[string]string{
		"TestSingleDrive/1GiB/4KB_Random_Write": report.Pass,
		"TestSingleDrive/1GiB/4KB_Random_Read":  report.Pass,
	}, v)
	// The read cell was selected with its twin, and the preparation ran once.
	prep, _ := filepath.Glob(filepath.Join(r.Report, "raw", "prepare", "*.json"))
	assert.Len(t, prep, 2, "one fill and one 4 KiB random preconditioning: %v", prep)
	assert.Contains(t, r.Stdout, "preparing "+file+": sequential fill")
}

// A plan longer than go test's -timeout is refused before anything runs,
// saying which -timeout to use.
func TestTimeoutTooShortIsRefused(t *testing.T) {
	requireFio(t)
	file := newTargetFile(t, 64<<20)
	before := sha256File(t, file)
	r := runSuite(t, []string{"-test.timeout=5s"}, "-spec="+loopSpec(t), "-drives="+file, "-capacity=1GiB", "-destructive")
	assert.NotEqual(t, 0, r.Code)
	assert.Contains(t, r.Stderr, "parsing -timeout: the plan takes about")
	assert.Contains(t, r.Stderr, "run with -timeout=10m0s")
	assert.Equal(t, before, sha256File(t, file))
	assert.NoFileExists(t, filepath.Join(r.Report, "results.json"))
}

type junitSuites struct {
	Suites []struct {
		Cases []struct {
			Name       string `xml:"name,attr"`
			Properties []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Skipped *struct{} `xml:"skipped"`
			Failure *struct{} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// gotestsum's JUnit of the replay has one testcase per capacity and
// workload, named like the subtest, with the figures as properties.
func TestJUnitHasOneTestcasePerCell(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test under gotestsum")
	}
	junit := filepath.Join(t.TempDir(), "junit.xml")
	cmd := exec.Command("go", "tool", "gotestsum", "--junitfile", junit, "--junitfile-testcase-classname", "short",
		"--", "-count=1", "./acceptance", "-args", "-report="+filepath.Join(t.TempDir(), "report"))
	cmd.Dir = filepath.Dir(acceptanceDir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	data, err := os.ReadFile(junit)
	require.NoError(t, err)
	var js junitSuites
	require.NoError(t, xml.Unmarshal(data, &js))
	cells := map[string]map[string]string{}
	for _, s := range js.Suites {
		for _, c := range s.Cases {
			if strings.Count(c.Name, "/") != 2 {
				continue
			}
			props := map[string]string{}
			for _, p := range c.Properties {
				props[p.Name] = p.Value
			}
			cells[c.Name] = props
			assert.Nil(t, c.Failure, c.Name)
		}
	}
	assert.Equal(t, 32+16, len(cells), "32 single-drive cells and 8 scaling cells at 1 and 24 drives")
	rr := cells["TestSingleDrive/1.92TB/4KB_Random_Read"]
	require.NotNil(t, rr, "testcase TestSingleDrive/1.92TB/4KB_Random_Read")
	assert.Equal(t, "2350000", rr["spec"])
	assert.Equal(t, "2409894", rr["actual"])
	assert.Equal(t, "1.0255", rr["ratio"])
	assert.Equal(t, "IOPS", rr["unit"])
	assert.Equal(t, "pass", rr["verdict"])
	assert.Equal(t, "brief/1.92TB/01", rr["drive"])
	assert.Equal(t, "fio-3.28", rr["fio_version"])
	assert.Equal(t, "1920383410176", rr["size"])
	assert.Equal(t, "Solidigm D7-PS1010", rr["model"])
	sw := cells["TestScaling/24_drives/128KB_Sequential_Write"]
	require.NotNil(t, sw)
	assert.Equal(t, "MB/s", sw["unit"])
	assert.Equal(t, "24", sw["drives"])
	assert.Equal(t, "98400", sw["expected"])
	assert.Equal(t, "Solidigm D7-PS1010", sw["model"], "one model for 24 drives of the same model")
}
