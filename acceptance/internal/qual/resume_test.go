//go:build linux

package qual

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live"
	"github.com/drivequal/drivequal/acceptance/internal/qual/verdict"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// sparseDrives makes n sparse regular files of size bytes, the drives of
// a run (a live run takes regular files; nothing is written to them
// here).
func sparseDrives(t *testing.T, n int, size int64) []string {
	t.Helper()
	dir := t.TempDir()
	var out []string
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("drive%02d", i))
		f, err := os.Create(p)
		require.NoError(t, err)
		require.NoError(t, f.Truncate(size))
		require.NoError(t, f.Close())
		out = append(out, p)
	}
	return out
}

func needFio(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("fio is not installed: a live setup reads its version")
	}
}

// interruptedAtSetup starts a live run on drives and stops it before its first
// cell, as a run killed right after setup leaves its recording: run.json
// with the drives, the spec and nothing measured.
func interruptedAtSetup(t *testing.T, spec string, drives []string) *cmdline.Config {
	t.Helper()
	needFio(t)
	rep := t.TempDir()
	cfg := &cmdline.Config{Spec: spec, Drives: drives, Destructive: true, Report: rep, Record: filepath.Join(rep, "raw"),
		Root: moduleRoot(t), Precondition: plan.Full}
	s, errs := Setup(context.Background(), cfg, 0, device.System{}, fiojob.Runner{})
	require.Empty(t, errs)
	require.NoError(t, s.Start())
	require.NoError(t, s.Close())
	return cfg
}

// resumeSetup sets up cfg again with -resume (a dry run: nothing is held
// or written).
func resumeSetup(t *testing.T, cfg *cmdline.Config) (*Suite, []error) {
	t.Helper()
	c := *cfg
	c.Resume, c.DryRun = true, true
	return setupOne(t, &c)
}

