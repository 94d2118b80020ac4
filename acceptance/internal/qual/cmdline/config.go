// Package cmdline validates the suite's command line into the
// configuration a run is set up from.
//
// Flags are the flags as given; Validate checks each (files, directories,
// drives, the replay and record directories, go test's -run and -skip
// patterns, which Config.Selected matches as go test does) and returns
// every problem found, each naming the flag and the fix.
package cmdline

import (
	"errors"
	"flag"
	"fmt"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Flags are the suite's flags as given, before validation.
type Flags struct {
	Spec           string
	Drives         string
	Capacity       string
	Destructive    bool
	WipeSignatures bool
	Runtime        string
	Precondition   string
	Scaling        string
	Replay         string
	// Replays holds every directory of -replay=DIR1,DIR2,...; with more
	// than one, the runs are judged as one fleet (Replay is then "").
	Replays []string
	Record  string
	Report  string
	DryRun  bool
	// Baseline is -baseline=DIR[,DIR...]: recorded runs every cell of
	// this run is compared with.
	Baseline string
	// Resume continues the run recorded in -record (see resume.go).
	Resume bool
	// AnyModel judges NVMe drives whose model matches none of the spec's
	// models against it all the same (the report says so).
	AnyModel bool
	// Overwrite starts a new run in a -record directory that holds an
	// unfinished one (refused without it).
	Overwrite bool
	// PurgeAfter purges every drive once more at the end of the run and
	// reads it back (TestPurge).
	PurgeAfter bool
	// PowerCut and PowerRestore are the commands that cut and restore a
	// drive's power for TestPowerLoss (see PowerCommand).
	PowerCut, PowerRestore string
	// PowerCutHost says -power-cut cuts the whole host: each cycle ends
	// the run, and the same command line with -resume judges it after
	// the reboot.
	PowerCutHost bool
	// Firmware and FirmwareBack are the images of TestFirmware: the
	// activation under load, and the step back.
	Firmware, FirmwareBack string
	// Set names the flags given on the command line (see Given); a replay
	// refuses the ones that only a live run uses, and judges with the
	// recorded spec unless -spec is among them.
	Set map[string]bool
}

// Given records which flags of fs were set on the command line.
func (f *Flags) Given(fs *flag.FlagSet) {
	f.Set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.Set[fl.Name] = true })
}

// liveOnly are the flags that change how drives are measured, which a
// replay cannot honour: it judges what was recorded.
var liveOnly = []string{"record", "capacity", "destructive", "wipe-signatures", "runtime", "precondition", "scaling", "resume", "any-model", "overwrite", "purge-after", "power-cut", "power-restore", "power-cut-host", "firmware", "firmware-back"}

