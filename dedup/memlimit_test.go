package dedup

import (
	"context"
	"math"
	"runtime/debug"
	"sync"
	"testing"
)

// fakeLimit replaces the process's memory limit for a test and records
// every limit set.
type fakeLimit struct {
	mu    sync.Mutex
	limit int64
	set   []int64
}

func (f *fakeLimit) SetMemoryLimit(l int64) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	prev := f.limit
	if l >= 0 {
		f.limit = l
		f.set = append(f.set, l)
	}
	return prev
}

func withFakeLimit(t *testing.T, limit int64) *fakeLimit {
	t.Helper()
	f := &fakeLimit{limit: limit}
	old := setMemoryLimit
	setMemoryLimit = f.SetMemoryLimit
	t.Cleanup(func() { setMemoryLimit = old })
	return f
}

// TestBudgetsAdd: concurrent runs' budgets add up; each release takes its
// own away; the last restores the limit found before the first; releasing
// twice does nothing more.
func TestBudgetsAdd(t *testing.T) {
	f := withFakeLimit(t, math.MaxInt64)
	r1 := acquireBudget(100 << 20)
	if f.limit != 100<<20 {
		t.Fatalf("one run: limit %d; want its budget", f.limit)
	}
	r2 := acquireBudget(50 << 20)
	if f.limit != 150<<20 {
		t.Fatalf("two runs: limit %d; want the sum 150 MiB", f.limit)
	}
	r1()
	r1()
	if f.limit != 50<<20 {
		t.Fatalf("first run ended (released twice): limit %d; want the second's 50 MiB", f.limit)
	}
	r2()
	if f.limit != math.MaxInt64 {
		t.Fatalf("all ended: limit %d; want the prior limit restored", f.limit)
	}
}

// TestBudgetsNeverRaise: a tighter limit set by the process (GOMEMLIMIT) is
// kept while runs are active and restored after.
func TestBudgetsNeverRaise(t *testing.T) {
	f := withFakeLimit(t, 64<<20)
	release := acquireBudget(4 << 30)
	if f.limit != 64<<20 {
		t.Errorf("limit %d during the run; want the prior 64 MiB kept", f.limit)
	}
	release()
	if f.limit != 64<<20 {
		t.Errorf("limit %d after; want 64 MiB", f.limit)
	}
	withFakeLimit(t, math.MaxInt64)
	release = acquireBudget(math.MaxInt64)
	r2 := acquireBudget(math.MaxInt64)
	if l := budgets.sum; l <= 0 {
		t.Errorf("two huge budgets: sum %d overflowed", l)
	}
	r2()
	release()
}

// TestRunRestoresLimit: Run, with the real limit, leaves it as it found it,
// also when two runs overlap (run with -race).
func TestRunRestoresLimit(t *testing.T) {
	const prior = 3 << 40
	old := debug.SetMemoryLimit(prior)
	defer debug.SetMemoryLimit(old)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := Run(context.Background(), []string{"../testdata/articles_1000.jsonl"}, t.TempDir(), &Options{Memory: 32 << 20, Workers: 1}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := debug.SetMemoryLimit(-1); got != prior {
		t.Errorf("memory limit after two runs %d; want %d", got, prior)
	}
}

// TestRunCollectsBetweenStages: a garbage collection runs after each stage
// but the last (sign, candidates, verify, cluster), so that what a stage
// released is reused by the next rather than left for a collection that,
// under a large budget, came only once the heap had doubled.
func TestRunCollectsBetweenStages(t *testing.T) {
	var calls int
	old := collectGarbage
	collectGarbage = func() { calls++ }
	defer func() { collectGarbage = old }()
	rep, err := Run(context.Background(), []string{"../testdata/articles_1000.jsonl"}, t.TempDir(), &Options{Memory: 1 << 30, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := len(rep.Timings) - 1; calls != want || want != 4 {
		t.Fatalf("collections between stages: %d; want %d (stages %v)", calls, want, rep.Timings)
	}
}
