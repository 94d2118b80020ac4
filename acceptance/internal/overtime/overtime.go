// Package overtime draws a run's charts over time and of latency from its
// recording: each preconditioning's IOPS against time and bytes written
// (the SNIA write saturation view) with its steady-state window, each
// cell's figure a second (performance consistency), and each cell's
// latency exceedance (1 − CDF) against the spec's QoS limits.
//
// A live run and a replay of its recording draw them from the same files
// (the per-second logs packed by package timelog, the cells' latency
// bins and the steady-state records), so they draw the same bytes. A
// recording made before the logs were kept has no over-time charts: the
// summary says so.
package overtime

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/drivequal/drivequal/acceptance/internal/dirglob"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/report/chart"
	"github.com/drivequal/drivequal/acceptance/internal/timelog"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// Drawer draws one run's charts into Report/charts as its cells are
// judged, and keeps the links summary.md gives them.
type Drawer struct {
	// Dir is the recording the run writes or replays (asked when a cell
	// is judged: a replay's default is known after setup); Report the
	// report directory.
	Dir     func() string
	Report  string
	Record  string // Dir's answer, as the cell being drawn was judged
	Heading chart.Heading

	mu    sync.Mutex
	steps map[string]bool // prepare logs drawn, by path
	// judging holds Judged: one cell's charts at a time; links are the
	// charts drawn so far, missing the cells without a per-second log.
	judging sync.Mutex
	links   []Link
	missing int
}

// Cell is what a judged cell's charts are drawn from.
type Cell struct {
	// Owner is the test whose recording the cell reads (a shared one's).
	Owner  string
	Result report.Result
	// Total is the cell's fio output aggregated: its latency bins.
	Total fiojob.Result
	// Drives names the cell's drives in the order of its targets.
	Drives []string
}

// chartFile is where a chart of kind for name is written, relative to the
// report directory: charts/<kind>-<name with "/" as "-">.svg.
func chartFile(kind, name string) string {
	return path.Join(report.ChartsDir, kind+"-"+strings.NewReplacer("/", "-", " ", "_").Replace(name)+".svg")
}

// Cell draws c's consistency chart (from its per-second log) and its
// latency exceedance chart, and returns their links; a chart whose
// evidence the recording lacks is not drawn, and none is an error.
func (d *Drawer) Cell(c Cell) ([]Link, error) {
	res := c.Result
	var links []Link
	var errs []error
	what := res.Capacity + ", " + res.Workload
	if res.Kind == report.KindScaling {
		what += fmt.Sprintf(", %d drives", res.Drives)
	}
	logs, err := timelog.Read(d.Record, c.Owner+record.LogExt)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		errs = append(errs, err)
	default:
		if l, err := d.consistency(c, what, logs); err != nil {
			errs = append(errs, err)
		} else if l.File != "" {
			links = append(links, l)
		}
	}
	if l, err := d.latency(c, what); err != nil {
		errs = append(errs, err)
	} else if l.File != "" {
		links = append(links, l)
	}
	return links, errors.Join(errs...)
}

func (d *Drawer) consistency(c Cell, what string, logs *timelog.Logs) (Link, error) {
	res := c.Result
	unit, mbps := "IOPS", res.Metric == string(specs.MBps)
	if mbps {
		unit = "MB/s"
	}
	var drives []chart.Series
	for i, pts := range logs.Targets {
		name := fmt.Sprintf("drive %d", i)
		if i < len(c.Drives) {
			name = c.Drives[i]
		}
		s := chart.Series{Name: name}
		for _, p := range pts {
			v := p.IOPS
			if mbps {
				v = p.BytesPerSec / 1e6
			}
			s.Seconds, s.Values = append(s.Seconds, p.At.Seconds()), append(s.Values, v)
		}
		drives = append(drives, s)
	}
	if len(drives) == 0 {
		return Link{}, nil
	}
	n := float64(max(len(drives), 1))
	mean, spec := res.Actual/n, res.Spec
	if res.Kind == report.KindScaling {
		spec = res.Expected / n
	}
	// The lowest drive by the judge's own figures.
	outlier := -1
	for i, pd := range res.PerDrive {
		if i < len(drives) && (outlier < 0 || pd.Actual < res.PerDrive[outlier].Actual) {
			outlier = i
		}
	}
	svg, err := chart.Consistency(d.Heading, what+": "+unit+" a second", unit, drives, outlier, mean, max(spec, 0))
	if err != nil {
		return Link{}, fmt.Errorf("consistency chart of %s: %w", res.Test, err)
	}
	file := chartFile("consistency", res.Test)
	return Link{Title: what + ": " + unit + " a second", File: file}, report.WriteFileAtomic(filepath.Join(d.Report, file), svg)
}

