// Package fleetcheck checks the recordings of a fleet replay before any
// host's outputs are read: each host's run.json and recorded spec, what
// it says it holds, and that the runs are distinct runs of distinct
// drives.
package fleetcheck

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/device/identity"
	"github.com/drivequal/drivequal/acceptance/internal/fleet"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/specs"
)

// The most a fleet member's run.json may say it holds, checked before
// any host's outputs are read: far above a real run (24 drives, 72
// cells, a few hundred files).
const (
	// maxRunJSON is the largest run.json, in bytes.
	maxRunJSON = 64 << 20
	// maxRunDrives is the most drives one host's run may list.
	maxRunDrives = specs.MaxStepDrives
	// maxRunFiles is the most cells (tests) or files a run may list.
	maxRunFiles = 100_000
	// maxOutputHash is the largest cell output hashed to tell copies
	// apart (a 60 s cell's fio JSON+ is tens of MB at most).
	maxOutputHash = 256 << 20
	// emptySHA256 is the sha256 of no bytes: the output of a fio killed
	// before it printed, which two runs may share.
	emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

// Check checks every host's recording before any host's outputs
// are loaded: its run.json (a regular file within maxRunJSON), the size
// it says it holds, and the spec it was recorded with (loaded with the
// spec's bounds, file:line), then that the specs agree (unless -spec
// judges them all) and that the runs are distinct runs of distinct drives
// (fleet.Distinct). Every problem is returned, each naming its directory.
//
// replays are the directories of -replay; specGiven says -spec judges
// them all, so that their recorded specs need not agree.
func Check(replays []string, specGiven bool) []error {
	var errs []error
	var recs []fleet.Recording
	var infos []record.Run
	specOf := map[string][]string{} // spec sha256 -> the directories recorded with it
	var specOrder []string
	for _, dir := range replays {
		info, sum, err := readRunJSON(dir)
		if err != nil {
			errs = append(errs, fmt.Errorf("parsing -replay: %w", err))
			continue
		}
		if sum == "" {
			continue // no run.json: the member's own setup says what it lacks
		}
		where := filepath.Join(dir, "run.json")
		if n := len(info.Drives); n > maxRunDrives {
			errs = append(errs, fmt.Errorf("parsing -replay: %s lists %d drives, more than the %d one host's run may hold", where, n, maxRunDrives))
		}
		if n := max(len(info.Tests), len(info.Files)); n > maxRunFiles {
			errs = append(errs, fmt.Errorf("parsing -replay: %s lists %d cells or files, more than the %d one host's run may hold", where, n, maxRunFiles))
		}
		if info.SpecText != "" && !specGiven {
			if _, err := specs.Parse(where+": spec_text ("+info.SpecFile+")", []byte(info.SpecText)); err != nil {
				errs = append(errs, fmt.Errorf("parsing -replay: the spec recorded in %s does not load: %v: give -spec to judge with another", where, err))
				continue
			}
			s := sha256.Sum256([]byte(info.SpecText))
			key := hex.EncodeToString(s[:])
			if len(specOf[key]) == 0 {
				specOrder = append(specOrder, key)
			}
			specOf[key] = append(specOf[key], fmt.Sprintf("%s (%s)", dir, info.SpecFile))
		}
		recs = append(recs, fleet.Recording{Dir: dir, RunSHA256: sum, MachineID: info.Host.MachineID, BootID: info.BootID,
			Drives: driveIDs(info)})
		infos = append(infos, info)
	}
	if len(specOrder) > 1 {
		var parts []string
		for _, k := range specOrder {
			parts = append(parts, fmt.Sprintf("sha256 %s…: %s", k[:12], strings.Join(specOf[k], ", ")))
		}
		errs = append(errs, fmt.Errorf("parsing -replay: these runs cannot be judged as one fleet: they were recorded with %d different specs (%s); judge them all against one spec (replay with -spec)",
			len(specOrder), strings.Join(parts, "; ")))
	}
	if len(errs) > 0 {
		return errs
	}
	for i := range recs {
		recs[i].Outputs = outputSums(recs[i].Dir, infos[i])
	}
	if err := fleet.Distinct(recs); err != nil {
		errs = append(errs, fmt.Errorf("parsing -replay: these runs cannot be judged as one fleet:\n%w", err))
	}
	return errs
}

// readRunJSON reads dir's run.json and its sha256: "" and no error when
// there is none. Only a regular file within maxRunJSON is read.
func readRunJSON(dir string) (record.Run, string, error) {
	var info record.Run
	p := filepath.Join(dir, "run.json")
	st, err := os.Lstat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return info, "", nil
	case err != nil:
		return info, "", err
	case !st.Mode().IsRegular():
		return info, "", fmt.Errorf("%s is not a regular file (%s): a recording's files are its own", p, st.Mode().Type())
	case st.Size() > maxRunJSON:
		return info, "", fmt.Errorf("%s is %d bytes, more than the %d a run.json may be", p, st.Size(), maxRunJSON)
	}
	f, err := os.OpenFile(p, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return info, "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRunJSON+1))
	if err != nil {
		return info, "", err
	}
	if len(data) > maxRunJSON {
		return info, "", fmt.Errorf("%s is more than the %d bytes a run.json may be", p, maxRunJSON)
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return info, "", fmt.Errorf("%s: %v: fix or remove the file", p, err)
	}
	sum := sha256.Sum256(data)
	return info, hex.EncodeToString(sum[:]), nil
}

// outputSums is the sha256 of each fio output of the cells info lists:
// as run.json's files gives it, else read from dir (a regular file
// only). An empty output is left out.
func outputSums(dir string, info record.Run) map[string]string {
	out := map[string]string{}
	for _, test := range info.Tests {
		rel := path.Clean(test) + record.OutputExt
		if strings.HasPrefix(rel, "../") || path.IsAbs(rel) {
			continue
		}
		sum, ok := info.Files[rel]
		if !ok {
			sum = fileSHA256(dir, rel)
		}
		if sum != "" && sum != emptySHA256 {
			out[rel] = sum
		}
	}
	return out
}

// fileSHA256 is the sha256 of the file rel names in the recording dir,
// as record.Open allows it (a regular file inside dir, no symlinked
// directory on the way, no FIFO, within maxOutputHash bytes): "" when it
// is not one or does not read. Those are refused when the member's
// outputs are read.
func fileSHA256(dir, rel string) string {
	f, _, err := record.Open(dir, rel, maxOutputHash)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, maxOutputHash)); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// driveIDs is what tells each of info's drives from every other: its
