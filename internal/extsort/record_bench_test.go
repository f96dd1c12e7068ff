package extsort

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkRecordMerge reads 2^18 records back from a RecordSorter that
// spilled them in runs: the k-way merge of the runs and the in-memory
// remainder (adding and spilling are outside the timer). Keys repeat, so
// that ties go to the payload.
func BenchmarkRecordMerge(b *testing.B) {
	const n = 1 << 18
	rng := rand.New(rand.NewPCG(1, 2))
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{Key: [2]uint64{rng.Uint64N(n / 4), rng.Uint64N(4)}, Val: [2]uint64{rng.Uint64(), 0}}
	}
	for _, runs := range []int{4, 16} {
		b.Run(fmt.Sprintf("runs=%d", runs), func(b *testing.B) {
			b.SetBytes(RecordBytes * n)
			var sink uint64
			for b.Loop() {
				b.StopTimer()
				s := NewRecords(b.TempDir(), "bench", n/runs)
				for _, r := range recs {
					if err := s.Add(r); err != nil {
						b.Fatal(err)
					}
				}
				it, err := s.Iter()
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				for r, ok := it.Next(); ok; r, ok = it.Next() {
					sink += r.Val[0]
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
