package purgeproof

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/purge"
)

// Verdicts of a Result.
const (
	Pass = "pass"
	Fail = "fail"
	// Inconclusive: the purge's read-back found nothing wrong, but the
	// sample held none of the run's fill before it, so no erase is shown.
	Inconclusive = "inconclusive"
)

// CauseNotShown is the cause of an Inconclusive result: the drive held
// none of the run's fill before the purge.
const CauseNotShown = "purge not shown"

// Target is one drive whose purge is proven.
type Target struct {
	Path   string // as given (-drives)
	Device string // what is read: the resolved path; Path when ""
	Size   int64  // bytes
	// Sector is the logical block size in bytes (512 when 0).
	Sector int64
	// Loop says the drive is a loop device (a discard punches a hole).
	Loop bool
	// DLFEAT is the namespace's identify DLFEAT byte (0: not reported,
	// not NVMe).
	DLFEAT int
}

// Input is what Prove needs.
type Input struct {
	Mode    string // Sample or Full
	Targets []Target
	// Steps are the purge commands (purge.Plan's), each naming its
	// targets by Target.Path.
	Steps     []purge.Step
	Runner    purge.Runner
	Discarder purge.Discarder
	Fills     Fills
	// Sampling is what Sample reads; zero: DefaultSampling.
	Sampling Sampling
}

// Result is one drive's TestPurge verdict, as results.json and the
// recording keep it.
type Result struct {
	Drive string `json:"drive"`
	// Command is the purge sent ("nvme format /dev/nvme0n1 --ses=1
	// --force", "discard /dev/loop0 (BLKDISCARD)").
	Command string `json:"command"`
	// Promise is what the purge promises a read returns: "zeros", "0xff
	// in every byte" or "anything but the old data".
	Promise string `json:"promise"`
	// ReadBack is "sample" or "full"; BytesRead what was read after the
	// purge.
	ReadBack  string `json:"read_back"`
	BytesRead int64  `json:"bytes_read"`
	// SectorBytes is the logical block the sectors are counted in.
	SectorBytes int64 `json:"sector_bytes"`
	// FillBefore is how many sectors of the sample held the fill's
	// pattern just before the purge.
	FillBefore int64 `json:"fill_sectors_before"`
	// Sectors is the sectors read after the purge, Bad those that held
	// the fill or other than what the purge promises, LBAs the first of
	// them ("2048-2303").
	Sectors int64    `json:"sectors_read"`
	Bad     int64    `json:"sectors_bad"`
	LBAs    []string `json:"lbas,omitempty"`
	// Seconds is the time the purge and both reads took.
	Seconds float64 `json:"seconds"`
	Verdict string  `json:"verdict"` // "pass", "fail" or "inconclusive"
	Message string  `json:"message"`
}

// Command is how a Result names the purge step s.
func Command(s purge.Step) string {
	if argv := s.Argv(); argv != nil {
		return "nvme " + strings.Join(argv, " ")
	}
	if s.Kind == purge.DiscardBlocks {
		return "discard " + s.Device + " (BLKDISCARD)"
	}
	return s.String()
}

// Prove reads every target's sample, runs the purge steps (those of one
// controller or subsystem one after the other, as purge.Runner.Run does,
// those of different ones at once), reads the targets back and
// judges each, in the order of in.Targets. A target no step covers fails,
// saying so.
func Prove(ctx context.Context, in Input, logf func(string, ...any)) []Result {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	start := time.Now()
	if in.Sampling == (Sampling{}) {
		in.Sampling = DefaultSampling
	}
	n := len(in.Targets)
	before := make([]Tally, n)
	hashes := make([]*Sums, n)
	preErr := make([]error, n)
	each(n, func(i int) {
		t := in.Targets[i]
		before[i] = Tally{Sector: sector(t)}
		ext := in.Sampling.Extents(t.Size, Sample)
		hashes[i] = NewSums(ext)
		var mu sync.Mutex
		_, preErr[i] = Read(ctx, device(t), ext, func(off int64, b []byte) {
			var u Tally = Tally{Sector: sector(t)}
			u.Add(off, b, Promise{}, in.Fills, nil)
			hashes[i].Put(off, b)
			mu.Lock()
			before[i].Merge(u)
			mu.Unlock()
		})
	})
	stepOf := make([]int, n)
	for i, t := range in.Targets {
		stepOf[i] = -1
		for j, s := range in.Steps {
			for _, p := range s.Targets {
				if p == t.Path {
					stepOf[i] = j
				}
			}
		}
	}
	stepErr := make([]error, len(in.Steps))
	status := make([]nvme.SanitizeStatus, len(in.Steps))
	// The steps of one controller or subsystem one at a time, as
	// purge.Runner.Run sends them; those of different ones at once.
	var groups [][]int
	at := map[string]int{}
	for j, s := range in.Steps {
		g, ok := at[s.Group()]
		if !ok {
			g = len(groups)
			at[s.Group()] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], j)
	}
	each(len(groups), func(g int) {
		for _, j := range groups[g] {
			runStep(ctx, in, j, stepErr, status, logf)
		}
	})
	out := make([]Result, n)
	each(n, func(i int) {
		t := in.Targets[i]
		r := Result{Drive: t.Path, ReadBack: in.Mode, SectorBytes: sector(t), FillBefore: before[i].Ours + before[i].Fill, Verdict: Fail}
		defer func() { r.Seconds = time.Since(start).Seconds(); out[i] = r }()
		j := stepOf[i]
		if j < 0 {
			r.Message = fmt.Sprintf("%s: no purge command covers it: nothing to read back", t.Path)
			return
		}
		s := in.Steps[j]
		p := PromiseOf(s, t.DLFEAT, t.Loop)
		if s.Kind == purge.SanitizeNVM && s.SanAct == purge.SanActOverwrite {
			p = Overwrite(t.DLFEAT, status[j])
		}
		r.Command, r.Promise = Command(s), p.String()
		if preErr[i] != nil {
			r.Message = fmt.Sprintf("%s: before the purge: %v", t.Path, preErr[i])
			return
		}
		if stepErr[j] != nil {
			r.Message = fmt.Sprintf("%s: the purge (%s) failed: %v", t.Path, r.Command, stepErr[j])
			return
		}
		after := Tally{Sector: sector(t)}
		var mu sync.Mutex
		read, err := Read(ctx, device(t), in.Sampling.Extents(t.Size, in.Mode), func(off int64, b []byte) {
			u := Tally{Sector: sector(t)}
			u.Add(off, b, p, in.Fills, hashes[i])
			mu.Lock()
			after.Merge(u)
			mu.Unlock()
		})
		r.BytesRead, r.Sectors, r.Bad, r.LBAs = read, after.Sectors, after.Bad(), after.LBAs(8)
		what := fmt.Sprintf("after `%s` (which promises %s), %s read back (%s)", r.Command, r.Promise, gb(read), describe(in.Sampling, t.Size, in.Mode))
		held := fmt.Sprintf("before the purge, %d of the %d sectors sampled held the fill's pattern (%d this run's)", r.FillBefore, before[i].Sectors, before[i].Ours)
		switch {
		case err != nil:
			r.Message = fmt.Sprintf("%s: %s: %v", t.Path, what, err)
		case after.Bad() > 0:
			r.Message = fmt.Sprintf("%s: the purge did not erase: %s: %d of %d sectors of %d bytes hold %s: LBAs %s; %s",
				t.Path, what, after.Bad(), after.Sectors, sector(t), after.Found(), strings.Join(r.LBAs, ", "), held)
		case r.FillBefore == 0:
			r.Verdict = Inconclusive
			r.Message = fmt.Sprintf("%s: the drive held none of the run's fill before the purge, so the erase is not shown: %s: all %d sectors as promised; %s", t.Path, what, after.Sectors, held)
		default:
			r.Verdict = Pass
			r.Message = fmt.Sprintf("%s: %s: all %d sectors as promised, none of the fill left; %s", t.Path, what, after.Sectors, held)
		}
	})
	return out
}

