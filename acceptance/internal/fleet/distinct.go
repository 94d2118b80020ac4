package fleet

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Recording is what tells one host's recorded run from another's, read
// from its run.json and its files before its cells are judged.
type Recording struct {
	Dir string // the recording's directory, as given; names it in messages
	// RunSHA256 is the sha256 (hex) of its run.json; "" without one.
	RunSHA256 string
	// MachineID and BootID are the host's machine-id and the kernel's boot
	// id when the drives were inspected; "" when not recorded.
	MachineID, BootID string
	// Outputs are the sha256 (hex) of its recorded fio outputs, by file
	// (relative to Dir). Two runs never print the same output: fio's
	// holds its start time and every latency counted.
	Outputs map[string]string
	// Drives are its drives' identities.
	Drives []DriveID
}

// DriveID is a recorded drive: its path on its host and what tells it
// from every other drive ("nguid …", "eui64 …", "uuid …", "serial S model
// M", a loop device's or file's "loop DEV:INODE"); keys empty when the
// recording says nothing that tells it.
type DriveID struct {
	Path string
	Keys []string
}

// Distinct refuses recordings that are not distinct runs of distinct
// drives: copies of one run (the same run.json, or the same fio output),
// runs recorded on one machine in one boot, and a drive that appears in
// two runs (it would be counted twice in the fleet and the lot). Each
// problem names every recording it concerns; nil when there is none.
func Distinct(recs []Recording) error {
	var errs []error
	same := func(what string, key func(Recording) []string, why func(key string, dirs []string) string) {
		dirs := map[string][]string{}
		var order []string
		for _, r := range recs {
			for _, k := range key(r) {
				if k == "" {
					continue
				}
				if len(dirs[k]) == 0 {
					order = append(order, k)
				}
				if !slices.Contains(dirs[k], r.Dir) {
					dirs[k] = append(dirs[k], r.Dir)
				}
			}
		}
		said := map[string]bool{} // the recordings named together, once
		for _, k := range order {
			if d := dirs[k]; len(d) > 1 && !said[strings.Join(d, "\x00")] {
				said[strings.Join(d, "\x00")] = true
				errs = append(errs, fmt.Errorf("fleet: %s: %s", what, why(k, d)))
			}
		}
	}
	// Recordings named as copies are not named again for what copies
	// share (their machine, their drives).
	copies := map[string]bool{}
	same("copies of one run", func(r Recording) []string { return []string{r.RunSHA256} },
		func(k string, dirs []string) string {
			for _, d := range dirs {
				copies[d] = true
			}
			return fmt.Sprintf("%s hold the same run.json (sha256 %s); judge the run once", strings.Join(dirs, ", "), short(k))
		})
	same("copies of one run", func(r Recording) []string {
		if copies[r.Dir] {
			return nil
		}
		var sums []string
		for _, f := range sortedFiles(r.Outputs) {
			sums = append(sums, r.Outputs[f]+"\x00"+f)
		}
		return sums
	}, func(k string, dirs []string) string {
		for _, d := range dirs {
			copies[d] = true
		}
		sum, file, _ := strings.Cut(k, "\x00")
		return fmt.Sprintf("%s hold the same fio output %s (sha256 %s), which no two runs print; judge the run once", strings.Join(dirs, ", "), file, short(sum))
	})
	// One machine in one boot may record several runs of other drives
	// (a 24-bay host's batch hot-swapped for the next between runs); on
	// the same drives they are one run, or its drives measured twice. A
	// drive is what tells it (its first key), its path only when nothing
	// does: the same paths in one boot may be other drives.
	same("one machine, one boot, the same drives", func(r Recording) []string {
		if copies[r.Dir] || r.MachineID == "" || r.BootID == "" || len(r.Drives) == 0 {
			return nil
		}
		paths := make([]string, len(r.Drives))
		for i, d := range r.Drives {
			paths[i] = d.Path
			if len(d.Keys) > 0 && d.Keys[0] != "" {
				paths[i] = d.Keys[0]
			}
		}
		slices.Sort(paths)
		return []string{r.MachineID + "\x00" + r.BootID + "\x00" + strings.Join(paths, ", ")}
	}, func(k string, dirs []string) string {
		parts := strings.SplitN(k, "\x00", 3)
		for _, d := range dirs {
			copies[d] = true
		}
		return fmt.Sprintf("%s were recorded on one machine (machine-id %s) in one boot (boot id %s) on the same drives (%s): the same run, or its drives measured twice; judge one of them",
			strings.Join(dirs, ", "), parts[0], parts[1], parts[2])
	})
	paths := map[string]string{} // dir + key -> the drive's path there
	same("a drive in two runs", func(r Recording) []string {
		var keys []string
		if copies[r.Dir] {
			return nil
		}
		for _, d := range r.Drives {
			for _, k := range d.Keys {
				if k != "" && !slices.Contains(keys, k) {
					keys = append(keys, k)
					paths[r.Dir+"\x00"+k] = d.Path
				}
			}
		}
		return keys
	}, func(k string, dirs []string) string {
		where := make([]string, len(dirs))
		for i, d := range dirs {
			where[i] = fmt.Sprintf("%s (%s)", d, paths[d+"\x00"+k])
		}
		return fmt.Sprintf("drive %s is in %s; a drive measured in two runs is one drive: leave out the run that should not count", k, strings.Join(where, " and "))
	})
	return errors.Join(errs...)
}

// sortedFiles is the files of m in order, so that messages are stable.
func sortedFiles(m map[string]string) []string {
	files := make([]string, 0, len(m))
	for f := range m {
		files = append(files, f)
	}
	slices.Sort(files)
	return files
}
