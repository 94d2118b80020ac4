package nvme

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// OCPSmart is the OCP Datacenter NVMe SSD specification's extended SMART
// log, log page C0h ("SMART / Health Information Extended"), as
// `nvme ocp smart-add-log DEV -o json` prints it.
//
// nvme-cli has printed it with two sets of keys (checked against its
// source at v2.2, v2.3, v2.4, v2.8, v2.10, v2.11, v2.12, v2.16 and
// v3.0-rc1: plugins/ocp/ocp-nvme.c up to v2.3, ocp-smart-extended-log.c
// in v2.4 – v2.10, ocp-print-json.c from v2.11):
//
//   - "Title case" keys (v2.2 on; `--output-format-version=1`, the default
//     up to v2.16): "Physical media units written": {"hi", "lo"},
//     "Bad user nand blocks - Raw", ..., "Log page GUID";
//     "NVMe Errata Version" became "NVMe Base Errata Version" in v2.11;
//   - snake_case keys (`--output-format-version=2`, from v2.12, the
//     default in v3.0): "physical_media_units_written": {"hi", "lo"},
//     "bad_user_nand_blocks_raw", ..., "log_page_guid".
//
// The two 128-bit counters ("PLP start count", "Endurance estimate")
// are printed as the SMART log's are (see Uint128): quoted decimal
// strings in v2.2 – v2.3, bare integers from v2.4. The media units are a
// {hi, lo} pair of 64-bit halves.
type OCPSmart struct {
	// PhysicalMediaWritten and PhysicalMediaRead are the bytes written
	// to and read from the NAND media (the OCP specification counts them
	// in bytes, whatever nvme-cli's "units" says).
	PhysicalMediaWritten, PhysicalMediaRead Uint128
	// The bad NAND block counts: raw counts and normalized values (100
	// on a new drive, falling).
	BadUserNANDBlocks, BadUserNANDNormalized     uint64
	BadSystemNANDBlocks, BadSystemNANDNormalized uint64
	XORRecoveries                                uint64
	UncorrectableReads                           uint64
	SoftECCErrors                                uint64
	EndToEndCorrected, EndToEndDetected          uint64
	SystemDataPercentUsed                        uint64
	RefreshCount                                 uint64
	MaxEraseCount, MinEraseCount                 uint64
	// ThermalThrottlingEvents counts throttling events over the drive's
	// life (an 8-bit counter); ThrottlingStatus is the current one (0:
	// not throttling).
	ThermalThrottlingEvents, ThrottlingStatus uint64
	PCIeCorrectableErrors                     uint64
	IncompleteShutdowns                       uint64
	PercentFreeBlocks                         uint64
	// CapacitorHealth is the PLP capacitor's health in percent (65535:
	// no capacitor, per the OCP specification).
	CapacitorHealth uint64
	UnalignedIO     uint64
	SecurityVersion uint64
	NUSE            uint64
	PLPStartCount   Uint128
	// EnduranceEstimate is the drive's own estimate of what can be
	// written to it over its life, as it reports it (drives differ in
	// the unit); reported, never judged.
	EnduranceEstimate Uint128
	LogPageVersion    uint64
	// GUID is "Log page GUID" as printed ("0xafd514c97c6f4f9ca4f2bfea2810afc5").
	GUID string
	// NVMeErrataVersion is "NVMe Errata Version" (up to v2.10) or "NVMe
	// Base Errata Version" (v2.11 on); 0 when the log page version is 2 or
	// less (not printed).
	NVMeErrataVersion uint64
}

// OCPSmartGUID is the GUID of the C0h log page (OCP Datacenter NVMe SSD
// specification: AFD514C97C6F4F9CA4F2BFEA2810AFC5h).
const OCPSmartGUID = "afd514c97c6f4f9ca4f2bfea2810afc5"

// ocpKey is one field of OCPSmart under its keys in each key set; the
// first that is present is read.
type ocpKey struct {
	names []string
	u64   *uint64
	u128  *Uint128
}

