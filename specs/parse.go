package specs

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Defaults for keys a spec may leave out.
const (
	DefaultIOEngine            = "libaio"
	DefaultPurge               = "format"
	DefaultFillPasses          = 2
	DefaultRandomRuntime       = 30 * time.Minute
	DefaultSteadyStateDuration = 300 * time.Second
	// The SNIA PTS steady-state rule, measured by drivequal on fio's
	// per-round IOPS: over the last DefaultSteadyWindow rounds of
	// DefaultSteadyRound each, max − min within DefaultSteadyRange of the
	// window's mean and the best-fit line's excursion within
	// DefaultSteadySlope of it.
	DefaultSteadyRound  = time.Minute
	DefaultSteadyWindow = 5
	DefaultSteadyRange  = 0.20
	DefaultSteadySlope  = 0.10
	// A drive idle (no writes) for longer than DefaultIdleLimit is topped
	// up with its write twin for at most DefaultTopUpRuntime before a
	// random write or mixed measurement.
	DefaultIdleLimit        = 5 * time.Minute
	DefaultTopUpRuntime     = 2 * time.Minute
	DefaultScalingBaseline  = "spec"
	DefaultScalingTolerance = 0.10
	// [health]: a drive may not be past its rated endurance, and thermal
	// throttling during a cell makes it inconclusive.
	DefaultPercentUsedMax  = 100
	DefaultThermalThrottle = ThrottleInconclusive
)

// DefaultHealth is [health] with every key at its default: percent_used at
// most 100, any firmware, no new media errors or error log entries,
// avail_spare at or above spare_thresh, the composite temperature below
// WCTEMP, and a thermally throttled cell inconclusive.
func DefaultHealth() Health {
	return Health{PercentUsedMax: DefaultPercentUsedMax, ThermalThrottle: DefaultThermalThrottle}
}

// The private TOML shape. Every scalar is a value so that decoding never
// fails on a wrong type; conversion checks types and reports them all.
type (
	tomlSpec struct {
		Model        value             `toml:"model"`
		Source       value             `toml:"source"`
		Method       *tomlMethod       `toml:"method"`
		Precondition *tomlPrecondition `toml:"precondition"`
		Health       *tomlHealth       `toml:"health"`
		Workload     []tomlWorkload    `toml:"workload"`
		Capacity     []tomlCapacity    `toml:"capacity"`
		Scaling      *tomlScaling      `toml:"scaling"`
	}
	tomlMethod struct {
		Runtime   value `toml:"runtime"`
		RampTime  value `toml:"ramp_time"`
		IOEngine  value `toml:"ioengine"`
		Direct    value `toml:"direct"`
		Tolerance value `toml:"tolerance"`
	}
	tomlPrecondition struct {
		Purge               value `toml:"purge"`
		FillPasses          value `toml:"fill_passes"`
		RandomRuntime       value `toml:"random_runtime"`
		SteadyState         value `toml:"steadystate"`
		SteadyStateDuration value `toml:"steadystate_duration"`
		SteadyRound         value `toml:"steady_round"`
		SteadyWindow        value `toml:"steady_window"`
		SteadyRange         value `toml:"steady_range"`
		SteadySlope         value `toml:"steady_slope"`
		IdleLimit           value `toml:"idle_limit"`
		TopUpRuntime        value `toml:"topup_runtime"`
	}
	tomlHealth struct {
		PercentUsedMax           value `toml:"percent_used_max"`
		Firmware                 value `toml:"firmware"`
		MediaErrorsMaxIncrease   value `toml:"media_errors_max_increase"`
		ErrLogEntriesMaxIncrease value `toml:"err_log_entries_max_increase"`
		SpareMargin              value `toml:"spare_margin"`
		TemperatureMarginC       value `toml:"temperature_margin_c"`
		ThermalThrottle          value `toml:"thermal_throttle"`
	}
	tomlWorkload struct {
		Name         value `toml:"name"`
		RW           value `toml:"rw"`
		BS           value `toml:"bs"`
		IODepth      value `toml:"iodepth"`
		NumJobs      value `toml:"numjobs"`
		Metric       value `toml:"metric"`
		RWMixRead    value `toml:"rwmixread"`
		Precondition value `toml:"precondition"`
		Runtime      value `toml:"runtime"`
	}
	tomlCapacity struct {
		Name  value              `toml:"name"`
		Bytes value              `toml:"bytes"`
		Spec  map[string]value   `toml:"spec"`
		QoS   map[string]tomlQoS `toml:"qos"` // by workload name
	}
	// tomlQoS is one workload's latency limits in µs at one capacity.
	tomlQoS struct {
		ReadP50    value `toml:"read_p50_us"`
		ReadP99    value `toml:"read_p99_us"`
		ReadP999   value `toml:"read_p99_9_us"`
		ReadP9999  value `toml:"read_p99_99_us"`
		ReadP99999 value `toml:"read_p99_999_us"`
		ReadMax    value `toml:"read_max_us"`

		WriteP50    value `toml:"write_p50_us"`
		WriteP99    value `toml:"write_p99_us"`
		WriteP999   value `toml:"write_p99_9_us"`
		WriteP9999  value `toml:"write_p99_99_us"`
		WriteP99999 value `toml:"write_p99_999_us"`
		WriteMax    value `toml:"write_max_us"`
	}
	tomlScaling struct {
		Capacity  value                   `toml:"capacity"`
		Drives    value                   `toml:"drives"`
		Baseline  value                   `toml:"baseline"`
		Tolerance value                   `toml:"tolerance"`
		Override  map[string]tomlOverride `toml:"override"`
	}
	tomlOverride struct {
		IODepth value `toml:"iodepth"`
		NumJobs value `toml:"numjobs"`
	}
)

