package powertest

import (
	"context"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/powerloss"
	"github.com/drivequal/drivequal/acceptance/internal/powerloss/cycle"
	"github.com/drivequal/drivequal/acceptance/internal/powerloss/hostcut"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/specs"
)

// plpCounted says whether c0's PLP start count is evidence of a power
// loss: reported, within 64 bits, and of a drive that reports a PLP
// capacitor (capacitor health not 65535, "none"): a drive without one
// starts no power-loss protection and counts no power loss there.
func plpCounted(c0 nvme.OCPSmart) bool {
	return c0.Reported("PLP start count") && c0.PLPStartCount.Hi == 0 && c0.CapacitorHealth != 0xffff
}

// hosted is a drive's cycle of a run that cuts the whole host, as Run
// takes it (see cycle).
type hosted struct {
	c     powerloss.Cycle
	found bool
	err   error
}

// took is drive i's cycle k from h (a run that cuts the whole host).
func took(h [][]hosted, i, k int) (powerloss.Cycle, bool, error) {
	if i >= len(h) || k > len(h[i]) {
		return powerloss.Cycle{}, false, nil
	}
	return h[i][k-1].c, h[i][k-1].found, h[i][k-1].err
}

// hostCycles runs a live run's cycles with the whole host's power cut,
// cycle by cycle for every drive at once: each drive's cycle k the
// recording lists is taken as recorded (a resume), those the host's cut
// ended before they were judged (hostcut.Pending) judged now, every
// drive at once; then every drive whose cycle k is not recorded is
// written and the host cut once for all of them (hostcut.Cut), which
// ends the run. A drive's cycles end at one that could not start, as
// Run's do. why says why none ran ("" when they did).
func (t *Test) hostCycles(ctx context.Context, logf func(string, ...any)) (out [][]hosted, why string) {
	if t.Rec != nil {
		for i, d := range t.Drives {
			if err := t.mark(i); err != nil {
				return nil, fmt.Sprintf("not run: marking %s as written in run.json: %v", d.Path, err)
			}
		}
	}
	out = make([][]hosted, len(t.Drives))
	stopped := make([]bool, len(t.Drives))
	for k := 1; k <= t.Spec.Cycles; k++ {
		var pending, fresh []int
		for i, d := range t.Drives {
			if stopped[i] {
				continue
			}
			if t.Cfg.Resume {
				if c, listed, err := t.recorded(d, k); listed {
					out[i] = append(out[i], hosted{c, err == nil, err})
					switch {
					case err == nil && c.NotRun == hostcut.Pending:
						pending = append(pending, i)
					case err == nil && (c.NotReturned != "" || c.Renamed != ""):
						// Did not return at an earlier resume: never
						// written again, back or not (see Run).
						stopped[i] = true
					}
					continue
				}
			}
			if d.Absent != "" {
				// Not there: never written (its pending cycle, judged
				// "did not return", stopped it already).
				stopped[i] = true
				continue
			}
			fresh = append(fresh, i)
		}
		t.finish(ctx, out, pending, k, logf)
		for _, i := range pending {
			switch c := out[i][k-1].c; {
			case strings.HasPrefix(c.NotRun, hostcut.SameBoot):
				// The host was not cut: its cycles wait for the resume
				// after it is, and nothing is written over them.
				return out, ""
			case c.NotReturned != "" || c.Renamed != "":
				// Not written again: see Run.
				stopped[i] = true
			}
		}
		var cut []int
		for _, i := range fresh {
			if err := t.begin(ctx, t.Drives[i], k); err != nil {
				out[i], stopped[i] = append(out[i], hosted{err: err}), true
				continue
			}
			cut = append(cut, i)
		}
		t.cutHost(ctx, out, cut, k, logf)
	}
	return out, ""
}

