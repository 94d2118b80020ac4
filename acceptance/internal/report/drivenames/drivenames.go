// Package drivenames names a list of drives in short, in number order,
// with runs of consecutive names as a range ("nvme0n1–nvme23n1").
package drivenames

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// Compact names drives in short: "/dev/" dropped, runs of three or
// more consecutive names as a range ("loop16–loop39", "nvme0n1–nvme23n1":
// names that differ only in one number, each one more than the last),
// other names comma-separated, and after max entries "… and N more".
// Names are listed in number order ("loop9" before "loop10"), whatever
// order the paths came in: a glob expands in string order.
func Compact(paths []string, max int) string {
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = shortDrive(p)
	}
	slices.SortStableFunc(names, compareNames)
	var entries []string
	listed := 0
	for i := 0; i < len(names); {
		j := runEnd(names, i)
		if max > 0 && len(entries) >= max {
			break
		}
		if j-i >= 3 {
			entries = append(entries, names[i]+"–"+names[j-1])
			listed += j - i
			i = j
			continue
		}
		entries = append(entries, names[i])
		listed++
		i++
	}
	s := strings.Join(entries, ", ")
	if rest := len(names) - listed; rest > 0 {
		s += " … and " + strconv.Itoa(rest) + " more"
	}
	return s
}

// shortDrive is a drive's name without "/dev/": "loop16",
// "host-b:nvme0n1", "disk/by-id/nvme-X".
func shortDrive(p string) string {
	if host, path, ok := strings.Cut(p, ":/dev/"); ok {
		return host + ":" + path
	}
	return strings.TrimPrefix(p, "/dev/")
}

// runEnd is the end (exclusive) of the run of consecutive names that
// starts at names[i]: each differs from the one before in the same number
// only, by one more.
func runEnd(names []string, i int) int {
	j, at := i+1, -1
	for ; j < len(names); j++ {
		k := nextOf(names[j-1], names[j])
		if k < 0 || at >= 0 && k != at {
			break
		}
		at = k
	}
	return j
}

// nextOf is the index of the number in a that b has one more of, with
// every other part the same; -1 when b is not a's next.
func nextOf(a, b string) int {
	ta, tb := tokens(a), tokens(b)
	if len(ta) != len(tb) {
		return -1
	}
	at := -1
	for k := range ta {
		if ta[k] == tb[k] {
			continue
		}
		na, err1 := strconv.Atoi(ta[k])
		nb, err2 := strconv.Atoi(tb[k])
		if at >= 0 || err1 != nil || err2 != nil || nb != na+1 || zeroPadded(ta[k]) && len(ta[k]) != len(tb[k]) {
			return -1
		}
		at = k
	}
	return at
}

// compareNames orders names part by part, runs of digits by their
// number: "loop9" < "loop10", "nvme2n1" < "nvme10n1".
func compareNames(a, b string) int {
	ta, tb := tokens(a), tokens(b)
	for k := 0; k < len(ta) && k < len(tb); k++ {
		x, y := ta[k], tb[k]
		if x == y {
			continue
		}
		if isDigit(x[0]) && isDigit(y[0]) {
			// By value, however long: fewer digits (leading zeros aside)
			// is the smaller number.
			vx, vy := strings.TrimLeft(x, "0"), strings.TrimLeft(y, "0")
			if c := cmp.Compare(len(vx), len(vy)); c != 0 {
				return c
			}
			if c := strings.Compare(vx, vy); c != 0 {
				return c
			}
		}
		return strings.Compare(x, y)
	}
	return cmp.Compare(len(ta), len(tb))
}

// tokens cuts s into runs of digits and runs of anything else.
func tokens(s string) []string {
	var out []string
	start := 0
	for i := 1; i <= len(s); i++ {
		if i == len(s) || isDigit(s[i]) != isDigit(s[i-1]) {
			out = append(out, s[start:i])
			start = i
		}
	}
	return out
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// zeroPadded reports whether a number is written with leading zeros
// ("07"), so that its next has as many digits ("08", not "8").
func zeroPadded(n string) bool { return len(n) > 1 && n[0] == '0' }
