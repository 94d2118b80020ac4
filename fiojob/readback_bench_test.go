package fiojob

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// shmLoop is a loop device over an image in /dev/shm (memory, so that the
// device is as fast as the host can copy and compare), or in a temporary
// directory where there is none.
func shmLoop(b *testing.B, size int64) string {
	b.Helper()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		dir, err := os.MkdirTemp("/dev/shm", "readback-bench")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
		b.Setenv("TMPDIR", dir)
	}
	return loopDevice(b, size)
}

// BenchmarkReadBack compares, on one loop device of 2 GiB + 90,112 B over
// memory, the suite's read-back (VerifyPass: every byte compared, split
// over 1 or 8 jobs on disjoint ranges at ReadBackQueue blocks in flight)
// with a raw read of the same device by as many jobs at the same queue,
// and by one job at the spec's sequential-read queue (QD 128). Each
// iteration reads the whole device once; MB/s is fio's own figure
// (io_bytes over its runtime). Run it alone:
//
//	go test ./fiojob -run '^$' -bench ReadBack -benchtime 3x
func BenchmarkReadBack(b *testing.B) {
	fio := needFio(b)
	const size = 2<<30 + 90112
	dev := shmLoop(b, size)
	targets := []Target{{Path: dev, Size: size}}
	fill := Fill(targets, 1, 0x0123456789abcdef)
	if out, err := exec.Command(fio, "--output-format=terse", writeJobFile(b, fill.File())).CombinedOutput(); err != nil {
		b.Fatalf("fill: %v\n%s", err, out)
	}
	raw := func(jobs, depth int) Job {
		return Job{Name: "raw", RW: "read", BS: 128 << 10, IODepth: depth, NumJobs: 1, RWMixRead: -1,
			IOEngine: "libaio", Direct: true, Loops: 1, GroupReporting: true, Split: jobs, Tail: true, Targets: targets}
	}
	for _, c := range []struct {
		name string
		job  Job
	}{
		{"read-back/1-job", VerifyPass(fill, 1)},
		{"read-back/8-jobs", VerifyPass(fill, 8)},
		{"raw/8-jobs-qd48", raw(8, 6)},
		{"raw/1-job-qd128", raw(1, 128)},
	} {
		b.Run(c.name, func(b *testing.B) {
			if err := c.job.Validate(); err != nil {
				b.Fatal(err)
			}
			path := writeJobFile(b, c.job.File())
			var mbps, cpu float64
			for b.Loop() {
				var stderr bytes.Buffer
				cmd := exec.Command(fio, "--output-format=json", path)
				cmd.Stderr = &stderr
				stdout, err := cmd.Output()
				if err != nil {
					b.Fatalf("%v\n%s", err, stderr.Bytes())
				}
				out, err := Parse(stdout)
				if err != nil {
					b.Fatal(err)
				}
				g := out.Groups()
				if len(g) != 1 || g[0].Read.IOBytes != size {
					b.Fatalf("%s: read %v, want one group of %d bytes", c.name, g, size)
				}
				mbps += g[0].MBps()
				cpu += g[0].CPUSeconds
			}
			b.ReportMetric(mbps/float64(b.N), "MB/s")
			b.ReportMetric(cpu/float64(b.N)/(float64(size)/1e9), "cpu-s/GB")
		})
	}
}
