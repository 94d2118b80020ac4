package nvme

import (
	"errors"
	"fmt"
	"math/big"
)

// SmartLog is the SMART / health information log (`nvme smart-log -o
// json`; field names as nvme-cli prints them, unchanged from v1.4 to v3).
type SmartLog struct {
	// CriticalWarning is the critical warning bit field; see
	// DecodeCriticalWarning. nvme-cli -v prints it as an object whose
	// "value" is this byte; both forms parse.
	CriticalWarning uint8
	// Temperature is the composite temperature in kelvin.
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
// (see Uint128 for the counters).
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
