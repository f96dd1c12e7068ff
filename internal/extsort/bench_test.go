package extsort

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

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
