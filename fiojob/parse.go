package fiojob

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/drivequal/drivequal/fiojob/internal/jsonlist"
	"github.com/drivequal/drivequal/fiojob/internal/nonfinite"
)

// The private mirror of the parts of fio's json / json+ output that Parse
// reads. Everything else (disk_util, job options, percentile lists, ...) is
// skipped, so its absence does not matter.
type fioOutput struct {
	Version     string  `json:"fio version"`
	Jobs        fioJobs `json:"jobs"`
	ClientStats fioJobs `json:"client_stats"`
}

// fioJobs is a list of jobs that refuses more than maxJobs elements
// before it decodes them: an element of a recording's list may be a few
// bytes ({}, null, 1), and each decoded takes some 400 bytes and more,
// so that tooManyJobs, which counts the "jobname" members fio prints,
// is no bound (a 600 KB list of {} took 800 MB). decodeFast's lists and
// its UnmarshalJSON decode as encoding/json decodes a slice (a duplicate
// member decodes into what the earlier one left). Every list of jobs of
// one report counts against the same maxJobs (decodeFast's budget, and
// jsonlist.Total before encoding/json's way): a list given again and
// again, emptied between, was decoded afresh each time (3.7 MB: 1.7 GB).
type fioJobs []fioJob

// errJobs is the error of a list of more jobs than fio runs.
var errJobs = fmt.Errorf("jobs: more than the %d fio runs at most", maxJobs)

// elementOptions decode an element of a list of jobs with the options of
// the decodeFast call that reached it, but for errors: under v1's, each
// element's decoding would check the whole element's JSON again (the
// call checked all of it first), and the list would go on after an
// element's error. An error ends decodeFast, and Parse decodes with
// encoding/json.
var elementOptions = jsonv1.ReportErrorsWithLegacySemantics(false)

// UnmarshalJSON is encoding/json's (see jsonlist.Unmarshal).
func (p *fioJobs) UnmarshalJSON(data []byte) error {
	return jobsErr(jsonlist.Unmarshal(data, (*[]fioJob)(p), maxJobs))
}

func jobsErr(err error) error {
	if errors.Is(err, jsonlist.ErrTooLong) {
		return errJobs
	}
	return err
}

type fioJob struct {
	JobName    string  `json:"jobname"`
	GroupID    int     `json:"groupid"`
	Hostname   string  `json:"hostname"`
	Error      int     `json:"error"`
	JobRuntime int64   `json:"job_runtime"` // ms, summed over a group's jobs
	UsrCPU     float64 `json:"usr_cpu"`     // % of JobRuntime
	SysCPU     float64 `json:"sys_cpu"`
	Read       fioDir  `json:"read"`
	Write      fioDir  `json:"write"`
	Trim       fioDir  `json:"trim"`
}

type fioDir struct {
	IOBytes  int64   `json:"io_bytes"`
	BWBytes  float64 `json:"bw_bytes"`
	IOPS     float64 `json:"iops"`
	Runtime  int64   `json:"runtime"` // ms
	TotalIOs int64   `json:"total_ios"`
	Lat      struct {
		N    int64   `json:"N"`
		Mean float64 `json:"mean"` // ns
	} `json:"lat_ns"`
	Clat struct {
		Bins fioBins `json:"bins"` // json+ only
	} `json:"clat_ns"`
}

// fioBins is json+'s clat_ns bins object, {"latency ns" : count, ...}, in
// fio's order (ascending latency). It is read by hand: with thousands of
// bins per job, a map[string]int64 and reflection dominate Parse's time.
type fioBins struct {
	ns, count []int64
}

// maxBins is how many latency bins fio keeps per direction
// (FIO_IO_U_PLAT_NR: 29 groups of 64).
const maxBins = 29 * 64