// Register defines the flags of DESIGN.md on fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Spec, "spec", "solidigm-d7-ps1010", "built-in spec `NAME` or path to a spec TOML file")
	fs.StringVar(&f.Drives, "drives", "", "comma-separated `LIST` of block devices or regular files; empty: replay")
	fs.StringVar(&f.Capacity, "capacity", "", "the spec capacity `NAME` the drives are (default: matched from each drive's size)")
	fs.BoolVar(&f.Destructive, "destructive", false, "allow writing to the drives (everything on them is destroyed)")
	fs.BoolVar(&f.WipeSignatures, "wipe-signatures", false, "also allow drives that carry a partition table or a file-system, RAID or LVM signature")
	fs.StringVar(&f.Runtime, "runtime", "", "override each workload's measured `DURATION` (e.g. 2s for a smoke run)")
	fs.StringVar(&f.Precondition, "precondition", plan.Full, "preconditioning: full (as the spec says), quick (one capped pass) or none")
	fs.StringVar(&f.Scaling, "scaling", "", "comma-separated drive `COUNTS` for TestScaling (default: the spec's, capped at the drives given)")
	fs.StringVar(&f.Replay, "replay", "", "judge recorded fio outputs in `DIR` instead of running fio (default with no -drives: fixtures/<spec>); DIR1,DIR2,... judges several hosts' runs as one fleet")
	fs.StringVar(&f.Record, "record", "", "`DIR` for raw fio outputs (default: <report>/raw)")
	fs.StringVar(&f.Report, "report", "", "`DIR` for results.json, summary.md and charts (default: report/ at the module root)")
	fs.BoolVar(&f.DryRun, "dry-run", false, "print the plan, the fio job files and the time estimate; write nothing")
	fs.BoolVar(&f.Resume, "resume", false, "continue the interrupted run recorded in -record: keep the cells recorded whole, judge them again, and measure the rest after rebuilding the drives' state")
	fs.BoolVar(&f.AnyModel, "any-model", false, "judge NVMe drives whose model matches none of the spec's models against it anyway (the report says so)")
	fs.BoolVar(&f.Overwrite, "overwrite", false, "start a new run in a -record directory that holds an unfinished run (refused without it: -resume continues that run)")
	fs.BoolVar(&f.PurgeAfter, "purge-after", false, "at the end of the run, purge every drive once more (the decommissioning purge) and read it back: no block of the run's fill may remain (TestPurge; the spec's [purge] verify says sample or full)")
	fs.StringVar(&f.PowerCut, "power-cut", "", "`CMD` (run by sh) that cuts one drive's power for TestPowerLoss, run with the drive's DQ_PATH, DQ_SERIAL, DQ_NAME (and DQ_SLOT, when named) in its environment, {path}, {serial}, {slot} and {name} standing for the quoted variables (needs -destructive and -power-restore)")
	fs.StringVar(&f.PowerRestore, "power-restore", "", "`CMD` (run by sh) that restores the drive's power after -power-cut, with the same placeholders")
	fs.BoolVar(&f.PowerCutHost, "power-cut-host", false, "-power-cut cuts the whole host's power, not one drive's: the run saves each cycle's ledger of acknowledged writes before the cut, and the same command line with -resume, after the reboot, judges it (needs -power-cut and -destructive; refused with -power-restore)")
	fs.StringVar(&f.Firmware, "firmware", "", "download and activate the firmware image `FILE` on every drive under a 4 KiB random read/write load, as the spec's [firmware] says (TestFirmware/<drive>/activate): the I/O stall against max_stall, the new revision running, the identity kept, every acknowledged write read back; needs -destructive")
	fs.StringVar(&f.FirmwareBack, "firmware-back", "", "after -firmware, download and activate the firmware image `FILE` (the first revision's) the same way (TestFirmware/<drive>/back)")
	fs.StringVar(&f.Baseline, "baseline", "", "compare every cell with the same cell of the runs recorded in `DIR[,DIR...]` (e.g. the current firmware's or another vendor's), judged as a replay; a median drop beyond the spec's [baseline] tolerance fails as regressed")
}

// Config is the validated command line.
type Config struct {
	Spec           string
	Drives         []string
	Capacity       string
	Destructive    bool
	WipeSignatures bool
	Runtime        time.Duration // 0: the spec's
	Precondition   string
	Scaling        []int // nil: the spec's
	Replay         string
	// Replays holds every directory of -replay=DIR1,DIR2,...; with more
	// than one, the runs are judged as one fleet (Replay is then "").
	Replays []string
	Record  string
	Report  string
	DryRun  bool
	// Baselines holds every directory of -baseline=DIR1,DIR2,...: the
	// recorded runs this run is compared with; none without -baseline.
	Baselines []string
	// Resume continues the run recorded in Record (see resume.go).
	Resume bool
	// AnyModel judges NVMe drives of a model the spec does not name.
	AnyModel bool
	// Overwrite lets a new run replace an unfinished one recorded in
	// Record.
	Overwrite bool
	// PurgeAfter purges every drive at the end and reads it back.
	PurgeAfter bool
	// PowerCut and PowerRestore are -power-cut and -power-restore: the
	// commands that cut and restore one drive's power, placeholders
	// unexpanded ("" without them).
	PowerCut, PowerRestore string
	// PowerCutHost says PowerCut cuts the whole host (see Flags).
	PowerCutHost bool
	// Firmware and FirmwareBack are the absolute paths of -firmware and
	// -firmware-back's images ("" when not given).
	Firmware, FirmwareBack string
	// SpecGiven says -spec was given: a replay then judges with it rather
	// than with the spec recorded in run.json.
	SpecGiven bool
	// Root is the module root, where relative defaults are anchored.
	Root string
	// Run and Skip are go test's -run and -skip patterns: the plan covers
	// the cells they select and no other.
	Run, Skip string
}

// Selected reports whether go test's -run and -skip select test (a cell's
// full name, "TestSingleDrive/1.92TB/4KB_Random_Read"), exactly as the
// testing package matches them (testing/match.go): a pattern is split into
// alternatives at each "|" and into levels at each "/" that is outside
// brackets and parentheses; a name is run when one alternative matches
// its levels, and skipped when the first alternative that matches it
// has no more levels than the name.
func (c *Config) Selected(test string) bool {
	name := strings.Split(test, "/")
	if c.Run != "" {
		if ok, _ := splitPattern(c.Run).match(name); !ok {
			return false
		}
	}
	if c.Skip == "" {
		return true
	}
	skip, partial := splitPattern(c.Skip).match(name)
	return !skip || partial
}

