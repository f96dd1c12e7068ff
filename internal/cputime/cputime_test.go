package cputime_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/cputime"
)

// TestProcessCountsWork: a fixed amount of work on this goroutine adds CPU
// time, and no more than the cores could have given in the wall time taken.
func TestProcessCountsWork(t *testing.T) {
	if cputime.Process() == 0 {
		t.Skip("no CPU time on " + runtime.GOOS)
	}
	start, c0 := time.Now(), cputime.Process()
	x := uint64(1)
	for range 50_000_000 {
		x = x*6364136223846793005 + 1442695040888963407
	}
	got, wall := cputime.Process()-c0, time.Since(start)
	if got <= 0 || got > wall*time.Duration(runtime.NumCPU())+10*time.Millisecond {
		t.Errorf("CPU time grew by %v over %v of wall time on %d cores (x=%d); want more than 0 and at most what the cores give", got, wall, runtime.NumCPU(), x)
	}
}

func Example() {
	c0 := cputime.Process()
	sum := 0
	for i := range 1_000_000 {
		sum += i
	}
	fmt.Println(sum, cputime.Process() >= c0)
	// Output: 499999500000 true
}
