package nvme

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
)

// SanitizeStatus is the status of the most recent sanitize operation:
// bits 2:0 of the sanitize log's SSTAT.
type SanitizeStatus uint8

const (
	SanitizeNever              SanitizeStatus = 0 // the NVM subsystem has never been sanitized
	SanitizeCompleted          SanitizeStatus = 1 // the last sanitize completed successfully
	SanitizeInProgress         SanitizeStatus = 2 // a sanitize is in progress
	SanitizeFailed             SanitizeStatus = 3 // the last sanitize failed
	SanitizeCompletedNoDealloc SanitizeStatus = 4 // completed successfully, No-Deallocate After Sanitize requested
)

func (s SanitizeStatus) String() string {
	switch s {
	case SanitizeNever:
		return "never sanitized"
	case SanitizeCompleted:
		return "completed"
	case SanitizeInProgress:
		return "in progress"
	case SanitizeFailed:
		return "failed"
	case SanitizeCompletedNoDealloc:
		return "completed (no deallocation)"
	}
	return fmt.Sprintf("unknown status %d", uint8(s))
}

// Succeeded reports whether the last sanitize completed successfully
// (status 1, or 4 when No-Deallocate After Sanitize was requested).
func (s SanitizeStatus) Succeeded() bool {
	return s == SanitizeCompleted || s == SanitizeCompletedNoDealloc
}

// SanitizeLog is the sanitize status log (`nvme sanitize-log -o json`).
// nvme-cli nests it under the device name ({"nvme0": {...}}) and prints
// SSTAT decoded, as an object whose "status" is "(N) text".
type SanitizeLog struct {
	// Device is the name nvme-cli nested the log under ("nvme0"); "" if
	// the log was not nested.
	Device string
	// Progress is SPROG: the fraction of the sanitize in progress that is
	// done, in units of 1/65536; 65535 when none is in progress.
	Progress uint16
	// Status is SSTAT bits 2:0.
	Status SanitizeStatus
	// StatusText is nvme-cli's wording of Status.
	StatusText string
	// GlobalErased is SSTAT bit 8: no user data has been written since the
	// last sanitize (or ever, with Status SanitizeNever).
	GlobalErased bool
	// Passes is the number of completed overwrite passes (SSTAT bits 7:3).
	Passes int
	// CDW10 is the command dword 10 of the last sanitize (its action in bits 2:0).
	CDW10 uint32
}

// Percent returns Progress as a percentage (0 to 100).
func (l SanitizeLog) Percent() float64 {
	return float64(l.Progress) * 100 / 65536
}

var sstatTextRE = regexp.MustCompile(`^\((\d+)\)\s*(.*)$`)

// ParseSanitizeLog parses `nvme sanitize-log -o json`. It reads the status
// from "sstat"."status" ("(1) Most Recent Sanitize Command Completed
// Successfully."), from nvme-cli v2.7–v2.8, which keyed that string by its
// own text, and from a plain number (SSTAT undecoded).
func ParseSanitizeLog(out []byte) (SanitizeLog, error) {
	m, err := decodeObject(out)
	if err != nil {
		return SanitizeLog{}, err
	}
	var l SanitizeLog
	if _, ok := m["sprog"]; !ok && len(m) == 1 {
		for k, v := range m {
			if inner, ok := v.(map[string]any); ok {
				l.Device, m = k, inner
			}
		}
	}
	f := &fields{m: m}
	f.require("sprog", "sstat")
	l.Progress = uint16(f.int("sprog", 0, 0xffff))
	l.CDW10 = f.u32("cdw10_info")
	switch st := m["sstat"].(type) {
	case nil:
	case map[string]any:
		text, _ := st["status"].(string)
		if text == "" {
			// v2.7–v2.8: obj_add_str(sstat, status_str, str).
			for _, v := range st {
				if s, ok := v.(string); ok && sstatTextRE.MatchString(s) {
					text = s
				}
			}
		}
		mm := sstatTextRE.FindStringSubmatch(text)
		if mm == nil {
			f.errs = append(f.errs, fmt.Errorf("\"sstat\" has no \"(N) ...\" status (value %v)", st))
			break
		}
		n, err := strconv.Atoi(mm[1])
		if err != nil || n > 7 {
			f.errs = append(f.errs, fmt.Errorf("\"sstat\" status %q is not 0 to 7", text))
			break
		}
		l.Status, l.StatusText = SanitizeStatus(n), mm[2]
		sub := &fields{m: st}
		l.GlobalErased = sub.int("global_erased", 0, 1) == 1
		l.Passes = int(sub.int("no_cmplted_passes", 0, 31))
		for _, e := range sub.errs {
			f.errs = append(f.errs, fmt.Errorf("\"sstat\": %w", e))
		}
	default:
		v := uint16(f.int("sstat", 0, 0xffff))
		l.Status = SanitizeStatus(v & 7)
		l.Passes = int(v>>3) & 31
		l.GlobalErased = v&(1<<8) != 0
		l.StatusText = l.Status.String()
	}
	return l, errors.Join(f.errs...)
}
