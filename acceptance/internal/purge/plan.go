// Package purge brings the drives given, and only those, back to a fresh
// state.
//
// It holds the purge commands (punch hole, discard, NVMe format, NVMe
// sanitize) and the rules that keep them on the drives given. Plan
// decides, with no side effects, which command purges which targets: a
// format or sanitize that reaches a whole controller is sent once for it,
// and refused when the controller has namespaces that were not given. Run
// executes the plan. The package never prints; notes go to the caller's
// logf.
package purge

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
)

// Methods a spec may ask for ([precondition] purge).
const (
	Format   = "format"
	Sanitize = "sanitize"
	Discard  = "discard"
	None     = "none"
)

// Kind is what a Step does.
type Kind string

const (
	// PunchHole deallocates a regular file (fallocate PUNCH_HOLE|KEEP_SIZE).
	PunchHole Kind = "punch-hole"
	// DiscardBlocks discards a whole block device through the Discarder.
	DiscardBlocks Kind = "discard"
	// FormatNVM runs `nvme format DEV --ses=1 --force` (user data erase).
	FormatNVM Kind = "format"
	// SanitizeNVM runs `nvme sanitize /dev/nvmeX --sanact=N` and waits on
	// the sanitize log.
	SanitizeNVM Kind = "sanitize"
)

// Sanitize actions (SANACT) drivequal uses.
const (
	SanActBlockErase  = 2
	SanActOverwrite   = 3
	SanActCryptoErase = 4
)

// Step is one purge command. A controller-wide step (a sanitize, or a
// format the controller applies to all namespaces) covers every target of
// that controller and is the only step for them.
type Step struct {
	Kind Kind
	// Device is what the command is sent to: the file, the block device,
	// or the controller (/dev/nvme0) for a sanitize.
	Device string
	// Controller is the NVMe controller ("nvme0"); "" for other devices.
	Controller string
	// ControllerWide says the step erases every namespace of Controller's
	// NVM subsystem.
	ControllerWide bool
	// Subsystem is the NVM subsystem's NQN of an NVMe step; "" when
	// sysfs does not say.
	Subsystem string
	// NSID is the namespace a per-namespace format erases; 0 otherwise.
	NSID int
	// Reach names every block device whose data the step erases (kernel
	// names, "nvme0n1"): the targets, the same namespaces through other
	// controllers and, for a controller-wide step, every namespace of the
	// subsystem.
	Reach []string
	// Targets are the targets this step purges, as given (-drives).
	Targets []string
	// Size is the number of bytes to deallocate (PunchHole).
	Size int64
	// SanAct is the sanitize action (SanitizeNVM).
	SanAct int
	// Note says why the step is not what the method asked for (a
	// fallback), for the log; "" when it is.
	Note string
	// Transport and Address are an NVMe over Fabrics controller's
	// ("tcp", "traddr=..."); "" for a PCIe one and other devices. A
	// fabric's purge reaches what its target allows.
	Transport, Address string
}

// Argv is the nvme-cli command of a FormatNVM or SanitizeNVM step, without
// the executable; nil for other kinds.
func (s Step) Argv() []string {
	switch s.Kind {
	case FormatNVM:
		return []string{"format", s.Device, "--ses=1", "--force"}
	case SanitizeNVM:
		return []string{"sanitize", s.Device, fmt.Sprintf("--sanact=%d", s.SanAct)}
	}
	return nil
}

// String describes the step for a dry run and the log.
func (s Step) String() string {
	var what string
	switch s.Kind {
	case PunchHole:
		what = fmt.Sprintf("deallocate %s (punch hole, %d bytes)", s.Device, s.Size)
	case DiscardBlocks:
		what = fmt.Sprintf("discard %s (BLKDISCARD)", s.Device)
	case FormatNVM, SanitizeNVM:
		what = "nvme " + strings.Join(s.Argv(), " ")
		if s.Kind == SanitizeNVM {
			what += " (" + sanActName(s.SanAct) + ")"
		}
	default:
		what = string(s.Kind) + " " + s.Device
	}
	switch {
	case s.ControllerWide && s.Subsystem != "":
		what += fmt.Sprintf(" (erases every namespace of %s: %s)", s.Subsystem, strings.Join(s.Reach, ", "))
	case s.ControllerWide:
		what += fmt.Sprintf(" (erases every namespace of %s: %s)", s.Controller, strings.Join(s.Reach, ", "))
	case s.Kind == FormatNVM && s.Subsystem != "" && s.NSID > 0:
		what += fmt.Sprintf(" (erases namespace %d of %s: %s)", s.NSID, s.Subsystem, strings.Join(s.Reach, ", "))
	case len(s.Reach) > 0:
		what += " (erases " + strings.Join(s.Reach, ", ") + ")"
	}
	return what
}

