package live

import (
	"sync"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/integrity"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
)

// goneSeenEvery is how often a verify pass looks for drives that went
// (their capacity 0, or their node gone) while fio reads them back.
const goneSeenEvery = 250 * time.Millisecond

// goneSlack is how much later than fio's first failed read of a drive
// its going may be seen for that read to count as one of a drive going:
// a look every goneSeenEvery, on a loaded host a late one (a guest under
// emulation beside make test was descheduled for 2.8 s at a time).
const goneSlack = 5 * time.Second

// passClock times, during a verify pass, when each drive was first seen
// gone and when fio first named a failed read of it (a mismatch or an
// I/O error, on its stderr as fio printed it). A pulled drive goes
// first: its capacity drops to 0, then its reads fail or complete with
// nothing. A drive that returned wrong data and died later (a controller
// that crashed after its media failed) fails first and goes after: what
// fio read of it is its own.
type passClock struct {
	mu     sync.Mutex
	gone   map[int]time.Time
	failed map[int]time.Time
	stop   chan struct{}
	done   chan struct{}
}

// clockPass starts timing st's drives; the watch fio is run with is w,
// wrapped so that each stderr line is read too. end stops the clock and
// looks once more: a drive that went as fio ended is seen now.
func (r *Runner) clockPass(st *plan.Step, w *Watch) (*passClock, *Watch) {
	c := &passClock{gone: map[int]time.Time{}, failed: map[int]time.Time{}, stop: make(chan struct{}), done: make(chan struct{})}
	byTarget := map[string]int{}
	for i, d := range st.Drives {
		byTarget[r.Drives[d].Path] = d
		if i < len(st.Job.Targets) {
			byTarget[st.Job.Targets[i].Path] = d
		}
	}
	ww := &Watch{}
	if w != nil {
		*ww = *w
	}
	prior := ww.Stderr
	ww.Stderr = func(line string) {
		if prior != nil {
			prior(line)
		}
		now := time.Now()
		var named []string
		for file := range integrity.Mismatches(line) {
			named = append(named, file)
		}
		for file := range integrity.IOErrors(line) {
			named = append(named, file)
		}
		c.mu.Lock()
		for _, file := range named {
			if d, ok := byTarget[file]; ok && c.failed[d].IsZero() {
				c.failed[d] = now
			}
		}
		c.mu.Unlock()
	}
	look := func() {
		if r.drives.guard == nil {
			return
		}
		now := time.Now()
		for _, d := range st.Drives {
			if r.drives.sys.Gone(r.Drives[d].Info) == "" {
				continue
			}
			c.mu.Lock()
			if c.gone[d].IsZero() {
				c.gone[d] = now
			}
			c.mu.Unlock()
		}
	}
	go func() {
		defer close(c.done)
		t := time.NewTicker(goneSeenEvery)
		defer t.Stop()
		for {
			select {
			case <-c.stop:
				look()
				return
			case <-t.C:
				look()
			}
		}
	}()
	return c, ww
}

// end stops the clock, having looked once more.
func (c *passClock) end() {
	close(c.stop)
	<-c.done
}

// wentFirst reports whether drive d went before fio first named a failed
// read of it (or fio named none): what fio read of it is then what reads
// of a drive going give, no evidence of its media.
func (c *passClock) wentFirst(d int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return wentFirst(c.gone[d], c.failed[d])
}

func wentFirst(gone, failed time.Time) bool {
	switch {
	case failed.IsZero():
		return true
	case gone.IsZero():
		return false
	}
	return !gone.After(failed.Add(goneSlack))
}
