package cmdline

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type validateTest struct {
	name  string
	flags Flags
	want  []string // substrings, one per expected error
}

func validateTests(dir string) []validateTest {
	blocker := filepath.Join(dir, "file")
	os.WriteFile(blocker, nil, 0o644)
	return []validateTest{
		{"defaults", Flags{Spec: "solidigm-d7-ps1010", Precondition: "full"}, nil},
		{"empty drive entry", Flags{Spec: "x", Precondition: "full", Drives: "/dev/a,,/dev/b"}, []string{"parsing -drives: entry 2 is empty"}},
		{"runtime zero", Flags{Spec: "x", Precondition: "full", Runtime: "0s"}, []string{"parsing -runtime: 0s is not positive"}},
		{"runtime negative", Flags{Spec: "x", Precondition: "full", Runtime: "-5s"}, []string{"parsing -runtime: -5s is not positive"}},
		{"runtime garbage", Flags{Spec: "x", Precondition: "full", Runtime: "soon"}, []string{`parsing -runtime: "soon" is not a duration`}},
		{"runtime under a second", Flags{Spec: "x", Precondition: "full", Runtime: "500ms"}, []string{"parsing -runtime: 500ms is under one second"}},
		{"precondition", Flags{Spec: "x", Precondition: "some"}, []string{`parsing -precondition: "some" is not a mode`}},
		{"scaling order", Flags{Spec: "x", Precondition: "full", Scaling: "1,4,2"}, []string{"parsing -scaling: counts must be strictly ascending, 2 follows 4"}},
		{"scaling zero", Flags{Spec: "x", Precondition: "full", Scaling: "0,1"}, []string{`parsing -scaling: "0" is not a drive count`}},
		{"replay with drives", Flags{Spec: "x", Precondition: "full", Drives: "/dev/a", Replay: dir}, []string{"parsing -replay: given with -drives"}},
		{"replay missing", Flags{Spec: "x", Precondition: "full", Replay: filepath.Join(dir, "nope")}, []string{"parsing -replay: " + filepath.Join(dir, "nope") + " is not a directory"}},
		{"report unwritable", Flags{Spec: "x", Precondition: "full", Report: filepath.Join(blocker, "r")}, []string{"parsing -report: cannot create " + filepath.Join(blocker, "r")}},
		{"baseline missing", Flags{Spec: "x", Precondition: "full", Baseline: filepath.Join(dir, "old")}, []string{"parsing -baseline: " + filepath.Join(dir, "old") + " is not a directory"}},
		{"baseline twice", Flags{Spec: "x", Precondition: "full", Baseline: dir + "," + dir}, []string{"parsing -baseline: " + dir + " is given twice"}},
		{"baseline with a live run", Flags{Spec: "x", Precondition: "full", Drives: "/dev/a", Baseline: dir}, nil},
		{"all at once", Flags{Spec: "", Precondition: "x", Runtime: "0", Scaling: "a"}, []string{"parsing -spec", "parsing -runtime", "parsing -precondition", "parsing -scaling"}},
	}
}

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range validateTests(dir) {
		t.Run(tt.name, func(t *testing.T) {
			if tt.flags.Report == "" {
				tt.flags.Report = filepath.Join(dir, "report")
			}
			_, errs := tt.flags.Validate(dir)
			require.Len(t, errs, len(tt.want), "Validate(%+v) = %v", tt.flags, errs)
			for i, want := range tt.want {
				assert.Contains(t, errs[i].Error(), want)
			}
		})
	}
}

func TestValidateDefaults(t *testing.T) {
	root := t.TempDir()
	f := Flags{Spec: "solidigm-d7-ps1010", Precondition: "full", Runtime: "2s", Scaling: "1,2,4"}
	c, errs := f.Validate(root)
	require.Empty(t, errs)
	assert.Equal(t, filepath.Join(root, "report"), c.Report)
	assert.Equal(t, filepath.Join(root, "report", "raw"), c.Record)
	assert.Equal(t, 2*time.Second, c.Runtime)
	assert.Equal(t, []int{1, 2, 4}, c.Scaling)
	assert.False(t, c.Live())
}

func TestModuleRoot(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644))
	deep := filepath.Join(root, "a", "b")
	require.NoError(t, os.MkdirAll(deep, 0o755))
	got, err := ModuleRoot(deep)
	require.NoError(t, err)
	assert.Equal(t, root, got)
	_, err = ModuleRoot(string(filepath.Separator))
	assert.True(t, err != nil && strings.Contains(err.Error(), "no go.mod"), "ModuleRoot(/) = %v", err)
	assert.False(t, errors.Is(err, os.ErrNotExist))
}

