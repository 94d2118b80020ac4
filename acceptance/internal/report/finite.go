package report

import (
	"fmt"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/report/finite"
)

// Finite sets every NaN or ±Inf number held in *v to 0 and says what
// each was, by its JSON name (package finite).
func Finite(v any) []string { return finite.Zero(v) }

// FailNonFinite fails res when it holds a number that is not finite
// (Finite, which zeroes it): its verdict FAIL, cause bad recording, its
// error naming each such figure. It reports whether it did.
func FailNonFinite(res *Result) bool {
	bad := Finite(res)
	if len(bad) == 0 {
		return false
	}
	msg := fmt.Sprintf("%s: the recording gives a figure that is not a number: %s", res.Workload, strings.Join(bad, ", "))
	if res.Workload == "" {
		msg = strings.TrimPrefix(msg, ": ")
	}
	if res.Error != "" {
		msg = res.Error + "; " + msg
	}
	res.Verdict, res.Cause, res.Error = Fail, CauseBadRecording, msg
	return true
}
