package cmdline

import (
	"regexp"
	"slices"
	"strings"
)

// PowerPlaceholders are what -power-cut and -power-restore may hold, each
// standing for the drive's value: its path as given, its NVMe serial, its
// PCIe slot's name (/sys/bus/pci/slots/NAME) and its name in test names.
var PowerPlaceholders = []string{"{path}", "{serial}", "{slot}", "{name}"}

// PowerVars are the environment variables the commands are run with, one
// a placeholder, in PowerPlaceholders' order.
var PowerVars = []string{"DQ_PATH", "DQ_SERIAL", "DQ_SLOT", "DQ_NAME"}

var placeholderRE = regexp.MustCompile(`\{[a-z]*\}`)

// PowerCommand is cmd with each placeholder replaced by a reference to
// its environment variable, quoted as where it stands needs: outside
// quotes "$DQ_PATH", inside double quotes ${DQ_PATH} (already quoted
// there: a quoted reference would end and reopen the quotes, leaving the
// value unquoted, split into words and globbed). The drive's values are
// never spliced into the command, so no value is parsed by the shell.
// Inside single quotes the shell expands nothing: the placeholder stays
// as a quoted reference, printed as written. Run it with PowerEnv's
// variables.
func PowerCommand(cmd string) string {
	var b strings.Builder
	// quoting is the quotes open at each nesting: '"' inside double
	// quotes, 0 outside, a command substitution ($( or `) opening a new
	// level outside quotes.
	quoting := []byte{0}
	single := false
	for i := 0; i < len(cmd); i++ {
		c, top := cmd[i], quoting[len(quoting)-1]
		switch {
		case single:
			single = c != '\''
		case c == '\\' && i+1 < len(cmd):
			b.WriteByte(c)
			i++
			c = cmd[i]
		case c == '\'' && top == 0:
			single = true
		case c == '"' && top == '"':
			quoting[len(quoting)-1] = 0
		case c == '"':
			quoting[len(quoting)-1] = '"'
		case c == '$' && i+1 < len(cmd) && cmd[i+1] == '(':
			b.WriteString("$(")
			i++
			quoting = append(quoting, 0)
			continue
		case c == ')' && top == 0 && len(quoting) > 1:
			quoting = quoting[:len(quoting)-1]
		case c == '{':
			if p := placeholderRE.FindString(cmd[i:]); p != "" && strings.HasPrefix(cmd[i:], p) {
				if v := powerVar(p); v != "" {
					switch {
					case top == '"':
						b.WriteString("${" + v + "}")
						i += len(p) - 1
						continue
					default:
						b.WriteString(`"$` + v + `"`)
						i += len(p) - 1
						continue
					}
				}
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// powerVar is the variable placeholder p stands for ("" for none).
func powerVar(p string) string {
	for i, ph := range PowerPlaceholders {
		if p == ph {
			return PowerVars[i]
		}
	}
	return ""
}

// PowerEnv is the environment the power commands cmds run with: vals
// (keyed "path", "serial", "slot", "name") as DQ_PATH, DQ_SERIAL,
// DQ_SLOT and DQ_NAME, each set (empty when the drive has none) but the
// slot, which is set only where one of cmds uses it (PowerUses): a slot
// that holds what is not given is refused of a command that uses it, and
// a script's own use of a variable its command line does not name cannot
// be seen.
func PowerEnv(vals map[string]string, cmds ...string) []string {
	var out []string
	for i, p := range PowerPlaceholders {
		key := strings.Trim(p, "{}")
		if key == "slot" && !slices.ContainsFunc(cmds, func(c string) bool { return PowerUses(c, key) }) {
			continue
		}
		out = append(out, PowerVars[i]+"="+vals[key])
	}
	return out
}

// PowerUses says whether cmd uses key's value ("serial"): its placeholder
// or its variable.
func PowerUses(cmd, key string) bool {
	for i, p := range PowerPlaceholders {
		if strings.Trim(p, "{}") == key {
			return strings.Contains(cmd, p) || strings.Contains(cmd, PowerVars[i])
		}
	}
	return false
}

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
	if strings.TrimSpace(f.PowerCut) == "slot" {
		// Writing 0 to /sys/bus/pci/slots/N/power is pciehp's orderly
		// removal: the nvme driver's remove shuts the controller down,
		// flushing its volatile cache, before the power goes; and pciehp
		// makes that file for every hotplug slot, power controller or not.
		return append(out, [2]string{"power-cut", "slot is refused: powering a PCIe slot off through sysfs removes the drive in order (the driver shuts it down and its cache is flushed before the power goes), which tests nothing of a power loss; give -power-cut=CMD and -power-restore=CMD that cut the drive's power outright (a PDU outlet, a BMC, a power-cut fixture)"})
	}
	switch {
	case f.Drives == "":
		// A replay refuses both as live-only flags.
	case f.PowerCutHost && !cut:
		out = append(out, [2]string{"power-cut-host", "given without -power-cut: give the command that cuts the host's power (a BMC's, a PDU's)"})
	case f.PowerCutHost && restore:
		// The host that would run it is down: its power comes back by
		// the BMC's or PDU's own power-on, and the run goes on with
		// -resume after the reboot.
		out = append(out, [2]string{"power-restore", "given with -power-cut-host: the host that would run it has no power; bring the host back by its BMC or PDU (power on after the cut) and run the same command line with -resume after the reboot"})
	case f.PowerCutHost && !f.Destructive && !f.DryRun:
		out = append(out, [2]string{"power-cut", "cuts the host's power while the drives hold the run's writes: give -destructive (everything on them is destroyed)"})
	case f.PowerCutHost:
	case cut && !restore:
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
