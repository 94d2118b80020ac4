// Package junit writes the run's JUnit XML from its judged results.
//
// It is one more view of report.Run, beside results.json and summary.md:
// every figure comes from the run as the judge left it, none is recomputed.
// The file has one <testsuite> root (the one layout that Jenkins xunit's
// junit-10.xsd, Maven Surefire's surefire-test-report.xsd and Apache Ant's
// junitreport all read) holding:
//
//   - one testcase per result (cell), with classname the test's top-level
//     function ("TestSingleDrive", "TestScaling") and name the rest of its
//     go test name ("1.92TB/4KB_Random_Read", "24_drives/4KB_Random_Read"),
//     so that classname + "/" + name is the name go test -run matches, and
//     the classname has no dot for a consumer to cut it at (Go names
//     functions without one; capacities have dots); no testcase for a
//     parent test, so that a failing cell is counted once;
//   - a failing cell has <failure message="verdict row" type="cause">; an
//     inconclusive one <skipped message="INCONCLUSIVE: reason">; a passing
//     one neither. A message is at most MaxMessage characters (Short); the
//     whole text is the failure's body and system-out's "error:" line.
//     Every cell's figures are in <system-out> as "key: value" lines;
//   - one testcase per receipt or health check or power-loss cycle
//     (classname "TestReceipt", "TestHealth" or "TestPowerLoss", name
//     "<drive>/<check>");
//   - then one testcase per gate (Verdict/<capacity>, Verdict/scaling, and
//     fleet, baseline, lot, receipt, health when the run has them) that
//     passes only when the gate is QUALIFIED, so a run that did not qualify
//     never shows as all green.
//
// Properties are written at the testsuite level only, where both schemas
// allow them; junit-10.xsd has no properties inside a testcase.
package junit

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/units"
)

// File is the JUnit file's name inside a report directory.
const File = "junit.xml"

// SuiteName is the testsuite's name.
const SuiteName = "drivequal"

// VerdictClass is the classname of the gate testcases: the test name of a
// capacity's gate is "Verdict/1.92TB", of the scaling gate "Verdict/scaling".
const VerdictClass = "Verdict"

// DefaultFailureType is a failure's type when the result names no cause.
const DefaultFailureType = report.CauseBelowSpec

// InconclusivePrefix starts the message of every inconclusive testcase.
const InconclusivePrefix = "INCONCLUSIVE: "

// Write writes dir/junit.xml for r atomically (report.WriteFileAtomic), so
// that a CI step reading it mid-run sees a whole file. Recording paths are
// written relative to dir. It is meant to be called after every result, as
// report.Run.Write is.
func Write(dir string, r *report.Run) error {
	path := filepath.Join(dir, File)
	data, err := Marshal(r, dir)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return report.WriteFileAtomic(path, data)
}

// Marshal returns the JUnit XML of r, with an XML declaration and a
// trailing newline. reportDir is the directory the file is for: each
// result's raw recording is given relative to it. It fails only when the
// XML cannot be encoded.
func Marshal(r *report.Run, reportDir string) ([]byte, error) {
	s := suite(r, reportDir)
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("encoding JUnit: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encoding JUnit: %w", err)
	}
	b.WriteString("\n")
	return b.Bytes(), nil
}

// The XML shapes. Attribute and element order follows surefire-test-report.xsd,
// the stricter of the two schemas (a sequence: properties, then testcases;
// inside a testcase failure, skipped, then system-out).

type xmlSuite struct {
	XMLName    xml.Name      `xml:"testsuite"`
	Name       string        `xml:"name,attr"`
	Tests      int           `xml:"tests,attr"`
	Failures   int           `xml:"failures,attr"`
	Errors     int           `xml:"errors,attr"`
	Skipped    int           `xml:"skipped,attr"`
	Time       string        `xml:"time,attr"`
	Timestamp  string        `xml:"timestamp,attr,omitempty"`
	Properties *xmlProps     `xml:"properties,omitempty"`
	Cases      []xmlTestcase `xml:"testcase"`
}

