package datacheck

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/device/sample"
	"github.com/drivequal/drivequal/acceptance/internal/record"
)

const size = 4 * sample.RegionBytes

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

var (
	zero = func() string {
		h := sha256.Sum256(make([]byte, sample.RegionBytes))
		return hex.EncodeToString(h[:])
	}()
	filled = []string{sum("a"), sum("b"), sum("c"), sum("d")}
	blank  = []string{zero, zero, zero, zero}
	tail   = []string{sum("a"), sum("b"), sum("c"), zero}
)

func printOf(h []string) sample.Print {
	return sample.Print{Size: size, Offsets: sample.Offsets(size), SHA256: h}
}

// run is a recording whose drive 0 holds h, last read after after,
// writing (when not "") the step writing it.
func run(h []string, after, writing string) record.Run {
	var r record.Run
	r.SetPrint(0, 1, printOf(h))
	d := r.Sample(0, 1)
	d.After, d.Writing = after, writing
	if after != "setup" {
		d.Wrote = "2 fill: sequential fill"
	}
	return r
}

// failedRun is a run whose drive 0 failed its read-back after the
// fill.
func failedRun() record.Run {
	r := run(filled, "3 verify: verify pass", "")
	r.Failures = []record.DriveFailure{{Drive: 0, Cause: "read-back failed"}}
	return r
}

type refusalTest struct {
	name  string
	prior record.Run
	// unconfirmed is why the drive's identity does not say it is the
	// recorded drive; "" when it does.
	unconfirmed string
	now         []string // nil: not read
	err         error
	// want is in the refusal, "" for none; read says whether the check
	// needs the drive's data.
	want string
	read bool
}

// Why match says a drive's identity does not say it is the recorded
// drive.
const (
	anon  = "reports nothing that tells it from another drive (it was matched by its path and device number alone)"
	inode = "is known only by its file's device and inode (inode 12 on device 8:1), which the file system gives the next file created once that file is deleted: neither an inode generation nor a birth time of both the recorded file and this one could be read (a deleted image, a file system that keeps neither), so its identity cannot tell it from a file created since at that inode"
)

var refusalTests = []refusalTest{
	{"as left", run(filled, "4 measure: TestSingleDrive/64MiB/4KB_Random_Read", ""), "", filled, nil, "", true},
	{"as left, anonymous", run(filled, "3 verify: verify pass", ""), anon, filled, nil, "", true},
	{"another drive at its path", run(filled, "3 verify: verify pass", ""), anon, blank, nil,
		"does not hold what the interrupted run left on it: the 128 KiB block at byte offset 0 (region 1 of the 4 sampled) holds zeros now, was other data; nothing was writing it when the run stopped (its sample was read after step 3 verify: verify pass, last written by step 2 fill: sequential fill)", true},
	{"identified, changed since", run(filled, "3 verify: verify pass", ""), "", tail, nil,
		"the 128 KiB block at byte offset 393216 (region 4 of the 4 sampled) holds zeros now, was other data", true},
	{"writing, identified", run(filled, "3 verify: verify pass", "4 measure: TestSingleDrive/64MiB/4KB_Random_Write"), "", nil, nil, "", false},
	{"writing, anonymous", run(filled, "3 verify: verify pass", "4 measure: TestSingleDrive/64MiB/4KB_Random_Write"), anon, filled, nil,
		"reports nothing that tells it from another drive (it was matched by its path and device number alone), and the interrupted run was writing it (4 measure: TestSingleDrive/64MiB/4KB_Random_Write)", true},
	{"blank, anonymous", run(blank, "setup", ""), anon, blank, nil, "its recorded sample holds only zeros, as any blank drive does", true},
	{"writing, known by inode alone", run(filled, "3 verify: verify pass", "4 measure: TestSingleDrive/64MiB/4KB_Random_Write"), inode, blank, nil,
		inode + ", and the interrupted run was writing it (4 measure: TestSingleDrive/64MiB/4KB_Random_Write)", true},
	{"as left, known by inode alone", run(filled, "3 verify: verify pass", ""), inode, filled, nil, "", true},
	{"another file at its inode", run(filled, "3 verify: verify pass", ""), inode, blank, nil, "does not hold what the interrupted run left on it", true},
	{"blank, identified", run(blank, "setup", ""), "", blank, nil, "", true},
	{"failed, identified", failedRun(), "", nil, nil, "", false},
	{"failed, anonymous", failedRun(), anon, blank, nil, "does not hold what the interrupted run left on it", true},
	{"no sample recorded", record.Run{}, "", filled, nil, "has no data sample in run.json (recorded by a drivequal that did not keep one)", true},
	{"does not read now", run(filled, "3 verify: verify pass", ""), "", nil, errors.New("EIO"), "does not read its data sample now: EIO", true},
}

func TestRefusals(t *testing.T) {
	for _, tt := range refusalTests {
		if got := Needed(tt.prior, 0, tt.unconfirmed == ""); got != tt.read {
			t.Errorf("%s: Needed = %v, want %v", tt.name, got, tt.read)
		}
		d := Drive{Index: 0, Path: "/dev/loop7", Unconfirmed: tt.unconfirmed, Err: tt.err}
		if tt.now != nil {
			d.Now = printOf(tt.now)
		}
		errs := Refusals(tt.prior, []Drive{d}, "/rec", "FIX")
		switch {
		case tt.want == "" && len(errs) > 0:
			t.Errorf("%s: Refusals = %v, want none", tt.name, errs)
		case tt.want != "" && len(errs) != 1:
			t.Errorf("%s: Refusals = %v, want one", tt.name, errs)
		case tt.want != "":
			msg := errs[0].Error()
			if !strings.Contains(msg, tt.want) || !strings.HasPrefix(msg, "parsing -resume: /dev/loop7 (drive 1 of the interrupted run in /rec) ") || !strings.HasSuffix(msg, "; FIX") {
				t.Errorf("%s: Refusals = %q, want it to name the drive, %q and the fix", tt.name, msg, tt.want)
			}
		}
	}
}
