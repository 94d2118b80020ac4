package nvme

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"unicode"
)

// Uint128 is an unsigned 128-bit counter of the SMART log (data units,
// commands, hours, ...) or of identify data (capacities in bytes).
//
// nvme-cli has printed these counters in six ways (checked against its
// source at each tag), and all six parse:
//
//   - v1.x (its own JSON writer, `"key" : value`): a bare number printed
//     with "%.0Lf" from a long double, e.g. 499296134;
//   - v2.0 (json-c, json_object_new_double): a bare double, e.g.
//     499296134.0, in exponent form from 1e17 up (1.8446744073709552e+19);
//   - v2.1 (util_json_object_new_double): a "%Lf" string, e.g.
//     "499296134.000000", or "499296134,000000" under a locale whose
//     decimal point is a comma;
//   - v2.2 (util_json_object_new_uint128): a decimal string, "499296134";
//   - v2.3 (the same, through the locale's thousands separator): "499,296,134"
//     under en_US, "499.296.134" under de_DE, "499296134" under C;
//   - v2.4 and later (the string serialised unquoted): a bare integer that
//     may exceed 2^64, e.g. 18446744073709551617.
//
// Up to v2.1 the value went through a long double (v2.0: a double), so
// counters above 2^64 (v2.0: 2^53) arrive rounded; from v2.2 they are exact.
// A number with a fraction or exponent is accepted only when its value is
// an exact integer; decoding goes through json.Decoder.UseNumber and
// math/big, never through float64. Thousands separators are accepted only
// inside a JSON string, in groups of three digits, as v2.3 wrote them.
type Uint128 struct {
	Hi, Lo uint64
}

var two128 = new(big.Int).Lsh(big.NewInt(1), 128)

// Big returns u as a big.Int.
func (u Uint128) Big() *big.Int {
	b := new(big.Int).SetUint64(u.Hi)
	b.Lsh(b, 64)
	return b.Or(b, new(big.Int).SetUint64(u.Lo))
}

// String returns u in decimal.
func (u Uint128) String() string { return u.Big().String() }

// Uint64 returns u and whether it fits in 64 bits.
func (u Uint128) Uint64() (uint64, bool) { return u.Lo, u.Hi == 0 }

// IsZero reports whether u is 0.
func (u Uint128) IsZero() bool { return u.Hi == 0 && u.Lo == 0 }

// Uint128FromBig converts b, which must be in [0, 2^128).
func Uint128FromBig(b *big.Int) (Uint128, error) {
	if b.Sign() < 0 || b.Cmp(two128) >= 0 {
		return Uint128{}, fmt.Errorf("%s is not an unsigned 128-bit value", b)
	}
	lo := new(big.Int).And(b, new(big.Int).SetUint64(^uint64(0)))
	hi := new(big.Int).Rsh(b, 64)
	return Uint128{Hi: hi.Uint64(), Lo: lo.Uint64()}, nil
}

var decimalRE = regexp.MustCompile(`^[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?$`)

// ParseUint128 parses a counter as nvme-cli prints it, quoted or not (see
// Uint128).
func ParseUint128(s string) (Uint128, error) {
	t := strings.TrimSpace(s)
	if len(t) >= 2 && t[0] == '"' && t[len(t)-1] == '"' {
		return parseCounter(s, t[1:len(t)-1], true)
	}
	return parseCounter(s, t, false)
}

// parseCounter parses t, the text of a JSON number or (quoted) the
// contents of a JSON string; s is what to quote in errors.
func parseCounter(s, t string, quoted bool) (Uint128, error) {
	if quoted {
		t = unlocalize(strings.TrimSpace(t))
	}
	if !decimalRE.MatchString(t) {
		return Uint128{}, fmt.Errorf("%q is not an unsigned decimal number", s)
	}
	if n, ok := new(big.Int).SetString(t, 10); ok {
		return Uint128FromBig(n)
	}
	r, ok := new(big.Rat).SetString(t)
	if !ok {
		return Uint128{}, fmt.Errorf("%q is not an unsigned decimal number", s)
	}
	if !r.IsInt() {
		return Uint128{}, fmt.Errorf("%q is not a whole number", s)
	}
	// A fraction or exponent is a counter that nvme-cli rounded through a
	// double (v2.0) or long double (v2.1), which can round the largest
	// ones up past 2^128 − 1: v2.1 prints 2^128 − 1 as
	// "340282366920938463463374607431768211456.000000" (2^128). Within that
	// rounding it reads as 2^128 − 1.
	if n := r.Num(); n.Cmp(two128) >= 0 && n.Cmp(roundedMax) <= 0 {
		return Uint128{Hi: ^uint64(0), Lo: ^uint64(0)}, nil
	}
	return Uint128FromBig(r.Num())
}

// roundedMax is the largest value that a double or long double near
// 2^128 − 1 can print as: 2^128 plus one unit in a double's last place.
var roundedMax = new(big.Int).Add(two128, new(big.Int).Lsh(big.NewInt(1), 128-52))