type xmlProps struct {
	Props []xmlProp `xml:"property"`
}

type xmlProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type xmlTestcase struct {
	Name      string      `xml:"name,attr"`
	Classname string      `xml:"classname,attr"`
	Time      string      `xml:"time,attr"`
	Failure   *xmlFailure `xml:"failure,omitempty"`
	Skipped   *xmlSkipped `xml:"skipped,omitempty"`
	SystemOut text        `xml:"system-out,omitempty"`
}

type xmlFailure struct {
	Message string
	Type    string
	Body    text
}

// MarshalXML writes the failure with its body's newlines as they are.
func (f *xmlFailure) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	start.Attr = []xml.Attr{{Name: xml.Name{Local: "message"}, Value: f.Message}, {Name: xml.Name{Local: "type"}, Value: f.Type}}
	return f.Body.MarshalXML(e, start)
}

// text is element content written with its newlines as they are, so that
// system-out reads as lines; encoding/xml's chardata fields write "&#xA;".
// Markup characters and carriage returns are still escaped.
type text string

// MarshalXML implements xml.Marshaler.
func (t text) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	if err := e.EncodeToken(start); err != nil {
		return err
	}
	if err := e.EncodeToken(xml.CharData(t)); err != nil {
		return err
	}
	return e.EncodeToken(start.End())
}

// xmlSkipped has no type: surefire-test-report.xsd allows only a message.
type xmlSkipped struct {
	Message string `xml:"message,attr"`
}

// zeroTime is every testcase's time: results carry no duration.
const zeroTime = "0"

func suite(r *report.Run, reportDir string) xmlSuite {
	s := xmlSuite{Name: SuiteName, Time: suiteTime(r.Started, r.Finished), Timestamp: timestamp(r.Started)}
	if props := properties(r); len(props) > 0 {
		s.Properties = &xmlProps{Props: props}
	}
	for _, res := range r.Results {
		if res.Kind == report.KindSweep {
			continue // a point is its TestLatency testcase's figures
		}
		s.Cases = append(s.Cases, cellCase(r, res, reportDir))
	}
	for _, k := range []struct {
		class  string
		checks []report.HealthCheck
	}{{"TestReceipt", r.Receipt}, {"TestHealth", r.Health}, {"TestPowerLoss", r.PowerLoss}} {
		for _, c := range k.checks {
			if c.Check == "" {
				continue
			}
			tc := checkCase(k.class, c)
			if c.Verdict == report.Inconclusive && k.class == "TestPowerLoss" {
				tc.Skipped = &xmlSkipped{Message: Short(clean("INCONCLUSIVE: " + c.Message))}
			}
			s.Cases = append(s.Cases, tc)
		}
	}
	for _, g := range r.Gates() {
		tc := gateCase(g)
		if e := r.Recording.Evidence(); e != "" {
			tc.SystemOut = text(string(tc.SystemOut) + clean(oneLine("evidence: "+e)) + "\n")
		}
		s.Cases = append(s.Cases, tc)
	}
	s.Tests = len(s.Cases)
	for _, c := range s.Cases {
		switch {
		case c.Failure != nil:
			s.Failures++
		case c.Skipped != nil:
			s.Skipped++
		}
	}
	return s
}

