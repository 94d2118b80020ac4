package acceptance

import (
	"context"
	"flag"
	"fmt"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/qual"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/report/outfiles"
	"github.com/drivequal/drivequal/acceptance/internal/report/page"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

var flags cmdline.Flags

func init() { flags.Register(flag.CommandLine) }

// run is what TestMain set up; nil only when TestMain refused.
var run *qual.Run

// runCtx ends on Ctrl-C, SIGTERM or shortly before the test deadline, so
// every fio is stopped and the report written before go test gives up.
var runCtx context.Context

func TestMain(m *testing.M) {
	flag.Parse()
	flags.Given(flag.CommandLine)
	os.Exit(qualify(m))
}

func qualify(m *testing.M) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	timeout := testTimeout()
	if timeout > 0 {
		// Leave time to stop fio and write the report before go test's own
		// deadline panics the binary.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout-stopMargin(timeout))
		defer cancel()
	}
	runCtx = ctx

	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "drivequal:", err)
		return 2
	}
	root, err := cmdline.ModuleRoot(wd)
	if err != nil {
		fmt.Fprintln(os.Stderr, "drivequal:", err)
		return 2
	}
	cfg, errs := flags.Validate(root)
	// The plan covers the cells go test will run, and no other.
	cfg.Run, cfg.Skip = testFlag("test.run"), testFlag("test.skip")
	s, more := qual.Setup(ctx, cfg, timeout, device.System{}, fiojob.Runner{})
	errs = append(errs, more...)
	if len(errs) == 0 {
		s.Progress = operator()
		if err := s.Start(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		fmt.Fprintf(os.Stderr, "drivequal: refusing to run (%d problem%s):\n", len(errs), plural(len(errs)))
		for _, e := range errs {
			fmt.Fprintf(os.Stderr, "  %v\n", e)
		}
		return 2
	}
	// A misspelt workload in -run selects nothing: said, with the name meant.
	if s.Spec != nil {
		var subtests []string
		for _, w := range s.Spec.Workloads {
			subtests = append(subtests, specs.SubtestName(w.Name))
		}
		for _, w := range cfg.RunWorkloads(subtests, s.Spec.SuggestWorkload) {
			fmt.Fprintln(os.Stderr, "drivequal: warning:", w)
		}
	}
	if cfg.DryRun {
		s.PrintPlan(operator())
		return 0
	}
	// What an earlier run wrote in the report directory goes (its charts
	// would read as this run's); recordings kept there stay.
	removed, err := outfiles.Track(cfg.Report, append(append([]string{cfg.Record, cfg.Replay}, cfg.Replays...), cfg.Baselines...)...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "drivequal:", err)
		return 2
	}
	// A replay's too: the files of its recording edited since they were
	// recorded, said before any verdict.
	for _, w := range s.AllWarnings() {
		fmt.Fprintln(os.Stderr, "drivequal: warning:", w)
	}
	if cfg.Live() {
		if line := s.ResumeLine(); line != "" {
			fmt.Fprintln(operator(), "drivequal:", line)
		}
		est := s.Estimate()
		fmt.Fprintf(operator(), "drivequal: plan (estimated %s; -dry-run shows the fio job files):\n%s\n",
			est.Total.Round(time.Second), strings.Join(est.Lines, "\n"))
	}
	run = s
	// The gate is a test (TestVerdict), and it runs whatever -run selects,
	// so that go test never prints PASS for a run that exits non-zero.
	if run := testFlag("test.run"); run != "" {
		flag.Set("test.run", cmdline.AlsoRun(run, "TestVerdict"))
	}
	code := m.Run()
	s.CaptureFailures(ctx)
	if err := s.Finish(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "drivequal:", err)
		code = max(code, 1)
	}
	if err := s.WriteReport(); err != nil {
		fmt.Fprintln(os.Stderr, "drivequal:", err)
		code = max(code, 1)
	}
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "drivequal:", err)
		code = max(code, 1)
	}
	// The exit status is the gate: 0 only when everything tested is
	// QUALIFIED. A run that judged nothing, or that was stopped, is not.
	closing := s.Report.ClosingLine()
	if s.Report.Overall().Verdict != report.Qualified || ctx.Err() != nil {
		code = max(code, 1)
	}
	summary, err := os.ReadFile(filepath.Join(cfg.Report, "summary.md"))
	if err == nil {
		fmt.Fprintf(operator(), "\n%s\nreport: %s\npage: %s\n", summary, cfg.Report, filepath.Join(cfg.Report, page.File))
	}
	if ctx.Err() != nil {
		closing += fmt.Sprintf(" (the run was stopped: %s)", stopReason(ctx.Err()))
	}
	// Once, where the summary went (go test shows a failing package's
	// output): on both stdout and stderr it read twice on a terminal or
	// with 2>&1.
	fmt.Fprintln(operator(), "drivequal:", closing)
	// The earlier run's files this run did not write again, named once.
	if stale := slices.DeleteFunc(removed, func(f string) bool { return slices.Contains(outfiles.Written(), f) }); len(stale) > 0 {
		fmt.Fprintf(operator(), "drivequal: removed %d files an earlier run wrote in %s: %s\n", len(stale), cfg.Report, strings.Join(stale, ", "))
	}
	if ctx.Err() != nil && cfg.Live() {
		fmt.Fprintf(operator(), "drivequal: to continue this run, from %s: %s\n", root, cmdline.ResumeCommand(os.Args[1:]))
	}
	return code
}

// testFlag is the value of one of go test's own flags ("" when unset).
func testFlag(name string) string {
	if f := flag.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

// testTimeout is go test's -timeout (0: none).
func testTimeout() time.Duration {
	f := flag.Lookup("test.timeout")
	if f == nil {
		return 0
	}
	d, _ := time.ParseDuration(f.Value.String())
	return d
}

// stopMargin is how long before go test's -timeout the run is stopped: a
// tenth of the timeout, capped at 30 s, but at least twice the time fio has
// to stop after SIGINT before it is killed (a fio that ignores SIGINT takes
// all of it), and never more than half the timeout.
func stopMargin(timeout time.Duration) time.Duration {
	m := max(min(timeout/10, 30*time.Second), 2*fiojob.DefaultGrace)
	return min(m, timeout/2)
}

// operator is where the summary is shown. go test hides a passing package's
// output unless -v is given; when the binary runs under the go command
// without -v, the summary goes to the go command's own standard output, so
// that `go test ./acceptance` shows the tables.
func operator() io.Writer {
	if testing.Verbose() {
		return os.Stdout
	}
	ppid := os.Getppid()
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(ppid) + "/comm")
	if err != nil || strings.TrimSpace(string(comm)) != "go" {
		return os.Stdout
	}
	// Only a terminal or a pipe: the go command's writes to a regular file
	// go at its own offset and would overwrite ours.
	fd1 := "/proc/" + strconv.Itoa(ppid) + "/fd/1"
	if st, err := os.Stat(fd1); err != nil || st.Mode().IsRegular() {
		return os.Stdout
	}
	operatorOnce.Do(func() {
		operatorOut, _ = os.OpenFile(fd1, os.O_WRONLY, 0)
	})
	if operatorOut == nil {
		return os.Stdout
	}
	return operatorOut
}

var (
	operatorOnce sync.Once
	operatorOut  *os.File
)

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
