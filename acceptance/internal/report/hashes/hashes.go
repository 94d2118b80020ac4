// Package hashes says whether a replayed recording's files are as
// recorded, by the sha256 its run.json lists of each.
package hashes

import (
	"fmt"
	"strings"
)

// Check is how a replayed recording's files compare with the
// sha256 its run.json lists of each (recordings of format 3 on).
type Check struct {
	// Files is how many files run.json lists a sha256 of; 0 with
	// Unhashed, a recording made before they were.
	Files    int  `json:"files"`
	Unhashed bool `json:"unhashed,omitempty"`
	// Edited names each file changed or missing since it was recorded,
	// as "<path> (edited after recording: ...)".
	Edited []string `json:"edited,omitempty"`
}

// Line is summary.md's line on the recording's files; "" when there is
// nothing to say.
func (c *Check) Line() string {
	switch {
	case c == nil:
		return ""
	case c.Unhashed:
		return "The recording carries no sha256 of its files (recorded before drivequal kept them): whether a file was edited after recording cannot be told.\n"
	case len(c.Edited) > 0:
		return fmt.Sprintf("**%d of the %d files of the recording were edited after recording**, and were judged as they are now: %s.\n", len(c.Edited), c.Files, strings.Join(c.Edited, "; "))
	}
	return fmt.Sprintf("Every one of the %d files of the recording is as recorded (sha256).\n", c.Files)
}
