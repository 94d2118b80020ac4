package e2e

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
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
	start := time.Now()
	slots.acquire(longest[top])
	t.Cleanup(slots.release)
	// go test's elapsed time for t counts this wait too.
	if w := time.Since(start); w >= time.Second {
		t.Logf("waited %s for one of %d slots", w.Round(100*time.Millisecond), slots.limit())
	}
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

// limit is how many may run at once.
func (g *gate) limit() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.size
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
	t.Cleanup(func() {
		if g.timer != nil {
			g.timer.Stop()
		}
	})
	// state is how many run and wait, read under the gate's lock: admit
	// runs within opens and release, so it is settled when they return.
	state := func() (running, waiting int) {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.running, len(g.waiting)
	}
	in := make(chan int, 8)
	next := func() int {
		select {
		case id := <-in:
			return id
		case <-time.After(time.Minute):
			t.Fatal("no waiter got in within a minute")
			return -1
		}
	}
	prio := []int{0, 0, 5, 1, 9, 0} // by id, in the order they come
	for id, p := range prio {
		go func() {
			g.acquire(p)
			in <- id
		}()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
			if _, w := state(); w == id+1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("waiter %d did not come within a minute", id)
			}
		}
	}
	if r, w := state(); r != 0 || w != len(prio) || len(in) != 0 {
		t.Fatalf("before the gate opened: %d running, %d waiting, %d in; want none let in", r, w, len(in))
	}
	g.opens()
	if r, w := state(); r != 2 || w != len(prio)-2 {
		t.Fatalf("once open: %d running, %d waiting; want 2 and %d", r, w, len(prio)-2)
	}
	if a, b := next(), next(); !(a == 4 && b == 2 || a == 2 && b == 4) {
		t.Fatalf("first in: %d and %d, want 4 (priority 9) and 2 (priority 5)", a, b)
	}
	var got []int
	for range len(prio) - 2 {
		g.release()
		if r, _ := state(); r != 2 {
			t.Fatalf("after a release with waiters left: %d running, want 2", r)
		}
		got = append(got, next())
	}
	if want := []int{3, 0, 1, 5}; !slices.Equal(got, want) {
		t.Errorf("let in %v after the first two, want %v: priority 1, then the rest in the order they came", got, want)
	}
	g.release()
	g.release()
	if r, w := state(); r != 0 || w != 0 {
		t.Errorf("after every release: %d running, %d waiting", r, w)
	}
}

// The gate is the only limit on this package's parallel tests: t.Parallel
// is called by runParallel and by the tests whose subtests call it, and
// every test longest names is a test here.
func TestParallelTestsTakeSlots(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("the package's test files: %v %v", files, err)
	}
	tests := map[string]bool{}
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") {
				tests[fn.Name.Name] = true
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "Parallel" || len(call.Args) != 0 {
					return true
				}
				// A parent whose subtests take the slots says so where it
				// calls t.Parallel: it holds none while they wait.
				if fn.Name.Name != "runParallel" && !parentOfSlotted[fn.Name.Name] {
					t.Errorf("%s: %s calls Parallel: call runParallel(t), which waits for a slot", fset.Position(call.Pos()), fn.Name.Name)
				}
				return true
			})
		}
	}
	for name := range longest {
		if !tests[name] {
			t.Errorf("longest names %s, which is no test here", name)
		}
	}
	for name := range parentOfSlotted {
		if !tests[name] {
			t.Errorf("parentOfSlotted names %s, which is no test here", name)
		}
	}
}

// parentOfSlotted are the tests that call t.Parallel themselves, whose
// parallel subtests each call runParallel.
var parentOfSlotted = map[string]bool{
	"TestReceiptUsedDrive":                    true,
	"TestCriticalWarningMidRunStopsThatDrive": true,
}