// AlsoRun returns a -run pattern that selects what pattern selects and
// the top-level test named test: pattern with a top-level alternative
// "^test$" added. A pattern whose brackets or parentheses are still open
// at its end (where a "|" would not start an alternative) is returned as
// it is.
func AlsoRun(pattern, test string) string {
	if pattern == "" {
		return ""
	}
	cs, cp, escaped := 0, 0, false
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '[':
			cs++
		case ']':
			cs = max(cs-1, 0)
		case '(':
			if cs == 0 {
				cp++
			}
		case ')':
			if cs == 0 {
				cp--
			}
		case '\\':
			i++
			escaped = i == len(pattern)
		}
	}
	if cs != 0 || cp != 0 || escaped {
		return pattern
	}
	return pattern + "|^" + regexp.QuoteMeta(test) + "$"
}

// alternatives is a -run or -skip pattern split as go test splits it: one
// list of per-level regexps per top-level alternative.
type alternatives [][]*regexp.Regexp

// match is testing's alternationMatch.matches: the first alternative whose
// levels match name's (a level the name does not reach is not checked)
// decides; partial says that alternative has more levels than name.
func (a alternatives) match(name []string) (ok, partial bool) {
	for _, levels := range a {
		ok = true
		for i, re := range levels {
			if i >= len(name) {
				break
			}
			if !re.MatchString(name[i]) {
				ok = false
				break
			}
		}
		if ok {
			return true, len(name) < len(levels)
		}
	}
	return false, false
}

// splitPattern splits a -run or -skip pattern as testing's splitRegexp
// does, character for character, and rewrites each element as testing
// does (a space is "_"). An element that does not compile matches nothing
// (go test has refused it already).
func splitPattern(s string) alternatives {
	var out alternatives
	var levels []string
	cs, cp := 0, 0
	for i := 0; i < len(s); {
		switch s[i] {
		case '[':
			cs++
		case ']':
			if cs--; cs < 0 { // an unmatched ']' is legal
				cs = 0
			}
		case '(':
			if cs == 0 {
				cp++
			}
		case ')':
			if cs == 0 {
				cp--
			}
		case '\\':
			i++
		case '/', '|':
			if cs == 0 && cp == 0 {
				levels = append(levels, s[:i])
				if s[i] == '|' {
					out = append(out, compileLevels(levels))
					levels = nil
				}
				s = s[i+1:]
				i = 0
				continue
			}
		}
		i++
	}
	return append(out, compileLevels(append(levels, s)))
}

func compileLevels(levels []string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(levels))
	for i, e := range levels {
		if re, err := regexp.Compile(rewriteName(e)); err == nil {
			out[i] = re
		} else {
			out[i] = regexp.MustCompile(`\A\z.`)
		}
	}
	return out
}

