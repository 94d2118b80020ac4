package specs

import (
	"fmt"
	"github.com/drivequal/drivequal/specs/internal/keylines"
	"math"
	"strings"

	"github.com/drivequal/drivequal/fiojob"
)

// The schema of a spec, stated once: each table's keys, in the order their
// problems are reported, each with how its value is checked, its default
// and the field it fills. checkKeys reports keys not in it (with the
// nearest one that is), checkShape tables that are not tables, and
// specKeys.convert fills a Spec by it.

// schema is the shape of a key: a nil *schema is a leaf (a scalar or an
// array of scalars), else the key holds a table of keys, "*" standing for
// any name, or an array of such tables. shape is how such a key must be
// written, for a problem ("method must be a table ([method])"); under "*"
// it has a %q for the name.
type schema struct {
	names []string // in order
	keys  map[string]*schema
	array bool
	shape string
}

func newSchema(shape string) *schema { return &schema{keys: map[string]*schema{}, shape: shape} }

func (s *schema) add(name string, sub *schema) *schema {
	s.names = append(s.names, name)
	s.keys[name] = sub
	return s
}

// anyName is the shape of a table whose keys are names the spec chooses,
// each holding elem.
func anyName(elem *schema, shape string) *schema { return newSchema(shape).add("*", elem) }

// A field is one key of a table whose Go value is a T. conv checks the
// key's value and stores it in out, or its default when the key is absent
// (v.set false); a required field's conv only sees it set. sub is the
// shape of a key holding tables, nil for a leaf.
type field[T any] struct {
	key      string
	required bool
	sub      *schema
	conv     func(t table, v value, out *T)
}

type fields[T any] []field[T]

// inTable is the shape of a key holding a table of fs.
func (fs fields[T]) inTable(shape string) *schema {
	s := newSchema(shape)
	for _, f := range fs {
		s.add(f.key, f.sub)
	}
	return s
}

// inArray is the shape of a key holding an array of tables of fs.
func (fs fields[T]) inArray(shape string) *schema {
	s := fs.inTable(shape)
	s.array = true
	return s
}

// convert converts t's keys into out, in order.
func (fs fields[T]) convert(t table, out *T) {
	for _, f := range fs {
		v := t.get(f.key)
		if f.required && !v.set {
			t.missing(f.key)
			continue
		}
		f.conv(t, v, out)
	}
}

// elems converts each table of array of tables v by fs, starting from
// first(line of the element).
func elems[T any](t table, v value, fs fields[T], first func(line int) T) []T {
	var out []T
	for i, m := range rawElems(v.v) {
		et := table{p: t.p, where: t.p.elemWhere(v.key, i), path: []string{v.key, keylines.Index(i)}, raw: m}
		e := first(et.line(""))
		fs.convert(et, &e)
		out = append(out, e)
	}
	return out
}

// setInt stores an integer value in [lo, hi] in *dst, def when absent; it
// leaves *dst alone when the value is wrong.
func setInt[N int | uint64](t table, v value, dst *N, def, lo, hi int64) {
	if n, ok := t.integer(v, def, lo, hi); ok {
		*dst = N(n)
	}
}

var specSchema = specKeys.inTable("")