// PendingHost says whether recorded drive i of the recording in dir
// (its run.json's files and samples) has a power-loss cycle the host's
// cut left to be judged (hostcut.Pending): a drive that may be absent
// from the resume, not come back after that cut. Only a cycle run.json
// lists, in the folder it gave the drive, counts.
func PendingHost(dir string, files map[string]string, samples *record.Samples, i int) bool {
	if samples == nil || i < 0 || i >= len(samples.Drives) {
		return false
	}
	folder := samples.Drives[i].PowerLoss
	if folder == "" || path.Base(folder) != folder || folder == "." || folder == ".." {
		return false
	}
	d := Drive{Dir: folder, Paths: samples.Drives[i].PowerLossPaths}
	t := &Test{Dir: dir, Files: files}
	for k := 1; k <= specs.MaxPowerLossCycles; k++ {
		c, listed, err := t.recorded(d, k)
		if !listed {
			return false
		}
		if err == nil && c.NotRun == hostcut.Pending {
			return true
		}
	}
	return false
}

// finish judges the pending cycle k of each drive of pending, from what
// was saved before the host's cut, all at once, and records each.
func (t *Test) finish(ctx context.Context, out [][]hosted, pending []int, k int, logf func(string, ...any)) {
	var wg sync.WaitGroup
	for _, i := range pending {
		d := t.Drives[i]
		logf("%s: cycle %d: the host's power was cut after its writes; reading back what was acknowledged before the cut", d.Name, k)
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := hostcut.FinishGap(ctx, t.target(ctx, d), filepath.Join(t.Dir, Dir, d.folder(), fmt.Sprintf("cycle_%d", k)), t.Spec.ReadyWithin, maxGap(t.Spec), listedIn(t.Files, d, k))
			c.Drive, c.Cycle = d.Path, k
			out[i][k-1].c = c
		}()
	}
	wg.Wait()
	for _, i := range pending {
		if strings.HasPrefix(out[i][k-1].c.NotRun, hostcut.SameBoot) {
			// Judged inconclusive now, and left pending: the resume
			// after the host's power has gone judges it.
			continue
		}
		out[i][k-1].err = t.land(t.Drives[i], rel(t.Drives[i], k), out[i][k-1].c, false)
	}
}

// listedIn are the names of the files in d's cycle_k directory that
// run.json lists (files): those saved before the host's cut, the only ones its
// judgement after the reboot reads (hostcut.FinishGap).
func listedIn(files map[string]string, d Drive, k int) map[string]bool {
	prefix := path.Join(Dir, d.folder(), fmt.Sprintf("cycle_%d", k)) + "/"
	out := map[string]bool{}
	for rel := range files {
		if name, ok := strings.CutPrefix(rel, prefix); ok {
			out[name] = true
		}
	}
	return out
}

// cutHost runs cycle k of each drive of cut at once and cuts the host's
// power once (hostcut.Cut); it returns only when the cut did not happen,
// each drive's cycle recorded.
func (t *Test) cutHost(ctx context.Context, out [][]hosted, cut []int, k int, logf func(string, ...any)) {
	if len(cut) == 0 {
		return
	}
	drives := make([]hostcut.Drive, len(cut))
	for j, i := range cut {
		drives[j] = hostcut.Drive{Drive: t.target(ctx, t.Drives[i]), Config: t.config(t.Drives[i], k)}
	}
	var list func([]string) error
	if t.Rec != nil {
		list = func(files []string) error {
			rels := make([]string, len(files))
			for i, f := range files {
				rel, err := filepath.Rel(t.Dir, f)
				if err != nil {
					return err
				}
				rels[i] = filepath.ToSlash(rel)
			}
			return t.Rec.Files(rels...)
		}
	}
	record := func(j int, c powerloss.Cycle) error {
		d := t.Drives[cut[j]]
		c.Drive, c.Cycle = d.Path, k
		return t.land(d, rel(d, k), c, true)
	}
	env := cmdline.PowerEnv(nil, t.Cfg.PowerCut)
	if len(t.Drives) == 1 {
		env = cmdline.PowerEnv(t.values(t.Drives[0]), t.Cfg.PowerCut)
	}
	cycles := hostcut.Cut(ctx, drives, k, cmdline.PowerCommand(t.Cfg.PowerCut), env, record, list, logf)
	for j, i := range cut {
		d := t.Drives[i]
		c := cycles[j]
		c.Drive, c.Cycle = d.Path, k
		out[i] = append(out[i], hosted{c, true, t.land(d, rel(d, k), c, true)})
	}
}

