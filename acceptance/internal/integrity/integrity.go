// Package integrity judges a verify pass, in which fio read back every
// block the fill wrote and compared it with what was written.
//
// fio (fiojob.VerifyPass) compares every byte with the fill's pattern
// (older recordings: checked its verify header and checksum). Judge takes
// what fio printed (stdout with its JSON, and stderr, where fio names each
// mismatch) and returns each drive's verdict; it does no I/O, so a live
// run and a replay of its recording judge the same bytes the same way.
package integrity

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/units"
	"github.com/drivequal/drivequal/fiojob"
)

// Verdicts, as report.Pass, report.Fail and report.Inconclusive.
const (
	Pass         = "pass"
	Fail         = "fail"
	Inconclusive = "inconclusive"
)

// Drive is one target of the verify pass, in the order of the job's
// targets (fio's reporting group i).
type Drive struct {
	Path string // the drive as given
	// Target is the filename fio read (the resolved path), which fio names
	// in its verify errors.
	Target string
	// Bytes is what the pass must read: the size the fill wrote.
	Bytes int64
	// LBASize is the drive's logical block size in bytes; 0 (a regular
	// file) counts LBAs of 512 bytes.
	LBASize int
	// Method is the fio verify= the pass checked with: "" or "pattern"
	// (every byte compared with the fill's pattern), or "crc32c" in a
	// recording of an older drivequal (fio's header and checksum), so
	// that a replay says what that pass checked.
	Method string
}

// Mismatch is one block fio found not to hold what was written.
type Mismatch struct {
	// Offset and Length are the block's byte offset on the drive and its
	// length, as fio reported them.
	Offset, Length int64
	// LBA is the first logical block of the block, LBAs how many it spans,
	// LBASize their size in bytes.
	LBA, LBAs int64
	LBASize   int
	// Check is what failed: "pattern" (a byte of the block differs from
	// the fill's pattern), or in a recording of an older drivequal
	// "crc32c" (the checksum) or "verify" (the header: magic, length,
	// offset).
	Check string
	// Expected and Received are the checksums fio printed, or for a
	// pattern the byte it wanted and the byte it read, in hex.
	Expected, Received string
	// Byte (a pattern) is the first differing byte's offset in the block;
	// -1 when fio did not say.
	Byte int64
	// Returned (a pattern) says what the block held instead: Zeros,
	// EarlierWrite, OtherOffset or OtherData.
	Returned string
	// Fio is fio's report of the mismatch, its lines joined with " | ".
	Fio string
}

// Result is one drive's verdict.
type Result struct {
	Drive   string
	Verdict string
	// Message is the verdict in one line: what was verified, or the first
	// mismatch in fio's words with its LBA.
	Message string
	// Verified is the bytes fio read and checked.
	Verified   int64
	Mismatches []Mismatch
}

// What a block returned instead of the fill's pattern (Mismatch.Returned).
const (
	Zeros        = "zeros"
	EarlierWrite = "data of an earlier write"
	OtherOffset  = "data written for another offset"
	OtherData    = "other data"
)

// verifyLine matches fio's report of a mismatch:
//
//	crc32c: verify failed at file /dev/loop6 offset 1048576, length 131072 (requested block: ...)
//	verify: bad magic header d797, wanted acca at file /dev/loop6 offset 1056768, length 4096 (...)
//	pattern: verify failed at file /dev/loop6 offset 0, length 825248844 (requested block: offset=0, length=131072, flags=8)
//
// For a pattern, fio 3.33 prints as length whatever the block's first
// bytes read as a header; the requested block's length is the block's.
var verifyLine = regexp.MustCompile(`^(\S+): (.*) at file (.+) offset (\d+), length (\d+)`)

// requestedLine is the requested block at the end of verifyLine.
var requestedLine = regexp.MustCompile(`\(requested block: offset=(\d+), length=(\d+)`)

