package extsort

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestWideSorterMatchesSort: every limit (in memory, a few runs, many runs)
// yields the entries slices.SortFunc gives, duplicates and keys equal in
// their high 32 bits included.
func TestWideSorterMatchesSort(t *testing.T) {
	for _, tc := range []struct{ n, limit int }{{0, 1024}, {10, 1024}, {300, 1024}, {5000, 1024}, {100000, 1024}, {100000, 1 << 20}} {
		r := rand.New(rand.NewPCG(uint64(tc.n), uint64(tc.limit)))
		s := NewWide(t.TempDir(), "test", tc.limit)
		var want []Wide
		for i := range tc.n {
			e := Wide{Key: r.Uint64(), Doc: uint32(r.IntN(1 << 20))}
			switch {
			case i%7 == 0 && len(want) > 0: // a duplicate
				e = want[r.IntN(len(want))]
			case i%5 == 0 && len(want) > 0: // same high 32 bits, other low bits
				e.Key = want[r.IntN(len(want))].Key&^(1<<32-1) | uint64(r.Uint32())
			case i%3 == 0 && len(want) > 0: // same key, another document
				e.Key = want[r.IntN(len(want))].Key
			}
			want = append(want, e)
			if err := s.Add(e.Key, uint64(e.Doc)); err != nil {
				t.Fatal(err)
			}
		}
		slices.SortFunc(want, compareWide)
		if s.Len() != int64(tc.n) {
			t.Errorf("n=%d: Len %d", tc.n, s.Len())
		}
		if tc.n > tc.limit && s.Runs() == 0 {
			t.Errorf("n=%d limit=%d: nothing spilled", tc.n, tc.limit)
		}
		it, err := s.Iter()
		if err != nil {
			t.Fatal(err)
		}
		var got []Wide
		for e, ok := it.Next(); ok; e, ok = it.Next() {
			got = append(got, e)
		}
		if it.Err() != nil {
			t.Fatal(it.Err())
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("n=%d limit=%d: got %d entries, not those of slices.SortFunc (%d)", tc.n, tc.limit, len(got), len(want))
		}
	}
}

// BenchmarkEntries sorts n band-key entries of random keys through a Sorter
// (32-bit keys: key<<32 | doc, 8 bytes) and a WideSorter (64-bit keys, 16
// bytes): add, spill runs of n/4, merge. SetBytes counts 8 bytes an entry
// for both, so that MB/s compare entries per second.
func BenchmarkEntries(b *testing.B) {
	for _, n := range []int{1 << 20, 1 << 23} {
		rng := rand.New(rand.NewPCG(1, 2))
		keys := make([]uint64, n)
		for i := range keys {
			keys[i] = rng.Uint64()
		}
		narrow := make([]uint64, n)
		wide := make([]uint64, 0, 2*n)
		for i, k := range keys {
			narrow[i] = k&^(1<<32-1) | uint64(i/16)
			wide = append(wide, k, uint64(i/16))
		}
		b.Run(fmt.Sprintf("n=%d/key=32", n), func(b *testing.B) {
			b.SetBytes(8 * int64(n))
			b.ReportAllocs()
			var sink uint64
			for b.Loop() {
				s := New(b.TempDir(), "bench", n/4)
				if err := s.Add(narrow...); err != nil {
					b.Fatal(err)
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
			_ = sink
		})
		b.Run(fmt.Sprintf("n=%d/key=64", n), func(b *testing.B) {
			b.SetBytes(8 * int64(n))
			b.ReportAllocs()
			var sink uint64
			for b.Loop() {
				s := NewWide(b.TempDir(), "bench", n/4)
				if err := s.Add(wide...); err != nil {
					b.Fatal(err)
				}
				it, err := s.Iter()
				if err != nil {
					b.Fatal(err)
				}
				for e, ok := it.Next(); ok; e, ok = it.Next() {
					sink += e.Key
				}
				it.Close()
			}
			_ = sink
		})
	}
}
