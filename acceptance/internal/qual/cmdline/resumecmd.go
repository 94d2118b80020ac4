package cmdline

import (
	"strings"
)

// goTestFlags are the go test flags a continued run keeps, by the name the
// test binary is given them under ("test.timeout"), mapped to the name
// go test takes; the rest (-test.paniconexit0, -test.testlogfile, ...)
// are go test's own plumbing.
var goTestFlags = map[string]string{
	"test.run": "run", "test.skip": "skip", "test.timeout": "timeout", "test.count": "count",
	"test.v": "v", "test.failfast": "failfast", "test.short": "short",
}

// ResumeCommand is the command that continues an interrupted run whose
// test binary was given args (os.Args[1:]): go test with the same go test
// flags and, after -args, the same drivequal flags plus -resume; without
// -overwrite, which started the run anew and would refuse a resume.
func ResumeCommand(args []string) string {
	var gotest, ours []string
	resume := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-args" || a == "--args" {
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") {
			ours = append(ours, shellQuote(a)) // a value given as the next argument
			continue
		}
		if strings.HasPrefix(name, "test.") {
			if !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && name != "test.v" && name != "test.short" && name != "test.failfast" {
				i++
				value, hasValue = args[i], true
			}
			short, keep := goTestFlags[name]
			switch {
			case !keep:
			case short == "v" || short == "short" || short == "failfast":
				if !hasValue || value == "true" || value == "test2json" {
					gotest = append(gotest, "-"+short)
				}
			default:
				gotest = append(gotest, "-"+short+"="+shellQuote(value))
			}
			continue
		}
		switch name {
		case "overwrite":
			continue
		case "resume":
			resume = true
		}
		if hasValue {
			a = "-" + name + "=" + shellQuote(value)
		}
		ours = append(ours, a)
	}
	if !resume {
		ours = append(ours, "-resume")
	}
	cmd := append([]string{"go", "test", "./acceptance"}, gotest...)
	return strings.Join(append(append(cmd, "-args"), ours...), " ")
}

// shellQuote returns s as one shell word: as it is when it needs no
// quoting, else in single quotes.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./,:=+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