// value holds any TOML value as decoded, for checking later.
type value struct {
	v   any
	set bool
}

// UnmarshalTOML implements toml.Unmarshaler; it accepts anything.
func (v *value) UnmarshalTOML(data any) error {
	v.v, v.set = data, true
	return nil
}

// schema is every key a spec may hold. A nil value is a leaf (a scalar or
// an array of scalars); "*" matches any key name.
type schema map[string]schema

var specSchema = schema{
	"model":  nil,
	"source": nil,
	"method": {"runtime": nil, "ramp_time": nil, "ioengine": nil, "direct": nil, "tolerance": nil},
	"precondition": {"purge": nil, "fill_passes": nil, "random_runtime": nil,
		"steadystate": nil, "steadystate_duration": nil, "steady_round": nil, "steady_window": nil,
		"steady_range": nil, "steady_slope": nil, "idle_limit": nil, "topup_runtime": nil},
	"health": {"percent_used_max": nil, "firmware": nil, "media_errors_max_increase": nil,
		"err_log_entries_max_increase": nil, "spare_margin": nil, "temperature_margin_c": nil,
		"thermal_throttle": nil},
	"workload": {"name": nil, "rw": nil, "bs": nil, "iodepth": nil, "numjobs": nil,
		"metric": nil, "rwmixread": nil, "precondition": nil, "runtime": nil},
	"capacity": {"name": nil, "bytes": nil, "spec": {"*": nil}, "qos": {"*": {
		"read_p50_us": nil, "read_p99_us": nil, "read_p99_9_us": nil, "read_p99_99_us": nil,
		"read_p99_999_us": nil, "read_max_us": nil,
		"write_p50_us": nil, "write_p99_us": nil, "write_p99_9_us": nil, "write_p99_99_us": nil,
		"write_p99_999_us": nil, "write_max_us": nil,
	}}},
	"scaling": {"capacity": nil, "drives": nil, "baseline": nil, "tolerance": nil,
		"override": {"*": {"iodepth": nil, "numjobs": nil}}},
}

// Parse reads a spec from data. file names the spec in messages, and its
// base name without ".toml" becomes Spec.Name. When anything is wrong, the
// error is an ErrorList holding every problem found.
func Parse(file string, data []byte) (*Spec, error) {
	p := &parser{file: file}
	s := p.parse(data)
	if err := p.errs.err(); err != nil {
		return nil, err
	}
	s.Name = strings.TrimSuffix(filepath.Base(file), ".toml")
	s.File = file
	s.Text = data
	return s, nil
}