// editRunJSON changes run.json as the interrupted run would have
// recorded it: with its sha256 beside it (record.WriteRun).
func editRunJSON(t *testing.T, cfg *cmdline.Config, edit func(*record.Run)) {
	t.Helper()
	path := filepath.Join(cfg.Record, "run.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var r record.Run
	require.NoError(t, json.Unmarshal(data, &r))
	edit(&r)
	data, err = json.MarshalIndent(r, "", "  ")
	require.NoError(t, err)
	require.NoError(t, record.WriteRun(cfg.Record, data, nil))
}

func errText(errs []error) string {
	var s []string
	for _, e := range errs {
		s = append(s, e.Error())
	}
	return strings.Join(s, "\n")
}

// A recording that is not the same run is refused, each difference once,
// naming it and the way on.
func TestResumeRefusals(t *testing.T) {
	spec := filepath.Join(moduleRoot(t), "acceptance", "internal", "e2e", "testdata", "faults.toml")
	drives := sparseDrives(t, 2, 64<<20)
	cfg := interruptedAtSetup(t, spec, drives)

	s, errs := resumeSetup(t, cfg)
	require.Empty(t, errs, "the same run resumes")
	assert.NotNil(t, s.resume)

	t.Run("spec changed", func(t *testing.T) {
		text, err := os.ReadFile(spec)
		require.NoError(t, err)
		edited := filepath.Join(t.TempDir(), "faults.toml")
		require.NoError(t, os.WriteFile(edited, []byte(strings.Replace(string(text), `runtime   = "1s"`, `runtime   = "2s"`, 1)), 0o644))
		c := *cfg
		c.Spec = edited
		_, errs := resumeSetup(t, &c)
		require.Len(t, errs, 1, errText(errs))
		assert.Regexp(t, `^parsing -spec: .*/faults.toml \(sha256 [0-9a-f]{12}…\) is not the spec the interrupted run in .* was made with \(.*faults.toml, sha256 [0-9a-f]{12}…\): the spec changed; .*a new -record directory.*-replay=`, errs[0].Error())
	})
	t.Run("runtime and precondition", func(t *testing.T) {
		c := *cfg
		c.Runtime, c.Precondition = 2e9, plan.Quick
		_, errs := resumeSetup(t, &c)
		require.Len(t, errs, 2, errText(errs))
		assert.Contains(t, errText(errs), "parsing -precondition: quick, but the interrupted run in "+cfg.Record+" was preconditioned full")
		assert.Contains(t, errText(errs), "parsing -runtime: -runtime=2s, but the interrupted run in "+cfg.Record+" ran with the spec's runtimes (no -runtime)")
	})
	t.Run("drive changed", func(t *testing.T) {
		c := *cfg
		c.Drives = []string{drives[1], drives[0]}
		s, errs := resumeSetup(t, &c)
		require.Empty(t, errs, "the same drives in another order resume, matched by identity: %s", errText(errs))
		require.Len(t, s.Drives, 2)
		assert.Equal(t, []string{drives[0], drives[1]}, []string{s.Drives[0].Path, s.Drives[1].Path}, "put in the recorded order")
		assert.Equal(t, []string{"drive 1 is " + drives[0] + ", as recorded", "drive 2 is " + drives[1] + ", as recorded"}, s.resume.mapping)
		other := sparseDrives(t, 1, 64<<20)[0]
		c.Drives = []string{drives[0], other}
		_, errs = resumeSetup(t, &c)
		require.Len(t, errs, 2, errText(errs))
		assert.Regexp(t, `^parsing -drives: `+other+` is none of the drives of the interrupted run in `+cfg.Record+`: it is file \(inode [0-9]+ on device [0-9]+:[0-9]+\), 67108864 bytes; `, errs[0].Error())
		assert.Contains(t, errs[1].Error(), "parsing -drives: the interrupted run in "+cfg.Record+" measured 2 drives and these are not given: drive 2, recorded at "+drives[1]+": file (inode ")
		c.Drives = drives[:1]
		_, errs = resumeSetup(t, &c)
		require.Len(t, errs, 1, errText(errs))
		assert.Contains(t, errs[0].Error(), "these are not given: drive 2, recorded at "+drives[1])
	})
	t.Run("size, device, fio, host", func(t *testing.T) {
		c := *cfg
		c.Record = filepath.Join(t.TempDir(), "raw")
		require.NoError(t, os.CopyFS(c.Record, os.DirFS(cfg.Record)))
		editRunJSON(t, &c, func(r *record.Run) {
			r.Drives[0].Bytes = 1 << 30
			r.Drives[0].Serial = "S1"
			r.Drives[0].Firmware = "8CV10102"
			r.Devices[1] = "259:3"
			r.Identities[1].LBASize = 512
			r.FioVersion = "fio-2.21"
			r.Host.Hostname, r.Host.MachineID = "elsewhere", ""
		})
		_, errs := resumeSetup(t, &c)
		require.Len(t, errs, 4, errText(errs))
		assert.Contains(t, errs[0].Error(), `: serial "", was "S1"; firmware "", was "8CV10102"; size 67,108,864 bytes, was 1,073,741,824; `)
		assert.Contains(t, errs[1].Error(), `: logical block size 0 bytes, was 512 (formatted since); device number none (a regular file), was 259:3; `)
		assert.Regexp(t, `^parsing -resume: fio here is fio-3\.[0-9]+, the interrupted run in .* used fio-2.21: a different major version`, errs[2].Error())
		assert.Regexp(t, `^parsing -resume: this host is .*, the interrupted run in .* was recorded on elsewhere: .*; on the same machine under another name \(a CI job's container\), run with DRIVEQUAL_HOSTNAME=elsewhere; otherwise resume with`, errs[3].Error())
	})
	t.Run("capacity", func(t *testing.T) {
		c := *cfg
		c.Capacity = "64MiB"
		_, errs := resumeSetup(t, &c)
		require.Empty(t, errs, "the capacity the drives were matched to")
		c.Record = filepath.Join(t.TempDir(), "raw")
		require.NoError(t, os.CopyFS(c.Record, os.DirFS(cfg.Record)))
		editRunJSON(t, &c, func(r *record.Run) { r.Drives[1].Capacity = "128MiB" })
		_, errs = resumeSetup(t, &c)
		require.Len(t, errs, 1, errText(errs))
		assert.Contains(t, errs[0].Error(), "parsing -drives: "+drives[1]+" is drive 2 of the interrupted run in "+c.Record+" (file (inode ")
		assert.Contains(t, errs[0].Error(), "recorded at "+drives[1]+"), but changed since: judged as 64MiB, was 128MiB (-capacity); ")
	})
	t.Run("without drives", func(t *testing.T) {
		f := cmdline.Flags{Spec: "solidigm-d7-ps1010", Precondition: plan.Full, Resume: true, Report: t.TempDir(), Set: map[string]bool{"resume": true}}
		_, errs := f.Validate(moduleRoot(t))
		require.Len(t, errs, 1, errText(errs))
		assert.Equal(t, "parsing -resume: given without -drives: -resume continues a live run on its drives; give the -drives of the interrupted run, or judge its recording with -replay=DIR", errs[0].Error())
	})
	t.Run("not a recording", func(t *testing.T) {
		c := *cfg
		c.Record = filepath.Join(t.TempDir(), "raw")
		_, errs := resumeSetup(t, &c)
		require.Len(t, errs, 1)
		assert.Equal(t, "parsing -resume: "+c.Record+"/run.json does not exist: there is no recorded run to resume in "+c.Record+
			"; give the -record directory of the interrupted run, or drop -resume to start a new run", errs[0].Error())
		require.NoError(t, os.MkdirAll(c.Record, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(c.Record, "run.json"), []byte(`{"format": 3, "mode": "replay", "spec": "x"}`), 0o644))
		_, errs = resumeSetup(t, &c)
		require.Len(t, errs, 1)
		assert.Contains(t, errs[0].Error(), `run.json is not a drivequal recording of a live run (mode "replay", not "record")`)
	})
}

// On the built-in plan, 24 sparse 1.92 TB drives: a resume after step k
// keeps what the recording holds whole and plans only what the remaining
// cells need. Each recording is fabricated from a real one (the run.json
// a live setup writes): the tests and the verify pass the first k steps
// would have recorded are listed, with outputs copied from the brief's
// fixtures. -v logs each dry run's estimate (docs/resume.md, "What it saves").
// Without -race (NORACE_TESTS): it plans and judges on one goroutine,
// and took 17.5 s with the race detector (of qual's 69), 3.5 without.
func TestResumeBuiltInPlan(t *testing.T) {
	testenv.SkipUnderRace(t)
	drives := sparseDrives(t, 24, 1_920_383_410_176)
	for _, done := range []int{3, 20, 30, 45, 69} {
		t.Run(fmt.Sprintf("after_step_%d", done), func(t *testing.T) { resumeBuiltIn(t, drives, done) })
	}
}

func resumeBuiltIn(t *testing.T, drives []string, done int) {
	cfg := interruptedAtSetup(t, "solidigm-d7-ps1010", drives)
	fresh, errs := resumeSetup(t, cfg)
	require.Empty(t, errs)
	assert.Equal(t, fresh.resume.fresh, fresh.Plan.Total, "nothing recorded: the resume is the whole run")

	full := fresh.Plan
	var tests []string
	seqLeft := false
	verify := record.Verify{}
	for _, st := range full.Steps {
		if st.Kind == plan.StepMeasure && st.N > done && st.State == "seq" {
			seqLeft = true
		}
	}
	for _, st := range full.Steps[:done] {
		switch st.Kind {
		case plan.StepMeasure:
			for _, c := range st.Cells {
				tests = append(tests, c.Test)
				src := filepath.Join(moduleRoot(t), "fixtures", "solidigm-d7-ps1010", filepath.FromSlash(st.Cells[0].Test)+".json")
				if _, err := os.Stat(src); err != nil {
					src = filepath.Join(moduleRoot(t), "fixtures", "solidigm-d7-ps1010", "TestSingleDrive", "1.92TB", "4KB_Random_Read.json")
				}
				data, err := os.ReadFile(src)
				require.NoError(t, err)
				dst := record.Base(cfg.Record, c.Test) + record.OutputExt
				require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
				require.NoError(t, os.WriteFile(dst, data, 0o644))
			}
		case plan.StepVerify:
			verify = record.Verify{Step: st.N, Name: st.Name, Raw: "prepare/003-verify.json"}
			for i, d := range st.Drives {
				verify.Drives = append(verify.Drives, record.VerifyDrive{Path: drives[d], Target: st.Job.Targets[i].Path, Bytes: st.Job.Targets[i].Size})
			}
		}
	}
	require.NotEmpty(t, verify.Drives, "the first steps hold the verify pass")
	// A verify pass every drive passed: fio's groups, one per drive, each
	// having read what the fill wrote.
	var groups []map[string]any
	for range verify.Drives {
		groups = append(groups, map[string]any{"jobname": "verify", "groupid": len(groups), "error": 0,
			"job options": map[string]any{}, "read": map[string]any{"io_bytes": verify.Drives[0].Bytes, "io_kbytes": verify.Drives[0].Bytes / 1024}, "write": map[string]any{}})
	}
	out, err := json.Marshal(map[string]any{"fio version": "fio-3.33", "jobs": groups})
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(cfg.Record, "prepare"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(cfg.Record, "prepare", "003-verify.json"), out, 0o644))
	editRunJSON(t, cfg, func(r *record.Run) { r.Tests, r.Verify = tests, []record.Verify{verify} })

	s, errs := resumeSetup(t, cfg)
	require.Empty(t, errs)
	var b strings.Builder
	s.PrintPlan(&b)
	assert.Len(t, s.resume.kept, len(tests))
	for _, st := range s.Plan.Steps {
		if !seqLeft {
			assert.NotEqual(t, plan.StepFill, st.Kind, "the fill was read back whole and no sequential cell remains: no purge or fill again (step %d %s)", st.N, st.Name)
		}
		for _, c := range st.Cells {
			assert.NotContains(t, tests, c.Test, "a kept cell is not measured again")
		}
	}
	if seqLeft {
		assert.Equal(t, plan.StepPurge, s.Plan.Steps[0].Kind, "a sequential cell remains: purged and filled again first")
		// The dry run says why drives whose fill was read back are purged.
		assert.True(t, strings.Contains(b.String(), ": the fill was read back whole, but sequential cells remain, measured on fresh drives: purged, filled and read back again first"),
			"the dry run says why drives whose fill was read back are purged")
		assert.False(t, strings.Contains(b.String(), "the fill was read back whole: filled;"), "a drive purged again is not said to stay filled")
	} else {
		assert.Equal(t, plan.StepRandom, s.Plan.Steps[0].Kind, "the next random group is preconditioned again first: %s", s.Plan.Steps[0].Name)
		assert.Less(t, s.Plan.Total, full.Total)
	}
	assert.Equal(t, full.Total, s.resume.fresh)
	line := b.String()[strings.Index(b.String(), fmt.Sprintf("%d cells kept, ", len(tests))):]
	t.Logf("interrupted after step %d of %d (%s): %s", done, len(full.Steps), full.Steps[done-1].Name, line[:strings.IndexByte(line, '\n')])
}