// rewriteName is testing's rewrite: white space becomes "_" and a
// non-printable rune its Go escape, in test names and patterns alike.
func rewriteName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case isSpace(r):
			b.WriteByte('_')
		case !strconv.IsPrint(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isSpace is testing's isSpace (not unicode.IsSpace).
func isSpace(r rune) bool {
	if r < 0x2000 {
		switch r {
		case '\t', '\n', '\v', '\f', '\r', ' ', 0x85, 0xA0, 0x1680:
			return true
		}
		return false
	}
	if r <= 0x200a {
		return true
	}
	switch r {
	case 0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
		return true
	}
	return false
}

// Live reports whether the run drives fio on real targets.
func (c *Config) Live() bool { return len(c.Drives) > 0 }

// Validate checks every flag and returns the config with defaults filled in,
// and every problem found, each naming its flag and the fix.
func (f *Flags) Validate(root string) (*Config, []error) {
	var errs []error
	failed := map[string]bool{}
	bad := func(flagName, format string, args ...any) {
		failed[flagName] = true
		errs = append(errs, fmt.Errorf("parsing -%s: %s", flagName, fmt.Sprintf(format, args...)))
	}
	c := &Config{
		Spec:           f.Spec,
		Capacity:       f.Capacity,
		Destructive:    f.Destructive,
		WipeSignatures: f.WipeSignatures,
		Precondition:   f.Precondition,
		DryRun:         f.DryRun,
		Resume:         f.Resume,
		AnyModel:       f.AnyModel,
		Overwrite:      f.Overwrite,
		PurgeAfter:     f.PurgeAfter,
		PowerCut:       strings.TrimSpace(f.PowerCut),
		PowerRestore:   strings.TrimSpace(f.PowerRestore),
		PowerCutHost:   f.PowerCutHost,
		SpecGiven:      f.Set["spec"],
		Root:           root,
	}
	if strings.ContainsRune(c.Spec, filepath.Separator) || strings.HasSuffix(c.Spec, ".toml") {
		c.Spec = resolveInput(root, c.Spec)
	}
	for _, p := range powerProblems(f) {
		bad(p[0], "%s", p[1])
	}
	c.Firmware, c.FirmwareBack = f.firmwareImages(root, bad)
	if f.Resume && f.Overwrite {
		bad("overwrite", "given with -resume: -resume continues the run recorded in -record, -overwrite starts a new one there; give one of them")
	}
	if strings.TrimSpace(f.Spec) == "" {
		bad("spec", "empty: give a built-in spec name (e.g. solidigm-d7-ps1010) or the path of a TOML file")
	}
	if why := liveRefusal(goos); f.Drives != "" && why != "" {
		bad("drives", "%s", why)
	} else if f.Drives != "" {
		for i, d := range strings.Split(f.Drives, ",") {
			d = strings.TrimSpace(d)
			if d == "" {
				bad("drives", "entry %d is empty in %q: separate paths with single commas", i+1, f.Drives)
				continue
			}
			if !strings.ContainsAny(d, "*?[") {
				c.Drives = append(c.Drives, resolveInput(root, d))
				continue
			}
			paths, err := expandGlob(resolveInput(root, d))
			if err != nil {
				bad("drives", "%v", err)
				continue
			}
			c.Drives = append(c.Drives, paths...)
		}
	}
	if f.Runtime != "" {
		d, err := time.ParseDuration(f.Runtime)
		switch {
		case err != nil:
			bad("runtime", "%q is not a duration: use a Go duration such as 2s, 90s or 5m", f.Runtime)
		case d <= 0:
			bad("runtime", "%s is not positive: use a duration above zero such as 2s", f.Runtime)
		case d < time.Second:
			bad("runtime", "%s is under one second, fio's resolution: use at least 1s", f.Runtime)
		default:
			c.Runtime = d
		}
	}
	switch f.Precondition {
	case plan.Full, plan.Quick, plan.None:
	default:
		bad("precondition", "%q is not a mode: use full, quick or none", f.Precondition)
	}
	if f.Scaling != "" {
		prev := 0
		for _, s := range strings.Split(f.Scaling, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 1 {
				bad("scaling", "%q is not a drive count: use positive whole numbers such as 1,2,4", s)
				break
			}
			if n <= prev {
				bad("scaling", "counts must be strictly ascending, %d follows %d: write them in order such as 1,2,4", n, prev)
				break
			}
			c.Scaling = append(c.Scaling, n)
			prev = n
		}
	}
	if f.Drives == "" {
		for _, name := range liveOnly {
			if failed[name] || !f.Set[name] && !(name == "record" && f.Record != "") && !(name == "capacity" && f.Capacity != "") {
				continue // one problem per flag
			}
			bad(name, "%s", replayRefusal(name))
		}
	}
	if f.Replay != "" && f.Drives != "" {
		bad("replay", "given with -drives: replay judges recorded outputs, a live run measures drives; drop one of the two")
	}
	c.Report = resolveOutput(root, f.Report)
	if c.Report == "" {
		c.Report = filepath.Join(root, "report")
	}
	if !c.DryRun {
		if err := checkWritableDir(c.Report); err != nil {
			bad("report", "%v: give a directory you can write, e.g. -report=/tmp/drivequal-report", err)
		}
	}
	c.Record = resolveOutput(root, f.Record)
	if c.Record == "" {
		c.Record = filepath.Join(c.Report, "raw")
	} else if f.Drives != "" && !c.DryRun {
		if err := checkWritableDir(c.Record); err != nil {
			bad("record", "%v: give a directory you can write", err)
		}
	}
	// -replay=DIR1,DIR2,... judges several recorded runs as one fleet.
	var notDirs []string
	for _, d := range strings.Split(f.Replay, ",") {
		if d = strings.TrimSpace(d); d == "" {
			continue
		}
		d = resolveInput(root, d)
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			notDirs = append(notDirs, d)
		}
		c.Replays = append(c.Replays, d)
	}
	switch {
	case len(notDirs) > 0:
		bad("replay", "%s %s not a directory: give directories written by -record (e.g. report/raw), separated by commas", strings.Join(notDirs, ", "), isAre(len(notDirs)))
	case len(c.Replays) == 1:
		c.Replay = c.Replays[0]
	case len(c.Replays) > 1:
		seen := map[string]bool{}
		for _, d := range c.Replays {
			if seen[d] {
				bad("replay", "%s is given twice: each recorded run once", d)
			}
			seen[d] = true
		}
	}
	errs = append(errs, f.validateBaseline(root, c)...)
	return c, errs
}