func (o *OCPSmart) keys() []ocpKey {
	k := func(p *uint64, names ...string) ocpKey { return ocpKey{names: names, u64: p} }
	return []ocpKey{
		{names: []string{"Physical media units written", "physical_media_units_written"}, u128: &o.PhysicalMediaWritten},
		{names: []string{"Physical media units read", "physical_media_units_read"}, u128: &o.PhysicalMediaRead},
		k(&o.BadUserNANDBlocks, "Bad user nand blocks - Raw", "bad_user_nand_blocks_raw"),
		k(&o.BadUserNANDNormalized, "Bad user nand blocks - Normalized", "bad_user_nand_blocks_normalized"),
		k(&o.BadSystemNANDBlocks, "Bad system nand blocks - Raw", "bad_system_nand_blocks_raw"),
		k(&o.BadSystemNANDNormalized, "Bad system nand blocks - Normalized", "bad_system_nand_blocks_normalized"),
		k(&o.XORRecoveries, "XOR recovery count", "xor_recovery_count"),
		k(&o.UncorrectableReads, "Uncorrectable read error count", "uncorrectable_read_errors"),
		k(&o.SoftECCErrors, "Soft ecc error count", "soft_ecc_error_count"),
		k(&o.EndToEndCorrected, "End to end corrected errors", "end_to_end_corrected_errors"),
		k(&o.EndToEndDetected, "End to end detected errors", "end_to_end_detected_errors"),
		k(&o.SystemDataPercentUsed, "System data percent used", "system_data_percent_used"),
		k(&o.RefreshCount, "Refresh counts", "refresh_count"),
		k(&o.MaxEraseCount, "Max User data erase counts", "max_user_data_erase_count"),
		k(&o.MinEraseCount, "Min User data erase counts", "min_user_data_erase_count"),
		k(&o.ThermalThrottlingEvents, "Number of Thermal throttling events", "thermal_throttling_events"),
		k(&o.ThrottlingStatus, "Current throttling status", "current_throttling_status"),
		k(&o.PCIeCorrectableErrors, "PCIe correctable error count", "pcie_correctable_errors"),
		k(&o.IncompleteShutdowns, "Incomplete shutdowns", "incomplete_shutdowns"),
		k(&o.PercentFreeBlocks, "Percent free blocks", "percent_free_blocks"),
		k(&o.CapacitorHealth, "Capacitor health", "capacitor_health"),
		k(&o.UnalignedIO, "Unaligned I/O", "unaligned_io"),
		k(&o.SecurityVersion, "Security Version Number", "security_version_number"),
		k(&o.NUSE, "NUSE - Namespace utilization", "nuse_namespace_utilization"),
		{names: []string{"PLP start count", "plp_start_count"}, u128: &o.PLPStartCount},
		{names: []string{"Endurance estimate", "endurance_estimate"}, u128: &o.EnduranceEstimate},
		k(&o.LogPageVersion, "Log page version", "log_page_version"),
		k(&o.NVMeErrataVersion, "NVMe Errata Version", "NVMe Base Errata Version", "nvme_base_errata_version"),
	}
}

// ocpRequired are the fields a C0 output must have (by their first key):
// those drivequal judges.
var ocpRequired = map[string]bool{
	"Physical media units written": true, "Bad user nand blocks - Raw": true,
	"Bad system nand blocks - Raw": true, "Uncorrectable read error count": true,
	"End to end detected errors": true, "Incomplete shutdowns": true,
	"Capacitor health": true, "Number of Thermal throttling events": true,
}

// NoOCPLog is the error of a drive that has no OCP log page (C0h or
// C3h): a controller that rejects the Get Log Page, answers with another
// GUID, or an nvme-cli without the ocp plugin. Why says which, in
// nvme-cli's words where it printed any.
type NoOCPLog struct {
	Log string // "C0" or "C3"
	Why string
}

func (e *NoOCPLog) Error() string { return "no OCP " + e.Log + " log (" + e.Why + ")" }

