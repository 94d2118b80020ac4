package cycle

import (
	"fmt"
	"hash/fnv"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/powerloss"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// readBackEach is the read-back as it was, one read a write: the
// reference the read-back's runs must agree with.
func readBackEach(path string, acked []powerloss.Write, tag uint32, snap []uint64, bs int64) ([]powerloss.Lost, int, error) {
	f, err := openDirect(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	seen := map[int64]bool{}
	var lost []powerloss.Lost
	buf := aligned(bs)
	for _, w := range acked {
		if seen[w.Offset] {
			continue
		}
		seen[w.Offset] = true
		got := buf
		if w.Len != bs {
			got = aligned(w.Len)
		}
		if _, err := f.ReadAt(got, w.Offset); err != nil {
			return nil, 0, fmt.Errorf("offset %d: %w", w.Offset, err)
		}
		same := func(b []byte) bool {
			i := w.Offset / bs
			if w.Len != bs || i >= int64(len(snap)) {
				return false
			}
			h := fnv.New64a()
			h.Write(b)
			return h.Sum64() == snap[i]
		}
		if found, from := powerloss.Check(got, w, tag, same); found != powerloss.Intact {
			lost = append(lost, powerloss.Lost{Offset: w.Offset, Len: w.Len, Found: found, From: from})
		}
	}
	return lost, len(lost), nil
}

// The read-back that reads runs of consecutive blocks at once finds what
// reading each write alone finds, in the same order, on random images
// and write lists: runs (some past the end of the image), writes given
// again, longer and shorter writes, blocks of 512 bytes to 2 MiB,
// snapshots shorter than the image; each block holds the write's
// pattern, zeros, another write's pattern, or what it held before.
func TestReadBackSameAsOneAtATime(t *testing.T) {
	testenv.SkipUnderRace(t)
	dir, disk := directDir(t), t.TempDir()
	const tag = 0xabcd0001
	diffs, errs := 0, 0
	for iter := 0; iter < 24; iter++ {
		r := rand.New(rand.NewSource(int64(iter)))
		bss := []int64{512, 4096, 8192, 3 * 512, 1 << 20, 2 << 20}
		bs := bss[r.Intn(len(bss))]
		nblk := int64(8 + r.Intn(600))
		if bs >= 1<<20 {
			nblk = int64(2 + r.Intn(6))
		}
		size := nblk * bs
		img := make([]byte, size)
		r.Read(img)
		path := filepath.Join(dir, fmt.Sprint("img", iter))
		if onDisk[iter] {
			path = filepath.Join(disk, fmt.Sprint("img", iter))
		}
		if err := os.WriteFile(path, img, 0o644); err != nil {
			t.Fatal(err)
		}
		snapSize := size
		if r.Intn(3) == 0 {
			snapSize = size - int64(r.Intn(int(nblk)))*bs
		}
		snap, err := snapshot(path, snapSize, bs)
		if err != nil {
			t.Fatal(err)
		}
		var acked []powerloss.Write
		for len(acked) < 150 {
			switch r.Intn(6) {
			case 0, 1: // run
				s := int64(r.Intn(int(nblk)))
				l := int64(1 + r.Intn(400))
				for b := s; b < s+l && b < nblk+int64(r.Intn(40)/39); b++ {
					acked = append(acked, powerloss.Write{Offset: b * bs, Len: bs})
				}
			case 2: // dup from earlier
				if len(acked) > 0 {
					acked = append(acked, acked[r.Intn(len(acked))])
				}
			case 3: // long write
				b := int64(r.Intn(int(nblk)))
				acked = append(acked, powerloss.Write{Offset: b * bs, Len: bs * int64(1+r.Intn(3))})
			case 4: // short write (sub-bs, 512 multiple)
				b := int64(r.Intn(int(nblk)))
				acked = append(acked, powerloss.Write{Offset: b * bs, Len: 512})
			default:
				b := int64(r.Intn(int(nblk)))
				acked = append(acked, powerloss.Write{Offset: b * bs, Len: bs})
			}
		}
		for _, w := range acked {
			if w.Offset+w.Len > size {
				continue
			}
			switch r.Intn(5) {
			case 0, 1:
				copy(img[w.Offset:], powerloss.Expected(tag, w.Offset, int(w.Len)))
			case 2:
				copy(img[w.Offset:w.Offset+w.Len], make([]byte, w.Len))
			case 3:
				o := acked[r.Intn(len(acked))].Offset
				copy(img[w.Offset:w.Offset+w.Len], powerloss.Expected(tag, o, int(w.Len)))
			}
		}
		if err := os.WriteFile(path, img, 0o644); err != nil {
			t.Fatal(err)
		}
		a, an, aerr := readBackEach(path, acked, tag, snap, bs)
		b, bn, berr := readBack(path, acked, tag, snap, bs)
		if (aerr != nil) != (berr != nil) || an != bn || fmt.Sprint(a) != fmt.Sprint(b) {
			diffs++
			if diffs < 5 {
				t.Errorf("case %d, bs %d: one read a write: %d lost %v, error %v; by runs: %d lost %v, error %v", iter, bs, an, a, aerr, bn, b, berr)
			}
		}
		if aerr != nil {
			errs++
		}
		os.Remove(path)
	}
	t.Logf("%d cases differ; %d cases ended in a read error (past the image), in both", diffs, errs)
}

// onDisk are the cases of TestReadBackSameAsOneAtATime read from the
// disk, whose O_DIRECT refuses a read that is not aligned, rather than
// from directDir (tmpfs reads it through the page cache): one of each
// block size but 8 KiB and 1 MiB (512 bytes, 2 MiB, 4 KiB, 3×512 bytes).
var onDisk = map[int]bool{0: true, 1: true, 4: true, 12: true}

// directDir is a directory for images read with O_DIRECT: on tmpfs
// (/dev/shm) where its kernel takes O_DIRECT (Linux 6.6 and later), else
// t.TempDir(). What the read-backs are compared on is their findings, not
// the medium's speed; on the host's disk, beside make test's loop
// devices, each of the test's thousands of direct reads waited on it
// (141 s of a 2-core run, against seconds in memory). tmpfs does not
// refuse a misaligned direct read as a disk does, so the cases of onDisk
// stay on the disk.
func directDir(t *testing.T) string {
	if dir, err := os.MkdirTemp("/dev/shm", "drivequal-readback-"); err == nil {
		t.Cleanup(func() { os.RemoveAll(dir) })
		probe := filepath.Join(dir, "probe")
		if err := os.WriteFile(probe, make([]byte, 4096), 0o644); err == nil {
			if f, err := openDirect(probe); err == nil {
				f.Close()
				return dir
			}
		}
	}
	return t.TempDir()
}
