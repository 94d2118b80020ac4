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
	// Edited names each file changed, missing or refused (not a regular
	// file inside the recording, or above its size limit) since it was
	// recorded, as "<path> (edited after recording: ...)".
	Edited []string `json:"edited,omitempty"`
	// Unvouched names each file the replay judged from that run.json
	// holds no sha256 of (a killed verify pass's stderr), as "<path>
	// (why)": whether it was edited cannot be told.
	Unvouched []string `json:"unvouched,omitempty"`
}

// Evidence says, for the verdict line, that the run was judged from
// edited evidence and which files; "" when it was not.
func (c *Check) Evidence() string {
	if c == nil || len(c.Edited)+len(c.Unvouched) == 0 {
		return ""
	}
	var parts []string
	if n := len(c.Edited); n > 0 {
		parts = append(parts, fmt.Sprintf("judged from edited evidence: %d of the %d files of the recording were edited, removed or refused since it was recorded (%s)", n, c.Files, paths(c.Edited)))
	}
	if n := len(c.Unvouched); n > 0 {
		parts = append(parts, fmt.Sprintf("judged from %d file%s run.json vouches for by no sha256 (%s)", n, plural(n), paths(c.Unvouched)))
	}
	return strings.Join(parts, "; ")
}

// paths are the files named in list (each "<path> (why)"), at most
// three, then how many more.
func paths(list []string) string {
	var out []string
	for i, e := range list {
		if i == 3 {
			out = append(out, fmt.Sprintf("and %d more", len(list)-3))
			break
		}
		p, _, _ := strings.Cut(e, " (")
		out = append(out, p)
	}
	return strings.Join(out, ", ")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Line is summary.md's line on the recording's files; "" when there is
// nothing to say.
func (c *Check) Line() string {
	switch {
	case c == nil:
		return ""
	case c.Unhashed:
		return "The recording carries no sha256 of its files (recorded before drivequal kept them): whether a file was edited after recording cannot be told.\n"
	case len(c.Edited) > 0 || len(c.Unvouched) > 0:
		var b strings.Builder
		if len(c.Edited) > 0 {
			fmt.Fprintf(&b, "**%d of the %d files of the recording were edited after recording** (changed, removed, or refused: not a regular file inside the recording, or above its size limit), and were judged as they are now; what needs a file removed or refused fails: %s.\n", len(c.Edited), c.Files, strings.Join(c.Edited, "; "))
		}
		if len(c.Unvouched) > 0 {
			fmt.Fprintf(&b, "**%d file%s judged that run.json holds no sha256 of**: whether %s edited cannot be told: %s.\n", len(c.Unvouched), plural(len(c.Unvouched)), map[bool]string{true: "it was", false: "they were"}[len(c.Unvouched) == 1], strings.Join(c.Unvouched, "; "))
		}
		return b.String()
	}
	return fmt.Sprintf("Every one of the %d files of the recording is as recorded (sha256).\n", c.Files)
}

// Join is the checks of a fleet's hosts (checks[i] of hosts[i]; nil where
// a host's says nothing) as one: each edited and unvouched file named with
// its host, so that the fleet's verdict line, summary.md and junit.xml say
// it was judged from edited evidence as a host's would; nil when every
// host's files are as recorded.
func Join(hosts []string, checks []*Check) *Check {
	var all Check
	for i, c := range checks {
		if c == nil {
			continue
		}
		all.Files += c.Files
		for _, e := range c.Edited {
			all.Edited = append(all.Edited, hosts[i]+": "+e)
		}
		for _, e := range c.Unvouched {
			all.Unvouched = append(all.Unvouched, hosts[i]+": "+e)
		}
	}
	if len(all.Edited)+len(all.Unvouched) == 0 {
		return nil
	}
	return &all
}
