package nvme

import (
	"errors"
	"fmt"
	"math/big"
)

// SmartLog is the SMART / health information log (`nvme smart-log -o
// json`). nvme-cli has spelled its keys the same way from v0.9 to v3
// (checked at every tag): "temperature", "avail_spare", "spare_thresh",
// "percent_used", never the text output's "available_spare" or
// "percentage_used". Keys that older versions lack stay zero: the
// temperature sensors and thm_* fields came in v1.4,
// "endurance_grp_critical_warning_summary" in v1.10.
type SmartLog struct {
	// CriticalWarning is the critical warning bit field; see WarningFlags
	// and DecodeCriticalWarning. nvme-cli prints it as an object whose
	// "value" is this byte with -H (v1.11–v2.10), always (v2.11–v2.12) and
	// with -v (v2.13 on); both forms parse, and the object's bit fields must
	// agree with its value.
	CriticalWarning uint8
	// Temperature is the composite temperature in kelvin; see
	// TemperatureCelsius.
	Temperature int
	// AvailSpare, SpareThresh and PercentUsed are percentages
	// ("avail_spare", "spare_thresh", "percent_used"); PercentUsed may
	// exceed 100.
	AvailSpare, SpareThresh, PercentUsed int
	// EnduranceGroupWarning is "endurance_grp_critical_warning_summary".
	EnduranceGroupWarning uint8

	// DataUnitsRead and DataUnitsWritten count thousands of 512-byte units
	// (1 unit = 512,000 bytes), rounded up; see DataUnitBytes.
	DataUnitsRead, DataUnitsWritten Uint128
	// HostReadCommands and HostWriteCommands count commands completed.
	HostReadCommands, HostWriteCommands Uint128
	// ControllerBusyTime is in minutes.
	ControllerBusyTime Uint128
	PowerCycles        Uint128
	PowerOnHours       Uint128 // hours
	UnsafeShutdowns    Uint128
	MediaErrors        Uint128 // unrecovered data integrity errors
	NumErrLogEntries   Uint128 // error information log entries over the life of the controller

	// WarningTempTime and CriticalCompTime are minutes spent above the
	// warning and critical composite temperature thresholds.
	WarningTempTime, CriticalCompTime uint32

	// TempSensors are temperature sensors 1 to 8 in kelvin; 0 means the
	// sensor is not reported ("temperature_sensor_N" is absent).
	TempSensors [8]int

	// ThmTemp1TransCount and ThmTemp2TransCount count transitions into
	// host-controlled thermal management levels 1 and 2;
	// ThmTemp1TotalTime and ThmTemp2TotalTime are seconds spent there.
	ThmTemp1TransCount, ThmTemp2TransCount uint32
	ThmTemp1TotalTime, ThmTemp2TotalTime   uint32
}

// Warnings names the critical warning bits that are set.
func (l SmartLog) Warnings() []string { return DecodeCriticalWarning(l.CriticalWarning) }

// WarningFlags decodes CriticalWarning.
func (l SmartLog) WarningFlags() CriticalWarningFlags {
	return DecodeCriticalWarningFlags(l.CriticalWarning)
}

// TemperatureCelsius is the composite temperature in degrees Celsius, as
// nvme-cli and smartctl print it (see Celsius).
func (l SmartLog) TemperatureCelsius() int { return Celsius(l.Temperature) }

// Celsius converts a temperature that NVMe reports in kelvin (the SMART
// log's temperatures, id-ctrl's wctemp and cctemp) to degrees Celsius the
// way nvme-cli and smartctl do: kelvin − 273, in whole degrees. 0 K means
// "not reported" in NVMe; check for it before converting.
func Celsius(kelvin int) int { return kelvin - 273 }

// Critical warning bits of the SMART log (NVMe base specification, SMART /
// Health Information log, byte 0).
const (
	WarnSpare          uint8 = 1 << 0 // available spare is below its threshold
	WarnTemperature    uint8 = 1 << 1 // a temperature is outside a threshold
	WarnReliability    uint8 = 1 << 2 // NVM subsystem reliability is degraded
	WarnReadOnly       uint8 = 1 << 3 // all of the media is read-only
	WarnVolatileBackup uint8 = 1 << 4 // the volatile memory backup device has failed
	WarnPMRReadOnly    uint8 = 1 << 5 // the persistent memory region is read-only or unreliable
)

// CriticalWarningFlags is the critical warning byte decoded, one field per
// bit; the names in comments are those of nvme-cli's verbose object.
type CriticalWarningFlags struct {
	Spare          bool  // bit 0, "available_spare": spare below its threshold
	Temperature    bool  // bit 1, "temp_threshold": above an over- or below an under-temperature threshold
	Reliability    bool  // bit 2, "reliability_degraded": media or internal errors
	ReadOnly       bool  // bit 3, "ro": the media has been placed in read-only mode
	VolatileBackup bool  // bit 4, "vmbu_failed": volatile memory backup device failed
	PMRReadOnly    bool  // bit 5, "pmr_ro": persistent memory region read-only or unreliable
	Reserved       uint8 // bits 6 and 7 as they were set (0 on a drive that follows the specification)
}

