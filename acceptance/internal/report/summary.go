package report

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/report/chart"
	"github.com/drivequal/drivequal/acceptance/internal/report/drivenames"
	"github.com/drivequal/drivequal/acceptance/internal/report/plain"
	"github.com/drivequal/drivequal/acceptance/internal/report/waf"
	"github.com/drivequal/drivequal/acceptance/internal/units"
)

// Summary returns summary.md: the verdict per capacity tested, how the run
// was made, the drives, one table per capacity in the layout of a vendor
// brief, and the scaling section with links to the charts.
func (r *Run) Summary() []byte {
	s := &summary{r: r, rank: r.workloadRank()}
	s.writeHead()
	s.writeDrives()
	s.writeIntegrity()
	s.writePurge()
	s.writeFirmware()
	s.writeSteady()
	s.writeWAF()
	for _, c := range r.testedCapacities() {
		s.writeCapacity(c)
	}
	for _, f := range Sections {
		md, _ := f(r)
		s.b.WriteString(md)
	}
	s.writeScaling()
	s.b.WriteString(r.OverTime)
	s.writeFleet()
	s.writeBaseline()
	s.writeLot()
	writeChecks(&s.b, "Receipt inspection", r.Receipt)
	writeChecks(&s.b, "Health", r.Health)
	return s.b.Bytes()
}

// summary renders one run's summary.md: each section is a method that
// writes to b, and footnotes are numbered across the whole document.
type summary struct {
	r     *Run
	b     bytes.Buffer
	notes footnotes
	rank  map[string]int // each workload's place in the tables (workloadRank)
}

// writeHead writes the bottom line, the verdict per gate, which spec judged the run, how
// it was made and where the spec's figures come from.
func (s *summary) writeHead() {
	r, b := s.r, &s.b
	l := r.BottomLine()
	fmt.Fprintf(b, "**%s**: %s; next: %s.\n\n# drivequal: %s\n\n", l.Decision, cell(l.Reason), cell(l.Next), orDash(r.Spec))
	gates := r.Gates()
	if len(gates) == 0 {
		b.WriteString("No results yet.\n\n")
	}
	measured := ""
	if m := r.Measured(); m != "" {
		measured = " (" + cell(m) + ")"
	}
	for _, g := range gates {
		fmt.Fprintf(b, "- **%s: %s**%s", orDash(cell(g.Name)), g.Verdict, measured)
		if g.Reason != "" {
			fmt.Fprintf(b, ": %s", cell(g.Reason))
		}
		b.WriteString("\n")
	}
	if len(gates) > 0 {
		b.WriteString("\n")
	}
	if j := r.JudgedBy; j != nil {
		how := "the spec of this run"
		switch {
		case j.Recorded:
			how = "the spec recorded with the run"
		case r.Mode == "replay":
			how = "given with -spec, not the spec recorded with the run"
		}
		sum := j.SHA256
		if len(sum) > 12 {
			sum = sum[:12]
		}
		fmt.Fprintf(b, "Judged against %s (%s, sha256 %s…: %s).\n", cell(j.Model), cell(j.File), sum, how)
	}
	if r.AnyModel != "" {
		fmt.Fprintf(b, "**-any-model:** %s.\n", cell(r.AnyModel))
	}

	fmt.Fprintf(b, "Mode: %s, fio: %s, precondition: %s.", cell(orDash(r.Mode)), cell(orDash(r.FioVersion)), cell(orDash(r.Precondition)))
	if r.Precondition == "none" {
		b.WriteString(" The drives were not preconditioned: results may be above steady state.")
	}
	b.WriteString("\n")
	if r.Started != "" || r.Finished != "" {
		fmt.Fprintf(b, "Started %s, finished %s.\n", orDash(r.Started), orDash(r.Finished))
	}
	b.WriteString(resumedLine(r.Resumptions))
	b.WriteString(r.Recording.Line())
	if r.Source != "" {
		fmt.Fprintf(b, "Spec figures: %s.\n", strings.TrimSuffix(cell(r.Source), "."))
	}
	b.WriteString("\n")
}

