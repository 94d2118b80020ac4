package cmdline

import (
	"fmt"
	"io"
	"os"
)

// firmwareImages checks -firmware and -firmware-back: each a readable
// regular file, -firmware-back only with -firmware, and both refused
// without -destructive in a live run (the activation runs under a write
// load), before any drive is opened. It returns their absolute paths.
func (f *Flags) firmwareImages(root string, bad func(flagName, format string, args ...any)) (string, string) {
	var out [2]string
	for i, name := range []string{"firmware", "firmware-back"} {
		v := []string{f.Firmware, f.FirmwareBack}[i]
		if v == "" {
			if f.Set[name] {
				bad(name, "empty: give the path of a firmware image file")
			}
			continue
		}
		p := resolveInput(root, v)
		if err := readable(p); err != nil {
			bad(name, "%v: give the path of a firmware image file you can read", err)
			continue
		}
		out[i] = p
	}
	if f.FirmwareBack != "" && f.Firmware == "" {
		bad("firmware-back", "given without -firmware: the step back follows the activation of -firmware=FILE; give both")
	}
	if f.Firmware != "" && f.Drives != "" && !f.Destructive && !f.DryRun {
		bad("firmware", "the activation runs under a write load on the drives, which is refused without -destructive: give -destructive (everything on the drives is destroyed), or -dry-run to see the steps")
	}
	return out[0], out[1]
}

// readable opens path and reads a byte: a regular file that is there and
// can be read.
func readable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	if _, err := fh.Read(make([]byte, 1)); err != nil && err != io.EOF {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	return nil
}