// patternLines match what fio prints before a pattern mismatch:
//
//	fio: got pattern 'ef', wanted 'ee'. Bad bits 1
//	fio: bad pattern block offset 15
var (
	gotPattern  = regexp.MustCompile(`^fio: got pattern '([0-9a-f]+)', wanted '([0-9a-f]+)'`)
	patternByte = regexp.MustCompile(`^fio: bad pattern block offset (\d+)`)
)

// checksumLine matches the lines that follow a checksum mismatch:
// "       Expected CRC: da75d153".
var checksumLine = regexp.MustCompile(`^\s+(Expected|Received) CRC: (\S+)`)

// ioErrorLine matches the line fio 3.33 prints (io_u.c, log_err in
// __io_u_log_error) as an I/O of a job fails:
//
//	fio: io_u error on file /dev/loop0: Input/output error: read offset=4096, buflen=4096
var ioErrorLine = regexp.MustCompile(`^fio: io_u error on file (.+?): (.+): (read|write|trim|sync|datasync|sync_file_range|wait) offset=(\d+), buflen=(\d+)`)

// IOErrors reads every I/O error fio reported in text (its stderr), by
// the file fio named: one line each, as fio printed it. An I/O that
// failed because fio was being stopped (interrupted, canceled) is not
// the drive's error, and is left out.
func IOErrors(text string) map[string][]string {
	out := map[string][]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		m := ioErrorLine.FindStringSubmatch(line)
		if m == nil || m[2] == "Interrupted system call" || m[2] == "Operation canceled" {
			continue
		}
		out[m[1]] = append(out[m[1]], strings.TrimPrefix(line, "fio: "))
	}
	return out
}

// ioErrsOf is the I/O errors of errs fio named on drive d: by its target,
// and by its path unless that is another of the pass's targets.
func ioErrsOf(errs map[string][]string, d Drive, targets map[string]bool) []string {
	e := errs[d.Target]
	if d.Target != d.Path && !targets[d.Path] {
		e = append(slices.Clone(e), errs[d.Path]...)
	}
	return e
}

// Mismatches reads every mismatch fio reported in text (its stderr, or
// stdout's lines before the JSON), by the file fio named.
func Mismatches(text string) map[string][]Mismatch {
	out := map[string][]Mismatch{}
	var last *Mismatch
	var lastFile string
	// The pattern lines fio printed before the next mismatch.
	var got, wanted, before string
	at := int64(-1)
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if m := gotPattern.FindStringSubmatch(line); m != nil {
			got, wanted, before = m[1], m[2], strings.TrimPrefix(line, "fio: ")
			continue
		}
		if m := patternByte.FindStringSubmatch(line); m != nil {
			at, _ = strconv.ParseInt(m[1], 10, 64)
			before += " | " + strings.TrimPrefix(line, "fio: ")
			continue
		}
		if m := verifyLine.FindStringSubmatch(line); m != nil {
			if last != nil {
				out[lastFile] = append(out[lastFile], *last)
			}
			off, _ := strconv.ParseInt(m[4], 10, 64)
			n, _ := strconv.ParseInt(m[5], 10, 64)
			if r := requestedLine.FindStringSubmatch(line); r != nil {
				n, _ = strconv.ParseInt(r[2], 10, 64)
			}
			last, lastFile = &Mismatch{Offset: off, Length: n, Check: m[1], Fio: line, Byte: -1}, m[3]
			if m[1] == "pattern" {
				last.Expected, last.Received, last.Byte = wanted, got, at
				last.Returned = returned(at, got)
				if before != "" {
					last.Fio = before + " | " + line
				}
			}
			got, wanted, before, at = "", "", "", -1
			continue
		}
		if m := checksumLine.FindStringSubmatch(line); m != nil && last != nil {
			if m[1] == "Expected" {
				last.Expected = m[2]
			} else {
				last.Received = m[2]
			}
			last.Fio += " | " + strings.TrimSpace(line)
			continue
		}
		if last != nil {
			out[lastFile] = append(out[lastFile], *last)
			last = nil
		}
	}
	if last != nil {
		out[lastFile] = append(out[lastFile], *last)
	}
	return out
}