var specKeys = fields[Spec]{
	{key: "model", required: true, conv: func(t table, v value, s *Spec) {
		if m, ok := t.nonEmpty(v); ok && printable(t, v, m) {
			s.Model = m
		}
	}},
	{key: "source", required: true, conv: func(t table, v value, s *Spec) {
		if m, ok := t.nonEmpty(v); ok && printable(t, v, m) {
			s.Source = m
		}
	}},
	{key: "models", conv: func(t table, v value, s *Spec) {
		if v.set {
			s.Models = t.modelPatterns(v)
		}
	}},
	{key: "endurance", sub: enduranceKeys.inTable("endurance must be a table ([endurance])"),
		conv: func(t table, v value, s *Spec) {
			enduranceKeys.convert(t.sub(v, "endurance"), &s.Endurance)
			if e := s.Endurance; e.PBW > 0 && e.DWPD > 0 {
				t.errorf("endurance", "[endurance] gives both pbw and dwpd: give the one the vendor rates the drive by")
			} else if e.DWPD > 0 && e.WarrantyYears == 0 {
				t.errorf("endurance", "[endurance] dwpd needs warranty_years (drive writes per day over how many years)")
			}
		}},
	{key: "method", sub: methodKeys.inTable("method must be a table ([method])"),
		conv: func(t table, v value, s *Spec) { methodKeys.convert(t.sub(v, "method"), &s.Method) }},
	{key: "precondition", sub: preconditionKeys.inTable("precondition must be a table ([precondition])"),
		conv: func(t table, v value, s *Spec) {
			pt := t.sub(v, "precondition")
			preconditionKeys.convert(pt, &s.Precondition)
			c := s.Precondition
			rounds(pt, "random_runtime", c.RandomRuntime, c.SteadyRound)
			rounds(pt, "topup_runtime", c.TopUpRuntime, c.SteadyRound)
		}},
	{key: "health", sub: healthKeys.inTable("health must be a table ([health])"),
		conv: func(t table, v value, s *Spec) {
			s.Health = DefaultHealth()
			healthKeys.convert(t.sub(v, "health"), &s.Health)
		}},
	{key: "workload", sub: workloadKeys.inArray("workload must be an array of tables ([[workload]])"),
		conv: func(t table, v value, s *Spec) {
			s.Workloads = elems(t, v, workloadKeys, func(line int) Workload { return Workload{RWMixRead: -1, Line: line} })
			if len(s.Workloads) == 0 {
				t.p.addf(0, "", "no workloads: add at least one [[workload]]")
			}
			t.p.checkWorkloads(s.Workloads)
		}},
	{key: "capacity", sub: capacityKeys.inArray("capacity must be an array of tables ([[capacity]])"),
		conv: func(t table, v value, s *Spec) {
			s.Capacities = elems(t, v, capacityKeys, func(line int) Capacity { return Capacity{Line: line} })
			if len(s.Capacities) == 0 {
				t.p.addf(0, "", "no capacities: add at least one [[capacity]]")
			}
			t.p.checkUnique("capacity", len(s.Capacities), func(i int) (string, int) {
				return s.Capacities[i].Name, s.Capacities[i].Line
			})
		}},
	{key: "receipt", sub: receiptKeys.inTable("receipt must be a table ([receipt])"),
		conv: func(t table, v value, s *Spec) {
			if v.set {
				receiptKeys.convert(t.sub(v, "receipt"), &s.Receipt)
			}
		}},
	{key: "pcie", sub: pcieKeys.inTable("pcie must be a table ([pcie])"),
		conv: func(t table, v value, s *Spec) {
			if v.set {
				pcieKeys.convert(t.sub(v, "pcie"), &s.PCIe)
			}
		}},
	{key: "scaling", sub: scalingKeys.inTable("scaling must be a table ([scaling])"),
		conv: func(t table, v value, s *Spec) {
			if v.set {
				scalingKeys.convert(t.sub(v, "scaling"), &s.Scaling)
			}
		}},
	// After scaling: the fleet tolerance defaults to the scaling one, when
	// that is above 0 (no spread at all is no rule for a population).
	{key: "fleet", sub: fleetKeys.inTable("fleet must be a table ([fleet])"),
		conv: func(t table, v value, s *Spec) {
			s.Fleet.Tolerance = DefaultScalingTolerance
			if s.Scaling.Capacity != "" && s.Scaling.Tolerance > 0 {
				s.Fleet.Tolerance = s.Scaling.Tolerance
			}
			if v.set {
				fleetKeys.convert(t.sub(v, "fleet"), &s.Fleet)
			}
		}},
	{key: "baseline", sub: baselineKeys.inTable("baseline must be a table ([baseline])"),
		conv: func(t table, v value, s *Spec) {
			s.Baseline = Baseline{Tolerance: DefaultBaselineTolerance, LatencyTolerance: -1, Alpha: DefaultBaselineAlpha}
			if v.set {
				baselineKeys.convert(t.sub(v, "baseline"), &s.Baseline)
			}
			if s.Baseline.LatencyTolerance < 0 {
				s.Baseline.LatencyTolerance = s.Baseline.Tolerance
			}
		}},
	{key: "purge", sub: purgeKeys.inTable("purge must be a table ([purge])"),
		conv: func(t table, v value, s *Spec) {
			s.Purge.Verify = DefaultPurgeVerify
			if v.set {
				purgeKeys.convert(t.sub(v, "purge"), &s.Purge)
			}
		}},
	{key: "firmware", sub: firmwareKeys.inTable("firmware must be a table ([firmware])"),
		conv: func(t table, v value, s *Spec) {
			if v.set {
				s.Firmware = &Firmware{}
				firmwareKeys.convert(t.sub(v, "firmware"), s.Firmware)
			}
		}},
	{key: "lot", sub: lotKeys.inTable("lot must be a table ([lot])"),
		conv: func(t table, v value, s *Spec) {
			if v.set {
				s.Lot = &Lot{}
				lotKeys.convert(t.sub(v, "lot"), s.Lot)
			}
		}},
	{key: "power_loss", sub: powerLossKeys.inTable("power_loss must be a table ([power_loss])"),
		conv: func(t table, v value, s *Spec) {
			if v.set {
				pt := t.sub(v, "power_loss")
				s.PowerLoss = &PowerLoss{Line: pt.line("")}
				powerLossKeys.convert(pt, s.PowerLoss)
			}
		}},
}