// properties are the run's facts that no testcase carries.
func properties(r *report.Run) []xmlProp {
	var out []xmlProp
	add := func(name, value string) {
		if value != "" {
			out = append(out, xmlProp{Name: name, Value: clean(value)})
		}
	}
	add("spec", r.Spec)
	add("source", r.Source)
	add("mode", r.Mode)
	add("fio_version", r.FioVersion)
	add("precondition", r.Precondition)
	add("started", r.Started)
	add("finished", r.Finished)
	for i, z := range r.Resumptions {
		// A resumed run is one run: say when it was resumed.
		add(fmt.Sprintf("resumed_%d", i+1), z.At)
	}
	if r.Reconstructed {
		add("reconstructed", "true")
		add("reconstructed_from", r.ReconstructedFrom)
	}
	if c := r.Recording; c != nil {
		// A replay of a recording some of whose files are not as
		// recorded: which, and that the verdict stands on them.
		add("recording_edited", strings.Join(c.Edited, "; "))
		add("recording_unvouched", strings.Join(c.Unvouched, "; "))
		add("evidence", c.Evidence())
	}
	add("any_model", r.AnyModel)
	if j := r.JudgedBy; j != nil {
		add("judged_by", j.Model)
		add("judged_by_file", j.File)
		add("judged_by_sha256", j.SHA256)
	}
	verdict := r.Overall().Verdict
	if all := r.Overall(); all.Reason != "" {
		verdict += ": " + all.Reason
	}
	if e := r.Recording.Evidence(); e != "" {
		verdict += " (" + e + ")"
	}
	add("verdict", verdict)
	return out
}

// cellCase is one result as a testcase.
func cellCase(r *report.Run, res report.Result, reportDir string) xmlTestcase {
	class, name := split(res.Test)
	tc := xmlTestcase{Name: clean(name), Classname: clean(class), Time: zeroTime, SystemOut: text(figures(r, res, reportDir))}
	switch {
	case res.Verdict == report.Fail:
		msg := res.Error
		if msg == "" {
			msg = res.Workload + ": " + res.Verdict
		}
		typ := res.Cause
		if typ == "" {
			typ = DefaultFailureType
		}
		tc.Failure = &xmlFailure{Message: Short(clean(msg)), Type: clean(typ), Body: text(clean(msg))}
	case res.Verdict == report.Pass && res.Error == "":
		// A pass has no child but its figures.
	default:
		// Inconclusive, or a pass that carries an error (the gate counts
		// both as inconclusive), or a verdict this package does not know.
		reason := res.Error
		if reason == "" {
			reason = res.Workload + ": " + res.Verdict
		}
		// The whole reason is system-out's "error:" line.
		tc.Skipped = &xmlSkipped{Message: Short(clean(InconclusivePrefix + reason))}
	}
	return tc
}

// checkCase is one drive's receipt or health check as a testcase
// <class>/<drive>/<check>: a failure or a skip carries its message.
func checkCase(class string, c report.HealthCheck) xmlTestcase {
	drive := strings.ReplaceAll(strings.TrimPrefix(c.Drive, "/dev/"), "/", "-")
	tc := xmlTestcase{Name: clean(drive + "/" + c.Check), Classname: clean(class), Time: zeroTime, SystemOut: text(clean(c.Message))}
	switch c.Verdict {
	case report.Fail:
		tc.Failure = &xmlFailure{Message: Short(clean(c.Message)), Type: clean(class), Body: text(clean(c.Message))}
	case report.Skip:
		tc.Skipped = &xmlSkipped{Message: Short(clean(c.Message))}
	}
	return tc
}

// gateCase is one gate as a testcase that passes only when QUALIFIED.
func gateCase(g report.Gate) xmlTestcase {
	tc := xmlTestcase{Name: clean(g.Name), Classname: VerdictClass, Time: zeroTime}
	var b strings.Builder
	line(&b, "verdict", g.Verdict)
	line(&b, "reason", g.Reason)
	line(&b, "cells", strconv.Itoa(g.Cells))
	line(&b, "passed", strconv.Itoa(g.Passed))
	line(&b, "failed", strconv.Itoa(g.Failed))
	line(&b, "inconclusive", strconv.Itoa(g.Inconclusive))
	tc.SystemOut = text(clean(b.String()))
	if g.Verdict != report.Qualified {
		// g.String() is "NOT QUALIFIED: 1.92TB: reason"; the testcase
		// already names the capacity.
		msg := g.Verdict
		if g.Reason != "" {
			msg += ": " + g.Reason
		}
		tc.Failure = &xmlFailure{Message: Short(clean(msg)), Type: clean(g.Verdict), Body: text(clean(msg))}
	}
	return tc
}

// MaxMessage is the most characters a failure's or skip's message has:
// what a CI annotation's title and a check's summary show in one piece.
// The whole text is the failure's body, or system-out's "error:" line.
const MaxMessage = 300