// Which recordings a resume keeps: listed in run.json with fio's output
// on disk and not interrupted. A fio whose jobs failed is the cell's
// verdict and is kept; one the run stopped (Ctrl-C, -timeout) or a signal
// killed is measured again, as is an output that is missing or does not
// parse, and a cell sharing such a recording.
func TestResumeKeeps(t *testing.T) {
	dir := t.TempDir()
	out, err := os.ReadFile(filepath.Join(moduleRoot(t), "fixtures", "solidigm-d7-ps1010", "TestSingleDrive", "1.92TB", "4KB_Random_Read.json"))
	require.NoError(t, err)
	write := func(test, ext string, data []byte) {
		p := record.Base(dir, test) + ext
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}
	for _, c := range []string{"whole", "failed", "stopped", "garbled", "unlisted", "owner-stopped"} {
		write("TestSingleDrive/X/"+c, record.OutputExt, out)
	}
	write("TestSingleDrive/X/failed", record.StatusExt, []byte(`{"interrupted": false, "error": "fio exited with status 1 (1 jobs failed): fio: io_u error on file /dev/nvme0n1: Input/output error"}`))
	write("TestSingleDrive/X/killed", record.OutputExt, out)
	write("TestSingleDrive/X/killed", record.StatusExt, []byte(`{"interrupted": false, "error": "fio killed by signal SIGKILL"}`))
	write("TestSingleDrive/X/stopped", record.StatusExt, []byte(`{"interrupted": true, "error": "fio stopped: context canceled"}`))
	write("TestSingleDrive/X/owner-stopped", record.StatusExt, []byte(`{"interrupted": true, "error": "fio stopped: context deadline exceeded"}`))
	write("TestSingleDrive/X/garbled", record.OutputExt, out[:len(out)/2])
	var listed []string
	for _, c := range []string{"whole", "failed", "killed", "stopped", "garbled", "gone", "owner-stopped", "sharer"} {
		listed = append(listed, "TestSingleDrive/X/"+c)
	}
	z := &resumeState{dir: dir, prior: record.Run{Tests: listed,
		Shared: map[string]string{"TestSingleDrive/X/sharer": "TestSingleDrive/X/owner-stopped"}}}
	for test, want := range map[string]string{
		"whole":         "",
		"failed":        "",
		"killed":        "its fio was killed mid-measurement (fio killed by signal SIGKILL): an interruption, not the drive's verdict",
		"stopped":       "its measurement was interrupted (fio stopped: context canceled)",
		"garbled":       "its recording does not parse (",
		"gone":          "its recording is missing (",
		"unlisted":      "not recorded before the interruption",
		"owner-stopped": "its measurement was interrupted (fio stopped: context deadline exceeded)",
		"sharer":        "it shares the recording of TestSingleDrive/X/owner-stopped, which is its measurement was interrupted",
	} {
		got := z.incomplete("TestSingleDrive/X/" + test)
		if want == "" {
			assert.Empty(t, got, test)
		} else {
			assert.True(t, strings.HasPrefix(got, want), "%s: %q, want %q…", test, got, want)
		}
	}
}

