package fleet

import (
	"strings"
	"testing"
)

type distinctTest struct {
	name string
	recs []Recording
	want []string // each in the error; none: nil
}

var distinctTests = []distinctTest{
	{"distinct", []Recording{
		{Dir: "a", RunSHA256: "1", MachineID: "m1", BootID: "b", Outputs: map[string]string{"x.json": "o1"}, Drives: []DriveID{{Path: "/dev/nvme0n1", Keys: []string{"nguid 01"}}}},
		{Dir: "b", RunSHA256: "2", MachineID: "m2", BootID: "b", Outputs: map[string]string{"x.json": "o2"}, Drives: []DriveID{{Path: "/dev/nvme0n1", Keys: []string{"nguid 02"}}}},
	}, nil},
	{"three copies named once", []Recording{{Dir: "a", RunSHA256: "1"}, {Dir: "b", RunSHA256: "1"}, {Dir: "c", RunSHA256: "1"}},
		[]string{"fleet: copies of one run: a, b, c hold the same run.json (sha256 1)"}},
	{"the same output", []Recording{
		{Dir: "a", RunSHA256: "1", Outputs: map[string]string{"x.json": "o", "y.json": "p"}, Drives: []DriveID{{Path: "/d", Keys: []string{"k"}}}},
		{Dir: "b", RunSHA256: "2", Outputs: map[string]string{"x.json": "o", "y.json": "p"}, Drives: []DriveID{{Path: "/d", Keys: []string{"k"}}}},
	}, []string{"fleet: copies of one run: a, b hold the same fio output x.json (sha256 o)"}},
	{"one machine one boot other drives", []Recording{
		{Dir: "a", RunSHA256: "1", MachineID: "m", BootID: "b", Drives: []DriveID{{Path: "/dev/loop0"}}},
		{Dir: "b", RunSHA256: "2", MachineID: "m", BootID: "b", Drives: []DriveID{{Path: "/dev/loop1"}}},
	}, nil},
	{"one machine one boot the same drives", []Recording{
		{Dir: "a", RunSHA256: "1", MachineID: "m", BootID: "b", Drives: []DriveID{{Path: "/dev/loop1"}, {Path: "/dev/loop0"}}},
		{Dir: "b", RunSHA256: "2", MachineID: "m", BootID: "b", Drives: []DriveID{{Path: "/dev/loop0"}, {Path: "/dev/loop1"}}},
	}, []string{"one machine, one boot, the same drives: a, b were recorded on one machine (machine-id m) in one boot (boot id b) on the same drives (/dev/loop0, /dev/loop1)"}},
	{"a drive on two hosts", []Recording{
		{Dir: "a", RunSHA256: "1", Drives: []DriveID{{Path: "/dev/nvme0n1", Keys: []string{"nguid 01", "serial S model M"}}}},
		{Dir: "b", RunSHA256: "2", Drives: []DriveID{{Path: "/dev/nvme3n1", Keys: []string{"eui64 09", "serial S model M"}}}},
	}, []string{"a drive in two runs: drive serial S model M is in a (/dev/nvme0n1) and b (/dev/nvme3n1)"}},
}

func TestDistinct(t *testing.T) {
	for _, tt := range distinctTests {
		err := Distinct(tt.recs)
		if len(tt.want) == 0 {
			if err != nil {
				t.Errorf("Distinct(%s) = %v, want nil", tt.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("Distinct(%s) = nil, want %q", tt.name, tt.want)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Distinct(%s) = %q, want %q", tt.name, err, w)
			}
		}
		if n := strings.Count(err.Error(), "fleet: "); n != len(tt.want) {
			t.Errorf("Distinct(%s) = %d problems, want %d: %v", tt.name, n, len(tt.want), err)
		}
	}
}
