package specs

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/drivequal/drivequal/specs/internal/keylines"
)

// unknownWorkload is the message for a workload name that names no
// [[workload]] of ws: with "did you mean" when one is close to it, as an
// unknown key gets.
func unknownWorkload(ws []Workload, name string) string {
	msg := fmt.Sprintf("unknown workload %q", name)
	if s := suggestWorkload(ws, name); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return msg
}

// suggestWorkload returns the workload name of ws closest to name when it
// is close: the same up to case, "_" for " " (a subtest's spelling) and a
// few letters. A name whose numbers differ ("8KB" for "4KB") names another
// workload, not a misspelt one, and gets no suggestion.
func suggestWorkload(ws []Workload, name string) string {
	fold := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", " ")) }
	want := fold(name)
	best, bestD := "", max(2, len(want)/6)+1
	for _, w := range ws {
		if w.Name == "" || digits(w.Name) != digits(name) {
			continue
		}
		d := editDistance(want, fold(w.Name))
		if d < bestD || d == bestD && w.Name < best {
			best, bestD = w.Name, d
		}
	}
	if bestD >= len(want) {
		return ""
	}
	return best
}

// digits returns the digits of s, in order.
func digits(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsDigit(r) {
			return r
		}
		return -1
	}, s)
}

// dottedKey returns, for an unknown key piece that later keys of the
// document continue as a table (l.Key[:depth+1] followed by more
// pieces), the key as written with its dots ("read_p99.9_us") and the key
// of node it most likely meant ("read_p99_9_us"): TOML reads a dot in a
// bare key as a table, so "read_p99.9_us = 500" is key "9_us" in a table
// "read_p99". It returns "", "" when no later key continues piece or no key
// of node is close to the pieces joined.
func dottedKey(keys []keylines.Located, l keylines.Located, depth int, node *schema) (written, meant string) {
	prefix := l.Key[:depth+1]
	for _, k := range keys {
		if len(k.Key) <= len(prefix) || k.Elem != l.Elem || !samePieces(k.Key[:len(prefix)], prefix) {
			continue
		}
		rest := k.Key[len(prefix)-1:]
		joined := strings.Join(rest, "_")
		if _, ok := node.keys[joined]; ok {
			return strings.Join(rest, "."), joined
		}
		if s := suggest(joined, node); s != "" {
			return strings.Join(rest, "."), s
		}
	}
	return "", ""
}

func samePieces(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// SuggestWorkload returns the name of the workload of s closest to name
// (a workload's name or its subtest name, "4KB_Random_Read") when one is
// close, as a misspelt workload in the spec gets; "" otherwise.
func (s *Spec) SuggestWorkload(name string) string { return suggestWorkload(s.Workloads, name) }
