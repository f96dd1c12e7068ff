package docstore

import (
	"fmt"
	"testing"
)

var sinkLen int

// BenchmarkAppendSpill appends 512-byte records (a K = 128 signature of
// 32-bit slots) to stores of several budgets, 64 MiB of records each: from
// all in memory to spilling all but the last few chunks.
func BenchmarkAppendSpill(b *testing.B) {
	const total = 64 << 20
	rec := make([]byte, 512)
	for _, budget := range []int64{4 << 20, 32 << 20, 1 << 30} {
		b.Run(fmt.Sprintf("budget=%dMiB", budget>>20), func(b *testing.B) {
			b.SetBytes(total)
			b.ReportAllocs()
			dir := b.TempDir()
			for b.Loop() {
				s := New(dir, "bench", budget)
				for range total / len(rec) {
					if _, err := s.Append(rec); err != nil {
						b.Fatal(err)
					}
				}
				sinkLen += s.Len()
				s.Close()
			}
		})
	}
}
