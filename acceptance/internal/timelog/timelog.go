// Package timelog keeps fio's per-second IOPS and bandwidth logs of a
// cell or a preparation step as one gzip file of the recording, and reads
// it back as each drive's series.
//
// fio writes one log a job and a kind (write_iops_log, write_bw_log with
// log_avg_msec): a 24-drive step of 4 jobs a drive leaves 192 files. Pack
// gathers them into one file, compressed, so that the recording lists
// and hashes one file a cell or step; Read reads it back through
// record.Open within record.MaxLog bytes, and within MaxText bytes
// decompressed.
package timelog

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
)

// Interval is the averaging window of the logs a cell and a step keep
// (fio's log_avg_msec): one sample a second.
const Interval = time.Second

// MaxText is the most bytes a packed log may decompress to: about 40
// hours of a 24-drive step of 4 jobs a drive, IOPS and bandwidth (25
// bytes a line). Read streams it into one point a drive and window, so
// what it holds is the drives' series, not the text.
const MaxText int64 = 1 << 30

// MaxPoints is the most windows a drive's series may hold: a week of
// seconds. A log naming a later time is refused.
const MaxPoints = 7 * 24 * 3600

// MaxTargets is the most drives a packed log may name.
const MaxTargets = 4096

// PointSlack is how many windows, beyond one a sample line read, all of
// a log's series together may hold: a 24-drive step of 8 hours at one
// window a second, 24 × 8 × 3600 = 691,200 windows. A real log has a
// line a job and window, so its series never hold more windows than it
// has lines; a log whose times jump ahead (a gap) may add up to this
// many empty ones, and no more: a time past the budget is refused, not
// grown into (a line "604800,1,0,0" a target at 1 ms would otherwise make
// 604,800 windows a target, 4096 targets, hundreds of GB).
const PointSlack = 24 * 8 * 3600

// header opens every packed log; its version is the number after it.
const header = "# drivequal fio logs 1"

// Kinds are the logs packed, each target's in this order.
var Kinds = []string{"iops", "bw"}

// Logged is targets, each logging its IOPS and bandwidth under
// base.driveI (fio appends _iops.N.log and _bw.N.log, N numbering the
// jobs of the whole job file from 1, clones included).
func Logged(targets []fiojob.Target, base string) []fiojob.Target {
	targets = slices.Clone(targets)
	for i := range targets {
		targets[i].IOPSLog = base + "." + fiojob.SectionName(i)
		targets[i].BWLog = targets[i].IOPSLog
	}
	return targets
}

// ReadAndPack reads the IOPS logs of job's targets (fiojob.ReadIOPSLogs:
// a step judges its steady state from them), then packs them with the
// bandwidth logs into dst; nothing when job logged nothing.
func ReadAndPack(dst string, job fiojob.Job) ([][][]fiojob.Sample, error) {
	if job.LogInterval <= 0 {
		return nil, nil
	}
	logs := fiojob.ReadIOPSLogs(job.Targets)
	_, err := Pack(dst, job.Targets, job.LogInterval)
	return logs, err
}

// Pack gathers the IOPS and bandwidth logs fio wrote for targets (their
// IOPSLog and BWLog prefixes) into dst, gzip-compressed, written
// atomically, and removes fio's files. Each log is a section "## target
// I KIND job N" followed by fio's lines as fio wrote them. wrote is false
// when fio wrote no log at all (it failed before starting): dst is not
// written.
func Pack(dst string, targets []fiojob.Target, interval time.Duration) (wrote bool, err error) {
	var text bytes.Buffer
	fmt.Fprintf(&text, "%s\n# interval_ms %d\n", header, interval.Milliseconds())
	var used []string
	for i, t := range targets {
		for _, kind := range Kinds {
			prefix := t.IOPSLog
			if kind == "bw" {
				prefix = t.BWLog
			}
			if prefix == "" {
				continue
			}
			files, err := fiojob.LogFiles(prefix, kind)
			if err != nil {
				continue // fio wrote none for this target
			}
			for j, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					return false, fmt.Errorf("packing fio's logs into %s: %w", dst, err)
				}
				fmt.Fprintf(&text, "## target %d %s job %d\n", i, kind, j+1)
				text.Write(data)
				if len(data) > 0 && data[len(data)-1] != '\n' {
					text.WriteByte('\n')
				}
				used = append(used, f)
			}
		}
	}
	if len(used) == 0 {
		return false, nil
	}
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return false, err
	}
	if _, err := zw.Write(text.Bytes()); err != nil {
		return false, err
	}
	if err := zw.Close(); err != nil {
		return false, err
	}
	if err := report.WriteFileAtomic(dst, gz.Bytes()); err != nil {
		return false, err
	}
	var errs []error
	for _, f := range used {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return true, errors.Join(errs...)
}

// Point is one window of a drive: what its jobs completed in it, read and
// write added.
type Point struct {
	// At is the end of the window from the start of the run.
	At time.Duration
	// IOPS is I/Os per second; BytesPerSec bytes per second (fio's KiB/s
	// × 1024). Either is 0 when no job logged it in the window.
	IOPS, BytesPerSec float64
}

// Logs is a packed log read back: each target's series, in the order of
// the job's targets (a target without a log has none).
type Logs struct {
	Interval time.Duration
	Targets  [][]Point
}

