package cmdline

import (
	"fmt"
	"regexp"
	"strings"
)

// RunWorkloads checks the workload level of go test's -run pattern
// against the workloads' subtest names ("4KB_Random_Read"): a workload
// level (the third of TestSingleDrive/<capacity>/<workload> or
// TestScaling/<N>_drives/<workload>) written as a plain name that
// matches none of them selects no cell, and is said, with "did you mean"
// from suggest (a workload's name, or ""). A pattern with brackets,
// parentheses or escapes is left to go test.
func (c *Config) RunWorkloads(subtests []string, suggest func(string) string) []string {
	if c.Run == "" || strings.ContainsAny(c.Run, `[]()\`) {
		return nil
	}
	var out []string
	for _, alt := range strings.Split(c.Run, "|") {
		levels := strings.Split(alt, "/")
		if len(levels) < 3 || !regexp.MustCompile(`^\^?Test(SingleDrive|Scaling)\$?$`).MatchString(levels[0]) {
			continue
		}
		level := levels[2]
		plainName := strings.Trim(level, "^$")
		if plainName == "" || strings.ContainsAny(plainName, ".*+?{}") {
			continue
		}
		re, err := regexp.Compile(level)
		if err != nil {
			continue
		}
		matched := false
		for _, s := range subtests {
			matched = matched || re.MatchString(s)
		}
		if matched {
			continue
		}
		msg := fmt.Sprintf("-run: %q matches no workload of the spec, so %s selects no cell", level, alt)
		if s := suggest(plainName); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", strings.NewReplacer(" ", "_", "/", "-").Replace(s))
		}
		out = append(out, msg)
	}
	return out
}