// returned says what a block held from the first byte that differs from
// the fill's pattern (fiojob.FillPattern: magic, the fill's id, the
// block's offset, repeated) and what fio read there: a block that differs
// from its first byte and read 00 there is zeros; one that holds the magic
// and differs in the id, another fill's block; one that differs in the
// offset, a block written for another offset; anything else, other data.
func returned(at int64, got string) string {
	switch {
	case at == 0 && strings.Trim(got, "0") == "" && got != "":
		return Zeros
	case at >= 8 && at < 8+fiojob.PatternIDBytes:
		return EarlierWrite
	case at >= 8+fiojob.PatternIDBytes && at < fiojob.PatternBytes:
		return OtherOffset
	}
	return OtherData
}

// Judge judges the verify pass of drives from fio's stdout and stderr.
// runErr is how fio ended when it failed ("" when it exited 0), and
// interrupted says the run was stopped (Ctrl-C, the -timeout): a drive not
// read to the end then proves nothing either way. A drive passes only when
// fio read every byte the fill wrote without a mismatch or an error.
func Judge(stdout, stderr []byte, runErr string, interrupted bool, drives []Drive) []Result {
	out, perr := fiojob.Parse(stdout)
	text := string(stderr)
	if out != nil {
		text = strings.Join(out.Notes, "\n") + "\n" + text
	}
	found := Mismatches(text)
	ioErrs := IOErrors(text)
	var groups []fiojob.Result
	if perr == nil {
		groups = out.Groups()
	}
	targets := map[string]bool{}
	for _, d := range drives {
		targets[d.Target] = true
	}
	res := make([]Result, len(drives))
	for i, d := range drives {
		r := Result{Drive: d.Path}
		lbaSize := d.LBASize
		if lbaSize <= 0 {
			lbaSize = 512
		}
		for _, m := range found[d.Target] {
			m.LBASize = lbaSize
			m.LBA, m.LBAs = m.Offset/int64(lbaSize), (m.Length+int64(lbaSize)-1)/int64(lbaSize)
			r.Mismatches = append(r.Mismatches, m)
		}
		if d.Target != d.Path && !targets[d.Path] {
			// fio names a file by its target; the drive's path is looked
			// up too unless it is another drive's target (a resume that
			// renamed swapped drives: that drive's mismatches are its own).
			for _, m := range found[d.Path] {
				m.LBASize = lbaSize
				m.LBA, m.LBAs = m.Offset/int64(lbaSize), (m.Length+int64(lbaSize)-1)/int64(lbaSize)
				r.Mismatches = append(r.Mismatches, m)
			}
		}
		var g *fiojob.Result
		if i < len(groups) && len(groups) == len(drives) {
			g = &groups[i]
			r.Verified = g.Read.IOBytes
		}
		switch {
		case len(r.Mismatches) > 0:
			m := r.Mismatches[0]
			r.Verdict = Fail
			if m.Returned != "" {
				r.Message = fmt.Sprintf("%s returned %s, not what this run wrote: %s", d.Path, m.Returned, m.Describe())
			} else {
				r.Message = fmt.Sprintf("%s returned different data than was written: %s", d.Path, m.Describe())
			}
			if len(r.Mismatches) > 1 {
				r.Message += fmt.Sprintf(" (%d mismatched blocks reported; each read-back job of the drive stops at its first, after the blocks it had in flight)", len(r.Mismatches))
			}
		case interrupted && len(ioErrsOf(ioErrs, d, targets)) > 0:
			// fio named an I/O error reading the drive back before it
			// was stopped (a kill mid-pass leaves only its streamed
			// stderr): the drive failed its read-back; a second pass
			// that happens to read is no second chance.
			e := ioErrsOf(ioErrs, d, targets)
			r.Verdict = Fail
			r.Message = fmt.Sprintf("%s: the verify pass failed before it was stopped: fio printed %s", d.Path, fiojob.Clip(e[0]))
			if len(e) > 1 {
				r.Message += fmt.Sprintf(" (%d I/O errors reported)", len(e))
			}
		case interrupted && (g == nil || r.Verified < d.Bytes || len(g.Errors) > 0):
			r.Verdict = Inconclusive
			r.Message = fmt.Sprintf("%s: the verify pass was stopped after %s of %s bytes", d.Path,
				units.Thousands(float64(r.Verified)), units.Thousands(float64(d.Bytes)))
		case perr != nil:
			r.Verdict = Fail
			r.Message = fmt.Sprintf("%s: the verify pass's fio output does not parse: %v", d.Path, perr)
			if runErr != "" {
				r.Message += "; fio: " + runErr
			}
		case g == nil:
			r.Verdict = Fail
			r.Message = fmt.Sprintf("%s: fio reported %d drive groups for a verify pass on %d drives", d.Path, len(groups), len(drives))
		case len(g.Errors) > 0:
			r.Verdict = Fail
			r.Message = fmt.Sprintf("%s: the verify pass failed: fio reported %s", d.Path, strings.Join(g.Errors, "; "))
			if said := fioSaid(out.Notes, stderr); said != "" {
				r.Message += "; fio printed: " + said
			}
		case r.Verified < d.Bytes:
			r.Verdict = Fail
			r.Message = fmt.Sprintf("%s: the verify pass read %s of the %s bytes written", d.Path,
				units.Thousands(float64(r.Verified)), units.Thousands(float64(d.Bytes)))
			if runErr != "" {
				r.Message += "; fio: " + runErr
			}
		case d.Method != "" && d.Method != fiojob.FillVerify:
			r.Verdict = Pass
			r.Message = fmt.Sprintf("%s: every block read back as written: %s bytes, %s checksum and header (offset, seed) of every %s-byte block, in %s",
				d.Path, units.Thousands(float64(r.Verified)), d.Method, units.Thousands(float64(fiojob.Fill(nil, 1, 0).BS)), g.Runtime)
		default:
			r.Verdict = Pass
			r.Message = fmt.Sprintf("%s: every block read back as written: %s bytes, every byte compared with this run's fill pattern (its id and the block's offset), in %s",
				d.Path, units.Thousands(float64(r.Verified)), g.Runtime)
		}
		res[i] = r
	}
	return res
}