// writePurge writes one line per drive's purge at the end, read back.
func (s *summary) writePurge() {
	head := "## Purge proven\n\n"
	for _, res := range s.r.Results {
		if res.Kind == KindPurge && res.Purge != nil {
			fmt.Fprintf(&s.b, "%s- **%s**: %s\n\n", head, cell(strings.ToUpper(res.Verdict)), cell(res.Purge.Message))
			head = ""
		}
	}
}

// writeFirmware writes one line per drive's firmware step.
func (s *summary) writeFirmware() {
	head := "## Firmware activation under load\n\n"
	for _, res := range s.r.Results {
		if res.Kind == KindFirmware && res.Firmware != nil {
			fmt.Fprintf(&s.b, "%s- **%s** %s: %s\n\n", head, cell(strings.ToUpper(res.Verdict)), cell(res.Test), cell(res.Firmware.Message))
			head = ""
		}
	}
}

// writeIntegrity writes one line per drive's verify pass: every block
// read back as written, or the first that was not, in fio's words.
func (s *summary) writeIntegrity() {
	r, b := s.r, &s.b
	var rows []Result
	for _, res := range r.Results {
		if res.Kind == KindIntegrity {
			rows = append(rows, res)
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("## Data integrity\n\n")
	var lines []driveLine
	for _, res := range rows {
		in := res.Integrity
		if in == nil {
			in = &Integrity{}
		}
		drive := in.Drive
		if res.Host != "" {
			drive = res.Host + ":" + drive
		}
		text := fmt.Sprintf("**%s**: ", strings.ToUpper(res.Verdict))
		if res.Verdict == Pass {
			text += fmt.Sprintf("%s bytes read back as written (%s of every block, %s)", Thousands(float64(in.BytesVerified)), cell(in.Checksum),
				stepOf(in.Resume, in.Step))
		} else {
			text += cell(res.Error)
		}
		lines = append(lines, driveLine{drive, text})
	}
	writeDriveLines(b, lines)
	b.WriteString("\n")
}

// driveLine is one drive's line of a section: "- drive: text".
type driveLine struct{ drive, text string }

// writeDriveLines writes "- drive: text" for each line, and the drives
// whose text is the same but for their own name once, named in short:
// "- loop0–loop23 (24 drives): text", the drive's path in text read as
// "the drive".
func writeDriveLines(b *bytes.Buffer, lines []driveLine) {
	order, by, first := groupDriveLines(lines)
	for _, key := range order {
		if drives := by[key]; len(drives) > 1 {
			fmt.Fprintf(b, "- %s (%d drives): %s\n", cell(drivenames.Compact(drives, MaxListed)), len(drives), key)
		} else {
			l := first[key]
			fmt.Fprintf(b, "- %s: %s\n", cell(orDash(l.drive)), cell(l.text))
		}
	}
}

// groupDriveLines groups lines by their text with the drive's own path
// read as "the drive", in the order first seen.
func groupDriveLines(lines []driveLine) (order []string, by map[string][]string, first map[string]driveLine) {
	by, first = map[string][]string{}, map[string]driveLine{}
	for _, l := range lines {
		key := l.text
		if l.drive != "" {
			key = strings.ReplaceAll(l.text, l.drive, "the drive")
		}
		if _, ok := by[key]; !ok {
			order = append(order, key)
			first[key] = l
		}
		by[key] = append(by[key], l.drive)
	}
	return order, by, first
}

// writeSteady writes a table of the random preconditioning (and top-up)
// steps: per step and drive whether it reached steady state, how long it
// took, and the window's figures against the rule. Drives of a step that
// did not reach it for the same reason share one row, named in short
// (drivenames.Compact); each drive's record is in results.json.
func (s *summary) writeSteady() {
	r, b := s.r, &s.b
	if len(r.SteadyState) == 0 {
		return
	}
	b.WriteString("## Steady state\n\n")
	b.WriteString("| Step | Kind | Workload | Drives | Steady state | Detail |\n|---:|---|---|---|---|---|\n")
	type row struct {
		s      Steady
		drives []string
	}
	var rows []row
	merged := map[string]int{} // step, kind, twin and reason → row
	for _, s := range r.SteadyState {
		verdict, detail := steadyCells(s)
		if !s.Attained {
			key := fmt.Sprintf("%d\x00%d\x00%s\x00%s\x00%s\x00%s", s.Resume, s.Step, s.Kind, s.Twin, verdict, detail)
			if i, ok := merged[key]; ok {
				rows[i].drives = append(rows[i].drives, s.Drive)
				continue
			}
			merged[key] = len(rows)
		}
		rows = append(rows, row{s: s, drives: []string{s.Drive}})
	}
	for _, rw := range rows {
		verdict, detail := steadyCells(rw.s)
		drives := rw.drives[0]
		if len(rw.drives) > 1 {
			drives = fmt.Sprintf("%d: %s", len(rw.drives), drivenames.Compact(rw.drives, MaxListed))
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", steadyStep(rw.s), cell(rw.s.Kind), cell(rw.s.Twin), cell(drives), verdict, cell(detail))
	}
	b.WriteString("\n")
}

// steadyStep is a steady-state record's step: "12", or "resume 1, step 1"
// for a step a resume ran, whose plan numbers its steps from 1 again.
func steadyStep(s Steady) string {
	if s.Resume > 0 {
		return fmt.Sprintf("resume %d, step %d", s.Resume, s.Step)
	}
	return fmt.Sprint(s.Step)
}

// stepOf names a step in the text: "step 3", or "resume 1, step 3" for a
// step a resume ran.
func stepOf(resume, step int) string {
	if resume > 0 {
		return fmt.Sprintf("resume %d, step %d", resume, step)
	}
	return fmt.Sprintf("step %d", step)
}

// steadyCells are a steady-state record's verdict and detail cells.
func steadyCells(s Steady) (verdict, detail string) {
	verdict = fmt.Sprintf("reached in %s", secs(s.Seconds))
	if !s.Attained {
		verdict = fmt.Sprintf("**not reached** within %s", secs(s.BoundSeconds))
	}
	detail = s.Note
	if detail == "" {
		detail = fmt.Sprintf("last %d rounds of %s: mean %s IOPS, range %.1f %% (limit %s %%), excursion %.1f %% (limit %s %%)",
			s.Window, secs(s.RoundSeconds), Thousands(s.Mean), s.RangePct, trimPct(s.RangeLimitPct), s.ExcursionPct, trimPct(s.ExcursionLimitPct))
	}
	return verdict, detail
}

// secs writes a number of seconds as a duration, "12m0s", "200ms".
func secs(v float64) string {
	d := time.Duration(v * float64(time.Second))
	if d >= time.Second {
		d = d.Round(time.Second)
	}
	return d.String()
}

func trimPct(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// SteadyLine is steady-state evidence in one line: "/dev/nvme0n1 step 5:
// reached in 12m0s, window mean 152,000 IOPS, range 4.1 % (≤ 20 %),
// excursion 1.2 % (≤ 10 %)", one clause per record.
func SteadyLine(recs []Steady) string {
	var parts []string
	for _, r := range recs {
		head := "reached in " + time.Duration(r.Seconds*float64(time.Second)).Round(time.Second).String()
		if !r.Attained {
			head = "NOT reached in " + time.Duration(r.BoundSeconds*float64(time.Second)).Round(time.Second).String()
		}
		p := fmt.Sprintf("%s step %d (%s): %s", r.Drive, r.Step, r.Kind, head)
		if r.Note != "" {
			p += ": " + r.Note
		} else {
			p += fmt.Sprintf(", window mean %s IOPS, range %.1f %% (≤ %s %%), excursion %.1f %% (≤ %s %%)",
				Thousands(r.Mean), r.RangePct, trimPct(r.RangeLimitPct), r.ExcursionPct, trimPct(r.ExcursionLimitPct))
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

func (s *summary) writeDrives() {
	r, b := s.r, &s.b
	b.WriteString("## Drives\n\n")
	if len(r.Drives) == 0 {
		b.WriteString("No drives (replay of recorded results).\n\n")
		return
	}
	b.WriteString("| Path | Model | Serial | Firmware | Size | Capacity | NUMA | CPUs |\n")
	b.WriteString("|---|---|---|---|---:|---|---:|---|\n")
	for _, d := range r.Drives {
		numa := "-"
		if d.NUMANode >= 0 {
			numa = strconv.Itoa(d.NUMANode)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n",
			orDash(cell(d.Path)), orDash(cell(d.Model)), orDash(cell(d.Serial)), orDash(cell(d.Firmware)),
			formatBytes(d.Bytes), orDash(cell(d.Capacity)), numa, orDash(cell(d.CPUs)))
	}
	b.WriteString("\n")
	for _, d := range r.Drives {
		if d.ModelCheck != "" {
			fmt.Fprintf(b, "- %s: model %s\n", cell(d.Path), cell(d.ModelCheck))
		}
		if c := d.Failure; c != nil {
			fmt.Fprintf(b, "- %s failed: kept for its supplier: %s\n", cell(d.Path), cell(strings.Join(append(slices.Clone(c.Files), c.Notes...), "; ")))
		}
	}
	lines := 0
	for _, d := range r.Drives {
		switch {
		case d.Link != "":
			fmt.Fprintf(b, "- %s: PCIe %s, link %s\n", cell(d.Path), cell(d.PCI), cell(d.Link))
			lines++
		case d.Fabric():
			fmt.Fprintf(b, "- %s: NVMe over %s, target %s, subsystem %s: not PCIe-attached (%s); the network carries its figures as well as the drive\n",
				cell(d.Path), cell(d.Transport), orDash(cell(d.Address)), orDash(cell(d.Subsystem)), cell(d.Transport))
			lines++
		}
		if len(d.Paths) > 0 {
			fmt.Fprintf(b, "- %s: native multipath, subsystem %s, %d %s: %s\n", cell(d.Path), orDash(cell(d.Subsystem)), len(d.Paths),
				map[bool]string{true: "path", false: "paths"}[len(d.Paths) == 1], cell(strings.Join(d.Paths, "; ")))
			lines++
		}
	}
	if lines > 0 {
		b.WriteString("\n")
	}
}

func (s *summary) writeCapacity(capacity string) {
	r, b, notes, rank := s.r, &s.b, &s.notes, s.rank
	var rows []Result
	for _, res := range r.Results {
		if res.Capacity == capacity && res.Kind != KindSweep && res.Kind != KindLatency && res.Kind != KindScaling && res.Kind != KindFleet && res.Kind != KindBaseline && res.Kind != KindIntegrity && res.Kind != KindLot && res.Kind != KindPurge && res.Kind != KindFirmware {
			rows = append(rows, res)
		}
	}
	if len(rows) == 0 {
		// The capacity has scaling results only; its verdict is above and
		// its rows are in the scaling section.
		return
	}
	sortByWorkload(rows, rank)
	fmt.Fprintf(b, "## %s\n\n", orDash(cell(capacity)))
	lat, withWAF, withQoS := hasLatency(rows), hasWAF(rows), slices.ContainsFunc(rows, func(r Result) bool { return len(r.QoS) > 0 })
	b.WriteString("| Workload | Spec | Actual | % of Spec | Verdict |")
	if withQoS {
		b.WriteString(" QoS (spec limits) |")
	}
	if withWAF {
		b.WriteString(" WAF |")
	}
	if lat {
		b.WriteString(latencyHead)
	}
	b.WriteString("\n|---|---:|---:|---:|---|")
	if withQoS {
		b.WriteString("---|")
	}
	if withWAF {
		b.WriteString("---:|")
	}
	if lat {
		b.WriteString(latencyRule)
	}
	b.WriteString("\n")
	start := len(notes.text)
	for _, res := range rows {
		name := res.Workload
		if res.Host != "" {
			name = res.Host + ": " + name
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |",
			orDash(cell(name)), FormatValue(res.Spec, res.Metric), actualCell(res),
			percentCell(res, res.Spec), notes.verdict(res))
		if withQoS {
			b.WriteString(" " + cell(plain.Limits(res.QoS)) + " |")
		}
		if withWAF {
			b.WriteString(" " + orDash(cell(waf.Cell(res.WAF))) + " |")
		}
		if lat {
			b.WriteString(latencyCells(res))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	notes.flush(b, start)
}

// The latency columns of a table whose rows have latency: completion
// latency percentiles in µs, "r X / w Y" for a workload that reads and
// writes.
const (
	latencyHead = " p50 µs | p99 µs | p99.9 µs | p99.99 µs | p99.999 µs |"
	latencyRule = "---:|---:|---:|---:|---:|"
)

func hasLatency(rows []Result) bool {
	for _, r := range rows {
		if r.Read != nil || r.Write != nil {
			return true
		}
	}
	return false
}

func latencyCells(res Result) string {
	var b strings.Builder
	for _, p := range []float64{50, 99, 99.9, 99.99, 99.999} {
		var parts []string
		if res.Read != nil {
			parts = append(parts, plain.Figure(res.Read.Percentile(p)))
		}
		if res.Write != nil {
			parts = append(parts, plain.Figure(res.Write.Percentile(p)))
		}
		v := strings.Join(parts, " / ")
		if res.Read != nil && res.Write != nil {
			v = "r " + parts[0] + " / w " + parts[1]
		}
		b.WriteString(" " + orDash(v) + " |")
	}
	return b.String()
}

// writeFleet writes the fleet section of a replay of several hosts' runs:
// the hosts and their own verdicts, then per capacity and workload the
// drives' min, median and max, the spread against its limit, the verdict
// and the outliers (all as the fleet's judge found them), and the chart.
func (s *summary) writeFleet() {
	r, b := s.r, &s.b
	var cells []Result
	for _, res := range r.Results {
		if res.Kind == KindFleet {
			cells = append(cells, res)
		}
	}
	if len(r.Hosts) == 0 && len(cells) == 0 {
		return
	}
	b.WriteString("## Fleet\n\n")
	if len(r.Hosts) > 0 {
		b.WriteString("| Host | Machine | Kernel | CPU | fio | Verdict |\n|---|---|---|---|---|---|\n")
		for _, h := range r.Hosts {
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", cell(h.Name), orDash(cell(cmp.Or(h.Info.ProductSerial, h.Info.MachineID))),
				orDash(cell(h.Info.Kernel)), orDash(cell(h.Info.CPUModel)), orDash(cell(h.Info.FioVersion)), orDash(cell(h.Verdict)))
		}
		b.WriteString("\n")
	}
	if len(cells) == 0 {
		return
	}
	b.WriteString("| Capacity | Workload | Spec | Drives | Min | Median | Max | Spread | Verdict | Outliers |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---|---|\n")
	for _, c := range cells {
		var outliers []string
		for _, d := range c.PerDrive {
			if d.Verdict == Fail {
				outliers = append(outliers, d.Path+" ("+cmp.Or(d.Error, "no figure")+")")
			}
		}
		fmt.Fprintf(b, "| %s | %s | %s | %d | %s | %s | %s | %s (limit %s) | %s | %s |\n", cell(c.Capacity), cell(c.Workload),
			FormatValue(c.Spec, c.Metric), c.Drives, plain.Missing(c.Drives == 0, FormatValue(c.Min, c.Metric)), plain.Missing(c.Drives == 0, FormatValue(c.Median, c.Metric)),
			plain.Missing(c.Drives == 0, FormatValue(c.Max, c.Metric)), plain.Missing(c.Drives < 2, fmtPct(c.Spread)), fmtPct(c.Tolerance), strings.ToUpper(c.Verdict), orDash(cell(strings.Join(outliers, "; "))))
	}
	b.WriteString("\n![fleet](charts/fleet.svg)\n\n")
}

// writeChecks writes a section of a table per drive of checks, or why a
// drive was not checked.
func writeChecks(b *bytes.Buffer, title string, checks []HealthCheck) {
	if len(checks) == 0 {
		return
	}
	b.WriteString("## " + title + "\n\n")
	var drives []string
	by := map[string][]HealthCheck{}
	for _, h := range checks {
		if _, ok := by[h.Drive]; !ok {
			drives = append(drives, h.Drive)
		}
		by[h.Drive] = append(by[h.Drive], h)
	}
	// Drives not checked for the same reason are one line, before the
	// others' tables.
	var unchecked []driveLine
	for _, d := range drives {
		if checks := by[d]; len(checks) == 1 && checks[0].Check == "" {
			unchecked = append(unchecked, driveLine{d, "not checked: " + cell(checks[0].Message)})
		}
	}
	if order, _, _ := groupDriveLines(unchecked); len(order) < len(unchecked) {
		writeDriveLines(b, unchecked)
		b.WriteString("\n")
	} else {
		unchecked = nil
	}
	for _, d := range drives {
		checks := by[d]
		if len(checks) == 1 && checks[0].Check == "" {
			if unchecked == nil {
				fmt.Fprintf(b, "- %s: not checked: %s\n\n", cell(d), cell(checks[0].Message))
			}
			continue
		}
		fmt.Fprintf(b, "### %s\n\n| Check | Verdict | Detail |\n|---|---|---|\n", cell(d))
		for _, h := range checks {
			fmt.Fprintf(b, "| %s | %s | %s |\n", cell(h.Check), strings.ToUpper(h.Verdict), cell(h.Message))
		}
		b.WriteString("\n")
	}
}

func (s *summary) writeScaling() {
	r, b, notes := s.r, &s.b, &s.notes
	groups := r.scalingGroups(s.rank)
	if len(groups) == 0 {
		return
	}
	b.WriteString("## Scaling\n\n")
	if s := r.Scaling; s != nil {
		base := "N × the " + orDash(s.Capacity) + " spec value"
		if s.Baseline == "single" {
			base = "N × the measured single-drive result on " + orDash(s.Capacity)
		}
		fmt.Fprintf(b, "Expected = %s (baseline %q); a total passes at %s of expected or more.\n\n",
			base, s.Baseline, fmtPct(1-s.Tolerance))
	}
	for _, g := range groups {
		fmt.Fprintf(b, "### %s\n\n", cell(g.workload))
		b.WriteString("| Drives | Actual | Expected | % of Expected | Verdict |\n")
		b.WriteString("|---:|---:|---:|---:|---|\n")
		start := len(notes.text)
		for _, res := range g.rows {
			fmt.Fprintf(b, "| %d | %s | %s | %s | %s |\n",
				res.Drives, actualCell(res), FormatValue(res.Expected, res.Metric),
				percentCell(res, res.Expected), notes.verdict(res))
		}
		b.WriteString("\n")
		notes.flush(b, start)
		for i, res := range g.rows {
			// Rows are by drive count: the last is the largest step.
			s.writeDrivesOf(res, i == len(g.rows)-1)
		}
		if chart.AnyMeasured(chartSteps(g.rows)) {
			name := chartFile(g.workload)
			fmt.Fprintf(b, "Chart: [%s/%s](%s/%s)\n\n", ChartsDir, name, ChartsDir, name)
		}
	}
}

// writeDrivesOf writes what a reader needs about one multi-drive result
// beyond its table row: the per-drive spread, the drives below the median by
// more than the tolerance, the drives that failed, and whether the total is
// below linear. At the largest step (largest) those drives are one table;
// at the others, a line each: how many, the lowest, an error said once for
// the drives that share it.
func (s *summary) writeDrivesOf(res Result, largest bool) {
	var lines []string
	if len(res.PerDrive) > 1 && res.Median > 0 {
		lines = append(lines, fmt.Sprintf("At %d drives the per-drive spread (max − min) / median is %s: min %s, median %s, max %s.",
			res.Drives, fmtPct(res.Spread), FormatValue(res.Min, res.Metric),
			FormatValue(res.Median, res.Metric), FormatValue(res.Max, res.Metric)))
	}
	tol := driveTolerance(res, s.r.Scaling)
	var rows []string
	var low []DriveResult
	var errs []DriveReason
	for _, d := range res.PerDrive {
		if d.Outlier {
			low = append(low, d)
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s below the median (tolerance %s) |",
				orDash(cell(d.Path)), orDash(cell(d.Serial)), FormatValue(d.Actual, res.Metric), fmtPct((res.Median-d.Actual)/res.Median), fmtPct(tol)))
		}
	}
	for _, d := range res.PerDrive {
		if d.Error != "" {
			errs = append(errs, DriveReason{Drive: d.Path, Reason: "error: " + d.Error})
			actual := "-"
			if d.Actual > 0 {
				actual = FormatValue(d.Actual, res.Metric)
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | error: %s |", orDash(cell(d.Path)), orDash(cell(d.Serial)), actual, cell(d.Error)))
		}
	}
	switch {
	case len(rows) > 0 && largest:
		lines = append(lines, "", "| Drive | Serial | Actual | Note |", "|---|---|---:|---|")
		lines = append(lines, rows...)
		lines = append(lines, "")
	case len(rows) > 0:
		var items []string
		if len(low) > 0 {
			lowest := low[0]
			for _, d := range low[1:] {
				if d.Actual < lowest.Actual {
					lowest = d
				}
			}
			items = append(items, fmt.Sprintf("- %s more than %s below the median, lowest %s at %s (%s below)",
				CountOf(len(low), len(res.PerDrive)), fmtPct(tol), cell(lowest.Path), FormatValue(lowest.Actual, res.Metric), fmtPct((res.Median-lowest.Actual)/res.Median)))
		}
		for _, e := range Reasons(errs, len(res.PerDrive)) {
			items = append(items, "- "+cell(e))
		}
		lines = append(lines, "")
		lines = append(lines, items...)
		lines = append(lines, "")
	}
	if res.Expected > 0 && res.Actual < res.Expected && !unmeasured(res) {
		lines = append(lines, fmt.Sprintf("At %d drives the total is below linear: %s of expected.",
			res.Drives, formatPercent(res.Actual, res.Expected)))
	}
	if len(lines) == 0 {
		return
	}
	s.b.WriteString(strings.TrimSpace(strings.Join(lines, "\n")))
	s.b.WriteString("\n\n")
}

// driveTolerance is how far below the median a drive of res may fall before
// it is named: the result's tolerance, else the run's scaling tolerance,
// else DefaultDriveTolerance.
func driveTolerance(res Result, sc *Scaling) float64 {
	switch {
	case res.Tolerance > 0:
		return res.Tolerance
	case sc != nil && sc.Tolerance > 0:
		return sc.Tolerance
	}
	return DefaultDriveTolerance
}

// scalingGroup is one workload's multi-drive results, by drive count.
type scalingGroup struct {
	workload string
	rows     []Result
}

func (r *Run) scalingGroups(rank map[string]int) []scalingGroup {
	var rows []Result
	for _, res := range r.Results {
		if res.Kind == KindScaling {
			rows = append(rows, res)
		}
	}
	sortByWorkload(rows, rank)
	var groups []scalingGroup
	for _, res := range rows {
		if n := len(groups); n > 0 && groups[n-1].workload == res.Workload {
			groups[n-1].rows = append(groups[n-1].rows, res)
			continue
		}
		groups = append(groups, scalingGroup{workload: res.Workload, rows: []Result{res}})
	}
	for _, g := range groups {
		slices.SortStableFunc(g.rows, func(a, b Result) int { return a.Drives - b.Drives })
	}
	return groups
}

// testedCapacities is the capacities with results, in the spec's order and
// then in the order the results name them.
func (r *Run) testedCapacities() []string {
	var seen []string
	for _, res := range r.Results {
		seen = append(seen, res.Capacity)
	}
	var out []string
	for _, c := range ordered(r.Capacities, seen) {
		if slices.Contains(seen, c) {
			out = append(out, c)
		}
	}
	return out
}

// workloadRank maps each workload to its place in the tables.
func (r *Run) workloadRank() map[string]int {
	var seen []string
	for _, res := range r.Results {
		seen = append(seen, res.Workload)
	}
	rank := make(map[string]int)
	for i, w := range ordered(r.Workloads, seen) {
		rank[w] = i
	}
	return rank
}

func sortByWorkload(rows []Result, rank map[string]int) {
	slices.SortStableFunc(rows, func(a, b Result) int { return rank[a.Workload] - rank[b.Workload] })
}

// ordered returns want followed by the names in seen that want lacks, each
// once, in the order seen has them.
func ordered(want, seen []string) []string {
	out := slices.Clone(want)
	for _, s := range seen {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// footnotes numbers error texts across the whole document.
type footnotes struct {
	text []string
}

// verdict returns res's verdict cell, with a footnote reference when res
// carries an error.
func (f *footnotes) verdict(res Result) string {
	v := verdictWords(res)
	if res.Error == "" {
		return v
	}
	f.text = append(f.text, cell(res.Error))
	return fmt.Sprintf("%s [^%d]", v, len(f.text))
}

// flush writes the footnotes added since start.
func (f *footnotes) flush(b *bytes.Buffer, start int) {
	if start == len(f.text) {
		return
	}
	for i := start; i < len(f.text); i++ {
		fmt.Fprintf(b, "[^%d]: %s\n", i+1, f.text[i])
	}
	b.WriteString("\n")
}

// unmeasured reports whether an error left res with nothing measured.
func unmeasured(res Result) bool {
	return res.Error != "" && res.Actual == 0
}

// actualCell is a result's measured value, or "-" when nothing was measured.
func actualCell(res Result) string {
	if unmeasured(res) {
		return "-"
	}
	return FormatValue(res.Actual, res.Metric)
}

// percentCell is a result's actual as a percentage of ref, or "-" when
// nothing was measured.
func percentCell(res Result, ref float64) string {
	if unmeasured(res) {
		return "-"
	}
	return formatPercent(res.Actual, ref)
}

// FormatValue writes v rounded to an integer, with thousands separators and
// the metric's unit: "2,350,000 IOPS", "14,500 MB/s".
func FormatValue(v float64, metric string) string {
	s := Thousands(v)
	if u := units.Unit(metric); u != "" {
		s += " " + u
	}
	return s
}

// Thousands writes v rounded to the nearest integer with commas between
// groups of three digits (see units.Thousands).
func Thousands(v float64) string { return units.Thousands(v) }

// formatPercent writes actual / ref as a percentage to two decimals:
// formatPercent(2409894, 2350000) = "102.55 %". It returns "n/a" when ref is
// 0 or either value is not finite.
func formatPercent(actual, ref float64) string {
	if ref == 0 || math.IsNaN(actual) || math.IsInf(actual, 0) || math.IsNaN(ref) || math.IsInf(ref, 0) {
		return "n/a"
	}
	return fmtPct(actual / ref)
}

// fmtPct writes a fraction as a percentage to two decimals: 0.1 → "10.00 %".
func fmtPct(frac float64) string {
	return strconv.FormatFloat(frac*100, 'f', 2, 64) + " %"
}

// formatBytes writes a size in bytes in decimal units (1 TB = 10^12 bytes)
// to two decimals: 1920383410176 → "1.92 TB".
func formatBytes(n int64) string {
	if n <= 0 {
		return "-"
	}
	units := []struct {
		name string
		size float64
	}{{"PB", 1e15}, {"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"kB", 1e3}}
	for _, u := range units {
		if float64(n) >= u.size {
			return strconv.FormatFloat(float64(n)/u.size, 'f', 2, 64) + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " B"
}

// cell makes s safe inside a Markdown table cell: one line, pipes
// escaped, control characters written as escapes (Escape: a message a
// recording supplies shows as it is) and no HTML tag or comment (a "<"
// that would open one is "&lt;"; "IOPS < spec" stays).
func cell(s string) string {
	s = Escape(strings.Join(strings.Fields(s), " "))
	if strings.Contains(s, "<") {
		var b strings.Builder
		for i, r := range s {
			if r == '<' && i+1 < len(s) && opensTag(s[i+1]) {
				b.WriteString("&lt;")
				continue
			}
			b.WriteRune(r)
		}
		s = b.String()
	}
	return strings.ReplaceAll(s, "|", `\|`)
}

// opensTag says a "<" followed by c opens an HTML tag, end tag, comment
// or processing instruction.
func opensTag(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '/' || c == '!' || c == '?'
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