// more ends a message cut after a whole clause; cut one cut inside a
// clause, between two words.
const (
	more = "; … (more in the full text)"
	cut  = " … (more in the full text)"
)

// minPart is the fewest characters of a clause worth showing cut short:
// the start of a verdict's cause ("24 of 24 drives did not reach steady
// state in step 8 …") rather than nothing of it.
const minPart = 40

// Short is msg cut to at most MaxMessage characters: its verdict row
// (the part before the first "; ") and as many of the clauses after it
// as fit whole, then "; … (more in the full text)"; a clause that does not
// fit whole is given as far as it fits between two words, so that no
// number or word is cut and the start of the cause that follows the row
// is shown. A verdict row longer than that is cut the same way.
func Short(msg string) string {
	if utf8.RuneCountInString(msg) <= MaxMessage {
		return msg
	}
	n := utf8.RuneCountInString
	parts := strings.Split(msg, "; ")
	out := ""
	for i, p := range parts {
		sep := "; "
		if i == 0 {
			sep = ""
		}
		if n(out)+n(sep)+n(p)+n(more) <= MaxMessage {
			out += sep + p
			continue
		}
		if i == 0 && n(p)+n(" …") <= MaxMessage {
			// The whole verdict row, with no room to say more.
			return p + " …"
		}
		if head := wordsOf(p, MaxMessage-n(out)-n(sep)-n(cut)); head != "" && (i == 0 || n(head) >= minPart) {
			return out + sep + head + cut
		}
		if i == 0 {
			// No space to cut at: the row's first characters.
			return string([]rune(p)[:MaxMessage-n(cut)]) + cut
		}
		break
	}
	return out + more
}

// wordsOf is the longest start of s of at most max characters that ends
// before one of its parts (", ", ": ") or, when none leaves minPart
// characters, between two words, without trailing punctuation; "" when
// there is none.
func wordsOf(s string, max int) string {
	if max <= 0 {
		return ""
	}
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	end := -1
	for i := max; i > 0; i-- {
		if r[i] == ' ' && (r[i-1] == ',' || r[i-1] == ':') {
			end = i - 1
			break
		}
	}
	if end < minPart {
		for i := max; i > 0; i-- {
			if r[i] == ' ' {
				end = i
				break
			}
		}
	}
	if end <= 0 {
		return ""
	}
	head := string(r[:end])
	if i := strings.LastIndex(head, " ("); i > 0 && strings.Count(head, "(") > strings.Count(head, ")") {
		// Not half a parenthesis: "(10.18 %" of "(10.18 % of spec)".
		head = head[:i]
	}
	return strings.TrimRight(head, " ,;:(–")
}

