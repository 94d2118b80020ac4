package cmdline

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

var powerTests = []validateTest{
	{"cut and restore with -destructive", Flags{Spec: "x", Precondition: "full", Drives: "/dev/a", Destructive: true,
		PowerCut: "cut {path} {serial}", PowerRestore: "restore {slot} {name}", Set: set("power-cut", "power-restore")}, nil},
	{"cut without -destructive", Flags{Spec: "x", Precondition: "full", Drives: "/dev/a",
		PowerCut: "cut {path}", PowerRestore: "restore {path}", Set: set("power-cut", "power-restore")},
		[]string{"parsing -power-cut: cuts the drives' power while fio writes to them: give -destructive"}},
	{"cut in a dry run without -destructive", Flags{Spec: "x", Precondition: "full", Drives: "/dev/a", DryRun: true,
		PowerCut: "cut {path}", PowerRestore: "restore {path}", Set: set("power-cut", "power-restore")}, nil},
	{"cut without restore", Flags{Spec: "x", Precondition: "full", Drives: "/dev/a", Destructive: true,
		PowerCut: "cut {path}", Set: set("power-cut")}, []string{"parsing -power-cut: given without -power-restore"}},
	{"restore without cut", Flags{Spec: "x", Precondition: "full", Drives: "/dev/a", Destructive: true,
		PowerRestore: "restore {path}", Set: set("power-restore")}, []string{"parsing -power-restore: given without -power-cut"}},
	{"empty cut", Flags{Spec: "x", Precondition: "full", Drives: "/dev/a", Destructive: true,
		PowerCut: " ", PowerRestore: "r", Set: set("power-cut", "power-restore")}, []string{"parsing -power-cut: empty"}},
	{"unknown placeholder", Flags{Spec: "x", Precondition: "full", Drives: "/dev/a", Destructive: true,
		PowerCut: "cut {dev}", PowerRestore: "r", Set: set("power-cut", "power-restore")},
		[]string{"parsing -power-cut: {dev} is not a placeholder: use {path}, {serial}, {slot}, {name}"}},
	{"slot cut", Flags{Spec: "x", Precondition: "full", Drives: "/dev/a", Destructive: true,
		PowerCut: "slot", Set: set("power-cut")}, []string{"parsing -power-cut: slot is refused: powering a PCIe slot off through sysfs removes the drive in order"}},
	{"slot cut padded", Flags{Spec: "x", Precondition: "full", Drives: "/dev/a", Destructive: true,
		PowerCut: "slot ", PowerRestore: "r", Set: set("power-cut", "power-restore")}, []string{"parsing -power-cut: slot is refused"}},
	{"host cut with -destructive", Flags{Spec: "x", Precondition: "full", Drives: "/dev/a", Destructive: true,
		PowerCut: "ipmitool chassis power off", PowerCutHost: true, Set: set("power-cut", "power-cut-host")}, nil},
	{"host cut without -destructive", Flags{Spec: "x", Precondition: "full", Drives: "/dev/a",
		PowerCut: "ipmitool chassis power off", PowerCutHost: true, Set: set("power-cut", "power-cut-host")},
		[]string{"parsing -power-cut: cuts the host's power while the drives hold the run's writes: give -destructive"}},
	{"host cut in a dry run", Flags{Spec: "x", Precondition: "full", Drives: "/dev/a", DryRun: true,
		PowerCut: "ipmitool chassis power off", PowerCutHost: true, Set: set("power-cut", "power-cut-host")}, nil},
	{"host cut with a restore", Flags{Spec: "x", Precondition: "full", Drives: "/dev/a", Destructive: true,
		PowerCut: "off", PowerRestore: "on", PowerCutHost: true, Set: set("power-cut", "power-restore", "power-cut-host")},
		[]string{"parsing -power-restore: given with -power-cut-host: the host that would run it has no power"}},
	{"host cut without a cut", Flags{Spec: "x", Precondition: "full", Drives: "/dev/a", Destructive: true,
		PowerCutHost: true, Set: set("power-cut-host")}, []string{"parsing -power-cut-host: given without -power-cut"}},
	{"host cut in a replay", Flags{Spec: "x", Precondition: "full", PowerCutHost: true, Set: set("power-cut-host")},
		[]string{"parsing -power-cut-host"}},
	{"cut in a replay", Flags{Spec: "x", Precondition: "full", PowerCut: "cut", PowerRestore: "r", Set: set("power-cut", "power-restore")},
		[]string{"parsing -power-cut", "parsing -power-restore"}},
}

