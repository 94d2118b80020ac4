package verdict

import "testing"

// The cause of an inconclusive verdict follows the verdict row, before
// the row's detail, so that a message cut short still gives it.
func TestWithCause(t *testing.T) {
	for _, tt := range []struct{ msg, why, want string }{
		{"4KB Random Write: actual 40,089 IOPS >= spec 1 IOPS (…)", "/dev/loop0 did not reach steady state",
			"4KB Random Write: actual 40,089 IOPS >= spec 1 IOPS (…); /dev/loop0 did not reach steady state"},
		{"4KB Random Write on 24 drives: total …; 10 of 24 drives more than 10 % below the median …", "24 of 24 drives did not reach steady state …; the figure proves nothing",
			"4KB Random Write on 24 drives: total …; 24 of 24 drives did not reach steady state …; the figure proves nothing; 10 of 24 drives more than 10 % below the median …"},
	} {
		if got := withCause(tt.msg, tt.why); got != tt.want {
			t.Errorf("withCause(%q, %q) =\n%q, want\n%q", tt.msg, tt.why, got, tt.want)
		}
	}
}