// reach returns the block devices that hold what t holds and more: every
// namespace of t's subsystem (wide) or t's namespace through every
// controller, sorted.
func reach(t device.Info, wide bool) []string {
	set := map[string]bool{}
	if t.Name != "" {
		set[t.Name] = true
	}
	if t.Reach != nil {
		for n, id := range t.Reach {
			if wide || id == t.NSID && t.NSID > 0 {
				set[n] = true
			}
		}
	} else if wide {
		for _, n := range t.Siblings {
			set[n] = true
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// fabricOf is t's transport when it is a fabric's, else "".
func fabricOf(t device.Info) string {
	if t.Fabric() {
		return t.Transport
	}
	return ""
}

// addressOf is t's controller address when it is a fabric's, else "".
func addressOf(t device.Info) string {
	if t.Fabric() {
		return t.Address
	}
	return ""
}

func sanActName(a int) string {
	switch a {
	case SanActBlockErase:
		return "block erase"
	case SanActOverwrite:
		return "overwrite"
	case SanActCryptoErase:
		return "crypto erase"
	}
	return fmt.Sprintf("action %d", a)
}

// Plan decides how to purge targets with method (format, sanitize, discard
// or none). ctrls holds the identify data of each NVMe controller by name
// ("nvme0"), as Identify reads it; a controller missing from it (nvme-cli
// absent, id-ctrl failed) cannot be formatted or sanitized.
//
// The rules:
//   - a regular file is deallocated (punch hole), whatever the method;
//   - discard discards each block device;
//   - format formats each namespace, unless the controller's FNA bit 0
//     (format applies to all namespaces) or bit 1 (secure erase applies to
//     all, and --ses=1 is one) is set: then it is controller-wide;
//   - sanitize is always controller-wide, with block erase if SANICAP
//     allows it, else crypto erase, else overwrite; a controller with none
//     of them is an error suggesting format;
//   - a controller-wide step is sent once per controller, and refused when
//     the controller has namespaces (device.Info.Siblings) not among the
//     targets: they would be erased too;
//   - a block device that cannot do the method (not NVMe, nvme-cli
//     missing, Format NVM unsupported) is discarded instead, with a Note.
//
// The errors are refusals, one per controller or target, naming the
// devices and the fix; steps are returned for the other targets.
func Plan(targets []device.Info, method string, ctrls map[string]nvme.Controller) ([]Step, []error) {
	switch method {
	case Format, Sanitize, Discard:
	case None, "":
		return nil, nil
	default:
		return nil, []error{fmt.Errorf("purge method %q: is not format, sanitize, discard or none: fix [precondition] purge in the spec", method)}
	}
	given := map[string]bool{}
	for _, t := range targets {
		if t.Name != "" {
			given[t.Name] = true
		}
	}
	// A namespace is given when any path to it is: its block device, or
	// another controller's block device for the same namespace ID of the
	// same subsystem.
	givenNS := map[string]bool{}
	for _, t := range targets {
		if t.Subsystem != "" && t.NSID > 0 {
			givenNS[fmt.Sprintf("%s/%d", t.Subsystem, t.NSID)] = true
		}
	}
	var steps []Step
	var errs []error
	wide := map[string]int{} // purge group -> index in steps of its controller-wide step
	var wideOrder []string
	for _, t := range targets {
		path := t.Resolved
		if path == "" {
			path = t.Path
		}
		if !t.Block {
			// The fill that follows rewrites it.
			steps = append(steps, Step{Kind: PunchHole, Device: path, Targets: []string{t.Path}, Size: t.Size})
			continue
		}
		if method == Discard {
			steps = append(steps, discardStep(t, path, ""))
			continue
		}
		ctrl, known := ctrls[t.Controller]
		switch {
		case t.Controller == "":
			steps = append(steps, discardStep(t, path, fmt.Sprintf("%s: purge %q needs an NVMe namespace and %s is not one; discarding instead", t.Path, method, describe(t))))
			continue
		case !known:
			steps = append(steps, discardStep(t, path, fmt.Sprintf("%s: purge %q needs the identity of controller %s, which nvme-cli could not read (is nvme-cli installed?); discarding instead", t.Path, method, t.Controller)))
			continue
		case method == Format && !ctrl.FormatSupported() && t.Fabric():
			steps = append(steps, discardStep(t, path, fmt.Sprintf("%s: controller %s (%s) is an NVMe over %s target (%s) that does not support Format NVM (OACS bit 1 clear): its purge is what the target allows; discarding instead (Dataset Management deallocate)",
				t.Path, t.Controller, ctrl.Model, t.Transport, t.Address)))
			continue
		case method == Format && !ctrl.FormatSupported():
			steps = append(steps, discardStep(t, path, fmt.Sprintf("%s: controller %s (%s) does not support Format NVM (OACS bit 1 clear); discarding instead", t.Path, t.Controller, ctrl.Model)))
			continue
		}
		if method == Format && !ctrl.FormatAppliesToAll() && !ctrl.SecureEraseAppliesToAll() {
			steps = append(steps, Step{Kind: FormatNVM, Device: path, Controller: t.Controller, Subsystem: t.Subsystem,
				NSID: t.NSID, Targets: []string{t.Path}, Reach: reach(t, false), Transport: fabricOf(t), Address: addressOf(t)})
			continue
		}
		// Controller-wide: one step per NVM subsystem (per controller when
		// the subsystem is unknown), on its first target.
		group := t.PurgeGroup()
		if i, ok := wide[group]; ok {
			if i < 0 { // refused already
				continue
			}
			steps[i].Targets = append(steps[i].Targets, t.Path)
			continue
		}
		s := Step{Controller: t.Controller, Subsystem: t.Subsystem, ControllerWide: true, Targets: []string{t.Path}, Reach: reach(t, true),
			Transport: fabricOf(t), Address: addressOf(t)}
		if method == Format {
			s.Kind, s.Device = FormatNVM, path
		} else {
			s.Kind, s.Device = SanitizeNVM, "/dev/"+t.Controller
			switch {
			case ctrl.SanitizeBlockErase():
				s.SanAct = SanActBlockErase
			case ctrl.SanitizeCryptoErase():
				s.SanAct = SanActCryptoErase
			case ctrl.SanitizeOverwrite():
				s.SanAct = SanActOverwrite
			default:
				errs = append(errs, fmt.Errorf("%s: the spec purges with sanitize, and controller %s (%s) supports no sanitize action (SANICAP %#x): purge with format", t.Path, t.Controller, ctrl.Model, ctrl.SANICAP))
				wide[group] = -1
				wideOrder = append(wideOrder, group)
				continue
			}
		}
		wide[group] = len(steps)
		wideOrder = append(wideOrder, group)
		steps = append(steps, s)
	}

	// Refuse controller-wide steps that would erase namespaces not given.
	refused := map[int]bool{}
	for _, c := range wideOrder {
		i := wide[c]
		if i < 0 {
			continue
		}
		missing := map[string]bool{}
		for _, t := range targets {
			if !t.Block || t.PurgeGroup() != c {
				continue
			}
			if t.Reach != nil {
				for n, id := range t.Reach {
					if !given[n] && !givenNS[fmt.Sprintf("%s/%d", t.Subsystem, id)] {
						missing["/dev/"+n] = true
					}
				}
				continue
			}
			for _, n := range t.Siblings {
				if !given[n] {
					missing["/dev/"+n] = true
				}
			}
		}
		if len(missing) == 0 {
			continue
		}
		others := make([]string, 0, len(missing))
		for n := range missing {
			others = append(others, n)
		}
		sort.Strings(others)
		st := steps[i]
		where := "controller " + st.Controller
		if st.Subsystem != "" {
			where = "NVM subsystem " + st.Subsystem
		}
		why := "a sanitize erases every namespace of " + where
		if st.Kind == FormatNVM {
			why = fmt.Sprintf("controller %s formats every namespace of %s at once (FNA %#x)", st.Controller, where, ctrls[st.Controller].FNA)
		}
		errs = append(errs, fmt.Errorf("%s: the spec purges with %s, and %s: %s %s not in -drives and would be erased: add %s to -drives, or purge with discard",
			strings.Join(steps[i].Targets, ", "), method, why, strings.Join(others, ", "), isAre(len(others)), strings.Join(others, ", ")))
		refused[i] = true
	}
	if len(refused) > 0 {
		kept := steps[:0]
		for i, s := range steps {
			if !refused[i] {
				kept = append(kept, s)
			}
		}
		steps = kept
	}
	return steps, errs
}

func discardStep(t device.Info, path, note string) Step {
	return Step{Kind: DiscardBlocks, Device: path, Controller: t.Controller, Targets: []string{t.Path}, Note: note}
}

func describe(t device.Info) string {
	switch {
	case t.BackingFile != "" || strings.HasPrefix(t.Name, "loop"):
		return "a loop device"
	case t.Name != "":
		return "block device " + t.Name
	}
	return "a block device"
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// Identify reads the identify data of every NVMe controller among targets,
// once per controller, for Plan. A controller nvme-cli cannot identify is
// left out of the map, with its error: Plan then falls back to discarding
// its namespaces, so the errors are for the log, not refusals.
func Identify(ctx context.Context, cli nvme.CLI, targets []device.Info) (map[string]nvme.Controller, []error) {
	ctrls := map[string]nvme.Controller{}
	seen := map[string]bool{}
	var errs []error
	for _, t := range targets {
		if !t.Block || t.Controller == "" || seen[t.Controller] {
			continue
		}
		seen[t.Controller] = true
		c, err := cli.IDCtrl(ctx, "/dev/"+t.Controller)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ctrls[t.Controller] = c
	}
	return ctrls, errs
}
