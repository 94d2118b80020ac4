// Package modelglob matches a drive's model number against a spec's
// model pattern.
package modelglob

import (
	"path"
	"strings"
)

// Match reports whether model matches the glob pattern: path.Match's
// syntax (* any characters, ? one, [abc] and [^a-z] a set, \ quotes the
// next character), except that * and ? match "/" too: a model number is
// not a path, and some vendors' have a "/" in them. The only error is
// path.ErrBadPattern, for a malformed pattern.
func Match(pattern, model string) (bool, error) {
	// path.Match's * and ? stop at "/": both sides get "/" as U+FFFF, a
	// noncharacter that no model number (ASCII) holds.
	const slash = "\uffff"
	return path.Match(strings.ReplaceAll(pattern, "/", slash), strings.ReplaceAll(model, "/", slash))
}
