// Package match matches the drives given to a resumed run to the drives
// its recording measured, by what they are (identity.Identity), not by
// where they are.
//
// After a reboot NVMe namespaces register in another order and get other
// minors and controller numbers, and a loop image is attached under
// another number. The given drives are put in the recorded order at
// setup, before anything reads their health or holds them, so that drive
// i of the resumed run is recorded drive i everywhere (kept cells, drive
// indices in run.json, prepare/ files, health/<i>.before.json). Device
// numbers compare only within the boot that recorded them.
package match

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/device/identity"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/verdict"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// BootIDFile is the kernel's boot id: a new one at every boot.
var BootIDFile = "/proc/sys/kernel/random/boot_id"

// BootID is this boot's id; "" when the kernel does not say.
func BootID() string {
	b, err := os.ReadFile(BootIDFile)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Match is the given drives put in the recorded order: Order[i] is
// the index among the given drives of recorded drive i.
type Match struct {
	Order []int
	// ByPosition[i] is true when recorded drive i was matched only by its
	// path and device number, within the boot that recorded them: the
	// drive reports nothing that tells it from another
	// (identity.Identity.Anonymous), and the kernel hands a freed device
	// number to the next device attached. Its identity does not say it is
	// the recorded drive: the data check must confirm it (what the drive
	// holds is what the run left on it) before any recorded state of it
	// is trusted, or the resume is refused.
	ByPosition []bool
	// Unconfirmed[i] says why recorded drive i's identity does not say
	// it is the recorded drive, "" when it does: a drive matched by
	// position (ByPosition), or a loop device or file known only by its
	// file's device and inode (identity.FileID.TellsRecreated), which
	// the file system gives the next file created once the file is
	// deleted. As for ByPosition, the data check must confirm it before
	// any recorded state of it is trusted, or the resume is refused.
	Unconfirmed []string
	// Lines say, for each recorded drive, which given path it is.
	Lines []string
	// Warnings say what the operator should know of a matched drive.
	Warnings []string
	// Absent maps each recorded drive that did not come back after the
	// host's power cut (see Returning) to the path given for it, where
	// nothing is; its Order is -1.
	Absent map[int]string
}

// Returning is what lets a resume after the whole host's power cut go
// on without the drives that did not come back: Paths are the -drives
// given where nothing is (no device, a broken link), and Pending(i)
// says whether recorded drive i has a power-loss cycle that cut left to
// be judged. Only when every recorded drive not found has such a cycle,
// as many distinct paths are given where nothing is, and some drive
// given is there, are they taken for absent (Match.Absent): each path at
// its drive's recorded path pairs with that drive, the others in the
// order given. Otherwise every drive not found is refused as not given;
// and one found on the machine (not given) is refused naming where it
// is.
type Returning struct {
	Paths   []string
	Pending func(i int) bool
}

// Drives matches the given drives (in the order given, with their
// identities) to the drives prior recorded, by identity: on every
// identifier both report (identity.Identity.Identifiers), at least one
// agreeing and none disagreeing. Refused, each naming the drives, what
// was recorded, what is found and fix: a given drive that is none of the
// recorded drives; one whose identifiers agree with a recorded drive's on
// some and disagree on others (naming both values); a recorded drive not
// given; two drives, both given or both recorded, that nothing they
// report tells apart (the same serial and namespace and no NGUID, EUI-64
// or UUID); a drive that reports nothing that tells it from another
// (Anonymous) after a reboot; and a matched drive whose model, serial,
// firmware, size, logical block size or capacity changed. Within the
// boot that recorded them an anonymous drive at its recorded path and
// device number is matched, marked in ByPosition for the data check to
// confirm. Device numbers are compared only when boot is the boot that
// recorded them: a drive at a recorded number that is not the recorded
// drive is named as such, and a matched drive at another number is a
// warning (it was attached again).
func Drives(given []plan.Drive, prior record.Run, boot, dir, fix string) (Match, []error) {
	return DrivesAmong(given, nil, prior, boot, dir, fix)
}

// DrivesAmong is Drives on a machine that also has the drives present
// (not given; any of them given is left out by its device number). A
// given drive matched on what another drive present reports too, and
// nothing unique (the same serial and namespace, no NGUID, EUI-64 or
// UUID), is refused naming both: a one-drive run recorded on one of two
// such drives would otherwise resume on the other.
func DrivesAmong(given, present []plan.Drive, prior record.Run, boot, dir, fix string) (Match, []error) {
	return DrivesReturning(given, present, Returning{}, prior, boot, dir, fix)
}

// DrivesReturning is DrivesAmong on a resume after the host's power cut,
// where the drives back pairs what is given where nothing is with the
// recorded drives not found (Match.Absent).
func DrivesReturning(given, present []plan.Drive, back Returning, prior record.Run, boot, dir, fix string) (Match, []error) {
	m, errs := drives(given, back, prior, boot, dir, fix)
	if len(errs) > 0 {
		return m, errs
	}
	givenAt := map[string]bool{}
	for _, d := range given {
		givenAt[DevNumber(d)] = true
	}
	for _, i := range slices.Sorted(maps.Keys(m.Absent)) {
		// A drive not found where it was given, but on this machine:
		// given at a wrong path (a link not made yet, a typo), not gone.
		for _, p := range present {
			if !p.Block || givenAt[DevNumber(p)] {
				continue
			}
			if agree, disagree := compare(p.Identity().Identifiers(), prior.Identities[i].Identifiers()); len(agree) > 0 && len(disagree) == 0 {
				errs = append(errs, fmt.Errorf("parsing -drives: nothing is at %s, taken for drive %d of the interrupted run in %s (%s), but that drive is on this machine at %s: give it at that path (by any path: /dev/disk/by-id links, new kernel names); %s",
					m.Absent[i], i+1, dir, prior.Identities[i], p.Path, fix))
				break
			}
		}
	}
	if len(errs) > 0 {
		return Match{}, errs
	}
	for i, j := range m.Order {
		if j < 0 || m.ByPosition[i] {
			continue
		}
		d := given[j]
		for _, p := range present {
			if !p.Block || givenAt[DevNumber(p)] {
				continue
			}
			if sameNamespace(d, p) {
				continue
			}
			if agree, disagree := compare(p.Identity().Identifiers(), prior.Identities[i].Identifiers()); len(agree) > 0 && len(disagree) == 0 && !unique(agree) {
				errs = append(errs, fmt.Errorf("parsing -drives: %s and %s (on this machine, not given) both report the %s of drive %d of the interrupted run in %s (%s) and nothing that tells them apart (%s; %s): which of them the run measured cannot be told, in this boot or after a reboot; give only drives that report a unique identifier (an NGUID, EUI-64, UUID or WWN; set one where the drives or the emulator can), or start a new run (without -resume) on drives told apart; %s",
					d.Path, p.Path, names(agree), i+1, dir, values(agree), d.Identity(), p.Identity(), fix))
			}
		}
	}
	if len(errs) > 0 {
		return Match{}, errs
	}
	return m, nil
}

func drives(given []plan.Drive, back Returning, prior record.Run, boot, dir, fix string) (Match, []error) {
	var m Match
	recorded := prior.Identities
	sameBoot := boot != "" && boot == prior.BootID
	m.Order = make([]int, len(recorded))
	m.ByPosition = make([]bool, len(recorded))
	m.Unconfirmed = make([]string, len(recorded))
	for i := range m.Order {
		m.Order[i] = -1
	}
	errs := alike(given, prior, dir, fix)
	if len(errs) > 0 {
		return Match{}, errs
	}
	for j, d := range given {
		id := d.Identity()
		var i int
		if id.Anonymous() {
			// A drive that reports nothing that tells it from another is
			// known only by its path and device number, which name one
			// device within one boot only: after a reboot the paths and
			// numbers of two such drives can be swapped, and within a
			// boot a freed number goes to the next device attached.
			if !sameBoot {
				errs = append(errs, fmt.Errorf("parsing -drives: %s reports nothing that tells it from another drive (%s), and the machine has booted since the interrupted run in %s: its path and device number may have moved to another drive, so which recorded drive it is cannot be told; %s",
					d.Path, id, dir, fix))
				continue
			}
			i = -1
			for r := range recorded {
				if recorded[r].Anonymous() && prior.Drives[r].Path == d.Path && r < len(prior.Devices) && prior.Devices[r] == DevNumber(d) {
					i = r
				}
			}
			if i < 0 {
				errs = append(errs, notRecorded(d, id, prior, sameBoot, dir, fix))
				continue
			}
			m.ByPosition[i] = true
			m.Unconfirmed[i] = "reports nothing that tells it from another drive (it was matched by its path and device number alone)"
		} else {
			var err error
			if i, err = byIdentity(d, id, prior, sameBoot, dir, fix); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if id.Kind == "loop" || id.Kind == "file" {
			// ext4 and XFS give a deleted file's inode to the next file
			// created: a blank image made where the filled one was.
			if recreated := id.File.Recreated(recorded[i].File); recreated != "" {
				errs = append(errs, fmt.Errorf("parsing -drives: %s is not the drive %d the interrupted run in %s measured: its file has the recorded inode but is another file (%s): it was deleted and created again since, and holds none of what the run wrote; %s",
					d.Path, i+1, dir, recreated, fix))
				continue
			}
			if !id.File.TellsRecreated(recorded[i].File) {
				m.Unconfirmed[i] = fmt.Sprintf("is known only by its file's device and inode (%s), which the file system gives the next file created once that file is deleted: neither an inode generation nor a birth time of both the recorded file and this one could be read (a deleted image, a file system that keeps neither), so its identity cannot tell it from a file created since at that inode", id.File)
			}
		}
		if m.Order[i] >= 0 {
			errs = append(errs, fmt.Errorf("parsing -drives: %s and %s are the same drive of the interrupted run in %s (%s): give each drive once", given[m.Order[i]].Path, d.Path, dir, recorded[i]))
			continue
		}
		m.Order[i] = j
		if sameBoot && i < len(prior.Devices) && prior.Devices[i] != DevNumber(d) {
			// Within one boot a device number names one device: the
			// drive was detached and attached again since (a loop image
			// attached anew; an NVMe drive that dropped off its link
			// and came back). Its identity says it is the same drive.
			m.Warnings = append(m.Warnings, fmt.Sprintf("%s (drive %d of the interrupted run in %s) has device number %s, was %s earlier in this boot: it was detached and attached again since",
				d.Path, i+1, dir, orNone(DevNumber(d)), orNone(prior.Devices[i])))
		}
		if changed := changes(d, id, prior, i); len(changed) > 0 {
			errs = append(errs, fmt.Errorf("parsing -drives: %s is drive %d of the interrupted run in %s (%s, recorded at %s), but changed since: %s; %s",
				d.Path, i+1, dir, recorded[i], prior.Drives[i].Path, strings.Join(changed, "; "), fix))
		}
	}
	var unfound []int
	for i, j := range m.Order {
		if j < 0 {
			unfound = append(unfound, i)
		}
	}
	m.Absent = absent(unfound, back, prior)
	var missing []string
	for _, i := range unfound {
		if _, ok := m.Absent[i]; !ok {
			missing = append(missing, fmt.Sprintf("drive %d, recorded at %s: %s", i+1, prior.Drives[i].Path, recorded[i]))
		}
	}
	if len(missing) > 0 {
		errs = append(errs, fmt.Errorf("parsing -drives: the interrupted run in %s measured %d drives and these are not given: %s; give every drive of the run (by any path: /dev/disk/by-id links, new kernel names), in any order; %s",
			dir, len(recorded), strings.Join(missing, "; "), fix))
	}
	if len(errs) > 0 {
		return Match{}, errs
	}
	for i, j := range m.Order {
		if p, ok := m.Absent[i]; ok {
			m.Lines = append(m.Lines, fmt.Sprintf("drive %d (recorded at %s: %s) did not come back after the host's power cut: nothing is at %s", i+1, prior.Drives[i].Path, recorded[i], p))
			continue
		}
		line := fmt.Sprintf("drive %d (recorded at %s) is %s", i+1, prior.Drives[i].Path, given[j].Path)
		if given[j].Path == prior.Drives[i].Path {
			line = fmt.Sprintf("drive %d is %s, as recorded", i+1, given[j].Path)
		}
		m.Lines = append(m.Lines, line)
	}
	return m, nil
}

// absent pairs back's paths with the recorded drives unfound (see
// Returning); nil when they are not all absent.
func absent(unfound []int, back Returning, prior record.Run) map[int]string {
	if len(unfound) == 0 || len(unfound) == len(prior.Drives) || len(back.Paths) != len(unfound) || back.Pending == nil {
		// None, or none of the drives given is there: the resume is
		// not on the run's host, or before its drives are.
		return nil
	}
	if len(slices.Compact(slices.Sorted(slices.Values(back.Paths)))) != len(back.Paths) {
		return nil // a path given twice is one drive
	}
	for _, i := range unfound {
		if !back.Pending(i) {
			return nil
		}
	}
	out := map[int]string{}
	paths := slices.Clone(back.Paths)
	var rest []int
	for _, i := range unfound {
		if k := slices.Index(paths, prior.Drives[i].Path); k >= 0 {
			out[i] = paths[k]
			paths = slices.Delete(paths, k, k+1)
			continue
		}
		rest = append(rest, i)
	}
	for k, i := range rest {
		out[i] = paths[k]
	}
	return out
}

// byIdentity is the recorded drive of prior that d (identity id, not
// anonymous) is: the one whose identifiers agree with d's on at least
// one and disagree on none. A drive that agrees with one on some and
// disagrees on others is refused naming both values; one that is none of
// them, naming what was recorded where it is.
func byIdentity(d plan.Drive, id identity.Identity, prior record.Run, sameBoot bool, dir, fix string) (int, error) {
	var same, conflict []int
	var differ []string
	for r, was := range prior.Identities {
		agree, disagree := compare(id.Identifiers(), was.Identifiers())
		switch {
		case len(agree) == 0:
		case len(disagree) == 0:
			same = append(same, r)
		default:
			conflict = append(conflict, r)
			differ = append(differ, fmt.Sprintf("drive %d (recorded at %s) has the same %s (%s), but %s", r+1, prior.Drives[r].Path, names(agree), values(agree), strings.Join(disagree, ", ")))
		}
	}
	switch {
	case len(same) == 1:
		return same[0], nil
	case len(same) > 1:
		var which []string
		for _, r := range same {
			which = append(which, fmt.Sprintf("drive %d (recorded at %s: %s)", r+1, prior.Drives[r].Path, prior.Identities[r]))
		}
		return -1, fmt.Errorf("parsing -drives: %s (%s) could be any of %s of the interrupted run in %s: nothing it reports tells which; %s",
			d.Path, id, strings.Join(which, " and "), dir, fix)
	case len(conflict) > 0:
		return -1, fmt.Errorf("parsing -drives: %s is not the drive the interrupted run in %s measured: it is %s; %s: a drive whose identifiers disagree is another drive, or one that reports other identifiers since (new firmware); %s",
			d.Path, dir, id, strings.Join(differ, "; "), fix)
	}
	return -1, notRecorded(d, id, prior, sameBoot, dir, fix)
}

// notRecorded is the refusal of d (identity id), which is none of the
// drives prior recorded: naming the drive recorded at its path or (in
// the same boot) its device number, if any.
func notRecorded(d plan.Drive, id identity.Identity, prior record.Run, sameBoot bool, dir, fix string) error {
	at, where := -1, ""
	for r, p := range prior.Drives {
		switch {
		case p.Path == d.Path:
			at, where = r, "at "+d.Path
		case sameBoot && r < len(prior.Devices) && prior.Devices[r] != "" && prior.Devices[r] == DevNumber(d):
			at, where = r, fmt.Sprintf("at device number %s in this boot (recorded at %s)", prior.Devices[r], p.Path)
		}
	}
	if at >= 0 {
		return fmt.Errorf("parsing -drives: %s is not the drive the interrupted run in %s measured %s: it is %s; the run measured %s there (drive %d); %s",
			d.Path, dir, where, id, prior.Identities[at], at+1, fix)
	}
	return fmt.Errorf("parsing -drives: %s is none of the drives of the interrupted run in %s: it is %s; %s", d.Path, dir, id, fix)
}

// compare is what a and b, two drives' identifiers, say of each other:
// those both report with the same value (agree), and, for those both
// report with another value, "its NGUID is X, the recorded drive's Y"
// (disagree).
func compare(a, b []identity.Identifier) (agree []identity.Identifier, disagree []string) {
	for _, x := range a {
		for _, y := range b {
			if x.Name != y.Name {
				continue
			}
			if x.Value == y.Value {
				agree = append(agree, x)
			} else {
				disagree = append(disagree, fmt.Sprintf("its %s is %s, the recorded drive's %s", x.Name, x.Value, y.Value))
			}
		}
	}
	return agree, disagree
}

func names(ids []identity.Identifier) string {
	var out []string
	for _, i := range ids {
		out = append(out, i.Name)
	}
	return strings.Join(out, " and ")
}

func values(ids []identity.Identifier) string {
	var out []string
	for _, i := range ids {
		out = append(out, i.Value)
	}
	return strings.Join(out, ", ")
}

// alike refuses two drives, both given or both recorded, that agree on
// what they report and report nothing unique (no NGUID, EUI-64, UUID,
// WWN or file), such as two namespaces of the same serial and namespace
// ID with no NGUID (some vendors; QEMU's default): which of them is which
// recorded drive cannot be told, in this boot or after a reboot. Two
// given paths to the same device, and two that share a unique
// identifier, are the same drive given twice, which Drives names as
// such.
func alike(given []plan.Drive, prior record.Run, dir, fix string) []error {
	var errs []error
	for j := range given {
		for l := j + 1; l < len(given); l++ {
			a, b := given[j].Identity(), given[l].Identity()
			if given[j].Block && given[l].Block && DevNumber(given[j]) == DevNumber(given[l]) || sameNamespace(given[j], given[l]) {
				continue
			}
			if agree, disagree := compare(a.Identifiers(), b.Identifiers()); len(agree) > 0 && len(disagree) == 0 && !unique(agree) {
				errs = append(errs, fmt.Errorf("parsing -drives: %s and %s report the same %s (%s) and nothing that tells them apart (%s; %s): which of them the interrupted run in %s measured cannot be told, in this boot or after a reboot; give only drives that report a unique identifier (an NGUID, EUI-64, UUID or WWN; set one where the drives or the emulator can), or start a new run (without -resume) on drives told apart; %s",
					given[j].Path, given[l].Path, names(agree), values(agree), a, b, dir, fix))
			}
		}
	}
	rec := prior.Identities
	for i := range rec {
		for k := i + 1; k < len(rec); k++ {
			if agree, disagree := compare(rec[i].Identifiers(), rec[k].Identifiers()); len(agree) > 0 && len(disagree) == 0 && !unique(agree) {
				errs = append(errs, fmt.Errorf("parsing -drives: the interrupted run in %s recorded drive %d (at %s) and drive %d (at %s) with the same %s (%s) and nothing that tells them apart (%s; %s): which drive given now is which cannot be told, in this boot or after a reboot; start a new run (without -resume); %s",
					dir, i+1, prior.Drives[i].Path, k+1, prior.Drives[k].Path, names(agree), values(agree), rec[i], rec[k], fix))
			}
		}
	}
	return errs
}

// sameNamespace reports whether a and b are one NVMe namespace through
// two controllers (native multipath off), as its subsystem lists them:
// one drive, given twice if both are given.
func sameNamespace(a, b plan.Drive) bool {
	nsid, ok := a.Reach[b.Name]
	return ok && b.Name != "" && nsid == a.NSID && a.NSID == b.NSID
}

func unique(ids []identity.Identifier) bool {
	for _, i := range ids {
		if i.Unique {
			return true
		}
	}
	return false
}

// changes says what of drive d (identity id) differs from recorded
// drive i of prior.
func changes(d plan.Drive, id identity.Identity, prior record.Run, i int) []string {
	p, was := prior.Drives[i], prior.Identities[i]
	var changed []string
	if id.Kind != was.Kind {
		changed = append(changed, fmt.Sprintf("a %s, was a %s", id.Kind, was.Kind))
	}
	if d.Serial != p.Serial {
		changed = append(changed, fmt.Sprintf("serial %q, was %q", d.Serial, p.Serial))
	}
	if d.Model != p.Model {
		changed = append(changed, fmt.Sprintf("model %q, was %q", d.Model, p.Model))
	}
	if d.Firmware != p.Firmware {
		// A reset activates a firmware committed to a slot: the kept
		// cells would be another firmware's figures.
		changed = append(changed, fmt.Sprintf("firmware %q, was %q", d.Firmware, p.Firmware))
	}
	if d.Size != p.Bytes {
		changed = append(changed, fmt.Sprintf("size %s bytes, was %s", report.Thousands(float64(d.Size)), report.Thousands(float64(p.Bytes))))
	}
	if d.Capacity != p.Capacity && p.Capacity != "" {
		changed = append(changed, fmt.Sprintf("judged as %s, was %s (-capacity)", d.Capacity, p.Capacity))
	}
	if id.NSID != was.NSID {
		changed = append(changed, fmt.Sprintf("namespace %d, was %d", id.NSID, was.NSID))
	}
	if was.LBASize != d.LogicalBlockSize {
		// A format to another LBA format erased the drive's fill, and
		// its figures are another format's.
		changed = append(changed, fmt.Sprintf("logical block size %d bytes, was %d (formatted since)", d.LogicalBlockSize, was.LBASize))
	}
	if id.File.Size != 0 && was.File.Size != 0 && id.File.Size != was.File.Size {
		// The loop device's size is fixed when attached: its file grew or
		// shrank behind it since.
		changed = append(changed, fmt.Sprintf("its file holds %s bytes, was %s", report.Thousands(float64(id.File.Size)), report.Thousands(float64(was.File.Size))))
	}
	if i < len(prior.Devices) && (prior.Devices[i] == "") == d.Block {
		// A block device recorded as a regular file, or the reverse.
		changed = append(changed, fmt.Sprintf("device number %s, was %s", orNone(DevNumber(d)), orNone(prior.Devices[i])))
	}
	return changed
}

// Identities is what run.json records of the drives' identity.
func Identities(drives []plan.Drive) []identity.Identity {
	out := make([]identity.Identity, len(drives))
	for i, d := range drives {
		out[i] = d.Identity()
	}
	return out
}

// Moves is, for each drive prior recorded at another path than the one
// it is given under now (drive i was at prior.Drives[i].Path and is
// drives[i] now), its recorded path to its path now.
func Moves(prior record.Run, drives []plan.Drive) map[string]string {
	to := map[string]string{}
	for i, d := range prior.Drives {
		if i < len(drives) && d.Path != drives[i].Path {
			to[d.Path] = drives[i].Path
		}
	}
	return to
}

// Renamed rewrites the drive paths prior records (its drives, verify
// passes and steady-state records) to the paths the drives are given
// under now: drive i was at prior.Drives[i].Path and is drives[i] now.
// The recorded fio targets stay: they are what fio read then.
func Renamed(prior record.Run, drives []plan.Drive) record.Run {
	to := Moves(prior, drives)
	if len(to) == 0 {
		return prior
	}
	rename := func(p string) string {
		if n, ok := to[p]; ok {
			return n
		}
		return p
	}
	prior.Drives = append([]report.Drive(nil), prior.Drives...)
	for i := range prior.Drives {
		prior.Drives[i].Path = rename(prior.Drives[i].Path)
	}
	prior.Verify = append([]record.Verify(nil), prior.Verify...)
	for i := range prior.Verify {
		v := &prior.Verify[i]
		v.Drives = append([]record.VerifyDrive(nil), v.Drives...)
		for k := range v.Drives {
			v.Drives[k].Path = rename(v.Drives[k].Path)
		}
	}
	prior.Steady = append([]report.Steady(nil), prior.Steady...)
	for i := range prior.Steady {
		prior.Steady[i].Drive = rename(prior.Steady[i].Drive)
	}
	// A drive's failure named the drive by its path then: every cell it
	// fails names the drive by its path now (a swap would otherwise name
	// the neighbour, which did not fail). What was seen (fio's words among
	// them) is kept as it was written, saying where the drive was then.
	words := renamer(to)
	prior.Failures = append([]record.DriveFailure(nil), prior.Failures...)
	for i := range prior.Failures {
		f := &prior.Failures[i]
		if n, ok := to[f.Path]; ok {
			f.Message = fmt.Sprintf("[recorded at %s, this drive's path then] %s", f.Path, f.Message)
			f.Path, f.Step = n, words.Replace(f.Step)
		}
	}
	return prior
}

// renamer rewrites, in one pass (a swap stays a swap), each old path of
// to and its TestIntegrity name ("nvme0n1", "nvme-X") to the new one's,
// the longest first.
func renamer(to map[string]string) *strings.Replacer {
	type pair struct{ old, new string }
	var pairs []pair
	for o, n := range to {
		pairs = append(pairs, pair{o, n}, pair{verdict.IntegrityName(o), verdict.IntegrityName(n)})
	}
	slices.SortFunc(pairs, func(a, b pair) int { return cmp.Or(len(b.old)-len(a.old), strings.Compare(a.old, b.old)) })
	var args []string
	for _, p := range pairs {
		args = append(args, p.old, p.new)
	}
	return strings.NewReplacer(args...)
}

// DevNumber is a block device's device number ("259:0"); "" for a
// regular file.
func DevNumber(d plan.Drive) string {
	if !d.Block {
		return ""
	}
	return fmt.Sprintf("%d:%d", d.Major, d.Minor)
}

func orNone(s string) string {
	if s == "" {
		return "none (a regular file)"
	}
	return s
}
