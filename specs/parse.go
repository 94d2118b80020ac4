package specs

import (
	"errors"
	"fmt"
	"github.com/drivequal/drivequal/specs/internal/keylines"
	"github.com/drivequal/drivequal/specs/internal/tomlval"
	"path/filepath"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Defaults for keys a spec may leave out.
const (
	DefaultIOEngine = "libaio"
	DefaultPurge    = "format"
	// DefaultPurgeVerify: no purge at the end of the run unless
	// -purge-after asks for one.
	DefaultPurgeVerify         = PurgeVerifyNone
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
	// [baseline]: a drop of more than 5 % that is significant at the 5 %
	// level is a regression.
	DefaultBaselineTolerance = 0.05
	DefaultBaselineAlpha     = 0.05
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
	return Health{PercentUsedMax: DefaultPercentUsedMax, ThermalThrottle: DefaultThermalThrottle,
		OCP: OCPHealth{CapacitorHealthMin: DefaultCapacitorHealthMin}}
}

// Parse reads a spec from data. file names the spec in messages, and its
// base name without ".toml" becomes Spec.Name. When anything is wrong, the
// error is an ErrorList holding every problem found.
func Parse(file string, data []byte) (*Spec, error) {
	if len(data) > MaxSpecBytes {
		return nil, ErrorList{sizeError(file, len(data))}
	}
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
	raw   map[string]any // the document, decoded once
	lines keylines.Lines
	spec  *Spec // the spec converted so far, for keys naming other parts of it
	errs  ErrorList
}

func (p *parser) addf(line int, where, format string, args ...any) {
	p.errs = append(p.errs, &Error{File: p.file, Line: line, Where: where, Msg: fmt.Sprintf(format, args...)})
}

// parse decodes data into a map and checks it against specKeys: unknown
// keys, then the shape of tables, then, when every table is a table,
// every value as it is converted.
func (p *parser) parse(data []byte) *Spec {
	md, err := toml.Decode(string(data), &p.raw)
	if err != nil {
		p.decodeError(err)
		return nil
	}
	var keys []keylines.Located
	keys, p.lines = keylines.Locate(data, md)
	p.checkKeys(keys)
	if !p.checkShape(specSchema, p.raw, nil, -1) || !p.checkCounts() {
		return nil
	}
	p.spec = &Spec{}
	specKeys.convert(table{p: p, raw: p.raw}, p.spec)
	return p.spec
}

// decodeError records an error from the toml package with its line.
func (p *parser) decodeError(err error) {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		p.addf(pe.Position.Line, "", "syntax error: %s", pe.Message)
		return
	}
	p.addf(0, "", "%s", strings.TrimPrefix(err.Error(), "toml: "))
}

// checkKeys reports every key not in specSchema. Keys under an unknown key
// are not reported again; keys under a leaf are left to its type check.
func (p *parser) checkKeys(keys []keylines.Located) {
	reported := map[string]bool{}
	for _, l := range keys {
		node := specSchema
		for depth, piece := range l.Key {
			child, ok := node.keys[piece]
			if !ok {
				child, ok = node.keys["*"]
			}
			if !ok {
				full := l.Path(depth + 1)
				if !reported[full] {
					reported[full] = true
					msg := fmt.Sprintf("unknown key %q", piece)
					if written, meant := dottedKey(keys, l, depth, node); meant != "" {
						msg = fmt.Sprintf("unknown key %q: TOML reads the dots in %s as tables; did you mean %q?", written, written, meant)
					} else if s := suggest(piece, node); s != "" {
						msg += fmt.Sprintf("; did you mean %q?", s)
					}
					p.addf(l.Line, p.where(l.Key[:depth], l.Elem), "%s", msg)
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
func suggest(piece string, node *schema) string {
	best, bestD := "", 3
	for _, k := range node.names {
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

// checkShape reports every key of table m (key k, in element elem of a
// top-level array or -1) that node says holds a table or an array of
// tables and that does not, which the conversion could not go into. It
// reports whether the shape is right.
func (p *parser) checkShape(node *schema, m map[string]any, k toml.Key, elem int) bool {
	ok := true
	for _, name := range node.names {
		child := node.keys[name]
		if child == nil {
			continue // a leaf: its conversion checks its type
		}
		names := []string{name}
		if name == "*" {
			names = sortedKeys(m)
		}
		for _, n := range names {
			v, set := m[n]
			if !set {
				continue
			}
			key := append(k[:len(k):len(k)], n)
			var elems []map[string]any
			switch t, isTable := v.(map[string]any); {
			case child.array:
				elems = rawElems(v)
			case isTable:
				elems = []map[string]any{t}
			}
			if elems == nil {
				ok = false
				where, shape := "", child.shape
				if len(k) > 0 {
					where = p.where(key, elem)
				}
				if name == "*" {
					shape = fmt.Sprintf(shape, n)
				}
				l := keylines.Located{Key: key, Elem: elem}
				p.addf(p.lines[l.Path(len(key))], where, "%s, got %s", shape, typeName(v))
				continue
			}
			for i, e := range elems {
				in := elem
				if child.array {
					in = i
				}
				ok = p.checkShape(child, e, key, in) && ok
			}
		}
	}
	return ok
}

// typeName names the TOML type of a decoded value.
func typeName(v any) string { return tomlval.TypeName(v) }

// checkCounts reports arrays of tables longer than a spec may hold, before
// anything is converted; it reports whether they are all within bounds.
func (p *parser) checkCounts() bool {
	t := table{p: p, raw: p.raw}
	many := tooMany(t, t.get("workload"), MaxWorkloads, "workloads")
	many = tooMany(t, t.get("capacity"), MaxCapacities, "capacities") || many
	if many {
		return false
	}
	nw, nc := len(rawElems(t.get("workload").v)), len(rawElems(t.get("capacity").v))
	steps := 0
	if sc, ok := t.get("scaling").v.(map[string]any); ok {
		if d, ok := sc["drives"].([]any); ok {
			steps = len(d)
		}
	}
	if cells := nw * (nc + steps); cells > MaxCells {
		line := t.p.lines[keylines.Path("workload", keylines.Index(0))]
		t.p.addf(line, "", "%d workloads at %d capacities and %d scaling steps are %d cells, more than the %d a spec may plan", nw, nc, steps, cells, MaxCells)
		return false
	}
	return true
}
