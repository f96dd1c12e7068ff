//go:build unix

package sketch

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) the process has used. On a
// machine shared with other work, wall-clock benchmarks measure the waits
// for a core too; CPU time measures the work, so the benchmarks also report
// CPU nanoseconds per operation ("cpu-ns/op").
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