type parser struct {
	file  string
	lines keyLines
	errs  ErrorList
	raw   map[string]any
}

func (p *parser) addf(line int, where, format string, args ...any) {
	p.errs = append(p.errs, &Error{File: p.file, Line: line, Where: where, Msg: fmt.Sprintf(format, args...)})
}

func (p *parser) parse(data []byte) *Spec {
	// First as a plain map: syntax errors, unknown keys and the shape of
	// tables, all of which the struct decoding below would stop at.
	md, err := toml.Decode(string(data), &p.raw)
	if err != nil {
		p.decodeError(err)
		return nil
	}
	var keys []located
	keys, p.lines = locateKeys(data, md)
	p.checkKeys(keys)
	if !p.checkShape() {
		return nil
	}
	var t tomlSpec
	md, err = toml.Decode(string(data), &t)
	if err != nil {
		p.decodeError(err)
		return nil
	}
	if len(p.errs) == 0 {
		// checkKeys and tomlSpec should agree; if they ever do not, a key
		// must still not be ignored silently.
		for _, k := range md.Undecoded() {
			p.addf(0, "", "key %q is not used", k.String())
		}
	}
	return p.convert(&t)
}

var tomlLineRE = regexp.MustCompile(`^toml: line (\d+)(?: \(last key [^)]*\))?: `)

// decodeError records an error from the toml package with its line.
func (p *parser) decodeError(err error) {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		p.addf(pe.Position.Line, "", "syntax error: %s", pe.Message)
		return
	}
	msg := err.Error()
	line := 0
	if m := tomlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	p.addf(line, "", "%s", strings.TrimPrefix(msg, "toml: "))
}

// checkKeys reports every key not in specSchema. Keys under an unknown key
// are not reported again; keys under a leaf are left to its type check.
func (p *parser) checkKeys(keys []located) {
	reported := map[string]bool{}
	for _, l := range keys {
		node := specSchema
		for depth, piece := range l.key {
			child, ok := node[piece]
			if !ok {
				child, ok = node["*"]
			}
			if !ok {
				full := l.path(depth + 1)
				if !reported[full] {
					reported[full] = true
					msg := fmt.Sprintf("unknown key %q", piece)
					if s := suggest(piece, node); s != "" {
						msg += fmt.Sprintf("; did you mean %q?", s)
					}
					p.addf(l.line, p.where(l.key[:depth], l.elem), "%s", msg)
				}
				break
			}
			if child == nil {
				break
			}
			node = child
		}
	}
}

