package fwrun

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/firmware"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/drivequal/drivequal/acceptance/internal/qual/verdict"
	"github.com/drivequal/drivequal/specs"
)

// images are the steps asked for and their images, in the order they run.
func images(cfg *cmdline.Config) [][2]string {
	var out [][2]string
	if cfg.Firmware == "" {
		return nil
	}
	out = append(out, [2]string{firmware.StepActivate, cfg.Firmware})
	if cfg.FirmwareBack != "" {
		out = append(out, [2]string{firmware.StepBack, cfg.FirmwareBack})
	}
	return out
}

// selected says -run and -skip select the drive at path's own
// TestFirmware/<name>/<step>.
func selected(cfg *cmdline.Config, path, step string) bool {
	return cfg.Selected("TestFirmware/" + verdict.IntegrityName(path) + "/" + step)
}

// group is the key of the drives one firmware commit reaches: the NVM
// subsystem's (a controller's when it is unknown; device.Info.PurgeGroup),
// else the drive's own.
func group(i device.Info) string {
	if g := i.PurgeGroup(); g != "" {
		return g
	}
	return "drive " + i.Path
}

// groups are ds (indexes in drives) by the controller a commit reaches,
// in the order of their first drive.
func groups(drives []plan.Drive, ds []int) [][]int {
	at := map[string]int{}
	var out [][]int
	for _, d := range ds {
		g := group(drives[d].Info)
		i, ok := at[g]
		if !ok {
			i = len(out)
			at[g] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], d)
	}
	return out
}

// Refuse is the refusal, one a controller, of firmware steps whose
// commit would reach a namespace that is not among the step's drives:
// one not in -drives (device.Info.Siblings, or Reach when sysfs lists the
// subsystem, as purge.Plan refuses a controller-wide purge), or one
// given whose own TestFirmware/<name>/<step> -run leaves out. A commit is
// controller-wide: that namespace (perhaps mounted) would take the stall
// unloaded and unjudged, and with an activation at reset, the reset. A
// controller with several given namespaces is one step, its load on them
// all (see Judge). Nil without -firmware or a [firmware] table.
func Refuse(cfg *cmdline.Config, spec *specs.Spec, infos []device.Info) []error {
	if spec == nil || spec.Firmware == nil {
		return nil
	}
	var errs []error
	refused := map[string]bool{}
	for _, si := range images(cfg) {
		step := si[0]
		in := map[string]bool{}   // block device names of the step's drives
		inNS := map[string]bool{} // subsystem/nsid of the step's drives
		given := map[string]bool{}
		for _, t := range infos {
			given[t.Name] = true
			if selected(cfg, t.Path, step) {
				in[t.Name] = true
				if t.Subsystem != "" && t.NSID > 0 {
					inNS[fmt.Sprintf("%s/%d", t.Subsystem, t.NSID)] = true
				}
			}
		}
		for _, t := range infos {
			g := group(t)
			if !selected(cfg, t.Path, step) || t.Controller == "" || refused[g] {
				continue
			}
			missing := map[string]bool{}
			for _, o := range infos {
				if group(o) != g || !selected(cfg, o.Path, step) {
					continue
				}
				if o.Reach != nil {
					for n, id := range o.Reach {
						if !in[n] && !inNS[fmt.Sprintf("%s/%d", o.Subsystem, id)] {
							missing[n] = true
						}
					}
					continue
				}
				for _, n := range o.Siblings {
					if !in[n] {
						missing[n] = true
					}
				}
			}
			if len(missing) == 0 {
				continue
			}
			refused[g] = true
			var out, left []string
			for n := range missing {
				if given[n] {
					left = append(left, "/dev/"+n)
				} else {
					out = append(out, "/dev/"+n)
				}
			}
			sort.Strings(out)
			sort.Strings(left)
			var why []string
			if len(out) > 0 {
				why = append(why, strings.Join(out, ", ")+" not in -drives")
			}
			if len(left) > 0 {
				why = append(why, strings.Join(left, ", ")+" left out by -run")
			}
			reset := ""
			if firmware.CommitAction(spec.Firmware.Action) != 3 {
				reset = " and the controller reset"
			}
			errs = append(errs, fmt.Errorf("%s: -firmware: a firmware commit reaches every namespace of %s, and its namespaces %s would take the activation's stall%s unloaded and unjudged: add them to -drives (and select their TestFirmware/<name>/%s), or leave -firmware out",
				t.Path, strings.TrimPrefix(g, "controller "), strings.Join(why, " and "), reset, step))
		}
	}
	return errs
}

// CheckSlots is the refusal, one a controller, of the spec's [firmware]
// slot that a drive's controller cannot take, from its identify data in
// ctrls (FRMW: the number of slots, slot 1 read-only): bad input, refused
// before anything is sent, not a drive's failure. A controller missing
// from ctrls, or one that reports no slot count, is not checked.
func CheckSlots(cfg *cmdline.Config, spec *specs.Spec, infos []device.Info, ctrls map[string]nvme.Controller) []error {
	if spec == nil || spec.Firmware == nil || spec.Firmware.Slot == 0 {
		return nil
	}
	slot := spec.Firmware.Slot
	var errs []error
	seen := map[string]bool{}
	for _, t := range infos {
		c, ok := ctrls[t.Controller]
		if !ok || seen[t.Controller] || !slices.ContainsFunc(images(cfg), func(si [2]string) bool { return selected(cfg, t.Path, si[0]) }) {
			continue
		}
		seen[t.Controller] = true
		n := int(c.FRMW>>1) & 7
		switch {
		case n == 0:
		case slot > n:
			errs = append(errs, fmt.Errorf("%s: [firmware] slot = %d in %s: controller %s (%s) has %d firmware slot(s) (id-ctrl frmw %#x): set slot to one of 1 to %d, or 0 to let the controller choose",
				t.Path, slot, spec.File, t.Controller, c.Model, n, c.FRMW, n))
		case slot == 1 && c.FRMW&1 != 0:
			errs = append(errs, fmt.Errorf("%s: [firmware] slot = 1 in %s: controller %s (%s) keeps slot 1 read-only (id-ctrl frmw %#x bit 0): set slot to one of 2 to %d, or 0 to let the controller choose",
				t.Path, spec.File, t.Controller, c.Model, c.FRMW, n))
		}
	}
	return errs
}