// Read reads the packed log rel in the recording dir, as record.Open
// allows (a regular file inside dir, within record.MaxLog bytes), and
// sums each target's jobs into one point a window. Errors name the file
// and, for a line that does not read, its line.
func Read(dir, rel string) (*Logs, error) {
	f, _, err := record.Open(dir, rel, record.MaxLog)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(io.LimitReader(f, record.MaxLog+1))
	if err != nil {
		return nil, fmt.Errorf("%s: not a gzip file: %w", f.Name(), err)
	}
	lim := &io.LimitedReader{R: zr, N: MaxText + 1}
	logs, err := parse(lim)
	if lim.N <= 0 {
		return nil, &record.RefusedError{Path: f.Name(), Why: fmt.Sprintf("decompresses to more than the %d MiB a recording's fio log may hold: it is not read", MaxText>>20)}
	}
	if err != nil {
		return nil, fmt.Errorf("%s:%w", f.Name(), err)
	}
	return logs, nil
}

// Parse reads a packed log's text (decompressed) as Read does.
func Parse(r io.Reader) (*Logs, error) {
	logs, err := parse(r)
	if err != nil {
		return nil, fmt.Errorf("line %w", err)
	}
	return logs, nil
}

func parse(r io.Reader) (*Logs, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	logs := &Logs{}
	target, kind, line := -1, "", 0
	points, samples := 0, 0 // windows held by all targets; sample lines read
	for sc.Scan() {
		line++
		text := sc.Bytes()
		if len(text) == 0 {
			continue
		}
		if text[0] == '#' {
			s := string(text)
			switch {
			case line == 1 && s != header:
				return nil, fmt.Errorf("%d: %q is not a drivequal fio log's first line (%q)", line, s, header)
			case strings.HasPrefix(s, "# interval_ms "):
				ms, err := strconv.Atoi(strings.TrimPrefix(s, "# interval_ms "))
				if err != nil || ms <= 0 || ms > 3600_000 {
					return nil, fmt.Errorf("%d: interval %q is not a number of milliseconds from 1 to 3600000", line, strings.TrimPrefix(s, "# interval_ms "))
				}
				logs.Interval = time.Duration(ms) * time.Millisecond
			case strings.HasPrefix(s, "## target "):
				var job int
				if n, err := fmt.Sscanf(s, "## target %d %s job %d", &target, &kind, &job); n != 3 || err != nil ||
					target < 0 || target >= MaxTargets || (kind != "iops" && kind != "bw") {
					return nil, fmt.Errorf("%d: %q is not a section \"## target I iops|bw job N\" (I below %d)", line, s, MaxTargets)
				}
				for len(logs.Targets) <= target {
					logs.Targets = append(logs.Targets, nil)
				}
			}
			continue
		}
		if line == 1 {
			return nil, fmt.Errorf("1: not a drivequal fio log (its first line is not %q)", header)
		}
		if target < 0 || logs.Interval <= 0 {
			return nil, fmt.Errorf("%d: a sample before its interval and section", line)
		}
		at, v, err := sample(text)
		if err != nil {
			return nil, fmt.Errorf("%d: %w", line, err)
		}
		k := int((at + logs.Interval/2) / logs.Interval)
		if k > MaxPoints {
			return nil, fmt.Errorf("%d: time %s is past the %d windows a drive's log may hold", line, at, MaxPoints)
		}
		samples++
		pts := logs.Targets[target]
		if grow := k + 1 - len(pts); grow > 0 {
			if points+grow > samples+PointSlack {
				return nil, fmt.Errorf("%d: time %s leaves a gap of %d windows after %d: the log's series would hold %d windows for %d sample lines, past the %d a log may add beyond one a line; the log is not read", line, at, grow, len(pts), points+grow, samples, PointSlack)
			}
			points += grow
		}
		for len(pts) <= k {
			pts = append(pts, Point{At: time.Duration(len(pts)) * logs.Interval})
		}
		if kind == "iops" {
			pts[k].IOPS += v
		} else {
			pts[k].BytesPerSec += v * 1024
		}
		logs.Targets[target] = pts
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%d: %w", line+1, err)
	}
	if line == 0 {
		return nil, fmt.Errorf("1: empty: not a drivequal fio log")
	}
	for i, pts := range logs.Targets {
		if len(pts) > 0 {
			logs.Targets[i] = pts[1:] // window 0 ends at the start: nothing completes in it
		}
	}
	return logs, nil
}

// sample reads a fio log line's time (ms) and value.
func sample(line []byte) (time.Duration, float64, error) {
	f := strings.SplitN(string(line), ",", 4)
	if len(f) < 4 {
		return 0, 0, fmt.Errorf("%q has %d fields, want at least 4 (time, value, direction, block size)", line, len(f))
	}
	ms, err := strconv.ParseUint(strings.TrimSpace(f[0]), 10, 40)
	if err != nil {
		return 0, 0, fmt.Errorf("time %q is not a number of milliseconds", strings.TrimSpace(f[0]))
	}
	v, err := strconv.ParseUint(strings.TrimSpace(f[1]), 10, 53)
	if err != nil {
		return 0, 0, fmt.Errorf("value %q is not a count a second", strings.TrimSpace(f[1]))
	}
	if d := strings.TrimSpace(f[2]); d != "0" && d != "1" && d != "2" {
		return 0, 0, fmt.Errorf("direction %q is not 0 (read), 1 (write) or 2 (trim)", d)
	}
	return time.Duration(ms) * time.Millisecond, float64(v), nil
}
