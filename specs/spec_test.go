package specs

import "testing"

// A spec's model pattern reaches past a "/" in the model number.
func TestMatchesModelPastASlash(t *testing.T) {
	s := &Spec{Models: []string{"ACME DC1500M*"}}
	if !s.MatchesModel("ACME DC1500M/3840G") {
		t.Errorf("a spec's models %q do not match %q", s.Models, "ACME DC1500M/3840G")
	}
	if s.MatchesModel("ACME DC600M/480G") {
		t.Errorf("a spec's models %q match %q", s.Models, "ACME DC600M/480G")
	}
}