// figures is a result's system-out: one "key: value" line per figure, in
// the units results.json gives them, then one line per drive of a
// multi-drive result.
func figures(r *report.Run, res report.Result, reportDir string) string {
	var b strings.Builder
	line(&b, "test", res.Test)
	line(&b, "verdict", res.Verdict)
	line(&b, "cause", res.Cause)
	line(&b, "error", res.Error)
	line(&b, "kind", res.Kind)
	line(&b, "capacity", res.Capacity)
	line(&b, "workload", res.Workload)
	if res.Kind != report.KindIntegrity && res.Kind != report.KindPurge && res.Kind != report.KindFirmware {
		// A verify pass or a purge has no figure: its lines are below.
		line(&b, "metric", res.Metric)
		line(&b, "unit", units.Unit(res.Metric))
		line(&b, "spec", num(res.Spec))
		line(&b, "expected", num(res.Expected))
		line(&b, "actual", num(res.Actual))
		line(&b, "ratio", num(res.Ratio))
		line(&b, "tolerance", num(res.Tolerance))
		line(&b, "drives", strconv.Itoa(res.Drives))
	}
	if res.Kind == report.KindLatency {
		sweepPoints(&b, r, res)
	}
	line(&b, "precondition", r.Precondition)
	line(&b, "fio version", r.FioVersion)
	line(&b, "any model", r.AnyModel)
	for _, w := range res.WAF {
		if w.Note != "" || w.MediaBytes != "" {
			line(&b, "waf "+w.Drive, w.String())
		}
		if w.MediaBytes != "" {
			line(&b, "media bytes written "+w.Drive, w.MediaBytes)
			line(&b, "host bytes written "+w.Drive, w.HostBytes)
		}
		if w.LifeDriveWrites > 0 {
			line(&b, "life drive writes "+w.Drive, strconv.FormatFloat(w.LifeDriveWrites, 'f', 0, 64))
		}
		line(&b, "latency monitor "+w.Drive, w.Latency)
	}
	if in := res.Integrity; in != nil {
		line(&b, "drive", in.Drive)
		line(&b, "serial", in.Serial)
		line(&b, "bytes verified", strconv.FormatInt(in.BytesVerified, 10))
		line(&b, "bytes written", strconv.FormatInt(in.BytesWritten, 10))
		line(&b, "checksum", in.Checksum)
		if in.Mismatches > 0 {
			line(&b, "mismatches", strconv.Itoa(in.Mismatches))
			line(&b, "offset", strconv.FormatInt(in.Offset, 10))
			line(&b, "length", strconv.FormatInt(in.Length, 10))
			line(&b, "lba", strconv.FormatInt(in.LBA, 10))
			line(&b, "lba size", strconv.Itoa(in.LBASize))
			line(&b, "expected", in.Expected)
			line(&b, "received", in.Received)
			line(&b, "fio", in.Fio)
		}
	}
	if p := res.Purge; p != nil {
		line(&b, "drive", p.Drive)
		line(&b, "command", p.Command)
		line(&b, "promise", p.Promise)
		line(&b, "read back", p.ReadBack)
		line(&b, "bytes read", strconv.FormatInt(p.BytesRead, 10))
		line(&b, "sectors read", strconv.FormatInt(p.Sectors, 10))
		line(&b, "sectors bad", strconv.FormatInt(p.Bad, 10))
		line(&b, "lbas", strings.Join(p.LBAs, ", "))
		line(&b, "fill sectors before", strconv.FormatInt(p.FillBefore, 10))
	}
	if f := res.Firmware; f != nil {
		line(&b, "firmware", fmt.Sprintf("%s: %s -> %s, slot %d %s; stall %.0f ms (max %.0f ms); %s", f.Drive, f.Before, f.After, f.Slot, f.Action, f.StallMS, f.MaxStallMS, strings.Join(f.Commands, "; ")))
	}
	// A TestBaseline cell's drives are those of the result it compares.
	if res.Kind != report.KindScaling && res.Kind != report.KindBaseline && res.Kind != report.KindIntegrity && res.Kind != report.KindLot && res.Kind != report.KindPurge && res.Kind != report.KindFirmware {
		if d, ok := singleDrive(r, res); ok {
			line(&b, "drive", d.Path)
			line(&b, "model", d.Model)
			line(&b, "serial", d.Serial)
			line(&b, "firmware", d.Firmware)
		}
	}
	if res.P99Us != 0 {
		line(&b, "p99 us", num(res.P99Us))
	}
	if res.P999Us != 0 {
		line(&b, "p99.9 us", num(res.P999Us))
	}
	if res.Kind == report.KindScaling && res.Spread != 0 {
		line(&b, "spread", num(res.Spread))
	}
	if res.Kind == report.KindScaling && res.Median != 0 {
		// What an outlier (drive[i]: … outlier=true) is below.
		line(&b, "median", num(res.Median))
	}
	line(&b, "raw", rawPath(res.Raw, reportDir))
	if len(res.Steady) > 0 {
		line(&b, "steady state", report.SteadyLine(res.Steady))
	}
	if br := res.Baseline; br != nil {
		// The cell against the baseline (-baseline): its metric and each
		// latency percentile both sides have.
		for _, c := range append([]report.Comparison{br.Metric}, br.Latency...) {
			line(&b, "baseline "+c.FigureName(), c.Line())
		}
	}
	for i, d := range res.PerDrive {
		b.WriteString("drive[" + strconv.Itoa(i+1) + "]: " + perDrive(d) + "\n")
	}
	lotFigures(&b, res.Lot)
	return clean(b.String())
}

