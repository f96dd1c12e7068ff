package extsort

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

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