func (b *fioBins) UnmarshalJSON(data []byte) error {
	// data is one valid JSON value (encoding/json checked it).
	if bytes.Equal(data, []byte("null")) {
		return nil
	}
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return fmt.Errorf("clat_ns bins is not an object")
	}
	i++
	// One bin a comma, and one more: the slices grow once. fio has
	// maxBins latency bins, and prints those that counted an I/O: more
	// is not fio's output, and would cost a recording's judge 16 bytes
	// of memory for every 6 bytes of it.
	n := bytes.Count(data, []byte{','}) + 1
	if n > maxBins {
		return fmt.Errorf("clat_ns bins: %d entries, more than the %d latency bins fio has", n, maxBins)
	}
	// A second "bins" member replaces the first: appended to it, bins
	// without bound would fit in maxBins a member.
	if cap(b.ns) < n {
		b.ns, b.count = make([]int64, 0, n), make([]int64, 0, n)
	}
	b.ns, b.count = b.ns[:0], b.count[:0]
	for {
		i = skipSpace(data, i)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
		if i >= len(data) || data[i] == '}' {
			return nil
		}
		// A key: a string without escapes in fio's output.
		end := bytes.IndexByte(data[i+1:], '"')
		if data[i] != '"' || end < 0 {
			return fmt.Errorf("clat_ns bins: unexpected %.20q", data[i:])
		}
		key := data[i+1 : i+1+end]
		ns, err := parseCount(key)
		if err != nil {
			return fmt.Errorf("clat_ns bin %s is not an integer", Quote(string(key)))
		}
		i = skipSpace(data, i+end+2)
		if i >= len(data) || data[i] != ':' {
			return fmt.Errorf("clat_ns bins: missing ':' after %s", Quote(string(key)))
		}
		i = skipSpace(data, i+1)
		j := i
		for j < len(data) && data[j] != ',' && data[j] != '}' && !isSpace(data[j]) {
			j++
		}
		c, err := parseCount(data[i:j])
		if err != nil {
			return fmt.Errorf("clat_ns bin %s: count %s is not an integer", Quote(string(key)), Quote(string(data[i:j])))
		}
		b.ns = append(b.ns, ns)
		b.count = append(b.count, c)
		i = j
	}
}

// parseCount is strconv.ParseInt(string(b), 10, 64), quicker for the
// short unsigned decimals of fio's bins, which it reads itself.
func parseCount(b []byte) (int64, error) {
	if len(b) == 0 || len(b) > 18 {
		return strconv.ParseInt(string(b), 10, 64)
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return strconv.ParseInt(string(b), 10, 64)
		}
		n = n*10 + int64(c-'0')
	}
	return n, nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// allClients is the summary entry fio appends to client_stats.
const allClients = "All clients"

// split cuts fio's stdout into notes and JSON objects and returns the
// notes and the last object, which starts at line lastLine. With lines, an
// object that starts with a line "{" ends at the first line that starts
// with '}' when the braces and brackets up to there balance, as fio prints
// its reports (nested values indented, as WatchStatus reads them); every
// other object, and every object without lines, ends where scanObject
// says. The line rule skips a status report at the speed of bytes.IndexByte
// and bytes.Count rather than scanObject's byte by byte, a third of a
// fleet replay's CPU time before it; Parse checks the last object by
// decoding it, and splits again without lines when that fails.
func split(data []byte, lines bool) (notes []string, last []byte, lastLine int, err error) {
	// The notes before the first object are made room for at once (see
	// addNote): at most one a line, and one a byte that is not a space (a
	// blank line is no note, and a flood of them reserved 16 bytes a
	// byte). A line is made a string only once it is a note.
	first := 0
	if len(data) > 0 && data[0] != '{' {
		if first = bytes.Index(data, []byte("\n{")); first < 0 {
			first = len(data)
		}
	}
	pre, blank := data[:first], 0
	for _, c := range []byte(" \t\r\n") {
		blank += bytes.Count(pre, []byte{c})
	}
	notes = make([]string, 0, min(bytes.Count(pre, []byte{'\n'})+1, len(pre)-blank))
	defer func() {
		if len(notes) == 0 {
			notes = nil
		}
	}()
	line := 1 // line number of data[pos]
	pos := 0
	for pos < len(data) {
		if data[pos] != '{' {
			end := bytes.IndexByte(data[pos:], '\n')
			if end < 0 {
				end = len(data) - pos
			}
			if b := bytes.TrimRight(data[pos:pos+end], " \t\r"); len(bytes.TrimSpace(b)) > 0 {
				notes = addNote(notes, string(b))
			}
			pos += end + 1
			line++
			continue
		}
		n, complete := 0, false
		if lines {
			// An object fio did not lay out ends the line rule: reportEnd
			// reads past it to the end of data, again for each such object
			// ("{\n }\n" 32,000 times, 160 KB, took 3.6 s: 64 MB, days).
			if n, complete = reportEnd(data[pos:]); !complete {
				lines = false
			}
		}
		if !complete {
			n, complete = scanObject(data[pos:])
		}
		obj := data[pos : pos+n]
		if !complete {
			var v fioOutput
			jerr := json.Unmarshal(nonfinite.Zero(obj), &v)
			if jerr == nil {
				jerr = errors.New("unexpected end of JSON input")
			}
			return nil, nil, 0, fmt.Errorf("truncated fio JSON output (%d bytes): %v", len(obj), jerr)
		}
		last, lastLine = obj, line
		line += bytes.Count(obj, []byte{'\n'})
		pos += n
		// The rest of the line holding the closing brace.
		if rest := bytes.IndexByte(data[pos:], '\n'); rest >= 0 {
			if b := bytes.TrimSpace(data[pos : pos+rest]); len(b) > 0 {
				notes = addNote(notes, string(b))
			}
			pos += rest + 1
			line++
		} else {
			if b := bytes.TrimSpace(data[pos:]); len(b) > 0 {
				notes = addNote(notes, string(b))
			}
			pos = len(data)
		}
	}
	return notes, last, lastLine, nil
}