// lotFigures writes a TestLot cell's judgment: the rule, the method and
// its figures, then one line per drive judged.
func lotFigures(b *strings.Builder, l *report.LotResult) {
	if l == nil {
		return
	}
	line(b, "lot verdict", l.Verdict)
	line(b, "lot coverage", num(l.Coverage))
	line(b, "lot confidence", num(l.Confidence))
	line(b, "lot method", l.Method)
	line(b, "lot n", strconv.Itoa(l.N))
	line(b, "lot passing", strconv.Itoa(l.Passing))
	line(b, "lot mean", num(l.Mean))
	line(b, "lot s", num(l.SD))
	line(b, "lot k", num(l.K))
	line(b, "lot bound", num(l.Bound))
	line(b, "lot pass line", num(l.PassLine))
	if n := l.Normality; n != nil {
		line(b, "lot normality", fmt.Sprintf("%s W=%s p=%s normal=%t", n.Test, num(n.W), num(n.P), n.Normal))
	}
	// The lower bound is what a distribution-free lot is accepted on,
	// the upper what any lot is rejected on.
	line(b, "lot passing share lower", num(l.PassingShareLower))
	line(b, "lot passing share upper", num(l.PassingShareUpper))
	line(b, "lot zero-failure n", strconv.Itoa(l.ZeroFailure))
	if l.Need > 0 {
		line(b, "lot need", strconv.Itoa(l.Need))
	}
	for i, f := range l.Figures {
		parts := []string{oneLine(f.Drive), "value=" + num(f.Value), "pass=" + strconv.FormatBool(f.Pass), "test=" + oneLine(f.Test)}
		if f.Serial != "" {
			parts = append(parts, "serial="+oneLine(f.Serial))
		}
		b.WriteString("lot drive[" + strconv.Itoa(i+1) + "]: " + strings.Join(parts, " ") + "\n")
	}
}

// perDrive is one drive's share of a multi-drive result, on one line.
func perDrive(d report.DriveResult) string {
	parts := []string{oneLine(d.Path)}
	kv := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	kv("serial", oneLine(d.Serial))
	kv("actual", num(d.Actual))
	kv("ratio", num(d.Ratio))
	kv("verdict", oneLine(d.Verdict))
	if d.Outlier {
		// More than the tolerance below the median: the message names
		// only the lowest of several.
		kv("outlier", "true")
	}
	kv("cpus", oneLine(d.CPUs))
	if d.Error != "" {
		kv("error", strconv.Quote(d.Error))
	}
	return strings.Join(parts, " ")
}

// singleDrive is the drive a single-drive result ran on. Results do not
// name it; the suite measures each capacity on the first drive given of
// that capacity, so that is the one named. With no drive of the capacity
// (or a drive list without capacities) there is none.
func singleDrive(r *report.Run, res report.Result) (report.Drive, bool) {
	for _, d := range r.Drives {
		// In a fleet replay, drives are named <host>:<path>.
		if d.Capacity == res.Capacity && (res.Host == "" || strings.HasPrefix(d.Path, res.Host+":")) {
			return d, true
		}
	}
	return report.Drive{}, false
}

// rawPath is a recording's path relative to reportDir. raw is absolute or
// relative to reportDir's parent (as results.json gives it). When no
// relative path exists (another volume), raw is returned as given.
func rawPath(raw, reportDir string) string {
	if raw == "" {
		return ""
	}
	full := raw
	if !filepath.IsAbs(full) {
		full = filepath.Join(filepath.Dir(filepath.Clean(reportDir)), raw)
	}
	dir := reportDir
	if filepath.IsAbs(full) != filepath.IsAbs(dir) {
		var err1, err2 error
		full, err1 = filepath.Abs(full)
		dir, err2 = filepath.Abs(dir)
		if err1 != nil || err2 != nil {
			return filepath.ToSlash(raw)
		}
	}
	rel, err := filepath.Rel(dir, full)
	if err != nil {
		return filepath.ToSlash(raw)
	}
	return filepath.ToSlash(rel)
}