// purgeKeys fill the [purge] table: the purge at the end of the run and
// its read-back (TestPurge).
var purgeKeys = fields[Purge]{
	{key: "verify", conv: func(t table, v value, p *Purge) {
		p.Verify, _ = t.oneOf(v, DefaultPurgeVerify, PurgeVerifyNone, PurgeVerifySample, PurgeVerifyFull)
	}},
}

// firmwareKeys fill the [firmware] table: the activation under load
// (TestFirmware). max_stall is required: it is the buyer's bound.
var firmwareKeys = fields[Firmware]{
	{key: "action", conv: func(t table, v value, f *Firmware) {
		f.Action, _ = t.oneOf(v, DefaultFirmwareAction, FirmwareActivateNow, FirmwareReplaceAtReset)
	}},
	{key: "slot", conv: func(t table, v value, f *Firmware) {
		n, _ := t.integer(v, 0, 0, 7)
		f.Slot = int(n)
	}},
	{key: "max_stall", required: true, conv: func(t table, v value, f *Firmware) { f.MaxStall, _ = t.duration(v, 0, false) }},
}

// lotKeys fill a Lot: coverage and confidence are needed, a rule has no
// default share; the method defaults to normal.
var lotKeys = fields[Lot]{
	{key: "coverage", required: true, conv: func(t table, v value, l *Lot) { l.Coverage, _ = t.openFraction(v) }},
	{key: "confidence", required: true, conv: func(t table, v value, l *Lot) { l.Confidence, _ = t.openFraction(v) }},
	{key: "method", conv: func(t table, v value, l *Lot) {
		l.Method, _ = t.oneOf(v, DefaultLotMethod, LotNormal, LotDistributionFree)
	}},
}

// baselineKeys fill a Baseline that starts with its defaults.
var baselineKeys = fields[Baseline]{
	{key: "tolerance", conv: func(t table, v value, b *Baseline) {
		if v.set {
			b.Tolerance, _ = t.tolerance(v, b.Tolerance)
		}
	}},
	{key: "latency_tolerance", conv: func(t table, v value, b *Baseline) {
		if v.set {
			b.LatencyTolerance, _ = t.tolerance(v, b.LatencyTolerance)
		}
	}},
	{key: "alpha", conv: func(t table, v value, b *Baseline) {
		if !v.set {
			return
		}
		if f, ok := t.number(v, b.Alpha); ok {
			if f > 0 && f < 1 {
				b.Alpha = f
			} else {
				t.errorf(v.key, "%s must be in (0, 1), got %v", v.key, f)
			}
		}
	}},
}

