package specs

import (
	"fmt"
	"sort"
	"strings"
)

// Error is one problem found in a spec file.
type Error struct {
	File  string // the file name given to Parse or Load
	Line  int    // 1-based line of the offending key; 0 when unknown
	Where string // the part of the spec, e.g. `workload "4KB Random Read"`, `method`; may be empty
	Msg   string
}

// Error returns "FILE:LINE: WHERE: MSG", leaving out ":LINE" when Line is 0
// and "WHERE: " when Where is empty.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Where != "" {
		b.WriteString(e.Where)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrorList is every problem found in a spec file, sorted by line.
// Load and Parse return one (as an error) when anything is wrong.
type ErrorList []*Error

// Error returns one problem per line, sorted by line.
func (l ErrorList) Error() string {
	sorted := append(ErrorList(nil), l...)
	sorted.sort()
	lines := make([]string, len(sorted))
	for i, e := range sorted {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// sort orders the list by line, keeping the order of problems on one line.
func (l ErrorList) sort() {
	sort.SliceStable(l, func(i, j int) bool { return l[i].Line < l[j].Line })
}

// err returns l as an error, or nil when l is empty.
func (l ErrorList) err() error {
	if len(l) == 0 {
		return nil
	}
	l.sort()
	return l
}