// A resume of some cells (-run) leaves the whole recordings of the others
// listed in run.json, so that a replay still judges them, and lists the
// resumption with what it kept and what it has left.
func TestResumeSubsetKeepsOthers(t *testing.T) {
	spec := filepath.Join(moduleRoot(t), "acceptance", "internal", "e2e", "testdata", "faults.toml")
	cfg := interruptedAtSetup(t, spec, sparseDrives(t, 1, 64<<20))
	out, err := os.ReadFile(filepath.Join(moduleRoot(t), "fixtures", "solidigm-d7-ps1010", "TestSingleDrive", "1.92TB", "4KB_Random_Read.json"))
	require.NoError(t, err)
	recordedCells := []string{"TestSingleDrive/64MiB/512B_Random_Read", "TestSingleDrive/64MiB/4KB_Random_Write"}
	for _, c := range recordedCells {
		p := record.Base(cfg.Record, c) + record.OutputExt
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, out, 0o644))
	}
	editRunJSON(t, cfg, func(r *record.Run) { r.Tests = recordedCells })

	c := *cfg
	c.Resume, c.Run = true, "TestSingleDrive/64MiB/(4KB_Random_Write|4KB_Random_Read)$"
	s, errs := setupOne(t, &c)
	require.Empty(t, errs)
	defer s.close()
	require.NoError(t, s.start())
	data, err := os.ReadFile(filepath.Join(cfg.Record, "run.json"))
	require.NoError(t, err)
	var r record.Run
	require.NoError(t, json.Unmarshal(data, &r))
	assert.Equal(t, recordedCells, r.Tests, "the unselected cell's whole recording stays listed")
	require.Len(t, r.Resumptions, 1)
	assert.Equal(t, []string{"TestSingleDrive/64MiB/4KB_Random_Write"}, r.Resumptions[0].Kept)
	require.Len(t, r.Resumptions[0].Redone, 1)
	assert.Equal(t, "TestSingleDrive/64MiB/4KB_Random_Read", r.Resumptions[0].Redone[0].Test)
	assert.NotEmpty(t, r.Resumptions[0].Steps, "the read's twin is preconditioned again before it")
}