// split cuts a test name after its top-level function:
// "TestSingleDrive/1.92TB/4KB_Random_Read" → "TestSingleDrive",
// "1.92TB/4KB_Random_Read". A name without "/" is its own class.
//
// Consumers that show a class by its last dot-separated part
// (mikepenz/action-junit-report's titles and job summary, Jenkins'
// package.class) would cut a classname "TestSingleDrive/1.92TB" to
// "92TB"; a Go function name has no dot, and the name is shown whole.
func split(test string) (class, name string) {
	i := strings.IndexByte(test, '/')
	if i < 0 {
		return test, test
	}
	return test[:i], test[i+1:]
}

// line writes "key: value\n" when value is not empty. A value of several
// lines is indented so that each line of the output stays one key's.
func line(b *strings.Builder, key, value string) {
	if value == "" {
		return
	}
	b.WriteString(key)
	b.WriteString(": ")
	b.WriteString(strings.ReplaceAll(strings.TrimRight(value, "\n"), "\n", "\n  "))
	b.WriteString("\n")
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// num writes v as results.json does: the shortest decimal that reads back
// as v; "NaN" or "+Inf" for a value JSON cannot carry.
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// suiteTime is the run's length in seconds with at most three decimals
// (junit-10.xsd's SUREFIRE_TIME), from its start and last result; "0" when
// either is unknown or they are out of order.
func suiteTime(started, finished string) string {
	a, err1 := time.Parse(time.RFC3339, started)
	b, err2 := time.Parse(time.RFC3339, finished)
	if err1 != nil || err2 != nil || b.Before(a) {
		return zeroTime
	}
	return strconv.FormatFloat(b.Sub(a).Round(time.Millisecond).Seconds(), 'f', -1, 64)
}

// timestamp is the run's start as an xs:dateTime in UTC, or "" when the
// start is unknown or not RFC 3339.
func timestamp(started string) string {
	t, err := time.Parse(time.RFC3339, started)
	if err != nil {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05Z")
}

// clean makes s safe for XML 1.0: a character XML cannot carry at all,
// not even escaped (most C0 controls, U+FFFE, U+FFFF, invalid UTF-8), is
// written as a visible escape ("\x1b", "\ufffe") instead of being lost.
// Markup characters are left to encoding/xml, which escapes them.
func clean(s string) string {
	ok := true
	for _, r := range s {
		if !isXMLChar(r) {
			ok = false
			break
		}
	}
	if ok && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !isXMLChar(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case !isXMLChar(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// isXMLChar reports whether r is in XML 1.0's Char production.
func isXMLChar(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

// sweepPoints writes a TestLatency testcase's points, one line each:
// "point iodepth_8: 1995 IOPS, read p99 1234 µs, mean 4010 µs".
func sweepPoints(b *strings.Builder, r *report.Run, target report.Result) {
	for _, p := range r.Results {
		if p.Kind != report.KindSweep || !strings.HasPrefix(p.Test, target.Test+"/") {
			continue
		}
		v := num(p.Actual) + " IOPS"
		for _, d := range []struct {
			name string
			l    *report.Latency
		}{{"read", p.Read}, {"write", p.Write}} {
			if d.l != nil {
				v += fmt.Sprintf(", %s p50 %s µs, p99 %s µs, p99.99 %s µs, max %s µs, mean %s µs", d.name, num(d.l.P50), num(d.l.P99), num(d.l.P9999), num(d.l.Max), num(d.l.Mean))
			}
		}
		if p.Saturated {
			v += ", saturated"
		}
		if p.Verdict != report.Pass {
			v += ", " + p.Verdict + ": " + p.Error
		}
		line(b, "point "+p.Test[len(target.Test)+1:], v)
	}
}
