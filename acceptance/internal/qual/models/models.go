// Package models checks the drives' model numbers against the spec's models
// before anything is written, and picks the built-in spec for them.
package models

import (
	"fmt"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/specs"
)

// Check checks each drive's model (id-ctrl "mn", as sysfs reports
// it) against the spec's models, before anything is written: an NVMe
// drive of another model is refused unless anyModel; so is a SATA or SAS
// drive (its sysfs model), which is no more the spec's drive. Loop
// devices, regular files and block devices without a model number are
// test targets and are not checked. checks says, by
// drive, how its model was checked (for the drives table); judgedAnyway
// names the drives -any-model let through, "" for none.
func Check(spec *specs.Spec, infos []device.Info, anyModel bool) (checks map[string]string, judgedAnyway string, errs []error) {
	checks = map[string]string{}
	var anyway []string
	patterns := strings.Join(spec.Models, `", "`)
	for _, in := range infos {
		switch {
		case !in.Block:
			checks[in.Path] = "not checked: a regular file is a test target"
		case in.BackingFile != "" || in.Model == "loop":
			checks[in.Path] = "not checked: a loop device is a test target"
		case in.Controller == "" && in.Model == "":
			checks[in.Path] = "not checked: it has no model number (a test target)"
		case len(spec.Models) == 0:
			checks[in.Path] = "not checked: " + spec.File + " names no models"
		case spec.MatchesModel(in.Model):
			checks[in.Path] = fmt.Sprintf("%q matches %s's models", in.Model, spec.Name)
		case anyModel:
			checks[in.Path] = fmt.Sprintf("%q is not one of %s's models; judged against it with -any-model", in.Model, spec.Name)
			anyway = append(anyway, fmt.Sprintf("%s (%s)", in.Path, in.Model))
		default:
			errs = append(errs, fmt.Errorf("parsing -drives: %s is a %q, which is not a model of %s (models = [\"%s\"]): give -spec with a spec for that model, or -any-model to judge it against these figures anyway",
				in.Path, in.Model, spec.File, patterns))
		}
	}
	if len(anyway) > 0 {
		judgedAnyway = fmt.Sprintf("%s judged against %s, whose models (\"%s\") they are not", strings.Join(anyway, ", "), spec.Model, patterns)
	}
	return checks, judgedAnyway, errs
}

// ChooseBuiltin picks, among the built-in specs names (load reads one),
// the one whose models match every NVMe drive's model; ok is false when
// none or more than one does, or no drive is an NVMe drive.
func ChooseBuiltin(names []string, load func(string) (*specs.Spec, error), models []string) (name string, ok bool) {
	if len(models) == 0 {
		return "", false
	}
	var found []string
	for _, n := range names {
		s, err := load(n)
		if err != nil || len(s.Models) == 0 {
			continue
		}
		all := true
		for _, m := range models {
			all = all && s.MatchesModel(m)
		}
		if all {
			found = append(found, n)
		}
	}
	if len(found) != 1 {
		return "", false
	}
	return found[0], true
}