// addNote appends s to notes, doubling their capacity when full: append's
// growth by a quarter at a time allocated five times the final list, 430
// MB for the 5 million lines of 10 MB of a hostile recording's stdout.
func addNote(notes []string, s string) []string {
	if len(notes) == cap(notes) {
		notes = slices.Grow(notes, len(notes)+1)
	}
	return append(notes, s)
}

// Parse reads what fio printed on stdout with --output-format=json or json+.
//
// fio's stdout is not always pure JSON. A JSON object starts with '{' at the
// start of a line; every other non-blank line (notes such as "note: both
// iodepth >= 1 and synchronous I/O engine are selected, queue depth will be
// capped at 1", "fio: terminating on signal 2", a normal-format header) is
// kept in Output.Notes. When fio printed several objects (--status-interval,
// SIGUSR1), the last one is the final report. fio 3.28–3.34 print bare nan,
// -nan, inf and -inf for undefined floats; they are read as 0. In
// client/server mode the jobs are read from client_stats, without its
// "All clients" summary entry.
//
// A job that failed keeps its errno in JobResult.Error; that is not an error
// of Parse. Parse fails when there is no JSON object, when the last one is
// truncated, or when one is not valid JSON.
func Parse(data []byte) (*Output, error) {
	// The final report is decoded the fast way, decodeFast, rather than
	// with encoding/json: a 24-drive json+ report is megabytes of latency
	// bins and percentile lists, and encoding/json's decoding was half
	// the CPU time of a fleet replay. When the fast way fails, Parse does
	// it the exact way, scanObject and encoding/json, so that what it
	// returns and its errors are theirs.
	notes, last, lastLine, err := split(data, true)
	if err == nil {
		if err := tooManyJobs(last, lastLine); err != nil {
			return nil, err
		}
	}
	var v fioOutput
	if err != nil || last == nil || decodeFast(nonfinite.Zero(last), &v) != nil {
		// Without an object, the exact split finds the same notes.
		if err != nil || last != nil {
			if notes, last, lastLine, err = split(data, false); err != nil {
				return nil, err
			}
		}
		if err := tooManyJobs(last, lastLine); err != nil {
			return nil, err
		}
		// encoding/json checks the whole report before it decodes any:
		// only a valid one can have its lists decoded afresh each time.
		clean := nonfinite.Zero(last)
		if _, at := jsonlist.Total(clean, maxJobs, "jobs", "client_stats"); at >= 0 && json.Valid(clean) {
			return nil, fmt.Errorf("fio JSON object at line %d: its lists of jobs (jobs and client_stats, each time given) hold more than the %d fio runs at most: job %d is at line %d", lastLine, maxJobs, maxJobs+1, lastLine+bytes.Count(clean[:at], []byte{'\n'}))
		}
		if last == nil {
			if len(notes) == 0 {
				return nil, errors.New("fio printed no JSON object: the output is empty")
			}
			return nil, fmt.Errorf("fio printed no JSON object; its output begins %s", Quote(notes[0]))
		}
		v = fioOutput{}
		if err := json.Unmarshal(clean, &v); err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				l := lastLine + bytes.Count(last[:min(int(se.Offset), len(last))], []byte{'\n'})
				return nil, fmt.Errorf("fio JSON output line %d: %v", l, err)
			}
			return nil, fmt.Errorf("fio JSON output line %d: %v", lastLine, err)
		}
	}
	out := &Output{Version: v.Version, Notes: notes}
	src := v.Jobs
	if len(src) == 0 && len(v.ClientStats) > 0 {
		src = v.ClientStats
	}
	for _, j := range src {
		if j.JobName == allClients {
			continue
		}
		jr := JobResult{
			Name:     j.JobName,
			GroupID:  j.GroupID,
			Hostname: j.Hostname,
			Error:    j.Error,
			// usr_cpu and sys_cpu are in % of job_runtime, which
			// group_reporting sums over the group's jobs.
			CPUSeconds: (j.UsrCPU + j.SysCPU) / 100 * float64(j.JobRuntime) / 1000,
			CPUPct:     j.UsrCPU + j.SysCPU,
			RuntimeMs:  j.JobRuntime,
		}
		var err error
		if jr.Read, err = j.Read.direction(); err == nil {
			if jr.Write, err = j.Write.direction(); err == nil {
				jr.Trim, err = j.Trim.direction()
			}
		}
		if err != nil {
			return nil, fmt.Errorf("fio JSON object at line %d: job %s: %v", lastLine, Quote(j.JobName), err)
		}
		out.Jobs = append(out.Jobs, jr)
	}
	return out, nil
}

