// Package integrity judges a verify pass: fio read back every block the
// fill wrote (fiojob.VerifyPass) and checked its verify header and
// checksum. Judge takes what fio printed (stdout with its JSON, and
// stderr, where fio names each mismatch) and returns each drive's verdict;
// it does no I/O, so a live run and a replay of its recording judge the
// same bytes the same way.
package integrity

import (
	"fmt"
	"regexp"
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
	// Check is what failed: "crc32c" (the checksum) or "verify" (the
	// header: magic, length, offset or seed).
	Check string
	// Expected and Received are the checksums fio printed, when it did.
	Expected, Received string
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

// verifyLine matches fio's report of a mismatch:
//
//	crc32c: verify failed at file /dev/loop6 offset 1048576, length 131072 (requested block: ...)
//	verify: bad magic header d797, wanted acca at file /dev/loop6 offset 1056768, length 4096 (...)
var verifyLine = regexp.MustCompile(`^(\S+): (.*) at file (.+) offset (\d+), length (\d+)`)

// checksumLine matches the lines that follow a checksum mismatch:
// "       Expected CRC: da75d153".
var checksumLine = regexp.MustCompile(`^\s+(Expected|Received) CRC: (\S+)`)

// Mismatches reads every mismatch fio reported in text (its stderr, or
// stdout's lines before the JSON), by the file fio named.
func Mismatches(text string) map[string][]Mismatch {
	out := map[string][]Mismatch{}
	var last *Mismatch
	var lastFile string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if m := verifyLine.FindStringSubmatch(line); m != nil {
			if last != nil {
				out[lastFile] = append(out[lastFile], *last)
			}
			off, _ := strconv.ParseInt(m[4], 10, 64)
			n, _ := strconv.ParseInt(m[5], 10, 64)
			last, lastFile = &Mismatch{Offset: off, Length: n, Check: m[1], Fio: line}, m[3]
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
	var groups []fiojob.Result
	if perr == nil {
		groups = out.Groups()
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
		if d.Target != d.Path {
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
			r.Message = fmt.Sprintf("%s returned different data than was written: %s", d.Path, m.Describe())
			if len(r.Mismatches) > 1 {
				r.Message += fmt.Sprintf(" (%d mismatched blocks reported; fio stops a drive's pass at its first)", len(r.Mismatches))
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
		default:
			r.Verdict = Pass
			r.Message = fmt.Sprintf("%s: every block read back as written: %s bytes, %s checksum and header (offset, seed) of every %s-byte block, in %s",
				d.Path, units.Thousands(float64(r.Verified)), fiojob.FillVerify, units.Thousands(float64(fiojob.Fill(nil, 1).BS)), g.Runtime)
		}
		res[i] = r
	}
	return res
}

// Describe is the mismatch in one line: fio's words, then the LBA.
func (m Mismatch) Describe() string {
	s := fmt.Sprintf("%s: %s at offset %s (LBA %s, %d blocks of %d bytes)", m.Check, checkText(m),
		units.Thousands(float64(m.Offset)), units.Thousands(float64(m.LBA)), m.LBAs, m.LBASize)
	if m.Expected != "" || m.Received != "" {
		s += fmt.Sprintf(": expected %s %s, received %s", m.Check, orDash(m.Expected), orDash(m.Received))
	}
	return s + "; fio: " + m.Fio
}

func checkText(m Mismatch) string {
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
			said = append(said, strings.TrimSpace(l))
		}
	}
	if len(said) > 3 {
		said = append(said[:3], fmt.Sprintf("(%d more lines in the recording)", len(said)-3))
	}
	return strings.Join(said, " | ")
}
