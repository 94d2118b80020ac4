package cmdline

import (
	"regexp"
	"strings"
)

// PowerPlaceholders are what -power-cut and -power-restore may hold, each
// replaced by the drive's value, shell-quoted: its path as given, its
// NVMe serial, its PCIe slot's name (/sys/bus/pci/slots/NAME) and its
// name in test names.
var PowerPlaceholders = []string{"{path}", "{serial}", "{slot}", "{name}"}

var placeholderRE = regexp.MustCompile(`\{[a-z]*\}`)

// PowerCommand is cmd with each placeholder replaced by vals' value
// (keyed "path", "serial", "slot", "name"), shell-quoted.
func PowerCommand(cmd string, vals map[string]string) string {
	return placeholderRE.ReplaceAllStringFunc(cmd, func(p string) string {
		return quoteWord(vals[strings.Trim(p, "{}")])
	})
}

func quoteWord(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// powerProblems are the problems of -power-cut and -power-restore, each
// as the flag and what is wrong with it.
func powerProblems(f *Flags) [][2]string {
	var out [][2]string
	for _, fl := range []struct{ name, cmd string }{{"power-cut", f.PowerCut}, {"power-restore", f.PowerRestore}} {
		if !f.Set[fl.name] {
			continue
		}
		if strings.TrimSpace(fl.cmd) == "" {
			out = append(out, [2]string{fl.name, "empty: give the command that does it, e.g. -" + fl.name + "='ipmitool ... {slot}'"})
			continue
		}
		for _, p := range placeholderRE.FindAllString(fl.cmd, -1) {
			if !contains(PowerPlaceholders, p) {
				out = append(out, [2]string{fl.name, p + " is not a placeholder: use " + strings.Join(PowerPlaceholders, ", ")})
			}
		}
	}
	cut, restore := f.Set["power-cut"], f.Set["power-restore"]
	slot := strings.TrimSpace(f.PowerCut) == "slot"
	switch {
	case f.Drives == "":
		// A replay refuses both as live-only flags.
	case slot && restore:
		out = append(out, [2]string{"power-restore", "given with -power-cut=slot, which restores the slot's power itself: drop -power-restore"})
	case cut && !restore && !slot:
		out = append(out, [2]string{"power-cut", "given without -power-restore: give the command that brings the drive's power back"})
	case restore && !cut:
		out = append(out, [2]string{"power-restore", "given without -power-cut: give the command that cuts the drive's power"})
	case cut && !f.Destructive && !f.DryRun:
		out = append(out, [2]string{"power-cut", "cuts the drives' power while fio writes to them: give -destructive (everything on them is destroyed)"})
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
