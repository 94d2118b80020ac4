// Package capture keeps, for each drive that failed, what its supplier
// asks for first: its NVMe error information log and, where the
// controller has it, its host-initiated telemetry log.
package capture

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// Timeout bounds each nvme-cli command of a failure capture. The drives
// are read at once, each its two commands in turn, so that a capture
// never holds the run up longer than two of them, however many drives
// failed (24 failed drives read one after the other would hold it up to
// 48 of them).
var Timeout = 60 * time.Second

// Failed lists, in order, the drives of run that failed: those the run
// stopped using (broken, by drive index), those whose integrity or
// single-drive cell failed (drivesOf gives a capacity's drives), those
// a failed scaling cell names failing (a per-drive verdict of fail, or
// the drive's own failure as its cause: a drive that failed only a
// scaling cell) and those whose health or receipt check failed; index
// gives each drive's index by path.
func Failed(run *report.Run, index map[string]int, broken map[int]string, drivesOf func(capacity string) []int) []int {
	failed := map[int]bool{}
	for d := range broken {
		failed[d] = true
	}
	for _, res := range run.Results {
		if res.Verdict != report.Fail {
			continue
		}
		switch {
		case res.Integrity != nil:
			if i, ok := index[res.Integrity.Drive]; ok {
				failed[i] = true
			}
		case res.Kind == report.KindSingle:
			for _, i := range drivesOf(res.Capacity) {
				failed[i] = true
			}
		case res.Kind == report.KindScaling:
			for _, d := range res.PerDrive {
				if i, ok := index[d.Path]; ok && (d.Verdict == report.Fail || d.Cause != "") {
					failed[i] = true
				}
			}
		}
	}
	for _, c := range append(slices.Clone(run.Health), run.Receipt...) {
		if c.Verdict == report.Fail {
			if i, ok := index[c.Drive]; ok {
				failed[i] = true
			}
		}
	}
	var list []int
	for d := range failed {
		list = append(list, d)
	}
	slices.Sort(list)
	return list
}

// Drives reads, for each of drives (device paths by drive index), its
// error information log (`nvme error-log DEV -o json`) and its telemetry
// log (`nvme telemetry-log DEV --output-file=FILE`) into dir/<drive
// index>.*, each command bounded by Timeout, all drives at once; kept is
// told of each drive's capture as it ends. It returns what was kept or
// why not, by drive.
func Drives(ctx context.Context, cli nvme.CLI, dir string, drives map[int]string, kept func(d int, c report.Capture)) map[int]report.Capture {
	out := map[int]report.Capture{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for d, dev := range drives {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := drive(ctx, cli, dir, d, dev)
			mu.Lock()
			defer mu.Unlock()
			out[d] = c
			kept(d, c)
		}()
	}
	wg.Wait()
	return out
}

// drive reads drive d's (at dev) error log and telemetry into dir.
func drive(ctx context.Context, cli nvme.CLI, dir string, d int, dev string) report.Capture {
	var c report.Capture
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.Notes = append(c.Notes, err.Error())
		return c
	}
	errLog := filepath.Join(dir, fmt.Sprintf("%d.error-log.json", d))
	if b, err := bounded(ctx, cli, "error-log", dev, "-o", "json"); err != nil {
		c.Notes = append(c.Notes, "no error log: "+shortErr(err))
	} else if err := report.WriteFileAtomic(errLog, b); err != nil {
		c.Notes = append(c.Notes, err.Error())
	} else {
		c.Files = append(c.Files, errLog)
	}
	tel := filepath.Join(dir, fmt.Sprintf("%d.telemetry.bin", d))
	if _, err := bounded(ctx, cli, "telemetry-log", dev, "--output-file="+tel); err != nil {
		os.Remove(tel)
		c.Notes = append(c.Notes, "no telemetry: "+shortErr(err))
	} else if st, err := os.Stat(tel); err != nil || st.Size() == 0 {
		os.Remove(tel)
		c.Notes = append(c.Notes, "no telemetry: nvme telemetry-log wrote nothing")
	} else {
		c.Files = append(c.Files, tel)
	}
	return c
}

// bounded runs nvme-cli with args, killed after Timeout.
func bounded(ctx context.Context, cli nvme.CLI, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	return cli.Run(ctx, args...)
}

// shortErr is nvme-cli's own words for a failed command, or the error.
func shortErr(err error) string {
	var ce *nvme.CommandError
	if errors.As(err, &ce) && ce.Stderr != "" {
		l, _, _ := strings.Cut(strings.TrimSpace(ce.Stderr), "\n")
		return l
	}
	return err.Error()
}