// ParseOCPSmart parses `nvme ocp smart-add-log -o json` of any nvme-cli
// version (see OCPSmart). An output that says the drive has no C0 log (a
// JSON "error" field, nvme-cli 3's way of printing its errors under -o
// json) is a *NoOCPLog.
func ParseOCPSmart(out []byte) (OCPSmart, error) {
	m, err := decodeObject(out)
	if err != nil {
		return OCPSmart{}, err
	}
	if e, ok := m["error"]; ok {
		return OCPSmart{}, &NoOCPLog{Log: "C0", Why: fmt.Sprint(e)}
	}
	f := &fields{m: m}
	var o OCPSmart
	for _, k := range o.keys() {
		name := ""
		for _, n := range k.names {
			if f.has(n) {
				name = n
				break
			}
		}
		if name == "" {
			if ocpRequired[k.names[0]] {
				f.errs = append(f.errs, fmt.Errorf("%q (or %q) is missing", k.names[0], k.names[len(k.names)-1]))
			}
			continue
		}
		switch {
		case k.u64 != nil:
			*k.u64 = f.u64(name)
		default:
			if hl, ok := m[name].(map[string]any); ok {
				sub := &fields{m: hl}
				sub.require("hi", "lo")
				*k.u128 = Uint128{Hi: sub.u64("hi"), Lo: sub.u64("lo")}
				for _, e := range sub.errs {
					f.errs = append(f.errs, fmt.Errorf("%q: %w", name, e))
				}
			} else {
				*k.u128 = f.u128(name)
			}
		}
	}
	for _, n := range []string{"Log page GUID", "log_page_guid"} {
		if f.has(n) {
			o.GUID = f.str(n)
		}
	}
	if err := errors.Join(f.errs...); err != nil {
		return o, err
	}
	if o.GUID != "" && !sameGUID(o.GUID, OCPSmartGUID) {
		return o, &NoOCPLog{Log: "C0", Why: fmt.Sprintf("log page GUID %s is not the OCP C0 GUID 0x%s", o.GUID, OCPSmartGUID)}
	}
	return o, nil
}

// sameGUID compares a printed GUID with want (lowercase hex digits).
func sameGUID(printed, want string) bool {
	return strings.TrimPrefix(strings.ToLower(strings.TrimSpace(printed)), "0x") == want
}

// u64 reads an unsigned 64-bit field, bare or quoted.
func (f *fields) u64(key string) uint64 {
	u := f.u128(key)
	if u.Hi != 0 {
		f.fail(key, f.m[key], fmt.Errorf("more than 64 bits"))
		return 0
	}
	return u.Lo
}

// OCPArgs are the arguments of `nvme ocp smart-add-log` for nvme-cli
// version v: from v2.12, which has --output-format-version, it asks for
// version 2 (snake_case, v3's default), so that the keys do not depend
// on a default.
func OCPArgs(sub, dev, v string) []string {
	args := []string{"ocp", sub, dev, "-o", "json"}
	if sub == "smart-add-log" && versionAtLeast(v, 2, 12) {
		args = append(args, "--output-format-version=2")
	}
	return args
}

// versionAtLeast reports whether nvme-cli version v ("2.3", "2.12.1",
// "3.0-rc1") is major.minor or later; an unreadable version is not.
func versionAtLeast(v string, major, minor int) bool {
	parts := strings.FieldsFunc(v, func(r rune) bool { return r == '.' || r == '-' || r == '+' })
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

// noOCP reads what nvme-cli printed when it could not read an OCP log
// (its stderr and, under -o json, nvme-cli 3's {"error": ...} on stdout):
// a *NoOCPLog when it says the drive has no such log, or nvme-cli has
// no ocp plugin; nil when it is another failure.
func noOCP(log string, stdout []byte, err error) error {
	var ce *CommandError
	if !errors.As(err, &ce) {
		return nil
	}
	if m, derr := decodeObject(stdout); derr == nil {
		if e, ok := m["error"]; ok {
			return &NoOCPLog{Log: log, Why: fmt.Sprint(e)}
		}
	}
	text := ce.Stderr
	for _, marker := range []string{"Unknown GUID in " + log + " Log Page data", "Failure reading the " + log + " Log Page",
		"Unable to read " + log + " data", "invalid latency monitor version"} {
		if strings.Contains(text, marker) {
			return &NoOCPLog{Log: log, Why: firstOCPLines(text)}
		}
	}
	if strings.Contains(text, "Invalid command") || strings.Contains(text, "not a valid") || strings.Contains(text, "Unknown command") {
		return &NoOCPLog{Log: log, Why: "this nvme-cli has no ocp plugin: " + firstOCPLines(text)}
	}
	return nil
}

// firstOCPLines joins nvme-cli's error lines into one, without the
// expected/actual GUID dump's line breaks.
func firstOCPLines(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "; ")
}