// fleetKeys fill a Fleet that starts with its default tolerance.
var fleetKeys = fields[Fleet]{
	{key: "tolerance", conv: func(t table, v value, f *Fleet) {
		if v.set {
			f.Tolerance, _ = t.tolerance(v, f.Tolerance)
		}
	}},
}

var methodKeys = fields[Method]{
	{key: "runtime", required: true, conv: func(t table, v value, m *Method) { m.Runtime, _ = t.duration(v, 0, false) }},
	{key: "ramp_time", conv: func(t table, v value, m *Method) { m.RampTime, _ = t.duration(v, 0, true) }},
	{key: "ioengine", conv: func(t table, v value, m *Method) {
		m.IOEngine, _ = t.str(v, DefaultIOEngine)
		if m.IOEngine == "" && v.set {
			t.errorf(v.key, "ioengine must not be empty")
		}
	}},
	{key: "direct", conv: func(t table, v value, m *Method) { m.Direct, _ = t.boolean(v, true) }},
	{key: "tolerance", conv: func(t table, v value, m *Method) { m.Tolerance, _ = t.tolerance(v, 0) }},
}

var preconditionKeys = fields[Precondition]{
	{key: "purge", conv: func(t table, v value, c *Precondition) { c.Purge, _ = t.oneOf(v, DefaultPurge, purgeMethods...) }},
	{key: "fill_passes", conv: func(t table, v value, c *Precondition) {
		setInt(t, v, &c.FillPasses, DefaultFillPasses, 0, math.MaxInt32)
		t.atMost(v, int64(c.FillPasses), MaxFillPasses, "the most a spec may ask for")
	}},
	{key: "random_runtime", conv: func(t table, v value, c *Precondition) {
		c.RandomRuntime, _ = t.duration(v, DefaultRandomRuntime, false)
	}},
	{key: "steadystate", conv: func(t table, v value, c *Precondition) {
		ss, ok := t.str(v, "")
		switch {
		case !ok || !v.set:
		case steadyStateRE.MatchString(ss):
			c.SteadyState = ss
		default:
			t.errorf(v.key, `steadystate %q is not a fio criterion like "iops_slope:0.3%%" (iops, iops_slope, bw or bw_slope, a colon, a number, optionally %%)`, ss)
		}
	}},
	{key: "steadystate_duration", conv: func(t table, v value, c *Precondition) {
		switch {
		case t.get("steadystate").set:
			c.SteadyStateDuration, _ = t.duration(v, DefaultSteadyStateDuration, false)
		case v.set:
			t.errorf(v.key, "steadystate_duration has no effect without steadystate")
		}
	}},
	{key: "steady_round", conv: func(t table, v value, c *Precondition) {
		c.SteadyRound, _ = t.duration(v, DefaultSteadyRound, false)
	}},
	{key: "steady_window", conv: func(t table, v value, c *Precondition) {
		setInt(t, v, &c.SteadyWindow, DefaultSteadyWindow, 2, 1000)
	}},
	{key: "steady_range", conv: func(t table, v value, c *Precondition) { c.SteadyRange, _ = t.fraction(v, DefaultSteadyRange) }},
	{key: "steady_slope", conv: func(t table, v value, c *Precondition) { c.SteadySlope, _ = t.fraction(v, DefaultSteadySlope) }},
	{key: "idle_limit", conv: func(t table, v value, c *Precondition) { c.IdleLimit, _ = t.duration(v, DefaultIdleLimit, false) }},
	{key: "topup_runtime", conv: func(t table, v value, c *Precondition) {
		c.TopUpRuntime, _ = t.duration(v, DefaultTopUpRuntime, false)
	}},
}