// runStep runs the purge step in.Steps[j], keeping its error in stepErr[j]
// and, for a sanitize, the sanitize log's status in status[j].
func runStep(ctx context.Context, in Input, j int, stepErr []error, status []nvme.SanitizeStatus, logf func(string, ...any)) {
	s := in.Steps[j]
	r := in.Runner
	if s.Kind == purge.SanitizeNVM && len(r.Sent) == 0 && inProgress(ctx, r.NVMe, s.Device) {
		// An interrupted run's sanitize (this step's, at the end of
		// a run) still runs: the controller refuses another; wait
		// for it, and read back after it.
		logf("%s: a sanitize is in progress (an interrupted run's): waiting for it to end before the read-back, not sending another", s.Device)
		r.Sent = []string{s.Device}
	}
	stepErr[j] = r.Run(ctx, in.Steps[j:j+1], in.Discarder, logf)
	if stepErr[j] == nil && s.Kind == purge.SanitizeNVM {
		if l, err := r.NVMe.SanitizeLog(ctx, s.Device); err == nil {
			status[j] = l.Status
		}
	}
}

// inProgress reports whether the sanitize log of ctrl says a sanitize is
// in progress (false when it does not read: the sanitize is then sent, and
// its own wait reads the log again).
func inProgress(ctx context.Context, cli nvme.CLI, ctrl string) bool {
	l, err := cli.SanitizeLog(ctx, ctrl)
	return err == nil && l.Status == nvme.SanitizeInProgress
}

// describe says what mode reads of a drive of size bytes.
func describe(s Sampling, size int64, mode string) string {
	e := s.Extents(size, mode)
	if len(e) == 1 {
		return "the whole drive"
	}
	return fmt.Sprintf("the first and last %s and %d evenly spaced extents of %s", bytesName(s.Edge), len(e)-2, bytesName(s.Extent))
}

func bytesName(b int64) string {
	switch {
	case b%GiB == 0:
		return fmt.Sprintf("%d GiB", b/GiB)
	case b%MiB == 0:
		return fmt.Sprintf("%d MiB", b/MiB)
	}
	return fmt.Sprintf("%d KiB", b>>10)
}

func gb(b int64) string { return fmt.Sprintf("%.2f GB", float64(b)/1e9) }

func sector(t Target) int64 {
	if t.Sector > 0 {
		return t.Sector
	}
	return 512
}

func device(t Target) string {
	if t.Device != "" {
		return t.Device
	}
	return t.Path
}

// each runs f(0..n-1) at once and waits.
func each(n int, f func(int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); f(i) }()
	}
	wg.Wait()
}

// DLFEAT reads the namespace dev's DLFEAT byte (nvme id-ns).
func DLFEAT(ctx context.Context, cli nvme.CLI, dev string) (int, error) {
	out, err := cli.Run(ctx, "id-ns", dev, "-o", "json")
	if err != nil {
		return 0, fmt.Errorf("reading the namespace identity of %s: %w", dev, err)
	}
	var ns struct {
		DLFEAT int `json:"dlfeat"`
	}
	if err := json.Unmarshal(out, &ns); err != nil {
		return 0, fmt.Errorf("reading the namespace identity of %s: nvme id-ns: %w", dev, err)
	}
	return ns.DLFEAT, nil
}
