//go:build unix

package simhash

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time (user and system) the process has used. On a
// machine shared with other work, wall-clock benchmarks measure the waits for
// a core too; CPU time measures the work, so the benchmarks also report
// throughput per CPU-second ("cpu-MB/s"). The benchmarks do not allocate, so
// the garbage collector adds next to nothing to it.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the throughput of b.N passes over bytes per CPU-second.
func reportCPU(b *testing.B, bytes int64, cpu time.Duration) {
	if cpu > 0 {
		b.ReportMetric(float64(bytes)*float64(b.N)/cpu.Seconds()/1e6, "cpu-MB/s")
	}
}
