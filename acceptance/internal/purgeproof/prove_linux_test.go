package purgeproof

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/purge"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
	"github.com/drivequal/drivequal/fiojob"
)

// These tests purge a 64 MiB loop device that real fio filled with the
// fill's pattern, and read it back. The discard is real (blkdiscard); a
// format or sanitize is sent to a stand-in nvme-cli (a loop device is no
// NVMe namespace), which reports success, or serves a real sanitize log.

const (
	loopSize = 64 << 20
	fillID   = 0x5eed5eed5eed0002
)

// filledLoop is a 64 MiB loop device that fio filled, every 128 KiB block
// holding the fill's pattern for fillID.
func filledLoop(t *testing.T) string {
	t.Helper()
	testenv.MustHaveLoop(t)
	fio := testenv.MustHaveFio(t)
	dev := testenv.Loop(t, loopSize)
	cmd := exec.Command(fio, "--name=fill", "--filename="+dev, "--rw=write", "--bs=128k", "--direct=1",
		"--ioengine=psync", "--verify=pattern", "--verify_pattern="+fiojob.FillPattern(fillID), "--do_verify=0")
	cmd.Dir = t.TempDir() // fio may leave a verify state file where it runs
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("fio: %v\n%s", err, out)
	}
	return dev
}

// blkdiscard discards through util-linux's blkdiscard.
type blkdiscard struct{}

func (blkdiscard) Discard(path string) error {
	if out, err := exec.Command("blkdiscard", path).CombinedOutput(); err != nil {
		return fmt.Errorf("blkdiscard %s: %v: %s", path, err, out)
	}
	return nil
}

// standIn writes an nvme-cli stand-in running script for every command,
// and returns it.
func standIn(t *testing.T, script string) nvme.CLI {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "nvme")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return nvme.CLI{Binary: bin}
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "..", "fixtures", "nvme", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func proveOne(t *testing.T, dev string, s purge.Step, cli nvme.CLI) Result {
	t.Helper()
	s.Targets = []string{dev}
	// DLFEAT 001b: deallocated blocks read zeros, as a loop device's do.
	in := Input{Mode: Sample, Targets: []Target{{Path: dev, Size: loopSize, Sector: 512, Loop: true, DLFEAT: 1}}, Steps: []purge.Step{s},
		Runner: purge.Runner{NVMe: cli, Poll: 1}, Discarder: blkdiscard{}, Fills: Fills{fillID}}
	rs := Prove(context.Background(), in, t.Logf)
	if len(rs) != 1 {
		t.Fatalf("Prove gave %d results, want 1", len(rs))
	}
	t.Log(rs[0].Message)
	return rs[0]
}

const sectors = loopSize / 512

// A discard of a loop device punches its backing file: every sector
// reads zeros, as promised.
func TestProveDiscardLoop(t *testing.T) {
	dev := filledLoop(t)
	r := proveOne(t, dev, purge.Step{Kind: purge.DiscardBlocks, Device: dev}, nvme.CLI{})
	if r.Verdict != Pass || r.Bad != 0 || r.Sectors != sectors || r.BytesRead != loopSize {
		t.Errorf("discard: %+v, want a pass over all %d sectors", r, sectors)
	}
	if r.FillBefore != sectors || r.Promise != "zeros" {
		t.Errorf("discard: fill before = %d, promise %q; want all %d sectors of the fill, zeros", r.FillBefore, r.Promise, sectors)
	}
}

// A format that reports success and erases nothing fails, naming the
// command and the LBAs still holding the fill.
func TestProveFormatThatErasesNothing(t *testing.T) {
	dev := filledLoop(t)
	cli := standIn(t, `[ "$1" = format ] && exit 0; exit 1`)
	r := proveOne(t, dev, purge.Step{Kind: purge.FormatNVM, Device: dev}, cli)
	if r.Verdict != Fail || r.Bad != sectors {
		t.Fatalf("format erasing nothing: %+v, want a failure on all %d sectors", r, sectors)
	}
	for _, want := range []string{"nvme format " + dev + " --ses=1 --force", "LBAs 0-131071", "131072 this run's fill", "which promises zeros"} {
		if !strings.Contains(r.Message, want) {
			t.Errorf("message %q lacks %q", r.Message, want)
		}
	}
}