// Relative paths are written from the module root, although go test runs
// the suite in acceptance/; a path that exists where the suite runs wins.
func TestRelativePaths(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "fixtures", "rec"), 0o755))
	f := Flags{Spec: "specs/acme.toml", Precondition: "full", Drives: "images/a.img,/dev/nvme0n1",
		Report: "out/report", Record: "out/raw"}
	c, errs := f.Validate(root)
	require.Empty(t, errs)
	assert.Equal(t, filepath.Join(root, "specs", "acme.toml"), c.Spec)
	assert.Equal(t, []string{filepath.Join(root, "images", "a.img"), "/dev/nvme0n1"}, c.Drives)
	assert.Equal(t, filepath.Join(root, "out", "report"), c.Report)
	assert.Equal(t, filepath.Join(root, "out", "raw"), c.Record)
	c, errs = (&Flags{Spec: "x", Precondition: "full", Replay: "fixtures/rec", Report: "out/report"}).Validate(root)
	require.Empty(t, errs)
	assert.Equal(t, filepath.Join(root, "fixtures", "rec"), c.Replay)
	assert.Equal(t, "solidigm-d7-ps1010", resolveSpec(t, root, "solidigm-d7-ps1010"), "a built-in name is not a path")

	wd, err := os.Getwd()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(wd, "config_test.go"), resolveInput(root, "config_test.go"), "a path that exists here")
}

func resolveSpec(t *testing.T, root, spec string) string {
	t.Helper()
	c, _ := (&Flags{Spec: spec, Precondition: "full", Report: filepath.Join(root, "r")}).Validate(root)
	return c.Spec
}

func TestReplayRefusesLiveOnlyFlags(t *testing.T) {
	dir := t.TempDir()
	_, errs := (&Flags{Spec: "x", Precondition: "full", Record: filepath.Join(dir, "raw"), Capacity: "1.92TB", Report: filepath.Join(dir, "r")}).Validate(dir)
	require.Len(t, errs, 2)
	assert.Contains(t, errs[0].Error(), "parsing -record: given without -drives")
	assert.Contains(t, errs[1].Error(), "parsing -capacity: given without -drives")

	// A flag that changes how drives are measured is never ignored by a
	// replay, even when given its default value.
	f := Flags{Spec: "x", Precondition: "full", Runtime: "2s", Destructive: true, Report: filepath.Join(dir, "r"),
		Set: map[string]bool{"precondition": true, "runtime": true, "destructive": true, "scaling": true}}
	_, errs = f.Validate(dir)
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	require.Len(t, got, 4, "%q", got)
	assert.Contains(t, got[0], "parsing -destructive: given without -drives: a replay judges what was recorded")
	assert.Contains(t, got[1], "parsing -runtime: given without -drives")
	assert.Contains(t, got[2], "parsing -precondition: given without -drives: a replay judges what was recorded, as run.json says it was measured; drop -precondition")
	assert.Contains(t, got[3], "parsing -scaling: given without -drives: a replay judges the drive counts that were recorded")
}

func TestValidateLeavesNoDirectories(t *testing.T) {
	root := t.TempDir()
	report := filepath.Join(root, "out", "report")
	_, errs := (&Flags{Spec: "x", Precondition: "full", Report: report}).Validate(root)
	require.Empty(t, errs)
	assert.NoDirExists(t, filepath.Join(root, "out"), "checking -report creates nothing")
}

func TestExpandGlobDistinctDrives(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"disk-a", "disk-b"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), nil, 0o644))
	}
	// udev's two by-id links per namespace, a partition link, another drive.
	for link, target := range map[string]string{
		"nvme-M_S1": "disk-a", "nvme-M_S1_1": "disk-a", "nvme-M_S1-part1": "disk-a", "nvme-M_S2": "disk-b",
	} {
		require.NoError(t, os.Symlink(target, filepath.Join(dir, link)))
	}
	got, err := expandGlob(filepath.Join(dir, "nvme-M_*"))
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, "nvme-M_S1"), filepath.Join(dir, "nvme-M_S2")}, got)

	_, err = expandGlob(filepath.Join(dir, "nvme-X*"))
	require.ErrorContains(t, err, "matches no drive")
}