// healthKeys fill a Health that starts as DefaultHealth.
var healthKeys = fields[Health]{
	{key: "percent_used_max", conv: func(t table, v value, h *Health) {
		setInt(t, v, &h.PercentUsedMax, DefaultPercentUsedMax, 0, 255)
	}},
	{key: "firmware", conv: func(t table, v value, h *Health) {
		if v.set {
			h.Firmware, _ = t.firmware(v)
		}
	}},
	{key: "media_errors_max_increase", conv: func(t table, v value, h *Health) {
		setInt(t, v, &h.MediaErrorsMaxIncrease, 0, 0, math.MaxInt64)
	}},
	{key: "err_log_entries_max_increase", conv: func(t table, v value, h *Health) {
		setInt(t, v, &h.ErrLogEntriesMaxIncrease, 0, 0, math.MaxInt64)
	}},
	{key: "spare_margin", conv: func(t table, v value, h *Health) { setInt(t, v, &h.SpareMargin, 0, 0, 100) }},
	{key: "temperature_margin_c", conv: func(t table, v value, h *Health) { setInt(t, v, &h.TemperatureMarginC, 0, 0, 150) }},
	{key: "thermal_throttle", conv: func(t table, v value, h *Health) {
		h.ThermalThrottle, _ = t.oneOf(v, DefaultThermalThrottle, ThrottleInconclusive, ThrottleIgnore)
	}},
	{key: "ocp_bad_user_blocks_max_increase", conv: func(t table, v value, h *Health) {
		setInt(t, v, &h.OCP.BadUserBlocksMaxIncrease, 0, 0, math.MaxInt64)
	}},
	{key: "ocp_bad_system_blocks_max_increase", conv: func(t table, v value, h *Health) {
		setInt(t, v, &h.OCP.BadSystemBlocksMaxIncrease, 0, 0, math.MaxInt64)
	}},
	{key: "ocp_uncorrectable_reads_max_increase", conv: func(t table, v value, h *Health) {
		setInt(t, v, &h.OCP.UncorrectableReadsMaxIncrease, 0, 0, math.MaxInt64)
	}},
	{key: "ocp_end_to_end_errors_max_increase", conv: func(t table, v value, h *Health) {
		setInt(t, v, &h.OCP.EndToEndErrorsMaxIncrease, 0, 0, math.MaxInt64)
	}},
	{key: "ocp_incomplete_shutdowns_max_increase", conv: func(t table, v value, h *Health) {
		setInt(t, v, &h.OCP.IncompleteShutdownsMaxIncrease, 0, 0, math.MaxInt64)
	}},
	{key: "ocp_capacitor_health_min", conv: func(t table, v value, h *Health) {
		setInt(t, v, &h.OCP.CapacitorHealthMin, DefaultCapacitorHealthMin, 0, 100)
	}},
}

// enduranceKeys fill an Endurance that starts unset.
var enduranceKeys = fields[Endurance]{
	{key: "pbw", conv: func(t table, v value, e *Endurance) { e.PBW = positive(t, v) }},
	{key: "dwpd", conv: func(t table, v value, e *Endurance) { e.DWPD = positive(t, v) }},
	{key: "warranty_years", conv: func(t table, v value, e *Endurance) { e.WarrantyYears = positive(t, v) }},
	{key: "rated_waf", conv: func(t table, v value, e *Endurance) { e.RatedWAF = positive(t, v) }},
	{key: "source", conv: func(t table, v value, e *Endurance) { e.Source, _ = t.str(v, "") }},
}

// positive is a number > 0, 0 when absent.
func positive(t table, v value) float64 {
	x, ok := t.number(v, 0)
	if ok && v.set && !(x > 0) {
		t.errorf(v.key, "%s must be a number above 0, got %v", v.key, x)
		return 0
	}
	return x
}

// pcieKeys fill a PCIe that starts unset.
var pcieKeys = fields[PCIe]{
	{key: "speed", conv: func(t table, v value, p *PCIe) {
		if x, ok := t.number(v, 0); ok && v.set && !(x > 0 && x <= 256) {
			t.errorf(v.key, "speed must be a link speed in GT/s per lane (16 for PCIe Gen4, 32 for Gen5), got %v", x)
		} else {
			p.Speed = x
		}
	}},
	{key: "width", conv: func(t table, v value, p *PCIe) { setInt(t, v, &p.Width, 0, 1, 32) }},
}

