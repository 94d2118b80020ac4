package purgeproof

import (
	"context"
	"fmt"
	"os"
	"sync"
	"unsafe"
)

// chunk is the most bytes one read asks for.
const chunk = MiB

// Readers is how many reads of one drive are in flight: enough to reach a
// drive's sequential-read rate with 1 MiB reads.
const Readers = 8

// Read reads extents of path with O_DIRECT (past the page cache, from the
// drive), in reads of at most 1 MiB, Readers at a time, and gives each
// read's offset and bytes to fn, which may be called concurrently and must
// not keep b. It returns the bytes read.
func Read(ctx context.Context, path string, extents []Extent, fn func(off int64, b []byte)) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oDirect, 0)
	if err != nil {
		return 0, fmt.Errorf("reading %s back: %w", path, err)
	}
	defer f.Close()
	work := make(chan Extent)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		total int64
	)
	for range Readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := aligned(chunk)
			for e := range work {
				b := buf[:e.Len]
				n, err := f.ReadAt(b, e.Off)
				if err == nil && int64(n) < e.Len {
					err = fmt.Errorf("short read: %d of %d bytes", n, e.Len)
				}
				mu.Lock()
				if err != nil && first == nil {
					first = fmt.Errorf("reading %s back at byte offset %d: %w", path, e.Off, err)
				}
				total += int64(n)
				mu.Unlock()
				if err == nil {
					fn(e.Off, b)
				}
			}
		}()
	}
feed:
	for _, e := range extents {
		for off := e.Off; off < e.Off+e.Len; off += chunk {
			select {
			case <-ctx.Done():
				break feed
			case work <- Extent{off, min(chunk, e.Off+e.Len-off)}:
			}
		}
	}
	close(work)
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		first = fmt.Errorf("reading %s back: %w", path, ctx.Err())
	}
	return total, first
}

func aligned(n int) []byte {
	b := make([]byte, n+align)
	skip := 0
	if r := int(uintptr(unsafe.Pointer(&b[0])) % align); r != 0 {
		skip = align - r
	}
	return b[skip : skip+n : skip+n]
}
