// Package cputime reads the CPU time the process has used and reports it
// from benchmarks. On a machine shared with other work, wall-clock
// benchmarks measure the waits for a core too; CPU time (user and system,
// every goroutine and the garbage collector included) measures the work, so
// the project's benchmarks report it beside ns/op.
package cputime

import (
	"testing"
	"time"
)

// Process returns the CPU time (user and system) the process has used so
// far, or 0 where the platform does not say (then nothing is reported).
func Process() time.Duration { return process() }

// ReportThroughput reports, as "cpu-MB/s", the bytes of b.N operations
// (bytes each) per CPU second of cpu, the CPU time they used.
func ReportThroughput(b *testing.B, bytes int64, cpu time.Duration) {
	if cpu > 0 {
		b.ReportMetric(float64(bytes)*float64(b.N)/cpu.Seconds()/1e6, "cpu-MB/s")
	}
}

// ReportPerOp reports, as "cpu-s/op", the CPU seconds of each of b.N
// operations that used cpu in all.
func ReportPerOp(b *testing.B, cpu time.Duration) {
	if cpu > 0 {
		b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	}
}