// latency draws the cell's exceedance chart from its bins, or from its
// percentiles when fio gave none.
func (d *Drawer) latency(c Cell, what string) (Link, error) {
	res := c.Result
	var dirs []chart.Distribution
	for _, dir := range []struct {
		name string
		fio  fiojob.Direction
		pct  *report.Latency
	}{{"read", c.Total.Read, res.Read}, {"write", c.Total.Write, res.Write}} {
		if dir.fio.TotalIOs == 0 && dir.pct == nil {
			continue
		}
		l := chart.Distribution{Dir: dir.name}
		switch {
		case len(dir.fio.Bins) > 0:
			l.Bins = dir.fio.Bins
		case dir.pct != nil:
			l.Percentiles = map[float64]float64{50: dir.pct.P50, 99: dir.pct.P99, 99.9: dir.pct.P999, 99.99: dir.pct.P9999, 99.999: dir.pct.P99999}
		default:
			continue
		}
		for _, q := range res.QoS {
			if p, ok := percentile(q.Key, dir.name); ok {
				l.Limits = append(l.Limits, chart.LatencyLimit{Percentile: p, Us: q.LimitUs, Pass: q.Verdict == report.Pass})
			}
		}
		dirs = append(dirs, l)
	}
	if len(dirs) == 0 {
		return Link{}, nil
	}
	title := what + ": latency exceedance"
	svg, err := chart.Exceedance(d.Heading, title, dirs)
	if err != nil {
		return Link{}, fmt.Errorf("latency chart of %s: %w", res.Test, err)
	}
	file := chartFile("latency", res.Test)
	return Link{Title: title, File: file}, report.WriteFileAtomic(filepath.Join(d.Report, file), svg)
}

// percentile is the percentile of a QoS key of direction dir
// ("read_p99_9_us" → 99.9; "read_max_us" → 100).
func percentile(key, dir string) (float64, bool) {
	rest, ok := strings.CutPrefix(key, dir+"_")
	if !ok {
		return 0, false
	}
	rest = strings.TrimSuffix(rest, "_us")
	if rest == "max" {
		return 100, true
	}
	p, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimPrefix(rest, "p"), "_", "."), 64)
	return p, err == nil
}

// Steps draws the write saturation charts (against time and against
// bytes written) of each preconditioning step of steady whose log the
// recording holds and that is not drawn yet, and returns their links.
func (d *Drawer) Steps(steady []report.Steady) ([]Link, error) {
	type key struct{ resume, step int }
	var order []key
	by := map[key][]report.Steady{}
	for _, s := range steady {
		k := key{s.Resume, s.Step}
		if by[k] == nil {
			order = append(order, k)
		}
		by[k] = append(by[k], s)
	}
	var links []Link
	var errs []error
	for _, k := range order {
		rel, ok := stepLog(d.Record, k.resume, k.step)
		d.mu.Lock()
		done := d.steps[rel]
		if ok && d.steps == nil {
			d.steps = map[string]bool{}
		}
		if ok {
			d.steps[rel] = true
		}
		d.mu.Unlock()
		if !ok || done {
			continue
		}
		l, err := d.step(rel, by[k])
		if err != nil {
			errs = append(errs, err)
		}
		links = append(links, l...)
	}
	return links, errors.Join(errs...)
}

// stepLog is the packed log of step n of resumption resume in the
// recording dir, relative to it: prepare/NNN-<name>.log.gz.
func stepLog(dir string, resume, n int) (string, bool) {
	sub := filepath.ToSlash(record.PrepareDir(resume))
	m := dirglob.Match(filepath.Join(dir, filepath.FromSlash(sub)), fmt.Sprintf("%03d-*%s", n, record.LogExt))
	if len(m) != 1 {
		return "", false
	}
	return sub + "/" + filepath.Base(m[0]), true
}

func (d *Drawer) step(rel string, recs []report.Steady) ([]Link, error) {
	logs, err := timelog.Read(d.Record, rel)
	if err != nil {
		return nil, err
	}
	var drives []chart.Series
	for i, pts := range logs.Targets {
		if i >= len(recs) {
			break
		}
		r := recs[i]
		s := chart.Series{Name: r.Drive}
		written := 0.0
		for _, p := range pts {
			written += p.BytesPerSec * logs.Interval.Seconds()
			s.Seconds, s.Values, s.Written = append(s.Seconds, p.At.Seconds()), append(s.Values, p.IOPS), append(s.Written, written)
		}
		if r.FirstRound > 0 {
			s.Window = &chart.Window{From: float64(r.FirstRound-1) * r.RoundSeconds, To: float64(r.LastRound) * r.RoundSeconds,
				Mean: r.Mean, RangePct: r.RangeLimitPct, Attained: r.Attained}
		}
		drives = append(drives, s)
	}
	if len(drives) == 0 {
		return nil, nil
	}
	r := recs[0]
	name := fmt.Sprintf("step%d", r.Step)
	if r.Resume > 0 {
		name = fmt.Sprintf("resume%d-step%d", r.Resume, r.Step)
	}
	kind := "random preconditioning"
	if r.Kind != "precondition" {
		kind = r.Kind
	}
	what := fmt.Sprintf("step %d, %s, %s", r.Step, kind, r.Twin)
	var links []Link
	for _, v := range []struct {
		kind, what string
		bytes      bool
	}{{"wsat-time", what + ": IOPS against time", false}, {"wsat-written", what + ": IOPS against bytes written", true}} {
		svg, err := chart.WSAT(d.Heading, v.what, drives, v.bytes)
		if err != nil {
			return links, fmt.Errorf("write saturation chart of %s: %w", rel, err)
		}
		file := chartFile(v.kind, name)
		if err := report.WriteFileAtomic(filepath.Join(d.Report, file), svg); err != nil {
			return links, err
		}
		links = append(links, Link{Title: v.what, File: file})
	}
	return links, nil
}

