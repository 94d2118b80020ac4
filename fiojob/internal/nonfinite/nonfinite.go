// Package nonfinite makes fio's JSON decodable: the non-finite numbers fio prints bare (nan, inf) become 0.
package nonfinite

import "bytes"

// Zero returns b with every bare nan, -nan, inf, -inf (as glibc's
// printf("%f") writes non-finite numbers) outside strings replaced by 0.
// b itself is returned when there is nothing to replace.
func Zero(b []byte) []byte {
	if !mayHoldNonFinite(b) {
		return b
	}
	var out []byte // nil until the first replacement
	inString := false
	last := 0 // b[:last] is already in out
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
			continue
		}
		start := i
		j := i
		if c == '-' {
			j++
		}
		if j >= len(b) || !(b[j] == 'n' || b[j] == 'i') {
			continue
		}
		if start > 0 && inToken(b[start-1]) {
			// The tail of a number or word (1e3nan, 1-inf, xnan): not a
			// value fio printed, and zeroing it would make another number
			// (1e30) of what Unmarshal must reject.
			continue
		}
		k := j
		for k < len(b) && isLetter(b[k]) {
			k++
		}
		switch string(b[j:k]) {
		case "nan", "inf":
		default:
			i = k - 1 // null or a syntax error for Unmarshal to report
			continue
		}
		if k < len(b) && inToken(b[k]) {
			// Followed by a number's tail (nan.5, inf1): zeroed, it
			// would be another number (0.5).
			i = k - 1
			continue
		}
		out = append(out, b[last:start]...)
		out = append(out, '0')
		last = k
		i = k - 1
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// mayHoldNonFinite reports whether b holds "nan" or "inf" as a word of its
// own (not inside "minf" or "info"), the only way a bare nan or inf can
// appear; Zero then does the exact, slower pass.
func mayHoldNonFinite(b []byte) bool {
	for _, w := range [][]byte{[]byte("nan"), []byte("inf")} {
		for off := 0; ; {
			i := bytes.Index(b[off:], w)
			if i < 0 {
				break
			}
			i += off
			off = i + len(w)
			if i > 0 && (isLetter(b[i-1]) || b[i-1] >= '0' && b[i-1] <= '9' || b[i-1] == '_') {
				continue
			}
			if off < len(b) && isLetter(b[off]) {
				continue
			}
			return true
		}
	}
	return false
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// inToken reports whether c can be part of a JSON number or word, so that
// what follows it continues that token rather than starting a value.
func inToken(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '+' || c == '-'
}
