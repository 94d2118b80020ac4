package outfiles

import (
	"crypto/sha256"
	"fmt"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func write(t *testing.T, path, data string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
}

// A run removes what an earlier run wrote in its report directory, and
// nothing else: not a user's own file (beside them, or in place of one
// the earlier run wrote), not its recording under raw/, not a file a
// hand-edited list names outside the directory.
func TestTrackRemovesOnlyWhatAnEarlierRunWrote(t *testing.T) {
	t.Cleanup(Untrack)
	root := t.TempDir()
	dir := filepath.Join(root, "report")
	raw := filepath.Join(dir, "raw")
	outside := filepath.Join(root, "outside.txt")
	write(t, outside, "mine")

	// The earlier run: what it writes through WriteAtomic is listed, its
	// recording (excluded) is not.
	removed, err := Track(dir, raw)
	require.NoError(t, err)
	assert.Empty(t, removed, "a new directory has nothing to remove")
	for _, f := range []string{"summary.md", "results.json", "charts/4KB_Random_Read.svg", "charts/8KB_Random_Read.svg", "notes.md"} {
		require.NoError(t, WriteAtomic(filepath.Join(dir, f), []byte("drivequal "+f)))
	}
	require.NoError(t, WriteAtomic(filepath.Join(raw, "run.json"), []byte("{}")))
	list, err := os.ReadFile(filepath.Join(dir, Manifest))
	require.NoError(t, err)
	assert.NotContains(t, string(list), "raw/", "a recording is not the report's")
	assert.Contains(t, string(list), "  charts/4KB_Random_Read.svg\n")
	Untrack()

	// The user's own files, and one of the run's they replaced.
	write(t, filepath.Join(dir, "charts", "my-notes.svg"), "mine")
	write(t, filepath.Join(dir, "README.txt"), "mine")
	write(t, filepath.Join(dir, "notes.md"), "the user's notes in place of the run's")
	// A list edited to name files the run did not write there.
	f, err := os.OpenFile(filepath.Join(dir, Manifest), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("0000  ../outside.txt\n0000  raw/run.json\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	removed, err = Track(dir, raw)
	require.NoError(t, err)
	slices.Sort(removed)
	assert.Equal(t, []string{"charts/4KB_Random_Read.svg", "charts/8KB_Random_Read.svg", "results.json", "summary.md"}, removed)
	for _, f := range []string{"summary.md", "results.json", "charts/4KB_Random_Read.svg", "charts/8KB_Random_Read.svg", Manifest} {
		assert.NoFileExists(t, filepath.Join(dir, f), "written by the earlier run")
	}
	for _, f := range []string{filepath.Join(dir, "charts", "my-notes.svg"), filepath.Join(dir, "README.txt"), filepath.Join(dir, "notes.md"), filepath.Join(raw, "run.json"), outside} {
		assert.FileExists(t, f, "not the earlier run's to remove")
	}

	// The new run lists its own files afresh.
	require.NoError(t, WriteAtomic(filepath.Join(dir, "summary.md"), []byte("new")))
	list, err = os.ReadFile(filepath.Join(dir, Manifest))
	require.NoError(t, err)
	assert.Equal(t, "11507a0e2f5e69d5dfa40a62a1bd7b6ee57e6bcd85c67c9b8431b36fff21c437  summary.md\n", string(list))
}

// A file reached through a symbolic link the earlier run's list names is
// not removed: the link could point anywhere.
func TestTrackLeavesFilesThroughSymlinks(t *testing.T) {
	t.Cleanup(Untrack)
	root := t.TempDir()
	dir := filepath.Join(root, "report")
	elsewhere := filepath.Join(root, "elsewhere")
	_, err := Track(dir)
	require.NoError(t, err)
	require.NoError(t, WriteAtomic(filepath.Join(dir, "charts", "a.svg"), []byte("svg")))
	Untrack()
	require.NoError(t, os.Rename(filepath.Join(dir, "charts"), elsewhere))
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(dir, "charts")))
	removed, err := Track(dir)
	require.NoError(t, err)
	assert.Empty(t, removed)
	assert.FileExists(t, filepath.Join(elsewhere, "a.svg"))
}

// A report directory written before drivequal kept a list is cleared of
// what its summary.md proves the run wrote: summary.md, results.json,
// junit.xml and the charts it links; a chart it does not link, and a
// file written since, stay.
func TestTrackRemovesWhatAnUnlistedRunsSummaryLinks(t *testing.T) {
	t.Cleanup(Untrack)
	dir := filepath.Join(t.TempDir(), "report")
	write(t, filepath.Join(dir, "summary.md"), "# drivequal: Solidigm D7-PS1010\n\nChart: [charts/4KB_Random_Read.svg](charts/4KB_Random_Read.svg)\n\n![lot](charts/lot.svg)\n")
	for _, f := range []string{"results.json", "junit.xml", "charts/4KB_Random_Read.svg", "charts/lot.svg", "charts/mine.svg", "notes.md"} {
		write(t, filepath.Join(dir, f), f)
	}
	later := filepath.Join(dir, "charts", "lot.svg")
	require.NoError(t, os.Chtimes(later, time.Now().Add(time.Hour), time.Now().Add(time.Hour)))

	removed, err := Track(dir)
	require.NoError(t, err)
	slices.Sort(removed)
	assert.Equal(t, []string{"charts/4KB_Random_Read.svg", "junit.xml", "results.json", "summary.md"}, removed)
	assert.FileExists(t, filepath.Join(dir, "charts", "mine.svg"), "not linked: not the run's")
	assert.FileExists(t, filepath.Join(dir, "notes.md"))
	assert.FileExists(t, later, "written after the run's summary: not the run's")

	// A directory whose summary.md is not drivequal's is left alone.
	other := filepath.Join(t.TempDir(), "docs")
	write(t, filepath.Join(other, "summary.md"), "# Our summary\n\n[x](charts/a.svg)\n")
	write(t, filepath.Join(other, "charts", "a.svg"), "a")
	removed, err = Track(other)
	require.NoError(t, err)
	assert.Empty(t, removed)
}

// The attack: a charts directory replaced by a symbolic link out of the
// report directory (charts -> /tmp/victim). A chart written there is
// refused, naming the link and the fix, and nothing is written through
// it; a file named by a link in place of a chart is replaced, its target
// left as it was.
func TestWriteAtomicRefusesChartsSymlink(t *testing.T) {
	t.Cleanup(Untrack)
	root := t.TempDir()
	dir := filepath.Join(root, "report")
	victim := filepath.Join(root, "victim")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.MkdirAll(victim, 0o755))
	require.NoError(t, os.Symlink(victim, filepath.Join(dir, "charts")))
	_, err := Track(dir)
	require.NoError(t, err)
	err = WriteAtomic(filepath.Join(dir, "charts", "a.svg"), []byte("<svg/>"))
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), filepath.Join(dir, "charts")+" is a symbolic link to "+victim)
		assert.Contains(t, err.Error(), "rm "+filepath.Join(dir, "charts"))
	}
	left, err := os.ReadDir(victim)
	require.NoError(t, err)
	assert.Empty(t, left, "written through the link")

	require.NoError(t, os.Remove(filepath.Join(dir, "charts")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "charts"), []byte("a file"), 0o644))
	err = WriteAtomic(filepath.Join(dir, "charts", "a.svg"), []byte("<svg/>"))
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), "is not a directory")
	}

	require.NoError(t, os.Remove(filepath.Join(dir, "charts")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "charts"), 0o755))
	target := filepath.Join(victim, "keep")
	require.NoError(t, os.WriteFile(target, []byte("keep"), 0o644))
	require.NoError(t, os.Symlink(target, filepath.Join(dir, "charts", "a.svg")))
	require.NoError(t, WriteAtomic(filepath.Join(dir, "charts", "a.svg"), []byte("<svg/>")))
	got, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "keep", string(got))
	fi, err := os.Lstat(filepath.Join(dir, "charts", "a.svg"))
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular())
}

