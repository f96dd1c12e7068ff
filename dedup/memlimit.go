package dedup

import (
	"runtime"
	"runtime/debug"
	"sync"
)

// The garbage collector's memory limit is process-wide, and Run's budget is
// per run. budgets reconciles them: while runs are active the limit is the
// sum of their budgets, never above the limit the process had before the
// first of them (GOMEMLIMIT, or a limit the program set), and when the last
// run ends that limit is restored. So two concurrent runs get room for both
// budgets, and a run never lifts a tighter limit set by the process's owner.
// A program that changes the limit itself while runs are active has its
// change overwritten when a run starts or ends.
var budgets struct {
	sync.Mutex
	active int   // runs holding a budget
	sum    int64 // their budgets, summed
	prior  int64 // the limit before the first of them
}

// setMemoryLimit is debug.SetMemoryLimit; tests replace it.
var setMemoryLimit = debug.SetMemoryLimit

// acquireBudget adds a run's budget of m bytes to the process's memory
// limit; the returned function, called once when the run ends, takes it
// away again.
func acquireBudget(m int64) (release func()) {
	// A budget past 64 PiB is no limit at all; clamping keeps the sum of
	// thousands of them within int64.
	m = min(m, 1<<56)
	b := &budgets
	b.Lock()
	if b.active == 0 {
		b.prior = setMemoryLimit(-1) // -1 reads the limit without changing it
	}
	b.active++
	b.sum += m
	setMemoryLimit(min(b.sum, b.prior))
	b.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.Lock()
			defer b.Unlock()
			b.active--
			b.sum -= m
			if b.active == 0 {
				setMemoryLimit(b.prior)
				return
			}
			setMemoryLimit(min(b.sum, b.prior))
		})
	}
}

// collectBetweenStages runs a garbage collection once a stage has released
// what it held (the band-key entries after candidates, the feature sets and
// signatures after verify), so that the next stage's allocations reuse that
// memory. Left to the pacer, the next collection waits until the heap has
// grown to twice the live data of the last one: under a large budget, where
// the memory limit is far away, every stage after signing allocated fresh
// pages (faulted and zeroed by the kernel) while gigabytes it could have
// reused waited to be collected. The live data is mostly pointer-free
// buffers, so a collection costs little (milliseconds at 5M documents).
func collectBetweenStages() { collectGarbage() }

// collectGarbage is runtime.GC; tests replace it.
var collectGarbage = runtime.GC