// A sanitize whose log reports failure fails TestPurge, whatever the
// media then reads.
func TestProveSanitizeLogFailed(t *testing.T) {
	dev := filledLoop(t)
	cli := standIn(t, `case "$1" in sanitize) exit 0;; sanitize-log) cat `+fixture(t, "sanitize-log-v2.16-failed.json")+`;; *) exit 1;; esac`)
	r := proveOne(t, dev, purge.Step{Kind: purge.SanitizeNVM, Device: dev, SanAct: purge.SanActBlockErase}, cli)
	if r.Verdict != Fail || !strings.Contains(r.Message, "failed") || !strings.Contains(r.Message, "Most Recent Sanitize Command Failed") {
		t.Errorf("sanitize log failed: %+v, want a failure quoting the log", r)
	}
}

// A crypto erase promises anything but the old data: a stand-in that
// overwrites the media with random bytes passes; one that leaves it fails.
func TestProveCryptoErase(t *testing.T) {
	done := fixture(t, "sanitize-log-v2.3-completed.json")
	for _, c := range []struct {
		name, erase string
		want        string
	}{
		{"overwritten", "dd if=/dev/urandom of=$DEV bs=1M count=64 oflag=direct 2>/dev/null", Pass},
		{"left", "true", Fail},
	} {
		t.Run(c.name, func(t *testing.T) {
			dev := filledLoop(t)
			cli := standIn(t, `DEV=`+dev+`; case "$1" in sanitize) `+c.erase+`;; sanitize-log) cat `+done+`;; *) exit 1;; esac`)
			r := proveOne(t, dev, purge.Step{Kind: purge.SanitizeNVM, Device: dev, SanAct: purge.SanActCryptoErase}, cli)
			if r.Verdict != c.want || r.Promise != "anything but the old data" {
				t.Errorf("crypto erase, media %s: %+v, want %s", c.name, r, c.want)
			}
		})
	}
}

// The sample and the whole drive differ: one 4 KiB block of the fill,
// planted between the sample's extents and left by a format that erases
// nothing, passes the sample and fails the full read-back, which names
// its LBAs. The first 64 KiB hold the fill too (the sample's, which the
// format stand-in zeroes, so that the sample shows an erase). The sample is scaled to a 64 MiB loop device (1 MiB at each
// end, 64 KiB extents adding to 1 %); TestExtents checks the default's
// shape at real capacities.
func TestProveSampleAndFull(t *testing.T) {
	testenv.MustHaveLoop(t)
	const size = loopSize
	sampling := Sampling{Edge: MiB, Extent: 64 << 10, Share: Share}
	const at = MiB + 64<<10 // between the first MiB and the first spaced extent
	ext := sampling.Extents(size, Sample)
	if len(ext) < 3 {
		t.Fatalf("the scaled sample is the whole drive: %v", ext)
	}
	for _, e := range ext {
		if at < e.Off+e.Len && at+4096 > e.Off {
			t.Fatalf("the planted block at %d is in the sample's extent %v", at, e)
		}
	}
	dev := testenv.Loop(t, size)
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(fillBlock(fillID, 0)[:4096], at); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(fillBlock(fillID, 0)[:64<<10], 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	cli := standIn(t, `[ "$1" = format ] && exec dd if=/dev/zero of=`+dev+` bs=64k count=1 oflag=direct conv=notrunc 2>/dev/null; exit 1`)
	for _, c := range []struct {
		mode    string
		verdict string
		bytes   int64
	}{{Sample, Pass, Bytes(ext)}, {Full, Fail, size}} {
		s := purge.Step{Kind: purge.FormatNVM, Device: dev, Targets: []string{dev}}
		in := Input{Mode: c.mode, Targets: []Target{{Path: dev, Size: size, Sector: 512, DLFEAT: 1}}, Steps: []purge.Step{s},
			Runner: purge.Runner{NVMe: cli}, Fills: Fills{fillID}, Sampling: sampling}
		r := Prove(context.Background(), in, t.Logf)[0]
		t.Log(r.Message)
		if r.Verdict != c.verdict || r.BytesRead != c.bytes {
			t.Errorf("%s: verdict %s after reading %d bytes, want %s after %d", c.mode, r.Verdict, r.BytesRead, c.verdict, c.bytes)
		}
		if c.mode == Full && !strings.Contains(r.Message, fmt.Sprintf("LBAs %d-%d", at/512, (at+4096)/512-1)) {
			t.Errorf("full: message %q does not name the planted block's LBAs", r.Message)
		}
	}
}