// The attack: a recording kept in the report directory (report/rec),
// named to Track through a symbolic link (-replay=/tmp/via/rec), and a
// planted Manifest naming its purge.json with the right sum, other
// files of the user's, a path out of the directory, a link and a hard
// link. Nothing but a name the reporter writes is removed, and never
// one reached through a link, linked twice, or another user's.
func TestTrackRemovesOnlyTheReportersNames(t *testing.T) {
	testenv.MustHaveRoot(t) // another user's file is made with chown
	t.Cleanup(Untrack)
	root := t.TempDir()
	dir := filepath.Join(root, "report")
	rec := filepath.Join(dir, "rec")
	outside := filepath.Join(root, "outside")
	write(t, filepath.Join(rec, "purge.json"), "purge")
	write(t, filepath.Join(rec, "summary.md"), "purge")
	write(t, filepath.Join(outside, "victim"), "purge")
	write(t, filepath.Join(dir, "notes.txt"), "purge")
	write(t, filepath.Join(dir, ".bashrc"), "purge")
	write(t, filepath.Join(dir, "summary.md"), "purge")
	write(t, filepath.Join(dir, "charts", "other.svg"), "purge")
	write(t, filepath.Join(dir, "charts", "hard.svg"), "purge")
	require.NoError(t, os.Link(filepath.Join(dir, "charts", "hard.svg"), filepath.Join(outside, "hard")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "victim"), filepath.Join(dir, "results.json")))
	require.NoError(t, os.Symlink(dir, filepath.Join(root, "via")))
	sum := sha256.Sum256([]byte("purge"))
	var m strings.Builder
	for _, n := range []string{"rec/purge.json", "rec/summary.md", "notes.txt", ".bashrc", "../outside/victim", filepath.Join(outside, "victim"),
		"results.json", "charts/hard.svg", "charts/../../outside/victim", "summary.md", "charts/other.svg"} {
		fmt.Fprintf(&m, "%x  %s\n", sum, n)
	}
	write(t, filepath.Join(dir, Manifest), m.String())
	require.NoError(t, os.Chown(filepath.Join(dir, "charts", "other.svg"), 65534, 65534))

	removed, err := Track(dir, filepath.Join(root, "via", "rec"))
	require.NoError(t, err)
	assert.Equal(t, []string{"summary.md"}, removed)
	for _, f := range []string{filepath.Join(rec, "purge.json"), filepath.Join(rec, "summary.md"), filepath.Join(outside, "victim"), filepath.Join(outside, "hard"),
		filepath.Join(dir, "notes.txt"), filepath.Join(dir, ".bashrc"), filepath.Join(dir, "charts", "other.svg"), filepath.Join(dir, "charts", "hard.svg")} {
		assert.FileExists(t, f, "not the earlier run's to remove")
	}

	// The recording is the report directory itself: nothing in it goes.
	Untrack()
	write(t, filepath.Join(dir, Manifest), fmt.Sprintf("%x  junit.xml\n", sum))
	write(t, filepath.Join(dir, "junit.xml"), "purge")
	removed, err = Track(dir, filepath.Join(root, "via"))
	require.NoError(t, err)
	assert.Empty(t, removed)
	assert.FileExists(t, filepath.Join(dir, "junit.xml"))
}