// Any reports whether any bit is set.
func (f CriticalWarningFlags) Any() bool {
	return f.Spare || f.Temperature || f.Reliability || f.ReadOnly || f.VolatileBackup || f.PMRReadOnly || f.Reserved != 0
}

// DecodeCriticalWarningFlags splits a SMART critical warning byte into its
// bits.
func DecodeCriticalWarningFlags(v uint8) CriticalWarningFlags {
	return CriticalWarningFlags{
		Spare:          v&WarnSpare != 0,
		Temperature:    v&WarnTemperature != 0,
		Reliability:    v&WarnReliability != 0,
		ReadOnly:       v&WarnReadOnly != 0,
		VolatileBackup: v&WarnVolatileBackup != 0,
		PMRReadOnly:    v&WarnPMRReadOnly != 0,
		Reserved:       v &^ 0x3f,
	}
}

// verboseWarningKeys are the bit fields of nvme-cli's verbose
// critical_warning object, lowest bit first.
var verboseWarningKeys = [...]string{"available_spare", "temp_threshold", "reliability_degraded", "ro", "vmbu_failed", "pmr_ro"}

// DataUnitBytes converts a data-unit count (DataUnitsRead,
// DataUnitsWritten) to bytes: 1 unit = 1000 × 512 bytes.
func DataUnitBytes(u Uint128) *big.Int {
	return new(big.Int).Mul(u.Big(), big.NewInt(512000))
}

var criticalWarningBits = [...]string{
	"available spare is below its threshold",
	"temperature is outside a threshold",
	"NVM subsystem reliability is degraded by media or internal errors",
	"media is read-only",
	"volatile memory backup device has failed",
	"persistent memory region is read-only or unreliable",
}

// DecodeCriticalWarning names the bits set in a SMART critical warning
// byte, lowest bit first; nil when none is set.
func DecodeCriticalWarning(v uint8) []string {
	var out []string
	for i := 0; i < 8; i++ {
		if v&(1<<i) == 0 {
			continue
		}
		if i < len(criticalWarningBits) {
			out = append(out, criticalWarningBits[i])
		} else {
			out = append(out, fmt.Sprintf("reserved critical warning bit %d is set", i))
		}
	}
	return out
}

// ParseSmartLog parses `nvme smart-log -o json` from any nvme-cli version
// (see SmartLog for the keys, Uint128 for the counters).
func ParseSmartLog(out []byte) (SmartLog, error) {
	m, err := decodeObject(out)
	if err != nil {
		return SmartLog{}, err
	}
	f := &fields{m: m}
	f.require("critical_warning", "temperature", "avail_spare", "spare_thresh", "percent_used",
		"data_units_read", "data_units_written", "power_on_hours", "media_errors")
	var l SmartLog
	if cw, ok := m["critical_warning"].(map[string]any); ok {
		sub := &fields{m: cw}
		sub.require("value")
		l.CriticalWarning = uint8(sub.int("value", 0, 0xff))
		for i, k := range verboseWarningKeys {
			if !sub.has(k) {
				continue
			}
			bit := l.CriticalWarning >> i & 1
			if got := sub.int(k, 0, 1); len(sub.errs) == 0 && got != int64(bit) {
				sub.errs = append(sub.errs, fmt.Errorf("%q is %d but bit %d of value %d is %d", k, got, i, l.CriticalWarning, bit))
			}
		}
		for _, e := range sub.errs {
			f.errs = append(f.errs, fmt.Errorf("\"critical_warning\": %w", e))
		}
	} else {
		l.CriticalWarning = uint8(f.int("critical_warning", 0, 0xff))
	}
	l.Temperature = int(f.int("temperature", 0, 0xffff))
	l.AvailSpare = int(f.int("avail_spare", 0, 0xff))
	l.SpareThresh = int(f.int("spare_thresh", 0, 0xff))
	l.PercentUsed = int(f.int("percent_used", 0, 0xff))
	l.EnduranceGroupWarning = uint8(f.int("endurance_grp_critical_warning_summary", 0, 0xff))
	l.DataUnitsRead = f.u128("data_units_read")
	l.DataUnitsWritten = f.u128("data_units_written")
	l.HostReadCommands = f.u128("host_read_commands")
	l.HostWriteCommands = f.u128("host_write_commands")
	l.ControllerBusyTime = f.u128("controller_busy_time")
	l.PowerCycles = f.u128("power_cycles")
	l.PowerOnHours = f.u128("power_on_hours")
	l.UnsafeShutdowns = f.u128("unsafe_shutdowns")
	l.MediaErrors = f.u128("media_errors")
	l.NumErrLogEntries = f.u128("num_err_log_entries")
	l.WarningTempTime = f.u32("warning_temp_time")
	l.CriticalCompTime = f.u32("critical_comp_time")
	for i := range l.TempSensors {
		l.TempSensors[i] = int(f.int(fmt.Sprintf("temperature_sensor_%d", i+1), 0, 0xffff))
	}
	l.ThmTemp1TransCount = f.u32("thm_temp1_trans_count")
	l.ThmTemp2TransCount = f.u32("thm_temp2_trans_count")
	l.ThmTemp1TotalTime = f.u32("thm_temp1_total_time")
	l.ThmTemp2TotalTime = f.u32("thm_temp2_total_time")
	return l, errors.Join(f.errs...)
}