// Describe is the mismatch in one line: fio's words, then the LBA.
func (m Mismatch) Describe() string {
	s := fmt.Sprintf("%s: %s at offset %s (LBA %s, %d blocks of %d bytes)", m.Check, checkText(m),
		units.Thousands(float64(m.Offset)), units.Thousands(float64(m.LBA)), m.LBAs, m.LBASize)
	switch {
	case m.Check == "pattern" && m.Byte >= 0:
		s += fmt.Sprintf(": byte %d of the block: expected %s, received %s", m.Byte, orDash(m.Expected), orDash(m.Received))
	case m.Expected != "" || m.Received != "":
		s += fmt.Sprintf(": expected %s %s, received %s", m.Check, orDash(m.Expected), orDash(m.Received))
	}
	return s + "; fio: " + m.Fio
}

func checkText(m Mismatch) string {
	if m.Check == "pattern" {
		return "verify failed"
	}
	rest := strings.TrimPrefix(m.Fio, m.Check+": ")
	if i := strings.Index(rest, " at file "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// fioSaid is fio's error lines ("fio: pid=..., err=84/...") from its notes
// and stderr, at most three.
func fioSaid(notes []string, stderr []byte) string {
	var said []string
	for _, l := range append(append([]string(nil), notes...), strings.Split(string(stderr), "\n")...) {
		if strings.HasPrefix(l, "fio:") || strings.Contains(l, "err=") {
			said = append(said, fiojob.Clip(strings.TrimSpace(l)))
		}
	}
	if len(said) > 3 {
		said = append(said[:3], fmt.Sprintf("(%d more lines in the recording)", len(said)-3))
	}
	return strings.Join(said, " | ")
}
