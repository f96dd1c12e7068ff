//go:build unix

package compare

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time (user and system) the process has used. On a
// machine shared with other work, wall-clock benchmarks measure the waits for
// a core too; CPU time measures the work (garbage collection included), so
// the benchmarks also report CPU seconds per operation ("cpu-s/op").
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU seconds per pass of b.N passes that used cpu.
func reportCPU(b *testing.B, cpu time.Duration) {
	if cpu > 0 {
		b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	}
}
