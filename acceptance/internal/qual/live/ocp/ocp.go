// Package ocp reads a live run's OCP logs of its drives (the extended
// SMART log C0h and the latency monitor C3h) and turns two readings into
// each drive's write amplification and latency monitor counts.
package ocp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/health"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
	"github.com/drivequal/drivequal/acceptance/internal/report/waf"
	"github.com/drivequal/drivequal/specs"
)

// Logs is what a run knows of its drives' OCP logs: which have the
// extended SMART log (C0h) and an active latency monitor (C3h), read on
// receipt, and each step's write amplification until the report takes
// it. Drives are by index in the run.
type Logs struct {
	mu      sync.Mutex
	once    sync.Once
	version string       // nvme-cli's, for OCPArgs
	c0      map[int]bool // the drive has C0
	c3      map[int]bool // the drive's latency monitor is active
	c3Why   map[int]string
	steps   map[int][]waf.WAF // by step number
}

// Init learns nvme-cli's version, once.
func (o *Logs) Init(ctx context.Context, cli nvme.CLI) {
	o.once.Do(func() {
		o.c0, o.c3, o.c3Why, o.steps = map[int]bool{}, map[int]bool{}, map[int]string{}, map[int][]waf.WAF{}
		o.version, _ = cli.Version(ctx)
	})
}

// Receipt reads drive i's (at dev) OCP logs on receipt: its C0 log,
// returned as its OCP health with what to keep as
// health/<i>.c0-before.json (a drive without one has the reason kept
// there, as an object with an "error" field), and whether its latency
// monitor is active.
func (o *Logs) Receipt(ctx context.Context, cli nvme.CLI, i int, dev string) (h evidence.OCPHealth, raw []byte) {
	o.Init(ctx, cli)
	c0, out, err := cli.OCPSmartLog(ctx, dev, o.version)
	if err != nil {
		why := err.Error()
		var no *nvme.NoOCPLog
		if !errors.As(err, &no) {
			why = "no OCP C0 log (" + err.Error() + ")"
		}
		h.Skip = why
		raw = errorJSON(strings.TrimSuffix(strings.TrimPrefix(why, "no OCP C0 log ("), ")"))
	} else {
		h.Before, h.Last = c0, c0
		raw = out
		o.HasC0(i)
	}
	l, _, err := cli.OCPLatencyLog(ctx, dev, o.version)
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case err != nil:
		o.c3Why[i] = err.Error()
	case !l.Enabled():
		o.c3Why[i] = "latency monitor (C3) inactive: its feature status is 0"
	default:
		o.c3[i] = true
	}
	return h, raw
}

// HasC0 marks drive i as having the C0 log, as a receipt that read it
// does.
func (o *Logs) HasC0(i int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.c0[i] = true
}

// Forget forgets drive i's OCP logs (a drive whose health is not read).
func (o *Logs) Forget(i int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.c0, i)
	delete(o.c3, i)
}

// C0 reports whether drive i gave its C0 log on receipt.
func (o *Logs) C0(i int) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.c0[i]
}

// After reads drive i's (at dev) C0 log after the run, with what to keep
// as health/<i>.c0-after.json; lost says why a drive that gave C0 on
// receipt no longer does (it is failed, and a replay says the same:
// c0-after holds why).
func (o *Logs) After(ctx context.Context, cli nvme.CLI, dev string) (last nvme.OCPSmart, raw []byte, lost string) {
	o.Init(ctx, cli)
	c0, out, err := cli.OCPSmartLog(ctx, dev, o.version)
	if err != nil {
		why := fmt.Sprintf("the OCP C0 log read on receipt could not be read after the run: %v", err)
		return c0, errorJSON(why), why
	}
	return c0, out, ""
}

func errorJSON(why string) []byte {
	b, _ := json.Marshal(map[string]string{"error": why})
	return b
}

// Reading is the drives' SMART and OCP logs at one moment, for those
// that have C0 (and C3).
type Reading struct {
	smart map[int]nvme.SmartLog
	c0    map[int]nvme.OCPSmart
	c3    map[int]nvme.OCPLatency
}

// Drives is how many drives the reading has the C0 and SMART logs of.
func (r Reading) Drives() (c0, smart int) { return len(r.c0), len(r.smart) }

// ReadTimeout bounds each nvme-cli read of Read: a drive that does not
// answer is left out of that reading (its WAF says it could not be read)
// rather than holding up the cell.
var ReadTimeout = 30 * time.Second