// OCPSmartLog reads dev's C0h log with `nvme ocp smart-add-log DEV -o
// json` (see OCPArgs; version is nvme-cli's, "" when not known). A drive
// without it is a *NoOCPLog; out is what nvme-cli printed, for the
// recording.
func (c CLI) OCPSmartLog(ctx context.Context, dev, version string) (o OCPSmart, out []byte, err error) {
	out, err = c.Run(ctx, OCPArgs("smart-add-log", dev, version)...)
	if err != nil {
		if no := noOCP("C0", out, err); no != nil {
			return OCPSmart{}, out, no
		}
		return OCPSmart{}, out, fmt.Errorf("reading the OCP C0 log of %s: %w", dev, err)
	}
	o, err = ParseOCPSmart(out)
	var no *NoOCPLog
	if err != nil && !errors.As(err, &no) {
		err = fmt.Errorf("reading the OCP C0 log of %s: nvme ocp smart-add-log output: %w", dev, err)
	}
	return o, out, err
}

// OCPLatency is what drivequal reads of the OCP latency monitor log, log
// page C3h (`nvme ocp latency-monitor-log DEV -o json`; the same keys from
// v2.2 to v3.0): its feature status and the active bucket counters.
type OCPLatency struct {
	// FeatureStatus is "Feature Status"; 0 means the latency monitor is
	// not enabled, and the counters do not move.
	FeatureStatus uint64
	// Active are "Active Bucket Counter: Bucket 0" to "... 3": commands
	// whose latency fell in each bucket, by operation.
	Active [4]LatencyBucket
}

// LatencyBucket is one bucket's counters.
type LatencyBucket struct{ Read, Write, Trim uint64 }

// Enabled reports whether the latency monitor is enabled.
func (l OCPLatency) Enabled() bool { return l.FeatureStatus != 0 }

// ParseOCPLatency parses `nvme ocp latency-monitor-log -o json`.
func ParseOCPLatency(out []byte) (OCPLatency, error) {
	m, err := decodeObject(out)
	if err != nil {
		return OCPLatency{}, err
	}
	if e, ok := m["error"]; ok {
		return OCPLatency{}, &NoOCPLog{Log: "C3", Why: fmt.Sprint(e)}
	}
	f := &fields{m: m}
	f.require("Feature Status")
	l := OCPLatency{FeatureStatus: f.u64("Feature Status")}
	for i := range l.Active {
		key := fmt.Sprintf("Active Bucket Counter: Bucket %d", i)
		b, ok := m[key].(map[string]any)
		if !ok {
			f.errs = append(f.errs, fmt.Errorf("%q is missing or not an object", key))
			continue
		}
		sub := &fields{m: b}
		sub.require("Read", "Write", "Trim")
		l.Active[i] = LatencyBucket{Read: sub.u64("Read"), Write: sub.u64("Write"), Trim: sub.u64("Trim")}
		for _, e := range sub.errs {
			f.errs = append(f.errs, fmt.Errorf("%q: %w", key, e))
		}
	}
	return l, errors.Join(f.errs...)
}

// OCPLatencyLog reads dev's C3h log; a drive without it is a *NoOCPLog.
func (c CLI) OCPLatencyLog(ctx context.Context, dev, version string) (l OCPLatency, out []byte, err error) {
	out, err = c.Run(ctx, OCPArgs("latency-monitor-log", dev, version)...)
	if err != nil {
		if no := noOCP("C3", out, err); no != nil {
			return OCPLatency{}, out, no
		}
		return OCPLatency{}, out, fmt.Errorf("reading the OCP C3 log of %s: %w", dev, err)
	}
	l, err = ParseOCPLatency(out)
	var no *NoOCPLog
	if err != nil && !errors.As(err, &no) {
		err = fmt.Errorf("reading the OCP C3 log of %s: nvme ocp latency-monitor-log output: %w", dev, err)
	}
	return l, out, err
}