// receiptKeys fill a Receipt whose limits start unset.
var receiptKeys = fields[Receipt]{
	{key: "max_power_on_hours", conv: func(t table, v value, r *Receipt) { r.MaxPowerOnHours = t.limit(v) }},
	{key: "max_data_written", conv: func(t table, v value, r *Receipt) { r.MaxDataWritten = t.bytes(v) }},
	{key: "max_data_read", conv: func(t table, v value, r *Receipt) { r.MaxDataRead = t.bytes(v) }},
	{key: "max_unsafe_shutdowns", conv: func(t table, v value, r *Receipt) { r.MaxUnsafeShutdowns = t.limit(v) }},
	{key: "max_media_errors", conv: func(t table, v value, r *Receipt) { r.MaxMediaErrors = t.limit(v) }},
	{key: "max_percent_used", conv: func(t table, v value, r *Receipt) { r.MaxPercentUsed = t.limit(v) }},
}

// workloadKeys fill a Workload that starts with RWMixRead -1 and its Line.
var workloadKeys = append(fields[Workload]{
	{key: "name", required: true, conv: func(t table, v value, w *Workload) {
		if n, ok := t.nonEmpty(v); ok && printable(t, v, n) {
			w.Name = n
		}
	}},
	{key: "rw", required: true, conv: func(t table, v value, w *Workload) {
		rw, ok := t.str(v, "")
		switch {
		case !ok:
		case contains(rwPatterns, rw):
			w.RW = rw
		default:
			t.errorf(v.key, "rw %q is not one of fio's patterns %s", rw, strings.Join(rwPatterns, ", "))
		}
	}},
	{key: "bs", required: true, conv: func(t table, v value, w *Workload) { w.BS, _ = t.blockSize(v) }},
	{key: "iodepth", required: true, conv: func(t table, v value, w *Workload) { iodepth(t, v, &w.IODepth) }},
	{key: "numjobs", required: true, conv: func(t table, v value, w *Workload) { numjobs(t, v, &w.NumJobs) }},
	{key: "metric", required: true, conv: func(t table, v value, w *Workload) {
		if m, ok := t.oneOf(v, "", string(IOPS), string(MBps), string(LatUS)); ok {
			w.Metric = Metric(m)
		}
	}},
	{key: "rwmixread", conv: func(t table, v value, w *Workload) {
		if !v.set {
			return
		}
		setInt(t, v, &w.RWMixRead, 0, 0, 100)
		if w.RW != "" && !fiojob.IsMixed(w.RW) {
			t.errorf(v.key, "rwmixread is only for mixed patterns (rw, readwrite, randrw), not %q", w.RW)
		}
	}},
	{key: "precondition", conv: func(t table, v value, w *Workload) {
		if pre, ok := t.str(v, ""); ok && v.set {
			w.Precondition = pre
			if pre == "" {
				t.errorf(v.key, "precondition must name a workload; leave it out for the default write twin")
			}
		}
	}},
	{key: "runtime", conv: func(t table, v value, w *Workload) { w.Runtime, _ = t.duration(v, 0, false) }},
}, loadKeys...)

// capacityKeys fill a Capacity that starts with its Line.
var capacityKeys = fields[Capacity]{
	{key: "name", required: true, conv: func(t table, v value, c *Capacity) {
		if n, ok := t.nonEmpty(v); ok && printable(t, v, n) {
			c.Name = n
		}
	}},
	{key: "bytes", required: true, conv: func(t table, v value, c *Capacity) {
		if n, ok := t.integer(v, 0, 1, math.MaxInt64); ok && t.atMost(v, n, MaxCapacityBytes, "2^53 (9 PB), the largest capacity a spec may give") {
			c.Bytes = n
		}
	}},
	{key: "spec", required: true, sub: anyName(nil, "spec must be a table ([capacity.spec])"), conv: specValues},
	{key: "qos", sub: anyName(latencySchema, `qos must be a table of workloads ([capacity.qos."NAME"])`),
		conv: func(t table, v value, c *Capacity) {
			// Without spec values nothing is measured here, which is reported.
			if listed, _ := t.raw["spec"].(map[string]any); len(listed) > 0 {
				c.QoS = qos(t, v, listed)
			}
		}},
	{key: "at_latency", sub: anyName(atLatencySchema, `at_latency must be a table of workloads ([capacity.at_latency."NAME"])`),
		conv: func(t table, v value, c *Capacity) { c.AtLatency = atLatency(t, v) }},
}