// lfCommaRE is v2.1's "%Lf" under a locale whose decimal point is a comma.
var lfCommaRE = regexp.MustCompile(`^([0-9]+),([0-9]{6})$`)

// unlocalize undoes what nvme-cli's locale did to a quoted counter:
// v2.1's decimal comma ("1234,000000") and v2.3's thousands separator
// ("1,234,567", "1.234.567", "1 234 567"). Anything else is returned as is.
func unlocalize(t string) string {
	if m := lfCommaRE.FindStringSubmatch(t); m != nil {
		return m[1] + "." + m[2]
	}
	// Digit groups split by one separator, used throughout: 1 to 3 digits,
	// then groups of exactly 3 (uint128_t_to_string ignores the locale's
	// grouping rule and always groups by three).
	var digits strings.Builder
	sep, group, groups := "", 0, 0
	for i := 0; i < len(t); {
		if c := t[i]; c >= '0' && c <= '9' {
			digits.WriteByte(c)
			group++
			i++
			continue
		}
		j := i
		for j < len(t) && (t[j] < '0' || t[j] > '9') {
			j++
		}
		s := t[i:j]
		if !isSeparator(s) || (sep != "" && s != sep) || group == 0 || group > 3 || (groups > 0 && group != 3) {
			return t
		}
		sep, group, groups, i = s, 0, groups+1, j
	}
	if groups == 0 || group != 3 {
		return t
	}
	return digits.String()
}

// isSeparator reports whether s can be a locale's thousands separator:
// punctuation or white space other than a sign.
func isSeparator(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r == '-' || r == '+' || !(unicode.IsPunct(r) || unicode.IsSpace(r)) {
			return false
		}
	}
	return true
}

// UnmarshalJSON accepts a JSON number or a string holding one.
func (u *Uint128) UnmarshalJSON(b []byte) error {
	v, err := ParseUint128(string(bytes.TrimSpace(b)))
	if err != nil {
		return err
	}
	*u = v
	return nil
}

// MarshalJSON writes u as a bare JSON integer, as nvme-cli v2.4+ does.
func (u Uint128) MarshalJSON() ([]byte, error) { return []byte(u.String()), nil }

// decodeObject decodes one JSON object with numbers kept as json.Number.
func decodeObject(out []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if len(bytes.TrimSpace(out)) == 0 {
			return nil, fmt.Errorf("no output")
		}
		return nil, fmt.Errorf("output is not JSON (%v): %q", err, firstLine(out))
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("output is JSON but not an object: %q", firstLine(out))
	}
	return m, nil
}

// fields reads typed values out of a decoded object, collecting errors.
type fields struct {
	m    map[string]any
	errs []error
}

func (f *fields) has(key string) bool { _, ok := f.m[key]; return ok }

func (f *fields) fail(key string, v any, err error) {
	f.errs = append(f.errs, fmt.Errorf("%q: %v (value %v)", key, err, v))
}

func (f *fields) require(keys ...string) {
	for _, k := range keys {
		if !f.has(k) {
			f.errs = append(f.errs, fmt.Errorf("%q is missing", k))
		}
	}
}

func numText(v any) (string, bool) {
	switch t := v.(type) {
	case json.Number:
		return t.String(), true
	case string:
		return t, true
	}
	return "", false
}

func (f *fields) u128(key string) Uint128 {
	v, ok := f.m[key]
	if !ok {
		return Uint128{}
	}
	s, ok := numText(v)
	if !ok {
		f.fail(key, v, fmt.Errorf("not a number"))
		return Uint128{}
	}
	_, quoted := v.(string)
	u, err := parseCounter(s, s, quoted)
	if err != nil {
		f.fail(key, v, err)
	}
	return u
}

// int reads a signed integer in [min, max].
func (f *fields) int(key string, min, max int64) int64 {
	v, ok := f.m[key]
	if !ok {
		return 0
	}
	s, ok := numText(v)
	if !ok {
		f.fail(key, v, fmt.Errorf("not a number"))
		return 0
	}
	n, ok := new(big.Int).SetString(strings.TrimSpace(s), 10)
	if !ok || !n.IsInt64() || n.Int64() < min || n.Int64() > max {
		f.fail(key, v, fmt.Errorf("not an integer in [%d, %d]", min, max))
		return 0
	}
	return n.Int64()
}

// u32 reads an unsigned 32-bit field. nvme-cli built without json-c 0.14
// printed unsigned fields through json_object_new_int (int32), so a value
// of 2^31 or more came out negative: those are taken back modulo 2^32.
func (f *fields) u32(key string) uint32 {
	n := f.int(key, -1<<31, 1<<32-1)
	return uint32(n)
}

func (f *fields) str(key string) string {
	v, ok := f.m[key]
	if !ok {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		f.fail(key, v, fmt.Errorf("not a string"))
	}
	return s
}
