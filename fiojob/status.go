package fiojob

import (
	"bufio"
	"fmt"
	"io"
	"time"
)

// Progress is what one of fio's --status-interval reports says, read while
// fio runs.
//
// fio's periodic reports are cumulative from the start of each job (its
// HOWTO: "running averages", not per-period figures), so Groups and Total
// hold the averages since the start; Interval holds each group's rates
// since the previous report, from the differences of the cumulative
// counts, which is what "fio's current IOPS" means on a progress line.
type Progress struct {
	// N numbers the reports from 1; the last one is fio's final report.
	N int
	// Elapsed is the longest runtime of any job in the report, as fio
	// counts it (milliseconds; after a ramp_time, from the end of the
	// ramp).
	Elapsed time.Duration
	// Output is the report, parsed as Parse parses a final report.
	Output *Output
	// Groups aggregates each reporting group (with job files from
	// Job.File, each target), in ascending groupid order, as
	// Output.Groups does; Total aggregates all jobs.
	Groups []Result
	Total  Result
	// Interval holds, for each entry of Groups, the group's rates since the
	// previous report. For the first report, and when fio restarted the
	// group's counters (the end of a ramp_time), it is the cumulative rate
	// of this report.
	Interval []Rate
}

// Rate is the I/O of one group over a span of fio's runtime.
type Rate struct {
	GroupID int
	// Span is the runtime the rates are over.
	Span time.Duration
	// ReadIOPS and WriteIOPS are I/Os per second; ReadBytesPerSec and
	// WriteBytesPerSec bytes per second.
	ReadIOPS, WriteIOPS               float64
	ReadBytesPerSec, WriteBytesPerSec float64
}

// IOPS is read + write I/Os per second.
func (r Rate) IOPS() float64 { return r.ReadIOPS + r.WriteIOPS }

// MBps is read + write bandwidth in MB/s (10^6 bytes per second).
func (r Rate) MBps() float64 { return (r.ReadBytesPerSec + r.WriteBytesPerSec) / 1e6 }

// WatchStatus reads fio's stdout from r as fio writes it
// (--output-format=json or json+ with --status-interval) and calls fn with
// each report as soon as its JSON object is complete. fio flushes each
// report when it prints it, also into a pipe.
//
// A report starts at a line beginning with '{' and ends at the next line
// beginning with '}' (fio prints nested braces indented); other lines
// (notes, "fio: terminating on signal 2") are skipped. Each report is
// parsed with Parse, so Parse of the whole output still judges the last
// report, the final one, and WatchStatus sees exactly what replay will.
//
// WatchStatus always reads r to its end, so that a writer feeding it
// through a pipe is never blocked, and returns the first error met: a
// report Parse rejects (that report is not passed to fn; later ones are),
// output that ends inside a report, or a read error.
func WatchStatus(r io.Reader, fn func(Progress)) error {
	br := bufio.NewReader(r)
	var (
		first   error
		obj     []byte
		inObj   bool
		objLine int
		line    int
		n       int
		prev    map[int]Result
	)
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	for {
		l, err := br.ReadBytes('\n')
		if len(l) > 0 {
			line++
			switch {
			case !inObj && l[0] == '{':
				inObj, obj, objLine = true, append(obj[:0], l...), line
			case inObj:
				obj = append(obj, l...)
			}
			if inObj && l[0] == '}' {
				inObj = false
				out, perr := Parse(obj)
				if perr != nil {
					keep(fmt.Errorf("fio status report at line %d: %w", objLine, perr))
				} else {
					n++
					p := progress(n, out, prev)
					prev = make(map[int]Result, len(p.Groups))
					for _, g := range p.Groups {
						prev[g.GroupID] = g
					}
					fn(p)
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			keep(err)
			_, _ = io.Copy(io.Discard, r)
			break
		}
	}
	if inObj {
		keep(fmt.Errorf("fio's output ends inside the status report that starts at line %d (%d bytes)", objLine, len(obj)))
	}
	return first
}

// progress builds report n from out; prev holds the previous report's
// groups by groupid.
func progress(n int, out *Output, prev map[int]Result) Progress {
	p := Progress{N: n, Output: out, Groups: out.Groups(), Total: out.Total()}
	p.Elapsed = p.Total.Runtime
	for _, g := range p.Groups {
		p.Interval = append(p.Interval, rateSince(g, prev[g.GroupID]))
	}
	return p
}

// rateSince is g's rate since before (a zero Result: since the start).
func rateSince(g, before Result) Rate {
	span := g.Runtime - before.Runtime
	dr, dw := g.Read, g.Write
	reset := span <= 0 ||
		dr.TotalIOs < before.Read.TotalIOs || dw.TotalIOs < before.Write.TotalIOs ||
		dr.IOBytes < before.Read.IOBytes || dw.IOBytes < before.Write.IOBytes
	if reset {
		span = g.Runtime
	} else {
		dr.TotalIOs -= before.Read.TotalIOs
		dr.IOBytes -= before.Read.IOBytes
		dw.TotalIOs -= before.Write.TotalIOs
		dw.IOBytes -= before.Write.IOBytes
	}
	r := Rate{GroupID: g.GroupID, Span: span}
	if s := span.Seconds(); s > 0 {
		r.ReadIOPS, r.ReadBytesPerSec = float64(dr.TotalIOs)/s, float64(dr.IOBytes)/s
		r.WriteIOPS, r.WriteBytesPerSec = float64(dw.TotalIOs)/s, float64(dw.IOBytes)/s
	}
	return r
}

// StatusInterval writes d for fio's --status-interval: whole seconds, or
// milliseconds.
func StatusInterval(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprint(int64(d / time.Second))
	}
	return fmt.Sprintf("%dms", max(d.Milliseconds(), 1))
}
