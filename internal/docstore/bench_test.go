package docstore

import (
	"fmt"
	"math/rand/v2"
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

// BenchmarkReadUint64s reads back 65,536 feature-set-sized records (20–60
// values) held in memory, in a pair check's order (each record, then a
// random other): copied by GetUint64s (way=get) or given in place by
// ViewUint64s (way=view). Bytes are those of the records read.
func BenchmarkReadUint64s(b *testing.B) {
	s := New(b.TempDir(), "bench", 1<<30)
	defer s.Close()
	r := rand.New(rand.NewPCG(3, 4))
	var size int64
	const n = 1 << 16
	for range n {
		rec := make([]uint64, 20+r.IntN(41))
		for j := range rec {
			rec[j] = r.Uint64()
		}
		if _, err := s.AppendUint64s(rec); err != nil {
			b.Fatal(err)
		}
		size += int64(8 * len(rec))
	}
	other := make([]int, n)
	for i := range other {
		other[i] = r.IntN(n)
	}
	for _, way := range []string{"get", "view"} {
		b.Run("way="+way, func(b *testing.B) {
			b.SetBytes(2 * size)
			var buf, vals []uint64
			var sum uint64
			for b.Loop() {
				for i := range n {
					for _, k := range [2]int{i, other[i]} {
						var err error
						if way == "get" {
							buf, err = s.GetUint64s(buf[:0], k)
							vals = buf
						} else {
							vals, buf, err = s.ViewUint64s(buf, k)
						}
						if err != nil {
							b.Fatal(err)
						}
						sum += vals[len(vals)/2]
					}
				}
			}
			if sum == 1 {
				b.Log(sum)
			}
		})
	}
}