// A kept cell is judged from every sidecar its live measurement wrote, as
// a replay of the recording judges it: the links its drives shared (a
// switch's uplink, which makes a scaling cell below spec pcie bound), the
// CPUs, the PCIe and thermal findings and the steady-state evidence.
func TestResumeKeptCellReadsEverySidecar(t *testing.T) {
	spec := filepath.Join(moduleRoot(t), "acceptance", "internal", "e2e", "testdata", "faults.toml")
	cfg := interruptedAtSetup(t, spec, sparseDrives(t, 1, 64<<20))
	out, err := os.ReadFile(filepath.Join(moduleRoot(t), "fixtures", "solidigm-d7-ps1010", "TestSingleDrive", "1.92TB", "4KB_Random_Read.json"))
	require.NoError(t, err)
	const test = "TestSingleDrive/64MiB/4KB_Random_Read"
	p := record.Base(cfg.Record, test) + record.OutputExt
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, out, 0o644))
	shared := []record.SharedLink{{Where: "switch port 0000:09:00.0", Speed: 32, Width: 16, Drives: []string{"/dev/nvme0n1", "/dev/nvme1n1"}}}
	link := record.Link{Unknown: "the link of switch port 0000:0a:00.0 reads Unknown", Shared: shared}
	cpu := record.CPU{CPUs: "0-7", N: 8, Busy: 0.97}
	steadyRecs := []report.Steady{{Step: 4, Name: "random preconditioning (4KB Random Write)", Drive: cfg.Drives[0], Attained: true}}
	thermal := record.Thermal{Throttled: "thermal management 1 for 3 s"}
	require.NoError(t, record.WriteJSON(cfg.Record, test, record.LinkExt, link))
	require.NoError(t, record.WriteJSON(cfg.Record, test, record.CPUExt, cpu))
	require.NoError(t, record.WriteJSON(cfg.Record, test, record.SteadyExt, steadyRecs))
	require.NoError(t, record.WriteJSON(cfg.Record, test, record.ThermalExt, thermal))
	editRunJSON(t, cfg, func(r *record.Run) { r.Tests = []string{test} })

	s, errs := resumeSetup(t, cfg)
	require.Empty(t, errs)
	var cell plan.Cell
	for _, c := range s.allCells() {
		if c.Test == test {
			cell = c
		}
	}
	require.Equal(t, test, cell.Test)
	require.True(t, s.resume.kept[test], "recorded whole: kept")
	m := s.evidence.Cell(context.Background(), cell, t.Logf)
	assert.Equal(t, shared, m.Shared, "the links the drives shared, as recorded")
	assert.Equal(t, link.Unknown, m.LinkUnknown)
	assert.Equal(t, cpu, m.CPU)
	assert.Equal(t, thermal.Throttled, m.Thermal)
	require.Len(t, m.Steady, 1)
	assert.Equal(t, steadyRecs[0].Name, m.Steady[0].Name)
	assert.Empty(t, m.NotRun)
}

// writeVerify records a verify pass of drives in cfg's recording as
// prepare/<name>.json, each drive having read back read[i] of its bytes,
// and returns it as run.json lists it.
func writeVerify(t *testing.T, cfg *cmdline.Config, step int, name string, drives []string, size int64, read []int64) record.Verify {
	t.Helper()
	v := record.Verify{Step: step, Name: "verify pass", Raw: "prepare/" + name + ".json"}
	var groups []map[string]any
	for i, d := range drives {
		v.Drives = append(v.Drives, record.VerifyDrive{Path: d, Target: d, Bytes: size})
		groups = append(groups, map[string]any{"jobname": "verify", "groupid": i, "error": 0,
			"job options": map[string]any{}, "read": map[string]any{"io_bytes": read[i], "io_kbytes": read[i] / 1024}, "write": map[string]any{}})
	}
	out, err := json.Marshal(map[string]any{"fio version": "fio-3.33", "jobs": groups})
	require.NoError(t, err)
	p := filepath.Join(cfg.Record, filepath.FromSlash(v.Raw))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, out, 0o644))
	return v
}

