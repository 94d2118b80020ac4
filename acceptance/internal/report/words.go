package report

import (
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/report/plain"
)

// verdictWords is a result's verdict cell with its cause in plain words.
func verdictWords(res Result) string {
	never := res.Cause == CauseInterrupted && strings.Contains(res.Error, "never reached")
	return plain.Verdict(cell(res.Verdict), res.Cause, never)
}
