package fleetcheck

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A host's recording as the test writes it: its machine, boot, and each
// drive's path and identity as run.json records them.
type host struct {
	hostname, machine, boot string
	drives                  []drive
}

type drive struct {
	path, kind, nguid, serial, model string
	dev                              string // a loop device's file's device
	inode                            uint64 // and inode
}

func (h host) runJSON(n int) map[string]any {
	var drives, ids []map[string]any
	for _, d := range h.drives {
		drives = append(drives, map[string]any{"path": d.path, "model": d.model, "serial": d.serial, "bytes": 268435456})
		id := map[string]any{"kind": d.kind, "nguid": d.nguid, "serial": d.serial, "model": d.model, "nsid": 1, "bytes": 268435456}
		if d.inode != 0 {
			id["file"] = map[string]any{"dev": d.dev, "inode": d.inode}
		}
		ids = append(ids, id)
	}
	return map[string]any{"format": 2, "host": map[string]any{"hostname": h.hostname, "machine_id": h.machine},
		"boot_id": h.boot, "drives": drives, "identities": ids, "spec_file": "run" + string(rune('0'+n))}
}

func loops(n int, dev string, inode uint64) []drive {
	var ds []drive
	for i := range n {
		ds = append(ds, drive{path: "/dev/loop" + string(rune('0'+i)), kind: "loop", model: "loop", dev: dev, inode: inode + uint64(i)})
	}
	return ds
}

// serialOnly is a drive that reports no NGUID, EUI-64 or UUID.
func serialOnly(serial, model string) []drive {
	return []drive{{path: "/dev/nvme0n1", kind: "nvme", serial: serial, model: model}}
}

func nvmes(nguid string) []drive {
	var ds []drive
	for i := range 3 {
		ds = append(ds, drive{path: "/dev/nvme" + string(rune('0'+i)) + "n1", kind: "nvme", nguid: nguid + string(rune('0'+i)),
			serial: "PHAX" + nguid + string(rune('0'+i)), model: "SOLIDIGM SB5PH27X019T"})
	}
	return ds
}

type checkTest struct {
	name  string
	hosts []host
	want  string // in the one error; "": none
}

var checkTests = []checkTest{
	// Two CI runners cloned from one image create their loop devices'
	// images in the same order: the same inodes on the same device
	// number, on two machines, are two sets of drives.
	{"loop devices of two machines at the same inodes", []host{
		{"runner-a", "m-a", "b-a", loops(3, "252:1", 131075)},
		{"runner-b", "m-b", "b-b", loops(3, "252:1", 131075)},
	}, ""},
	{"loop devices of one machine at the same inodes, two boots", []host{
		{"runner-a", "m-a", "b-1", loops(3, "252:1", 131075)},
		{"runner-a", "m-a", "b-2", loops(3, "252:1", 131075)},
	}, "a drive in two runs: drive loop inode 131075 on device 252:1 on machine m-a is in"},
	// A 24-bay host qualifies a batch, the drives are hot-swapped for the
	// next batch without a reboot, and it runs again: the same paths in
	// one boot, other drives.
	{"one boot, the same paths, drives swapped", []host{
		{"bay24", "m", "b", nvmes("aa")},
		{"bay24", "m", "b", nvmes("bb")},
	}, ""},
	{"one boot, the same drives", []host{
		{"bay24", "m", "b", nvmes("aa")},
		{"bay24", "m", "b", nvmes("aa")},
	}, "one machine, one boot, the same drives"},
	// Two vendors' drives of one serial, neither reporting an NGUID,
	// EUI-64 or UUID: serial and model tell them apart.
	{"one serial, two vendors", []host{
		{"a", "m-a", "b-a", serialOnly("S1234", "VENDORA X1")},
		{"b", "m-b", "b-b", serialOnly("S1234", "VENDORB Y2")},
	}, ""},
	{"one serial, one model", []host{
		{"a", "m-a", "b-a", serialOnly("S1234", "VENDORA X1")},
		{"b", "m-b", "b-b", serialOnly("S1234", "VENDORA X1")},
	}, "a drive in two runs: drive serial S1234 namespace 1 model VENDORA X1 is in"},
}

func TestCheckDistinctDrives(t *testing.T) {
	for _, tt := range checkTests {
		t.Run(tt.name, func(t *testing.T) {
			var dirs []string
			for i, h := range tt.hosts {
				dir := filepath.Join(t.TempDir(), "host"+string(rune('a'+i)))
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				data, err := json.MarshalIndent(h.runJSON(i), "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "run.json"), data, 0o644); err != nil {
					t.Fatal(err)
				}
				dirs = append(dirs, dir)
			}
			err := errors.Join(Check(dirs, false)...)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Check(%s) = %v, want no error", tt.name, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Check(%s) = %v, want %q", tt.name, err, tt.want)
			}
		})
	}
}
