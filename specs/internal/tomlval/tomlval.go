// Package tomlval reads one decoded TOML value of a spec as a typed
// value (a string, a number in its range, a size, a duration, a list of
// firmware revisions, drive counts or model patterns), each problem
// reported at the value's key in words that say the fix.
package tomlval

import (
	"fmt"
	"math"
	pathpkg "path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Value is one key of a table as decoded, and where its problems go.
type Value struct {
	Key string
	V   any
	Set bool // false when the key is absent
	// Errorf reports a problem at the key's line.
	Errorf func(format string, args ...any)
}

// Integer returns an integer value in [lo, hi]; def when unset.
func (v Value) Integer(def, lo, hi int64) (int64, bool) {
	if !v.Set {
		return def, true
	}
	n, ok := v.V.(int64)
	if !ok {
		v.Errorf("%s must be an integer, got %s", v.Key, TypeName(v.V))
		return 0, false
	}
	switch {
	case n < lo && (hi == math.MaxInt32 || hi == math.MaxInt64):
		v.Errorf("%s must be >= %d, got %d", v.Key, lo, n)
	case n < lo || n > hi:
		v.Errorf("%s must be between %d and %d, got %d", v.Key, lo, hi, n)
	default:
		return n, true
	}
	return n, false
}

// Limit returns an integer ≥ 0, or nil when unset or wrong.
func (v Value) Limit() *uint64 {
	if !v.Set {
		return nil
	}
	n, ok := v.Integer(0, 0, math.MaxInt64)
	if !ok {
		return nil
	}
	u := uint64(n)
	return &u
}

// byteUnits are the decimal units bytes reads, largest first.
var byteUnits = []struct {
	suffix string
	mult   float64
}{{"PB", 1e15}, {"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}}

// Bytes returns a size in bytes, given as an integer of bytes or as a
// string with a decimal unit ("1TB", "1.5 TB", "500GB"); nil when unset
// or wrong.
func (v Value) Bytes() *uint64 {
	if !v.Set {
		return nil
	}
	if _, ok := v.V.(int64); ok {
		return v.Limit()
	}
	str, ok := v.V.(string)
	if !ok {
		v.Errorf("%s must be a number of bytes or a size such as \"1TB\" (10^12 bytes), got %s", v.Key, TypeName(v.V))
		return nil
	}
	s := strings.ToUpper(strings.TrimSpace(str))
	for _, u := range byteUnits {
		num, found := strings.CutSuffix(s, u.suffix)
		if !found {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || f*u.mult >= math.MaxInt64 {
			break
		}
		n := uint64(math.Round(f * u.mult))
		return &n
	}
	v.Errorf("%s %q is not a size: write a number and a decimal unit, such as \"1TB\" (10^12 bytes) or \"500GB\"", v.Key, str)
	return nil
}

// Number returns an integer or float value as a float64; def when unset.
func (v Value) Number(def float64) (float64, bool) {
	if !v.Set {
		return def, true
	}
	switch n := v.V.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	v.Errorf("%s must be a number, got %s", v.Key, TypeName(v.V))
	return 0, false
}

// Tolerance returns a fraction in [0, 1); def when unset.
func (v Value) Tolerance(def float64) (float64, bool) {
	f, ok := v.Number(def)
	if ok && !(f >= 0 && f < 1) {
		hint := ""
		if f > 1 && f < 100 {
			hint = fmt.Sprintf("; for %v %% write %v", f, f/100)
		}
		v.Errorf("%s must be a fraction in [0, 1) (0.05 is 5 %%), got %v%s", v.Key, f, hint)
		return 0, false
	}
	return f, ok
}

// OpenFraction returns a share in (0, 1), such as a coverage or a
// confidence (0.95 is 95 %).
func (v Value) OpenFraction() (float64, bool) {
	f, ok := v.Number(0)
	if ok && !(f > 0 && f < 1) {
		v.Errorf("%s must be in (0, 1) (0.95 is 95 %%), got %v", v.Key, f)
		return 0, false
	}
	return f, ok
}

// Fraction returns a fraction of a mean, > 0 (0.20 is 20 %; above 1 is
// allowed, for targets whose figures swing, such as loop devices); def
// when unset.
func (v Value) Fraction(def float64) (float64, bool) {
	f, ok := v.Number(def)
	if ok && !(f > 0) || math.IsInf(f, 0) {
		v.Errorf("%s must be a fraction of the window mean > 0 (0.20 is 20 %%), got %v", v.Key, f)
		return 0, false
	}
	return f, ok
}

// Boolean returns a boolean value; def when unset.
func (v Value) Boolean(def bool) (bool, bool) {
	if !v.Set {
		return def, true
	}
	b, ok := v.V.(bool)
	if !ok {
		v.Errorf("%s must be true or false, got %s", v.Key, TypeName(v.V))
	}
	return b, ok
}

// Duration returns a duration written as a Go duration string ("60s",
// "30m", "1m30s"); def when unset. A duration must be > 0, or >= 0 when
// zeroOK.
func (v Value) Duration(def time.Duration, zeroOK bool) (time.Duration, bool) {
	if !v.Set {
		return def, true
	}
	s, ok := v.V.(string)
	if !ok {
		v.Errorf(`%s must be a duration string like "60s", got %s`, v.Key, TypeName(v.V))
		return 0, false
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		v.Errorf(`%s %q is not a duration (want e.g. "60s", "30m")`, v.Key, s)
	case d < 0 || d == 0 && !zeroOK:
		want := "> 0"
		if zeroOK {
			want = ">= 0"
		}
		v.Errorf("%s must be %s, got %q", v.Key, want, s)
	default:
		return d, true
	}
	return 0, false
}

// OneOf returns a string value that must be one of allowed; def when unset.
func (v Value) OneOf(def string, allowed ...string) (string, bool) {
	s, ok := v.Str(def)
	if !ok {
		return "", false
	}
	if slices.Contains(allowed, s) {
		return s, true
	}
	v.Errorf("%s %q is not one of %s", v.Key, s, strings.Join(allowed, ", "))
	return "", false
}

// Firmware returns a list of firmware revisions as id-ctrl reports them
// ("fr": at most 8 characters, trimmed); nil for an empty list.
func (v Value) Firmware() ([]string, bool) {
	arr, ok := v.V.([]any)
	if !ok {
		v.Errorf(`%s must be an array of firmware revisions like ["GDC7102Q"], got %s`, v.Key, TypeName(v.V))
		return nil, false
	}
	var out []string
	ok = true
	for _, e := range arr {
		fw, isStr := e.(string)
		switch {
		case !isStr:
			v.Errorf("%s must hold strings, got %s", v.Key, TypeName(e))
		case fw == "":
			v.Errorf("%s: a firmware revision must not be empty", v.Key)
		case strings.TrimSpace(fw) != fw:
			v.Errorf("%s: firmware revision %q has leading or trailing spaces, which id-ctrl's trimmed revision never has", v.Key, fw)
		case len(fw) > 8:
			v.Errorf("%s: firmware revision %q is longer than the 8 characters of id-ctrl's fr field", v.Key, fw)
		default:
			out = append(out, fw)
			continue
		}
		ok = false
	}
	if !ok {
		return nil, false
	}
	return out, true
}

// DriveCounts returns a non-empty, strictly ascending list of drive counts.
func (v Value) DriveCounts(maxCounts, maxDrives int) ([]int, bool) {
	arr, ok := v.V.([]any)
	if !ok {
		v.Errorf("%s must be an array of drive counts like [1, 2, 4], got %s", v.Key, TypeName(v.V))
		return nil, false
	}
	if len(arr) == 0 {
		v.Errorf("%s must list at least one drive count", v.Key)
		return nil, false
	}
	if len(arr) > maxCounts {
		v.Errorf("%s lists %d drive counts, more than the %d a spec may hold", v.Key, len(arr), maxCounts)
		return nil, false
	}
	out := make([]int, 0, len(arr))
	for _, e := range arr {
		n, isInt := e.(int64)
		switch {
		case !isInt:
			v.Errorf("%s must hold integers, got %s", v.Key, TypeName(e))
			return nil, false
		case n < 1:
			v.Errorf("%s: drive count %d must be >= 1", v.Key, n)
			return nil, false
		case n > int64(maxDrives):
			v.Errorf("%s: drive count %d is more than %d, the most drives one step may measure", v.Key, n, maxDrives)
			return nil, false
		case len(out) > 0 && int(n) <= out[len(out)-1]:
			v.Errorf("%s must be strictly ascending, got %d after %d", v.Key, n, out[len(out)-1])
			return nil, false
		}
		out = append(out, int(n))
	}
	return out, true
}

// BlockSize returns a block size in bytes, written as an integer or a
// string with an optional binary suffix: "4096", "4k", "4K", "4KiB", "4KB",
// "1m", "1MiB". k, K, KB and KiB all mean 1024 bytes, as in fio. The size
// must be > 0 and a multiple of 512.
func (v Value) BlockSize() (int64, bool) {
	var n int64
	switch b := v.V.(type) {
	case int64:
		n = b
	case string:
		var err error
		if n, err = ParseBlockSize(b); err != nil {
			v.Errorf("%s %q: %v", v.Key, b, err)
			return 0, false
		}
	default:
		v.Errorf(`%s must be a size like "4k" or a number of bytes, got %s`, v.Key, TypeName(v.V))
		return 0, false
	}
	if n <= 0 || n%512 != 0 {
		v.Errorf("%s must be > 0 and a multiple of 512 bytes, got %d", v.Key, n)
		return 0, false
	}
	return n, true
}

var sizeSuffixes = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
}

// ParseBlockSize parses a block size as fio writes it: a decimal integer
// with an optional suffix k/K/KB/KiB (1024 bytes), m/M/MB/MiB (1024²) or
// g/G/GB/GiB (1024³); suffixes ignore case. It returns bytes. It does not
// check the value (see the spec's rule: > 0, a multiple of 512).
func ParseBlockSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("not a size: want digits with an optional suffix like 4k, 128KiB")
	}
	mult, ok := sizeSuffixes[strings.ToLower(strings.TrimSpace(s[i:]))]
	if !ok {
		return 0, fmt.Errorf("unknown size suffix %q (want k, KiB, m, MiB, g, GiB)", s[i:])
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("size out of range")
	}
	return n * mult, nil
}

// ModelPatterns returns a list of model-number globs (modelglob.Match),
// each checked to be a valid pattern no longer than id-ctrl's 40
// characters of mn.
func (v Value) ModelPatterns(maxModels, maxLen int) []string {
	arr, ok := v.V.([]any)
	if !ok {
		v.Errorf(`%s must be an array of model-number patterns like ["SOLIDIGM SB5PH27X*"], got %s`, v.Key, TypeName(v.V))
		return nil
	}
	if len(arr) > maxModels {
		v.Errorf("%s lists %d patterns, more than the %d a spec may hold", v.Key, len(arr), maxModels)
		return nil
	}
	var out []string
	for _, e := range arr {
		m, isStr := e.(string)
		switch {
		case isStr && len(m) > maxLen:
			v.Errorf("%s: a pattern of %d characters is longer than %d", v.Key, len(m), maxLen)
		case !isStr:
			v.Errorf("%s must hold strings, got %s", v.Key, TypeName(e))
		case m == "" || strings.TrimSpace(m) != m:
			v.Errorf("%s: pattern %q is empty or has leading or trailing spaces, which id-ctrl's trimmed model number never has", v.Key, m)
		case len(m) > 40 && !strings.ContainsAny(m, "*?["):
			v.Errorf("%s: %q is longer than the 40 characters of id-ctrl's mn field", v.Key, m)
		default:
			if _, err := pathpkg.Match(m, ""); err != nil {
				v.Errorf("%s: %q is not a valid pattern (%v): * matches any characters, ? one, [abc] a set", v.Key, m, err)
				continue
			}
			out = append(out, m)
		}
	}
	if len(arr) == 0 {
		v.Errorf("%s is empty: leave the key out to accept any model", v.Key)
	}
	return out
}

// Str returns a string value; def when unset. It reports a wrong type.
func (v Value) Str(def string) (string, bool) {
	if !v.Set {
		return def, true
	}
	s, ok := v.V.(string)
	if !ok {
		v.Errorf("%s must be a string, got %s", v.Key, TypeName(v.V))
	}
	return s, ok
}

// TypeName names the TOML type of a decoded value.
func TypeName(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("string %q", v)
	case int64:
		return fmt.Sprintf("integer %d", v)
	case float64:
		return fmt.Sprintf("float %v", v)
	case bool:
		return fmt.Sprintf("boolean %v", v)
	case []any, []map[string]any:
		return "array"
	case map[string]any:
		return "table"
	case nil:
		return "nothing"
	}
	return "datetime"
}