// validateBaseline fills c.Baselines from -baseline: directories, each
// once, none of them also replayed as this run.
func (f *Flags) validateBaseline(root string, c *Config) []error {
	var errs []error
	seen := map[string]bool{}
	for _, d := range strings.Split(f.Baseline, ",") {
		if d = strings.TrimSpace(d); d == "" {
			continue
		}
		d = resolveInput(root, d)
		switch st, err := os.Stat(d); {
		case err != nil || !st.IsDir():
			errs = append(errs, fmt.Errorf("parsing -baseline: %s is not a directory: give directories written by -record (e.g. report/raw), separated by commas", d))
		case seen[d]:
			errs = append(errs, fmt.Errorf("parsing -baseline: %s is given twice: each recorded run once", d))
		}
		seen[d] = true
		c.Baselines = append(c.Baselines, d)
	}
	return errs
}

// replayRefusal says why a live-only flag does not apply to a replay.
func replayRefusal(name string) string {
	switch name {
	case "record":
		return "given without -drives: a replay records nothing; drop -record, or give -drives to measure"
	case "capacity":
		return "given without -drives: a replay judges each recorded drive as the capacity it was recorded as; drop -capacity"
	case "overwrite":
		return "given without -drives: a replay records nothing, so there is nothing to overwrite; drop -overwrite, or give -drives to measure"
	case "resume":
		return "given without -drives: -resume continues a live run on its drives; give the -drives of the interrupted run, or judge its recording with -replay=DIR"
	case "scaling":
		return "given without -drives: a replay judges the drive counts that were recorded; drop -scaling, and select steps with -run=TestScaling/24_drives"
	}
	return "given without -drives: a replay judges what was recorded, as run.json says it was measured; drop -" + name + ", or give -drives to measure"
}

// resolveInput makes a relative path absolute: relative to the directory
// the suite runs in when it exists there, else to the module root (go test
// runs the suite in acceptance/, while people write paths from the root).
func resolveInput(root, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	if _, err := os.Stat(p); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	return filepath.Join(root, p)
}

var partitionLink = regexp.MustCompile(`-part[0-9]+$`)

// expandGlob expands a -drives entry that is a glob into one path per
// distinct target, in the glob's order: udev gives a namespace several
// /dev/disk/by-id links (Debian 12: nvme-MODEL_SERIAL and
// nvme-MODEL_SERIAL_1, besides nvme-eui.*), which are one drive, not
// several. Partition links (-partN) are left out; a glob that matches
// nothing is an error.
func expandGlob(pattern string) ([]string, error) {
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("%q: %v", pattern, err)
	}
	var out []string
	seen := map[string]bool{}
	for _, m := range matches {
		if partitionLink.MatchString(m) {
			continue
		}
		target, err := filepath.EvalSymlinks(m)
		if err != nil {
			target = m // Inspect says what is wrong with it
		}
		if seen[target] {
			continue
		}
		seen[target] = true
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%q matches no drive: check the pattern with ls %s", pattern, pattern)
	}
	return out, nil
}

// resolveOutput makes a relative output directory relative to the module root.
func resolveOutput(root, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(root, p)
}

// checkWritableDir reports whether dir could be created and written
// without writing anything: the nearest existing directory on its path must
// be a directory this process may write in (access(2), which also says a
// read-only file system is one). A refused run creates nothing.
func checkWritableDir(dir string) error {
	d := dir
	for {
		st, err := os.Stat(d)
		if err == nil {
			if !st.IsDir() {
				return fmt.Errorf("cannot create %s: %s is not a directory", dir, d)
			}
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("cannot create %s: %w", dir, errors.Unwrap(err))
		}
		if filepath.Dir(d) == d {
			return fmt.Errorf("cannot create %s: no directory on its path exists", dir)
		}
		d = filepath.Dir(d)
	}
	if err := unix.Access(d, unix.W_OK|unix.X_OK); err != nil {
		if d == dir {
			return fmt.Errorf("cannot write in %s: %w", dir, err)
		}
		return fmt.Errorf("cannot create %s: cannot write in %s: %w", dir, d, err)
	}
	return nil
}

// ModuleRoot walks up from dir to the directory holding go.mod.
func ModuleRoot(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod above %s: run the suite from inside the drivequal module", dir)
		}
		d = parent
	}
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