// priorReadBacks judges the verify passes a resumed run takes over from
// its recording, as TestIntegrity does before it runs any of its own.
func priorReadBacks(s *Suite) []verdict.IntegrityDrive {
	var out []verdict.IntegrityDrive
	for _, rb := range s.runner.PriorReadBacks() {
		for _, d := range verdict.ReadBack(rb, s.Drives) {
			out = append(out, d.IntegrityDrive)
		}
	}
	return out
}

func integrityVerdicts(drives []verdict.IntegrityDrive) []string {
	var out []string
	for _, d := range drives {
		out = append(out, d.Name+" "+d.Verdict)
	}
	return out
}

// Each drive is judged on its last read-back, once: a drive whose
// recorded read-back failed without a mismatch (read back short, as an
// I/O error leaves it) stays disqualified on resume, and is neither filled
// nor read back again, while the pass's other drive is judged on it; a
// replay of a resumed run judges a re-read drive on its new pass alone;
// and a drive whose last recorded read-back failed stays disqualified,
// whatever an earlier pass of it said.
func TestResumeJudgesEachDriveOnItsLastReadBack(t *testing.T) {
	spec := filepath.Join(moduleRoot(t), "acceptance", "internal", "e2e", "testdata", "faults.toml")
	const size = 64 << 20
	drives := sparseDrives(t, 2, size)
	a, b := filepath.Base(drives[0]), filepath.Base(drives[1])
	verifies := func(s *Suite) map[int]bool {
		out := map[int]bool{}
		for _, st := range s.Plan.Steps {
			if st.Kind == plan.StepVerify {
				for _, d := range st.Drives {
					out[d] = true
				}
			}
		}
		return out
	}

	t.Run("resume after a short read-back of one drive", func(t *testing.T) {
		cfg := interruptedAtSetup(t, spec, drives)
		first := writeVerify(t, cfg, 3, "003-verify", drives, size, []int64{size, size / 2})
		editRunJSON(t, cfg, func(r *record.Run) { r.Verify = []record.Verify{first} })
		s, errs := resumeSetup(t, cfg)
		require.Empty(t, errs)
		assert.Empty(t, verifies(s), "the drive whose read-back failed is not read back again")
		assert.Contains(t, s.resume.broken[1], "failed the verify pass", "disqualified by the recorded read-back")
		assert.Equal(t, []string{a + " pass", b + " fail"}, integrityVerdicts(priorReadBacks(s)),
			"each drive of the recorded pass is judged on it")
	})
	t.Run("replay of the resumed run", func(t *testing.T) {
		cfg := interruptedAtSetup(t, spec, drives)
		first := writeVerify(t, cfg, 3, "003-verify", drives, size, []int64{size, size / 2})
		again := writeVerify(t, cfg, 3, "resume-1/003-verify", drives[1:], size, []int64{size})
		editRunJSON(t, cfg, func(r *record.Run) { r.Verify = []record.Verify{first, again} })
		s, errs := setupOne(t, &cmdline.Config{Spec: spec, Replay: cfg.Record, Replays: []string{cfg.Record}, Report: t.TempDir(), Root: moduleRoot(t)})
		require.Empty(t, errs)
		got, why := s.JudgeIntegrity(context.Background(), t.Logf)
		require.Empty(t, why)
		assert.Equal(t, []string{a + " pass", b + " pass"}, integrityVerdicts(got), "each drive once, on its last read-back")
	})
	t.Run("resume after a later read-back failed", func(t *testing.T) {
		cfg := interruptedAtSetup(t, spec, drives)
		first := writeVerify(t, cfg, 3, "003-verify", drives, size, []int64{size, size})
		again := writeVerify(t, cfg, 3, "resume-1/003-verify", drives[1:], size, []int64{size / 2})
		editRunJSON(t, cfg, func(r *record.Run) { r.Verify = []record.Verify{first, again} })
		s, errs := resumeSetup(t, cfg)
		require.Empty(t, errs)
		assert.Empty(t, verifies(s), "the drive the last pass read back short stays disqualified")
		assert.Equal(t, report.CauseReadBack, s.resume.causes[1])
		assert.Equal(t, []string{a + " pass", b + " fail"}, integrityVerdicts(priorReadBacks(s)))
	})
}

