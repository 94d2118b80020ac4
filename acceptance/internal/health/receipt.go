package health

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/specs"
)

// Receipt inspects a drive as it arrives: the SMART log read before
// anything was written, against the spec's [receipt] limits, one Check per
// figure in a fixed order: power_on_hours, data_written, data_read,
// unsafe_shutdowns, media_errors, percent_used. A figure the spec sets no
// limit for is reported and skipped, saying which key would judge it.
func Receipt(log nvme.SmartLog, limits specs.Receipt) []Check {
	return []Check{
		receipt("power_on_hours", "max_power_on_hours", log.PowerOnHours.Big(), limits.MaxPowerOnHours, hours),
		receipt("data_written", "max_data_written", dataBytes(log.DataUnitsWritten), limits.MaxDataWritten, bytesText),
		receipt("data_read", "max_data_read", dataBytes(log.DataUnitsRead), limits.MaxDataRead, bytesText),
		receipt("unsafe_shutdowns", "max_unsafe_shutdowns", log.UnsafeShutdowns.Big(), limits.MaxUnsafeShutdowns, count),
		receipt("media_errors", "max_media_errors", log.MediaErrors.Big(), limits.MaxMediaErrors, count),
		receipt("percent_used", "max_percent_used", big.NewInt(int64(log.PercentUsed)), limits.MaxPercentUsed, percent),
	}
}

// dataBytes is a data-unit count in bytes (1 unit = 512,000 bytes).
func dataBytes(units nvme.Uint128) *big.Int {
	return new(big.Int).Mul(units.Big(), big.NewInt(512_000))
}

func receipt(name, key string, v *big.Int, limit *uint64, text func(*big.Int) string) Check {
	c := Check{Name: name}
	if limit == nil {
		c.Verdict = Skip
		c.Message = fmt.Sprintf("%s: %s on receipt; no limit set ([receipt] %s)", name, text(v), key)
		return c
	}
	l := new(big.Int).SetUint64(*limit)
	if v.Cmp(l) <= 0 {
		c.Verdict = Pass
		c.Message = fmt.Sprintf("%s: %s on receipt, limit ≤ %s", name, text(v), text(l))
		return c
	}
	c.Verdict = Fail
	c.Message = fmt.Sprintf("%s: %s on receipt, above the limit of %s ([receipt] %s): the drive has been used; return it or raise the limit",
		name, text(v), text(l), key)
	return c
}

func hours(v *big.Int) string   { return grouped(v) + " h" }
func count(v *big.Int) string   { return grouped(v) }
func percent(v *big.Int) string { return v.String() + " %" }

// bytesText is v bytes with its size in GB or TB (10^9, 10^12 bytes).
func bytesText(v *big.Int) string {
	f, _ := new(big.Float).SetInt(v).Float64()
	switch {
	case f >= 1e12:
		return fmt.Sprintf("%s bytes (%.2f TB)", grouped(v), f/1e12)
	case f >= 1e9:
		return fmt.Sprintf("%s bytes (%.2f GB)", grouped(v), f/1e9)
	}
	return grouped(v) + " bytes"
}

// grouped writes v (≥ 0) with a comma between each group of three digits.
func grouped(v *big.Int) string {
	digits := v.String()
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