// -report=$HOME: a Manifest there naming the user's files with their
// sums removes none of them; only the reporter's names go.
func TestTrackInHomeRemovesNoUserFile(t *testing.T) {
	t.Cleanup(Untrack)
	home := t.TempDir()
	var m strings.Builder
	for _, n := range []string{".bashrc", ".ssh/authorized_keys", "notes.md", "charts/x.png", "index.html"} {
		write(t, filepath.Join(home, n), "mine "+n)
		fmt.Fprintf(&m, "%x  %s\n", sha256.Sum256([]byte("mine "+n)), n)
	}
	write(t, filepath.Join(home, Manifest), m.String())
	removed, err := Track(home)
	require.NoError(t, err)
	assert.Equal(t, []string{"index.html"}, removed)
	for _, n := range []string{".bashrc", ".ssh/authorized_keys", "notes.md", "charts/x.png"} {
		assert.FileExists(t, filepath.Join(home, n))
	}
}

// The reporter names a chart after its workload with only spaces and
// slashes replaced (specs.SubtestName): commas, percent signs, plus signs
// and letters beyond ASCII are its own names, which it lists and removes;
// a name that climbs out, hides, or would end a markdown link is not.
func TestChartNames(t *testing.T) {
	for _, n := range []string{"charts/4KB_Random_Read.svg", "charts/4KB_Random_Read,_QD256.svg", "charts/Mix_70%.svg",
		"charts/Read+Trim.svg", "charts/4KB_@QD32.svg", "charts/µs-bound.svg", "charts/sweep-1.92TB-4KB_Random_Read.svg"} {
		assert.True(t, ours.MatchString(n), "%s: the reporter's", n)
	}
	for _, n := range []string{"charts/../summary.md", "charts/../x.svg", "charts/.hidden.svg", "charts/a b.svg", "charts/x).svg",
		"charts/sub/x.svg", `charts/a\b.svg`, "charts/x.png", "summary.md.bak", "rec/summary.md"} {
		assert.False(t, ours.MatchString(n), "%s: not the reporter's", n)
	}
}