// Read reads the SMART and C0 logs of each of drives (at paths, by
// index) that has C0, and with latency the C3 log of those whose latency
// monitor is active: all drives at once, each read bounded by
// ReadTimeout, so that a 24-drive step waits for the slowest drive's
// reads, not the sum of all.
func (o *Logs) Read(ctx context.Context, cli nvme.CLI, paths func(int) string, drives []int, latency bool) Reading {
	o.Init(ctx, cli)
	r := Reading{smart: map[int]nvme.SmartLog{}, c0: map[int]nvme.OCPSmart{}, c3: map[int]nvme.OCPLatency{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, d := range drives {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dev := paths(d)
			if o.C0(d) {
				s, err1 := boundedRead(ctx, func(ctx context.Context) (nvme.SmartLog, error) { return cli.SmartLog(ctx, dev) })
				c, err2 := boundedRead(ctx, func(ctx context.Context) (nvme.OCPSmart, error) {
					c, _, err := cli.OCPSmartLog(ctx, dev, o.version)
					return c, err
				})
				if err1 == nil && err2 == nil {
					mu.Lock()
					r.smart[d], r.c0[d] = s, c
					mu.Unlock()
				}
			}
			o.mu.Lock()
			active := o.c3[d]
			o.mu.Unlock()
			if latency && active {
				l, err := boundedRead(ctx, func(ctx context.Context) (nvme.OCPLatency, error) {
					l, _, err := cli.OCPLatencyLog(ctx, dev, o.version)
					return l, err
				})
				if err == nil {
					mu.Lock()
					r.c3[d] = l
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return r
}

// boundedRead runs read with a context that ends after ReadTimeout.
func boundedRead[T any](ctx context.Context, read func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, ReadTimeout)
	defer cancel()
	return read(ctx)
}

// Run is what the write amplification of a run's drives is judged by:
// its drives, why each has no C0 log (skip, "" for a drive without a
// health log at all) and its spec.
type Run struct {
	Drives []plan.Drive
	Skip   func(d int) string
	Spec   *specs.Spec
}

// WAFs is each drive's write amplification between two readings, with
// its life at that WAF where the spec rates the drive's endurance, and,
// with latency, its latency monitor over the interval.
func (o *Logs) WAFs(r Run, drives []int, before, after Reading, writes, latency bool) []waf.WAF {
	var out []waf.WAF
	for _, d := range drives {
		w := waf.WAF{Drive: r.Drives[d].Path}
		cb, ok1 := before.c0[d]
		ca, ok2 := after.c0[d]
		switch {
		case !o.C0(d):
			// A drive without C0 says so once per cell; one without a
			// health log at all (a loop device, a file) says nothing.
			skip := r.Skip(d)
			if skip == "" {
				continue
			}
			if writes {
				w.Note = skip
			}
		case !writes:
		case !ok1 || !ok2:
			w.Note = "no WAF: the C0 or SMART log could not be read around it"
		default:
			f := health.WriteAmplification(cb, ca, before.smart[d], after.smart[d])
			w.MediaBytes, w.HostBytes, w.WAF, w.Note = f.MediaBytes.String(), f.HostBytes.String(), f.Value, f.Note
			if f.Note != "" {
				w.WAF = 0
			} else if life, ok := health.Life(r.Spec.Endurance, uint64(r.Drives[d].Size), f, r.Spec.Endurance.RatedWAF); ok {
				w.LifeDriveWrites = life
			}
		}
		if latency {
			w.Latency = o.latencyOver(d, before, after)
		}
		if w.Note == "" && w.MediaBytes == "" && w.Latency == "" {
			continue
		}
		out = append(out, w)
	}
	return out
}

// latencyOver says what drive d's latency monitor counted between two
// readings: each active bucket's increase, or why there is nothing.
func (o *Logs) latencyOver(d int, before, after Reading) string {
	o.mu.Lock()
	why := o.c3Why[d]
	o.mu.Unlock()
	if why != "" {
		return why
	}
	b, ok1 := before.c3[d]
	a, ok2 := after.c3[d]
	if !ok1 || !ok2 {
		return "latency monitor (C3) not read around the cell"
	}
	return LatencyOver(b, a)
}

// LatencyOver says what a latency monitor counted between two readings,
// bucket by bucket: each counter's increase; "n/a" for the Read counts
// an nvme-cli before 2.5 does not print; "reset by the drive" for a
// counter that went down (the drive clears its active buckets when their
// timer expires), never a difference wrapped around 2^64.
func LatencyOver(before, after nvme.OCPLatency) string {
	rise := func(x, y uint64, unknown bool) string {
		switch {
		case unknown:
			return "n/a"
		case y < x:
			return fmt.Sprintf("reset by the drive (%d → %d)", x, y)
		}
		return fmt.Sprintf("+%d", y-x)
	}
	noRead := before.NoRead || after.NoRead
	var parts []string
	for i := range after.Active {
		x, y := before.Active[i], after.Active[i]
		parts = append(parts, fmt.Sprintf("bucket %d: read %s, write %s, trim %s", i,
			rise(x.Read, y.Read, noRead), rise(x.Write, y.Write, false), rise(x.Trim, y.Trim, false)))
	}
	s := "latency monitor (C3) active buckets: " + strings.Join(parts, "; ")
	if noRead {
		s += " (read n/a: nvme-cli before 2.5 does not print the Read counters)"
	}
	return s
}

// StepWrites reports whether a preparation step writes to its drives.
func StepWrites(k plan.StepKind) bool {
	return k == plan.StepFill || k == plan.StepRandom || k == plan.StepTopUp
}

// KeepStep keeps step n's write amplification for its report entry (see
// StepWAF).
func (o *Logs) KeepStep(n int, w []waf.WAF) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.steps[n] = w
}

// StepWAF is the write amplification KeepStep kept for step n.
func (o *Logs) StepWAF(n int) []waf.WAF {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.steps == nil {
		return nil
	}
	w := o.steps[n]
	delete(o.steps, n)
	return w
}

// Throttled is what the C0 log's thermal throttling events between two
// readings say of drives for the heat rule ("" when nothing).
func Throttled(r Run, drives []int, before, after Reading) string {
	var hot []string
	for _, d := range drives {
		b, ok1 := before.c0[d]
		a, ok2 := after.c0[d]
		if !ok1 || !ok2 {
			continue
		}
		if msg, ok := health.ThrottledOCP(b, a, r.Spec.Health); ok {
			hot = append(hot, r.Drives[d].Path+": "+msg)
		}
	}
	slices.Sort(hot)
	return strings.Join(hot, "; ")
}
