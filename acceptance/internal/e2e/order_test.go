package e2e

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// longest are the parallel tests that take longest, with the seconds each
// took beside the rest of make test on 2 cores. They start first: go
// test starts the parallel tests in no order of its own (they all wait on
// one barrier), and a long test that drew a late place ran on alone at the
// end (TestLoopSpecPassesThenReplays, 100 s, started 466 s into the
// package's 566 s; the parallel tests' 1,679 s take 280 s six at a time).
// A test not listed starts after every listed one waiting.
var longest = map[string]int{
	"TestLoopSpecPassesThenReplays":     100,
	"TestTemperatureWarningMidRun":      85,
	"TestResumeAfterReattach":           78,
	"TestResumeAfterSIGINTTwice":        78,
	"TestFirmwareActivationUnderLoad":   76,
	"TestResumeAfterSIGKILL":            67,
	"TestFleetOfTwoHosts":               60,
	"TestFirmwareRemeasured":            54,
	"TestHostileRecordings":             53,
	"TestRegularFileTarget":             53,
	"TestHealthThermalAndFirmware":      35,
	"TestBuiltInSpecFailsOnLoopDevices": 34,
}

// slots lets the parallel tests run, as many at once as -test.parallel
// says (TestMain sizes it), longest first.
var slots = newGate(parallel, 300*time.Millisecond)

// runParallel marks t parallel, as t.Parallel does, and then waits for one
// of slots: TestMain sets go test's own limit above any number of tests
// here, so that slots alone decides which run. A subtest waits with the
// priority of its test.
func runParallel(t *testing.T) {
	t.Parallel()
	top, _, _ := strings.Cut(t.Name(), "/")
	slots.acquire(longest[top])
	t.Cleanup(slots.release)
}

// gate is a counting semaphore whose waiters are let in by priority,
// highest first, then in the order they came. It lets none in until
// settle has passed since the first came: parallel tests are all let go
// at once, and the first to come would otherwise take the slots whatever
// their priority.
type gate struct {
	mu      sync.Mutex
	size    int
	running int
	waiting []*waiter
	settle  time.Duration
	open    bool
	timer   *time.Timer
	seq     int
}

type waiter struct {
	priority, seq int
	ready         chan struct{}
}

func newGate(size int, settle time.Duration) *gate {
	return &gate{size: size, settle: settle}
}

// resize sets how many may run at once.
func (g *gate) resize(size int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.size = size
	g.admit()
}

func (g *gate) acquire(priority int) {
	g.mu.Lock()
	w := &waiter{priority: priority, seq: g.seq, ready: make(chan struct{})}
	g.seq++
	g.waiting = append(g.waiting, w)
	if g.timer == nil {
		g.timer = time.AfterFunc(g.settle, g.opens)
	}
	g.admit()
	g.mu.Unlock()
	<-w.ready
}

// opens lets waiters in from now on.
func (g *gate) opens() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open = true
	g.admit()
}

func (g *gate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.running--
	g.admit()
}

// admit lets waiters in, highest priority first, while there is room.
// g.mu is held.
func (g *gate) admit() {
	if !g.open {
		return
	}
	slices.SortStableFunc(g.waiting, func(a, b *waiter) int {
		if a.priority != b.priority {
			return b.priority - a.priority
		}
		return a.seq - b.seq
	})
	for g.running < g.size && len(g.waiting) > 0 {
		w := g.waiting[0]
		g.waiting = g.waiting[1:]
		g.running++
		close(w.ready)
	}
}

// A gate lets in none before it opens, then the highest priority first
// (in the order they came among equals), never more than its size at
// once.
func TestGateLongestFirst(t *testing.T) {
	g := newGate(2, time.Hour) // opened below, once every waiter has come
	var (
		mu  sync.Mutex
		got []int
	)
	in := make(chan int)
	var wg sync.WaitGroup
	// Priorities 0..5 by id; id 0 comes first, alone, before the rest.
	prio := []int{0, 0, 5, 1, 9, 0}
	start := func(id int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.acquire(prio[id])
			mu.Lock()
			got = append(got, id)
			mu.Unlock()
			in <- id
		}()
	}
	start(0)
	// Each of the rest has come before the next starts.
	for id := 1; id < len(prio); id++ {
		for {
			g.mu.Lock()
			n := len(g.waiting)
			g.mu.Unlock()
			if n == id {
				break
			}
			time.Sleep(time.Millisecond)
		}
		start(id)
	}
	for {
		g.mu.Lock()
		n := len(g.waiting)
		g.mu.Unlock()
		if n == len(prio) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case id := <-in:
		t.Fatalf("waiter %d got in before the gate opened", id)
	case <-time.After(20 * time.Millisecond):
	}
	g.opens()
	first := []int{<-in, <-in}
	select {
	case id := <-in:
		t.Fatalf("a third waiter (%d) got in while two held the gate of two", id)
	case <-time.After(20 * time.Millisecond):
	}
	if first[0] != 4 && first[1] != 4 || first[0] != 2 && first[1] != 2 {
		t.Fatalf("first in: %v, want 4 (priority 9) and 2 (priority 5)", first)
	}
	for range len(prio) - 2 {
		g.release()
		<-in
	}
	g.release()
	g.release()
	wg.Wait()
	if want := []int{3, 0, 1, 5}; !slices.Equal(got[2:], want) {
		t.Errorf("let in %v after the first two, want %v: priority 1, then the rest in the order they came", got[2:], want)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running != 0 || len(g.waiting) != 0 {
		t.Errorf("after every release: %d running, %d waiting", g.running, len(g.waiting))
	}
}
