package lsh

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// BenchmarkMerger merges 2^20 random values from 4 or 16 sorted slices
// (SliceRun): the cost of the merge itself, a value at a time.
func BenchmarkMerger(b *testing.B) {
	const n = 1 << 20
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{4, 16} {
		runs := make([][]uint64, k)
		for i := range n {
			runs[i%k] = append(runs[i%k], rng.Uint64())
		}
		for _, r := range runs {
			slices.Sort(r)
		}
		b.Run(fmt.Sprintf("runs=%d", k), func(b *testing.B) {
			b.SetBytes(8 * n)
			var sink uint64
			for b.Loop() {
				rs := make([]Run, k)
				for i, r := range runs {
					rs[i] = SliceRun(r)
				}
				m := NewMerger(rs, false)
				for v, err := m.Next(); err == nil; v, err = m.Next() {
					sink += v
				}
			}
			_ = sink
		})
	}
}
