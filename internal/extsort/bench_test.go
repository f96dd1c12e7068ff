package extsort

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user and system time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the process's CPU time per operation since start (every
// goroutine's, a background spill's too): on a shared machine a steadier
// figure than the wall time.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkMerge reads 2^20 values back from runs spilled to disk: the
// k-way merge of the runs (the spill itself is outside the timer).
func BenchmarkMerge(b *testing.B) {
	const n = 1 << 20
	rng := rand.New(rand.NewPCG(1, 2))
	vals := make([]uint64, n)
	for i := range vals {
		vals[i] = rng.Uint64()
	}
	for _, runs := range []int{4, 16, 64} {
		for _, unique := range []bool{false, true} {
			b.Run(fmt.Sprintf("runs=%d/unique=%v", runs, unique), func(b *testing.B) {
				b.SetBytes(8 * n)
				b.ReportAllocs()
				var sink uint64
				for b.Loop() {
					b.StopTimer()
					s := New(b.TempDir(), "bench", n/runs)
					if err := s.Add(vals...); err != nil {
						b.Fatal(err)
					}
					it, err := s.Iter(unique)
					if err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					for v, ok := it.Next(); ok; v, ok = it.Next() {
						sink += v
					}
					b.StopTimer()
					if err := it.Err(); err != nil {
						b.Fatal(err)
					}
					it.Close()
					b.StartTimer()
				}
				_ = sink
			})
		}
	}
}

var sink uint64

// BenchmarkAddIter adds n random values to a Sorter whose buffer holds them
// all (the in-memory case of a large budget) and reads them back sorted:
// the cost of growing the buffer, sorting and iterating.
func BenchmarkAddIter(b *testing.B) {
	for _, n := range []int{1 << 20, 8 << 20} {
		vals := make([]uint64, n)
		r := rand.New(rand.NewPCG(1, 2))
		for i := range vals {
			vals[i] = r.Uint64()
		}
		b.Run(fmt.Sprintf("n=%dM", n>>20), func(b *testing.B) {
			b.SetBytes(int64(8 * n))
			b.ReportAllocs()
			for b.Loop() {
				s := New(b.TempDir(), "bench", 4*n)
				for i := 0; i < n; i += 1 << 14 {
					if err := s.Add(vals[i:min(i+1<<14, n)]...); err != nil {
						b.Fatal(err)
					}
				}
				it, err := s.Iter(false)
				if err != nil {
					b.Fatal(err)
				}
				for v, ok := it.Next(); ok; v, ok = it.Next() {
					sink += v
				}
				it.Close()
			}
		})
	}
}

// wideWords returns n random band-key entries as WideSorter.Add takes
// them: a random 64-bit key and a document number, 16 entries a document.
func wideWords(n int) []uint64 {
	rng := rand.New(rand.NewPCG(1, 2))
	words := make([]uint64, 0, 2*n)
	for i := range n {
		words = append(words, rng.Uint64(), uint64(i/16))
	}
	return words
}

// BenchmarkWideAdd adds 2^22 entries to a WideSorter that spills a run
// every 2^19 (7 runs spilled, the eighth kept): the cost of sorting and
// writing the runs as the adding goroutine sees it. SetBytes counts 8 bytes
// an entry, as BenchmarkEntries does.
func BenchmarkWideAdd(b *testing.B) {
	const n = 1 << 22
	words := wideWords(n)
	b.SetBytes(8 * n)
	b.ReportAllocs()
	defer reportCPU(b, cpuTime(b))
	for b.Loop() {
		s := NewWide(b.TempDir(), "bench", n/8)
		for i := 0; i < len(words); i += 1 << 12 {
			if err := s.Add(words[i:min(i+1<<12, len(words))]...); err != nil {
				b.Fatal(err)
			}
		}
		if s.Runs() < 6 {
			b.Fatalf("%d runs spilled", s.Runs())
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWideMerge reads 2^22 entries back from a WideSorter that
// spilled them in runs: the k-way merge of the runs and the in-memory
// remainder (adding and spilling are outside the timer).
func BenchmarkWideMerge(b *testing.B) {
	const n = 1 << 22
	words := wideWords(n)
	for _, runs := range []int{4, 16} {
		b.Run(fmt.Sprintf("runs=%d", runs), func(b *testing.B) {
			b.SetBytes(8 * n)
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				s := NewWide(b.TempDir(), "bench", n/runs)
				if err := s.Add(words...); err != nil {
					b.Fatal(err)
				}
				it, err := s.Iter()
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				for e, ok := it.Next(); ok; e, ok = it.Next() {
					sink += e.Key
				}
				b.StopTimer()
				if err := it.Err(); err != nil {
					b.Fatal(err)
				}
				it.Close()
				b.StartTimer()
			}
		})
	}
}
