package cmdline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// -firmware and -firmware-back are files that must be there and readable,
// the step back needs the activation, and a live run without -destructive
// is refused naming -firmware and the fix (a dry run is not).
func TestFirmwareFlags(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "fw.bin")
	require.NoError(t, os.WriteFile(img, []byte("image"), 0o644))
	missing := filepath.Join(dir, "none.bin")
	report := filepath.Join(dir, "r")
	live := func(f Flags) Flags {
		f.Spec, f.Precondition, f.Report, f.Drives = "x", "full", report, "/dev/loop0"
		return f
	}
	tests := []struct {
		name  string
		flags Flags
		want  []string
	}{
		{"destructive", live(Flags{Firmware: img, FirmwareBack: img, Destructive: true}), nil},
		{"dry run", live(Flags{Firmware: img, DryRun: true}), nil},
		{"no destructive", live(Flags{Firmware: img}), []string{"parsing -firmware: the activation runs under a write load on the drives, which is refused without -destructive: give -destructive"}},
		{"missing image", live(Flags{Firmware: missing, Destructive: true}), []string{"parsing -firmware: stat " + missing + ": no such file or directory: give the path of a firmware image file you can read"}},
		{"directory", live(Flags{Firmware: dir, Destructive: true}), []string{"parsing -firmware: " + dir + " is not a regular file"}},
		{"back alone", live(Flags{FirmwareBack: img, Destructive: true}), []string{"parsing -firmware-back: given without -firmware"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, errs := tt.flags.Validate(dir)
			require.Len(t, errs, len(tt.want), "%v", errs)
			for i, w := range tt.want {
				assert.Contains(t, errs[i].Error(), w)
			}
			if len(tt.want) == 0 {
				assert.Equal(t, img, c.Firmware)
			}
		})
	}
}