// specValues converts [capacity.spec]: a workload name → its spec value.
func specValues(t table, v value, c *Capacity) {
	m, _ := v.v.(map[string]any)
	if len(m) == 0 {
		t.errorf(v.key, "spec table is empty: list at least one workload's spec value")
		return
	}
	c.Spec = map[string]float64{}
	st := t.sub(v, t.where)
	for _, name := range sortedKeys(m) {
		// The message's key, spec."NAME", is not a key of st, so a wrong
		// type is reported at the table's line.
		key := fmt.Sprintf("spec.%q", name)
		if _, known := t.p.spec.Workload(name); !known {
			st.errorf(name, "%s: %s", key, unknownWorkload(t.p.spec.Workloads, name))
			continue
		}
		f, ok := st.number(value{key: key, v: m[name], set: true}, 0)
		if !ok {
			continue
		}
		if !(f > 0) || math.IsInf(f, 0) {
			st.errorf(name, "%s must be > 0 and finite, got %v", key, f)
			continue
		}
		c.Spec[name] = f
	}
}

var scalingKeys = fields[Scaling]{
	{key: "capacity", required: true, conv: func(t table, v value, sc *Scaling) {
		if name, ok := t.nonEmpty(v); ok {
			sc.Capacity = name
			if _, found := t.p.spec.Capacity(name); !found {
				t.errorf(v.key, "capacity %q is not a capacity of this spec (%s)", name, strings.Join(quoteAll(capacityNames(t.p.spec)), ", "))
			}
		}
	}},
	{key: "drives", required: true, conv: func(t table, v value, sc *Scaling) { sc.Drives, _ = t.driveCounts(v) }},
	{key: "baseline", conv: func(t table, v value, sc *Scaling) {
		sc.Baseline, _ = t.oneOf(v, DefaultScalingBaseline, "spec", "single")
	}},
	{key: "tolerance", conv: func(t table, v value, sc *Scaling) { sc.Tolerance, _ = t.tolerance(v, DefaultScalingTolerance) }},
	{key: "override", sub: anyName(overrideKeys.inTable("override must be a table ([scaling.override.%q])"), "override must be a table"),
		conv: overrides},
}

var overrideKeys = fields[Override]{
	{key: "iodepth", conv: func(t table, v value, o *Override) { iodepth(t, v, &o.IODepth) }},
	{key: "numjobs", conv: func(t table, v value, o *Override) { numjobs(t, v, &o.NumJobs) }},
}

// overrides converts [scaling.override."NAME"] tables.
func overrides(t table, v value, sc *Scaling) {
	m, _ := v.v.(map[string]any)
	for _, name := range sortedKeys(m) {
		ot := t.named(v, name, fmt.Sprintf("scaling override %q", name))
		if _, found := t.p.spec.Workload(name); !found {
			ot.errorf("", "override names %s", unknownWorkload(t.p.spec.Workloads, name))
			continue
		}
		var o Override
		overrideKeys.convert(ot, &o)
		if !ot.get("iodepth").set && !ot.get("numjobs").set {
			ot.errorf("", "override sets neither iodepth nor numjobs")
			continue
		}
		if sc.Override == nil {
			sc.Override = map[string]Override{}
		}
		sc.Override[name] = o
	}
}

// iodepth sets a workload's or override's iodepth: >= 1, at most
// MaxIODepth.
func iodepth(t table, v value, dst *int) {
	setInt(t, v, dst, 0, 1, math.MaxInt32)
	if !t.atMost(v, int64(*dst), MaxIODepth, "the deepest NVMe queue") {
		*dst = 0
	}
}

// numjobs sets a workload's or override's numjobs: >= 1, at most
// MaxNumJobs.
func numjobs(t table, v value, dst *int) {
	setInt(t, v, dst, 0, 1, math.MaxInt32)
	if !t.atMost(v, int64(*dst), MaxNumJobs, "fio's limit on jobs") {
		*dst = 0
	}
}