// decodeFast is json.Unmarshal(data, v) by github.com/go-json-experiment/json
// with encoding/json's options (DefaultOptionsV1): what it decodes without
// error is what encoding/json decodes (FuzzDecodeFast checks it), in less
// than half its CPU time for a 24-drive json+ report. Its errors are not
// encoding/json's: Parse decodes again with encoding/json when it fails.
// Its main package is built anyway (chromedp uses it).
func decodeFast(data []byte, v *fioOutput) error {
	left := maxJobs
	return jsonv2.Unmarshal(data, v, jsonv1.DefaultOptionsV1(), jsonv2.WithUnmarshalers(jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, p *fioJobs) error {
		return jobsErr(jsonlist.Decode(dec, (*[]fioJob)(p), &left, elementOptions))
	})))
}

// maxJobs is the most jobs one fio runs (its REAL_MAX_JOBS).
const maxJobs = 4096

// tooManyJobs refuses a report (at line) naming more jobs than fio runs,
// with their count, before any is decoded; the bound on memory is the
// count of every list's elements whatever they name (see fioJobs).
func tooManyJobs(report []byte, line int) error {
	if n := bytes.Count(report, []byte(`"jobname"`)); n > maxJobs {
		return fmt.Errorf("fio JSON object at line %d: %d jobs, more than the %d fio runs at most", line, n, maxJobs)
	}
	return nil
}

func (d *fioDir) direction() (Direction, error) {
	r := Direction{
		IOBytes:   d.IOBytes,
		TotalIOs:  d.TotalIOs,
		RuntimeMs: d.Runtime,
		IOPS:      d.IOPS,
		BWBytes:   d.BWBytes,
		LatMeanNs: d.Lat.Mean,
		LatN:      d.Lat.N,
	}
	if bins := d.Clat.Bins; len(bins.ns) > 0 {
		r.Bins = make(map[int64]int64, len(bins.ns))
		sorted := true
		for i, ns := range bins.ns {
			r.Bins[ns] += bins.count[i]
			if i > 0 && ns <= bins.ns[i-1] {
				sorted = false
			}
		}
		if sorted {
			p := percentilesSorted(bins.ns, bins.count, percentileList)
			r.P50Ns, r.P99Ns, r.P999Ns, r.P9999Ns = p[0], p[1], p[2], p[3]
		} else {
			r.setPercentiles()
		}
	}
	return r, nil
}