func TestValidatePower(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range powerTests {
		t.Run(tt.name, func(t *testing.T) {
			tt.flags.Report = filepath.Join(dir, "report")
			_, errs := tt.flags.Validate(dir)
			require.Len(t, errs, len(tt.want), "Validate(%+v) = %v", tt.flags, errs)
			for i, want := range tt.want {
				assert.Contains(t, errs[i].Error(), want)
			}
		})
	}
}

// A drive's value reaches the command only through the environment: a
// serial holding a command substitution is not run, whatever quotes the
// command puts around its placeholder.
func TestPowerCommand(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "x")
	vals := map[string]string{"path": "/dev/loop0", "serial": "$(touch " + mark + ")it's", "name": "loop0"}
	for _, cmd := range []string{`echo "outlet {serial}"`, "echo outlet {serial}", "echo 'outlet {serial}'", `echo outlet "$DQ_SERIAL"`} {
		c := exec.Command("sh", "-c", PowerCommand(cmd))
		c.Env = append(os.Environ(), PowerEnv(vals, cmd)...)
		out, err := c.CombinedOutput()
		require.NoError(t, err, "%s: %s", cmd, out)
		_, statErr := os.Stat(mark)
		assert.True(t, os.IsNotExist(statErr), "%s ran the serial's command substitution", cmd)
		if cmd != "echo 'outlet {serial}'" {
			assert.Equal(t, "outlet "+vals["serial"]+"\n", string(out), cmd)
		}
	}
	assert.Equal(t, `cut --dev "$DQ_PATH" --sn "$DQ_SERIAL" "$DQ_SLOT""$DQ_NAME"`, PowerCommand("cut --dev {path} --sn {serial} {slot}{name}"))
	assert.True(t, PowerUses("x $DQ_SLOT", "slot"))
	// The slot is set only for a command that uses it: a script given
	// none cannot cut a slot not checked. The rest are always set.
	all := map[string]string{"path": "/dev/nvme1n1", "serial": "S1", "slot": "5", "name": "nvme1n1"}
	assert.Equal(t, []string{"DQ_PATH=/dev/nvme1n1", "DQ_SERIAL=S1", "DQ_NAME=nvme1n1"}, PowerEnv(all, "/opt/fixture/cut", "/opt/fixture/restore"))
	assert.Equal(t, []string{"DQ_PATH=/dev/nvme1n1", "DQ_SERIAL=S1", "DQ_SLOT=5", "DQ_NAME=nvme1n1"}, PowerEnv(all, "bmc off", `bmc on "$DQ_SLOT"`))
	assert.True(t, PowerUses("x {serial}", "serial"))
	assert.False(t, PowerUses("x {path}", "serial"))
}

// A placeholder inside double quotes stays one word, as written: a
// serial with spaces and a '*' is neither split nor globbed, in a
// command substitution too; one outside quotes is one word as well.
func TestPowerCommandInDoubleQuotes(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f1"), nil, 0o644))
	vals := map[string]string{"path": "/dev/loop0", "serial": "S1  ALL *", "name": "loop0"}
	for cmd, want := range map[string]string{
		`printf '%s|' "outlet {serial}"`:           "outlet S1  ALL *|",
		`printf '%s|' "outlet {serial}x" {serial}`: "outlet S1  ALL *x|S1  ALL *|",
		`printf '%s|' "$(printf '%s' "{serial}")"`: "S1  ALL *|",
		`printf '%s|' "a\"{serial}" '{serial}'`:    `a"S1  ALL *|{serial}|`,
		`printf '%s|' "$(printf '<%s>' {serial})"`: "<S1  ALL *>|",
	} {
		c := exec.Command("sh", "-c", PowerCommand(cmd))
		c.Dir = dir
		c.Env = append(os.Environ(), PowerEnv(vals, cmd)...)
		out, err := c.CombinedOutput()
		require.NoError(t, err, "%s: %s", cmd, out)
		assert.Equal(t, want, string(out), "%s run as %s", cmd, PowerCommand(cmd))
	}
}