// recorded identity (NGUID, EUI-64, UUID; a loop device's or file's
// inode on its machine) and its serial with its model.
func driveIDs(info record.Run) []fleet.DriveID {
	var ids []fleet.DriveID
	for i, d := range info.Drives {
		id := fleet.DriveID{Path: d.Path}
		if i < len(info.Identities) {
			id.Keys = append(id.Keys, machineLocal(info, info.Identities[i]))
		}
		if d.Serial != "" {
			id.Keys = append(id.Keys, fmt.Sprintf("serial %s model %s", d.Serial, d.Model))
		}
		ids = append(ids, id)
	}
	return ids
}

// machineLocal is ident's key, qualified by the machine it was recorded
// on when it is a loop device's or file's device and inode: those tell a
// file from another only on one machine, and runners cloned from one
// image create their test images at the same inodes of the same device
// numbers. Without a machine-id or hostname the key stays as it is.
//
// A key that is only what a vendor wrote (a serial with its namespace ID,
// for a drive reporting no NGUID, EUI-64 or UUID) carries the model too:
// two vendors may write the same serial.
func machineLocal(info record.Run, ident identity.Identity) string {
	k := ident.Key()
	if ids := ident.Identifiers(); len(ids) > 0 && !ids[0].Unique {
		return k + " model " + ident.Model
	}
	if k == "" || ident.Kind != "loop" && ident.Kind != "file" {
		return k
	}
	if m := cmp.Or(info.Host.MachineID, info.Host.Hostname); m != "" {
		return k + " on machine " + m
	}
	return k
}

// Unique returns name, or name with sep and the first number from 2 that
// makes it so, and marks it taken.
func Unique(name, sep string, taken map[string]bool) string {
	u := name
	for n := 2; taken[u]; n++ {
		u = name + sep + strconv.Itoa(n)
	}
	taken[u] = true
	return u
}

// MaxSlug is the most bytes of a host's slug: a directory name may be
// 255, and a recording's hostname is as long as its runner made it.
const MaxSlug = 64

// HostSlug is a host's name as one directory name under hosts/: letters,
// digits, "-" and "." kept, anything else "_", at most MaxSlug bytes
// (Unique tells two names alike that far apart), never "", "." or ".."
// nor hidden.
func HostSlug(name string) string {
	s := live.Slug(name)
	if len(s) > MaxSlug {
		s = s[:MaxSlug] // ASCII: Slug keeps no other byte
	}
	if strings.Trim(s, ".") == "" || strings.HasPrefix(s, ".") {
		s = "host" + s
	}
	return s
}