// A drive whose recorded read-back returned other data than it was given
// stays disqualified on resume: its cells fail unmeasured again, and the
// resumed plan purges, fills or preconditions nothing for them, so its
// estimate (and the -timeout check) counts no step on that drive.
func TestResumePlansNothingForADisqualifiedDrive(t *testing.T) {
	spec := filepath.Join(moduleRoot(t), "acceptance", "internal", "e2e", "testdata", "faults.toml")
	drives := sparseDrives(t, 2, 64<<20)
	cfg := interruptedAtSetup(t, spec, drives)
	// fio's read-back of two drives (fixtures/fio/readback-tail: real fio
	// output), the second target's last 4 KiB changed: drives[0] is that
	// target here, the drive every single-drive cell measures.
	fixture := filepath.Join(moduleRoot(t), "fixtures", "fio", "readback-tail")
	const bytes = 32<<20 + 90112
	v := record.Verify{Step: 3, Name: "verify pass", Raw: "prepare/003-verify.json", Pattern: "0xdeadbeef",
		Drives: []record.VerifyDrive{{Path: drives[1], Target: "/dev/loop55", Bytes: bytes, LBASize: 512}, {Path: drives[0], Target: "/dev/loop56", Bytes: bytes, LBASize: 4096}}}
	for _, ext := range []string{record.OutputExt, record.StderrExt} {
		data, err := os.ReadFile(fixture + ext)
		require.NoError(t, err)
		p := filepath.Join(cfg.Record, "prepare", "003-verify"+ext)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(cfg.Record, "prepare", "003-verify"+record.StatusExt), []byte(`{"interrupted": false, "error": "fio exited with status 1 (1 jobs failed)"}`), 0o644))
	s, errs := resumeSetup(t, cfg)
	require.Empty(t, errs)
	var unmeasured []string
	for _, c := range s.allCells() {
		if slices.Contains(c.Drives, 0) && c.Skip == "" {
			unmeasured = append(unmeasured, c.Test)
		}
	}
	require.NotEmpty(t, unmeasured)
	editRunJSON(t, cfg, func(r *record.Run) { r.Verify, r.Unmeasured = []record.Verify{v}, unmeasured })

	s, errs = resumeSetup(t, cfg)
	require.Empty(t, errs)
	require.Contains(t, s.resume.broken[0], "returned other data", "disqualified by the recorded read-back")
	for _, st := range s.Plan.Steps {
		assert.NotContains(t, st.Drives, 0, "step %d (%s) is planned on the disqualified drive", st.N, st.Name)
	}
	assert.Empty(t, s.resume.redone, "nothing is measured again")
	for _, c := range s.allCells() {
		if c.Test == unmeasured[0] {
			m := s.evidence.Cell(context.Background(), c, t.Logf)
			assert.Equal(t, report.CauseIntegrity, m.Cause)
			assert.Contains(t, m.NotRun, "returned other data")
		}
	}
}

// A resumed run reports the verify passes it takes over before its own,
// as TestIntegrity lists them: the drive the interrupted run read back
// whole first, then the drive read back again now, each once.
func TestAResumedRunReportsTheReadBacksItTakesOverFirst(t *testing.T) {
	spec, err := specs.Parse("fake.toml", []byte(fakeSpec))
	require.NoError(t, err)
	dir := t.TempDir()
	rec := filepath.Join(dir, "raw")
	const size = 1 << 30
	drives := []plan.Drive{
		{Info: device.Info{Path: "/tmp/a.img", Size: size, NUMANode: -1}, Capacity: "1GiB"},
		{Info: device.Info{Path: "/tmp/b.img", Size: size, NUMANode: -1}, Capacity: "1GiB"},
	}
	cfg := &cmdline.Config{Record: rec}
	again := writeVerify(t, &cmdline.Config{Record: dir}, 3, "again", []string{"/tmp/b.img"}, size, []int64{size})
	out, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(again.Raw)))
	require.NoError(t, err)
	exec := &fakeExec{stdout: fixture(t, "randread-8jobs-group.json"), verify: out, rounds: steadyRounds, dir: rec}
	s := testSuite(t, spec, drives, exec, rec, dir, nil)
	// Recorded by the interrupted run: a.img read back whole, b.img short.
	prior := writeVerify(t, cfg, 3, "interrupted-verify", []string{"/tmp/a.img", "/tmp/b.img"}, size, []int64{size, size / 2})
	var p plan.Plan
	s.Planner.AddVerify(&p, []int{1})
	s.runner.Plan = p
	s.runner.Resume = &live.Resume{Dir: rec, Prior: record.Run{Verify: []record.Verify{prior}}}

	got, why := s.JudgeIntegrity(context.Background(), t.Logf)
	require.Empty(t, why)
	var names []string
	for _, d := range got {
		names = append(names, d.Name+" "+d.Verdict)
	}
	require.Equal(t, []string{"a.img pass", "b.img pass"}, names)
	var tests []string
	for _, r := range s.Report.Results {
		if r.Kind == report.KindIntegrity {
			tests = append(tests, r.Test+" "+r.Verdict)
		}
	}
	require.Equal(t, []string{"TestIntegrity/a.img pass", "TestIntegrity/b.img pass"}, tests)
}