// suggest returns the key of node closest to piece, if it is close.
func suggest(piece string, node schema) string {
	best, bestD := "", 3
	for k := range node {
		if k == "*" {
			continue
		}
		d := editDistance(strings.ToLower(piece), k)
		if d < bestD || d == bestD && k < best {
			best, bestD = k, d
		}
	}
	if bestD > 2 || bestD >= len(piece) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// where names the part of the spec that table key k (with element elem of
// a top-level array) is, for messages.
func (p *parser) where(k toml.Key, elem int) string {
	if len(k) == 0 {
		return ""
	}
	switch k[0] {
	case "workload":
		return p.elemWhere("workload", elem)
	case "capacity":
		if len(k) >= 3 && k[1] == "qos" {
			return qosWhere(p.elemWhere("capacity", elem), k[2])
		}
		return p.elemWhere("capacity", elem)
	case "scaling":
		if len(k) >= 3 && k[1] == "override" {
			return fmt.Sprintf("scaling override %q", k[2])
		}
	}
	return k[0]
}

// elemWhere names element i of array of tables name by its name key, or by
// its position when it has none.
func (p *parser) elemWhere(name string, i int) string {
	if t := rawElems(p.raw[name]); i >= 0 && i < len(t) {
		if n, ok := t[i]["name"].(string); ok && n != "" {
			return fmt.Sprintf("%s %q", name, n)
		}
	}
	return fmt.Sprintf("%s #%d", name, i+1)
}

// rawElems returns the tables of a decoded array of tables, or nil if v is
// not one.
func rawElems(v any) []map[string]any {
	switch v := v.(type) {
	case []map[string]any:
		return v
	case []any:
		t := make([]map[string]any, len(v))
		for i, e := range v {
			m, ok := e.(map[string]any)
			if !ok {
				return nil
			}
			t[i] = m
		}
		return t
	}
	return nil
}

// checkShape reports tables that are not tables and arrays of tables that
// are not, which would stop the struct decoding. It reports whether the
// shape is right.
func (p *parser) checkShape() bool {
	ok := true
	bad := func(where, key, format string, args ...any) {
		ok = false
		p.addf(p.lines[key], where, format, args...)
	}
	for _, name := range []string{"method", "precondition", "health", "scaling"} {
		if v, set := p.raw[name]; set {
			if _, isTable := v.(map[string]any); !isTable {
				bad("", name, "%s must be a table ([%s]), got %s", name, name, typeName(v))
			}
		}
	}
	for _, name := range []string{"workload", "capacity"} {
		if v, set := p.raw[name]; set && rawElems(v) == nil {
			bad("", name, "%s must be an array of tables ([[%s]]), got %s", name, name, typeName(v))
		}
	}
	for i, c := range rawElems(p.raw["capacity"]) {
		if v, set := c["spec"]; set {
			if _, isTable := v.(map[string]any); !isTable {
				bad(p.elemWhere("capacity", i), path("capacity", index(i), "spec"),
					"spec must be a table ([capacity.spec]), got %s", typeName(v))
			}
		}
		if v, set := c["qos"]; set {
			q, isTable := v.(map[string]any)
			if !isTable {
				bad(p.elemWhere("capacity", i), path("capacity", index(i), "qos"),
					`qos must be a table of workloads ([capacity.qos."NAME"]), got %s`, typeName(v))
			}
			for name, v := range q {
				if _, isTable := v.(map[string]any); !isTable {
					bad(qosWhere(p.elemWhere("capacity", i), name), path("capacity", index(i), "qos", name),
						"limits must be a table ([capacity.qos.%q]), got %s", name, typeName(v))
				}
			}
		}
	}
	if sc, isTable := p.raw["scaling"].(map[string]any); isTable {
		if v, set := sc["override"]; set {
			o, isTable := v.(map[string]any)
			if !isTable {
				bad("scaling", path("scaling", "override"), "override must be a table, got %s", typeName(v))
			}
			for name, v := range o {
				if _, isTable := v.(map[string]any); !isTable {
					bad(fmt.Sprintf("scaling override %q", name), path("scaling", "override", name),
						"override must be a table ([scaling.override.%q]), got %s", name, typeName(v))
				}
			}
		}
	}
	return ok
}

// typeName names the TOML type of a decoded value.
func typeName(v any) string {
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

// table converts the keys of one TOML table, reporting problems at each
// key's line (or the table's, for a missing key) under one Where.
type table struct {
	p     *parser
	where string
	path  []string // keyLines path of the table
}

func (t table) line(key string) int {
	if key != "" {
		if l := t.p.lines[path(append(append([]string(nil), t.path...), key)...)]; l > 0 {
			return l
		}
	}
	if len(t.path) > 0 {
		return t.p.lines[path(t.path...)]
	}
	return 0
}

func (t table) errorf(key, format string, args ...any) {
	t.p.addf(t.line(key), t.where, format, args...)
}

func (t table) missing(key string) {
	t.errorf("", "missing required key %q", key)
}

// str returns a string value; def when unset. It reports a wrong type.
func (t table) str(key string, v value, def string) (string, bool) {
	if !v.set {
		return def, true
	}
	s, ok := v.v.(string)
	if !ok {
		t.errorf(key, "%s must be a string, got %s", key, typeName(v.v))
	}
	return s, ok
}

// requiredStr is str for a key that must be set and not empty.
func (t table) requiredStr(key string, v value) (string, bool) {
	if !v.set {
		t.missing(key)
		return "", false
	}
	s, ok := t.str(key, v, "")
	if ok && s == "" {
		t.errorf(key, "%s must not be empty", key)
		return "", false
	}
	return s, ok
}

// integer returns an integer value in [lo, hi]; def when unset.
func (t table) integer(key string, v value, def, lo, hi int64) (int64, bool) {
	if !v.set {
		return def, true
	}
	n, ok := v.v.(int64)
	if !ok {
		t.errorf(key, "%s must be an integer, got %s", key, typeName(v.v))
		return 0, false
	}
	return n, t.inRange(key, n, lo, hi)
}

func (t table) inRange(key string, n, lo, hi int64) bool {
	switch {
	case n < lo && (hi == math.MaxInt32 || hi == math.MaxInt64):
		t.errorf(key, "%s must be >= %d, got %d", key, lo, n)
	case n < lo || n > hi:
		t.errorf(key, "%s must be between %d and %d, got %d", key, lo, hi, n)
	default:
		return true
	}
	return false
}

// requiredInt is integer for a key that must be set.
func (t table) requiredInt(key string, v value, lo, hi int64) (int64, bool) {
	if !v.set {
		t.missing(key)
		return 0, false
	}
	return t.integer(key, v, 0, lo, hi)
}

// number returns an integer or float value as a float64; def when unset.
func (t table) number(key string, v value, def float64) (float64, bool) {
	if !v.set {
		return def, true
	}
	switch n := v.v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	t.errorf(key, "%s must be a number, got %s", key, typeName(v.v))
	return 0, false
}

// tolerance returns a fraction in [0, 1); def when unset.
func (t table) tolerance(key string, v value, def float64) (float64, bool) {
	f, ok := t.number(key, v, def)
	if ok && !(f >= 0 && f < 1) {
		t.errorf(key, "%s must be in [0, 1), got %v", key, f)
		return 0, false
	}
	return f, ok
}

// fraction returns a fraction of a mean, > 0 (0.20 is 20 %; above 1 is
// allowed, for targets whose figures swing, such as loop devices); def
// when unset.
func (t table) fraction(key string, v value, def float64) (float64, bool) {
	f, ok := t.number(key, v, def)
	if ok && !(f > 0) || math.IsInf(f, 0) {
		t.errorf(key, "%s must be a fraction of the window mean > 0 (0.20 is 20 %%), got %v", key, f)
		return 0, false
	}
	return f, ok
}

// boolean returns a boolean value; def when unset.
func (t table) boolean(key string, v value, def bool) (bool, bool) {
	if !v.set {
		return def, true
	}
	b, ok := v.v.(bool)
	if !ok {
		t.errorf(key, "%s must be true or false, got %s", key, typeName(v.v))
	}
	return b, ok
}

// duration returns a duration written as a Go duration string ("60s",
// "30m", "1m30s"); def when unset. A duration must be > 0, or >= 0 when
// zeroOK.
func (t table) duration(key string, v value, def time.Duration, zeroOK bool) (time.Duration, bool) {
	if !v.set {
		return def, true
	}
	s, ok := v.v.(string)
	if !ok {
		t.errorf(key, `%s must be a duration string like "60s", got %s`, key, typeName(v.v))
		return 0, false
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		t.errorf(key, `%s %q is not a duration (want e.g. "60s", "30m")`, key, s)
	case d < 0 || d == 0 && !zeroOK:
		want := "> 0"
		if zeroOK {
			want = ">= 0"
		}
		t.errorf(key, "%s must be %s, got %q", key, want, s)
	default:
		return d, true
	}
	return 0, false
}

// oneOf returns a string value that must be one of allowed; def when unset.
func (t table) oneOf(key string, v value, def string, allowed ...string) (string, bool) {
	s, ok := t.str(key, v, def)
	if !ok {
		return "", false
	}
	for _, a := range allowed {
		if s == a {
			return s, true
		}
	}
	t.errorf(key, "%s %q is not one of %s", key, s, strings.Join(allowed, ", "))
	return "", false
}