// scanObject returns the length of the JSON object at the start of b and
// whether it is complete (its braces close). It only follows strings and
// nesting; Unmarshal checks the rest. It reads every byte of the objects
// reportEnd cannot delimit (json+ cells of 24 drives are about 10 MB),
// so it looks each byte up in scanClass rather than comparing it with
// each of the bytes that matter.
func scanObject(b []byte) (n int, complete bool) {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch scanClass[b[i]] {
		case scanOther:
		case scanQuote:
			for i++; i < len(b); i++ {
				if c := b[i]; c == '\\' {
					i++
				} else if c == '"' {
					break
				}
			}
		case scanOpen:
			depth++
		case scanClose:
			depth--
			if depth == 0 {
				return i + 1, true
			}
		}
	}
	return len(b), false
}

// reportEnd returns the length of the object at the start of b by fio's
// layout: b starts with the line "{" and the object ends at the first
// line that starts with '}', provided the braces and brackets up to there
// balance; complete is false when b is not laid out so (see split).
func reportEnd(b []byte) (n int, complete bool) {
	if !bytes.HasPrefix(b, []byte("{\n")) {
		return 0, false
	}
	// Looking for '}' and then the newline before it is quicker than
	// bytes.Index's looking for "\n}": fio's newlines are many more.
	for from := 2; ; {
		i := bytes.IndexByte(b[from:], '}')
		if i < 0 {
			return 0, false
		}
		if from += i + 1; b[from-2] == '\n' {
			n = from
			break
		}
	}
	obj := b[:n]
	if bytes.Count(obj, []byte{'{'})+bytes.Count(obj, []byte{'['}) != bytes.Count(obj, []byte{'}'})+bytes.Count(obj, []byte{']'}) {
		return 0, false
	}
	return n, true
}

// The classes of bytes scanObject tells apart.
const (
	scanOther = iota
	scanQuote
	scanOpen
	scanClose
)

var scanClass = func() (t [256]uint8) {
	t['"'] = scanQuote
	t['{'], t['['] = scanOpen, scanOpen
	t['}'], t[']'] = scanClose, scanClose
	return t
}()

// fio's json+ percentiles, as Direction holds them.
var percentileList = []float64{50, 99, 99.9, 99.99}

func (d *Direction) setPercentiles() {
	p := Percentiles(d.Bins, percentileList...)
	d.P50Ns, d.P99Ns, d.P999Ns, d.P9999Ns = p[0], p[1], p[2], p[3]
}

// Percentiles computes latency percentiles from json+ bins (latency in ns →
// count) the way fio does (stat.c, calc_clat_percentiles): the p-th
// percentile is the smallest bin value at which the running count reaches
// p/100 × the total count. ps must be ascending; results are in ns, 0 for
// empty bins. QoS states how close a bin's value is to the latencies
// counted in it (within 1/128).
func Percentiles(bins map[int64]int64, ps ...float64) []float64 {
	out := make([]float64, len(ps))
	if len(bins) == 0 || len(ps) == 0 {
		return out
	}
	keys := make([]int64, 0, len(bins))
	for k := range bins {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	counts := make([]int64, len(keys))
	for i, k := range keys {
		counts[i] = bins[k]
	}
	return percentilesSorted(keys, counts, ps)
}

// percentilesSorted is Percentiles for bins given as ascending latencies
// (ns) and their counts.
func percentilesSorted(ns, counts []int64, ps []float64) []float64 {
	out := make([]float64, len(ps))
	var total int64
	for _, c := range counts {
		total += c
	}
	if total == 0 {
		return out
	}
	need := make([]int64, len(ps))
	for i, p := range ps {
		need[i] = countAtPercentile(p, total)
	}
	var sum int64
	j := 0
	for i, k := range ns {
		sum += counts[i]
		for j < len(ps) && sum >= need[j] {
			out[j] = float64(k)
			j++
		}
		if j == len(ps) {
			break
		}
	}
	return out
}

// countAtPercentile is the smallest integer count c with c >= p/100 × total,
// computed exactly for the float64 p. fio compares in long double; exact
// arithmetic agrees with it on which side of an integer p/100 × total falls
// (99.9 as a float64 is slightly above 99.9, so fio's 99.9th percentile of
// 1000 samples needs all 1000), where float64 rounding could cross it.
func countAtPercentile(p float64, total int64) int64 {
	if p <= 0 {
		return 0
	}
	r := new(big.Rat).SetFloat64(p) // exact
	r.Mul(r, big.NewRat(total, 100))
	num, den := r.Num(), r.Denom()
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	if m.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q.Int64()
}