// Sorted is links in the order summary.md lists them: the steps' first,
// then the cells', each in the order drawn.
func Sorted(links []Link) []Link {
	out := slices.Clone(links)
	slices.SortStableFunc(out, func(a, b Link) int {
		return boolInt(!strings.Contains(a.File, "/wsat-")) - boolInt(!strings.Contains(b.File, "/wsat-"))
	})
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Suite is what a run's drawer draws for: the report it adds its links
// to (under Lock, the report's own lock), and run.json as recorded.
type Suite struct {
	Report   *report.Run
	Lock     sync.Locker
	Recorded func() record.Run
}

// Judged draws the charts of a judged cell, whose fio output was
// recorded at raw (a path in the recording), and of every
// preconditioning step before it, and adds their links to the report
// before it is written; a chart that fails to draw is told to logf and
// left out. drives are the cell's drives' paths, in the order of its
// targets; total its fio output aggregated.
func (d *Drawer) Judged(s Suite, raw string, res report.Result, total func() fiojob.Result, drives []string, logf func(string, ...any)) {
	d.judging.Lock()
	defer d.judging.Unlock()
	s.Lock.Lock()
	steady := slices.Clone(s.Report.SteadyState)
	s.Lock.Unlock()
	d.Record, d.Heading = d.Dir(), HeadingOf(s.Report.Spec, s.Recorded())
	links, err := d.Steps(steady)
	missing := 0
	if owner, rerr := filepath.Rel(d.Record, raw); rerr == nil && raw != "" && !strings.HasPrefix(owner, "..") {
		owner = strings.TrimSuffix(filepath.ToSlash(owner), record.OutputExt)
		if !record.Exists(d.Record, owner+record.LogExt) {
			missing = 1
		}
		l, cerr := d.Cell(Cell{Owner: owner, Result: res, Total: total(), Drives: drives})
		links, err = append(links, l...), errors.Join(err, cerr)
	}
	if err != nil {
		logf("charts: %v", err)
	}
	for _, l := range links {
		if !slices.Contains(d.links, l) {
			d.links = append(d.links, l)
		}
	}
	d.links, d.missing = Sorted(d.links), d.missing+missing
	section := Section(d.links, d.missing)
	s.Lock.Lock()
	defer s.Lock.Unlock()
	h := d.Heading
	s.Report.OverTime, s.Report.ChartHeading = section, &h
}

// Link is a chart summary.md links: its title, and its file relative
// to the report directory.
type Link struct{ Title, File string }

// Section is summary.md's "Over time and latency": how many cells
// (missing) have no per-second log to draw over time, and each chart as
// an image link; "" when there is neither.
func Section(links []Link, missing int) string {
	if len(links) == 0 && missing == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Over time and latency\n\n")
	switch {
	case missing == 1:
		b.WriteString("Charts over time absent for 1 cell: the recording holds no per-second log of it (recorded before drivequal kept them, or fio wrote none).\n\n")
	case missing > 1:
		fmt.Fprintf(&b, "Charts over time absent for %d cells: the recording holds no per-second log of them (recorded before drivequal kept them, or fio wrote none).\n\n", missing)
	}
	for _, l := range links {
		fmt.Fprintf(&b, "![%s](%s)\n\n", strings.NewReplacer("[", "(", "]", ")").Replace(l.Title), l.File)
	}
	return b.String()
}

// HeadingOf is the heading of a run's charts: the spec's model, the
// date the run started (as run.json records it) and its mode: "live"
// for a run measured live (its replay draws the same charts), or
// "reconstructed" for figures rebuilt from a publication.
func HeadingOf(model string, info record.Run) chart.Heading {
	h := chart.Heading{Model: model, Date: "date not recorded", Mode: "live"}
	if len(info.Started) >= 10 {
		h.Date = info.Started[:10]
	}
	if info.Reconstructed || info.Mode != "record" {
		h.Mode = "reconstructed"
	}
	return h
}