// hostCommand refuses a host's cut command that names a drive ({path},
// {serial}, {slot}, {name} or its variable) when there are several: it
// runs once a cycle for every drive, so no one drive's value is its.
func (t *Test) hostCommand() []error {
	if !t.Cfg.PowerCutHost || len(t.Drives) < 2 {
		return nil
	}
	var errs []error
	for _, p := range cmdline.PowerPlaceholders {
		if key := strings.Trim(p, "{}"); cmdline.PowerUses(t.Cfg.PowerCut, key) {
			errs = append(errs, fmt.Errorf("parsing -power-cut: with -power-cut-host it runs once a cycle to cut the host's power under all %d drives, so it cannot use a drive's %s (%s): name the host's BMC or outlet itself", len(t.Drives), key, p))
		}
	}
	return errs
}

// hostBound is an upper bound of the test's duration with the whole
// host's power cut (the reboots not counted): each cycle reads every
// drive's data at once (at 200 MiB/s), writes them all at once for
// cut_after, runs the cut command (at most cycle.CommandTimeout and its
// output's cycle.CommandDrain) and
// waits hostcut.HostDown for the host to go down, and after the reboot
// waits up to ready_within and reads their data back.
func (t *Test) hostBound() time.Duration {
	p := t.Spec
	per := max(p.CutAfter, time.Second) + cycle.CommandTimeout + cycle.CommandDrain + hostcut.HostDown + p.ReadyWithin + 2*time.Duration(p.Size/(200<<20)+1)*time.Second
	return time.Duration(p.Cycles) * per
}

// printHost writes the dry run's lines of a whole host's power cut: one
// cut and reboot a cycle, every drive written before it and its writes
// saved, and the resume that judges them.
func (t *Test) printHost(w io.Writer) {
	p := t.Spec
	fmt.Fprintf(w, "  the whole host's power is cut %d time(s), every drive written before each cut (%d drive(s), their writes at once): %s\n",
		p.Cycles, len(t.Drives), cmdline.PowerCommand(t.Cfg.PowerCut))
	fmt.Fprintln(w, "  each cut ends the run: once the host is back, run the same command line with -resume to judge every drive's cycle and go on to the next")
	fmt.Fprintf(w, "  the cut must start within %s of each drive's last write (measured), else its cycle is not judged: a drive writes out its cache's few unflushed writes in less\n", maxGap(t.Spec))
	if len(t.Drives) == 1 {
		fmt.Fprintf(w, "  run by sh with %s\n", strings.Join(cmdline.PowerEnv(t.values(t.Drives[0]), t.Cfg.PowerCut), " "))
	}
	for _, d := range t.Drives {
		if d.Absent != "" {
			fmt.Fprintf(w, "  %s: not there, nothing written, never cut again: its pending cycle FAILs \"did not return\": %s\n", d.Path, d.Absent)
			continue
		}
		fmt.Fprintf(w, "  %s: data at risk: the first %s (bytes 0 to %d), written for %s with a flush every %d writes of %d bytes, the ledger of completed writes saved and synced before the cut; it loses power at each cut\n",
			d.Path, mib(p.Size), p.Size, p.CutAfter, p.FlushEvery, p.BS)
	}
}

// maxGap is p's max_cut_gap, its default when p was not read from a
// spec.
func maxGap(p *specs.PowerLoss) time.Duration {
	if p.MaxCutGap <= 0 {
		return specs.DefaultPowerLossMaxCutGap
	}
	return p.MaxCutGap
}