// A replay of a resumed run fails a cell its drive's read-back left
// unmeasured with the read-back the live run failed it with: the drive's
// last (the resumption's), not the interrupted run's earlier one, as a
// replay that judged TestIntegrity first did before.
func TestReplayFailsAnUnmeasuredCellOnItsDrivesLastReadBack(t *testing.T) {
	spec := filepath.Join(moduleRoot(t), "acceptance", "internal", "e2e", "testdata", "faults.toml")
	const size = 64 << 20
	drives := sparseDrives(t, 2, size)
	cfg := interruptedAtSetup(t, spec, drives)
	first := writeVerify(t, cfg, 3, "003-verify", drives, size, []int64{size / 2, size})
	again := writeVerify(t, cfg, 3, "resume-1/003-verify", drives[:1], size, []int64{size / 4})
	again.Resume = 1
	const cell0 = "TestSingleDrive/64MiB/4KB_Random_Read"
	editRunJSON(t, cfg, func(r *record.Run) {
		r.Verify, r.Unmeasured = []record.Verify{first, again}, []string{cell0}
	})
	s, errs := setupOne(t, &cmdline.Config{Spec: spec, Replay: cfg.Record, Replays: []string{cfg.Record}, Report: t.TempDir(), Root: moduleRoot(t)})
	require.Empty(t, errs)
	var cell plan.Cell
	for _, c := range s.allCells() {
		if c.Test == cell0 {
			cell = c
		}
	}
	require.Equal(t, []int{0}, cell.Drives, "a cell of the first drive")
	last := verdict.ReadBack(evidence.ReadBack{Dir: cfg.Record, Pass: again}, s.Drives)
	require.Len(t, last, 1)
	require.Equal(t, report.Fail, last[0].Verdict)
	o, err := s.Run(context.Background(), cell, t.Logf)
	require.NoError(t, err)
	assert.Equal(t, report.Fail, o.Result.Verdict)
	assert.Contains(t, o.Result.Error, last[0].Message, "failed on the drive's last read-back")
	// TestIntegrity, which go test runs before the cells, judges the same.
	_, why := s.JudgeIntegrity(context.Background(), t.Logf)
	require.Empty(t, why)
	o, err = s.Run(context.Background(), cell, t.Logf)
	require.NoError(t, err)
	assert.Contains(t, o.Result.Error, last[0].Message)
}

// A replay fails a cell its drive's read-back left unmeasured even when
// that read-back's recording no longer reads: the drive failed its
// verify pass live, and the replay says the recording is bad rather than
// skipping the cell as never recorded.
func TestReplayFailsAnUnmeasuredCellWhoseReadBackDoesNotRead(t *testing.T) {
	spec := filepath.Join(moduleRoot(t), "acceptance", "internal", "e2e", "testdata", "faults.toml")
	const size = 64 << 20
	drives := sparseDrives(t, 1, size)
	cfg := interruptedAtSetup(t, spec, drives)
	pass := writeVerify(t, cfg, 3, "003-verify", drives, size, []int64{size / 2})
	require.NoError(t, os.Remove(filepath.Join(cfg.Record, filepath.FromSlash(pass.Raw))))
	const cell0 = "TestSingleDrive/64MiB/4KB_Random_Read"
	editRunJSON(t, cfg, func(r *record.Run) { r.Verify, r.Unmeasured = []record.Verify{pass}, []string{cell0} })
	s, errs := setupOne(t, &cmdline.Config{Spec: spec, Replay: cfg.Record, Replays: []string{cfg.Record}, Report: t.TempDir(), Root: moduleRoot(t)})
	require.Empty(t, errs)
	for _, c := range s.allCells() {
		if c.Test != cell0 {
			continue
		}
		o, err := s.Run(context.Background(), c, t.Logf)
		require.NoError(t, err)
		require.Empty(t, o.Skip, "not skipped as never recorded")
		assert.Equal(t, report.Fail, o.Result.Verdict)
		assert.Equal(t, report.CauseBadRecording, o.Result.Cause, o.Result.Error)
		assert.Contains(t, o.Result.Error, "failed the verify pass")
		return
	}
	t.Fatalf("no cell %s", cell0)
}

// What the interrupted run kept of a failed drive for its supplier (its
// error log, run.json's drives table) is in the resumed run's run.json
// from its start, for that drive, whatever happens to the resume.
func TestResumeKeepsTheCaptureOfAFailedDrive(t *testing.T) {
	spec := filepath.Join(moduleRoot(t), "acceptance", "internal", "e2e", "testdata", "faults.toml")
	drives := sparseDrives(t, 2, 64<<20)
	cfg := interruptedAtSetup(t, spec, drives)
	c := report.Capture{Files: []string{filepath.Join(cfg.Record, "failure", "1.error-log.json")}, Notes: []string{"no telemetry: not supported"}}
	editRunJSON(t, cfg, func(r *record.Run) { r.Drives[1].Failure = &c })
	s, errs := resumeSetup(t, cfg)
	require.Empty(t, errs)
	info := s.resume.info(s)
	require.Len(t, info.Drives, 2)
	assert.Nil(t, info.Drives[0].Failure)
	require.NotNil(t, info.Drives[1].Failure, "the capture is kept")
	assert.Equal(t, c, *info.Drives[1].Failure)
	assert.Nil(t, s.Report.Drives[1].Failure, "the run's own drives table is the capture's to fill")
}
