package dupid

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPackedStore checks that a packedStore yields what was added, sorted,
// against slices.Sort: in memory, past its limit (spilled), and with one
// bucket too large to sort in memory (skew), with the way each took.
func TestPackedStore(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cases := []struct {
		name    string
		n       int
		limit   int64
		gen     func() uint64
		sorter  bool // expected to go the extsort.Sorter's way
		spilled bool
	}{
		{"empty", 0, 1 << 20, rng.Uint64, false, false},
		{"one", 1, 1 << 20, rng.Uint64, false, false},
		{"in memory", 100_000, 1 << 20, rng.Uint64, false, false},
		{"narrow", 100_000, 200_000, func() uint64 { return rng.Uint64N(1000) }, true, true},
		{"repeats", 50_000, 200_000, func() uint64 { return 7 << 56 }, true, true},
		{"past the limit", 100_000, 20_000, rng.Uint64, true, true},
		{"exactly the limit", 20_000, 20_000, rng.Uint64, false, false},
		{"small buckets skewed", 3 * packedMaxBlock, 1 << 20, func() uint64 { return rng.Uint64N(1 << 56) }, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newPackedStore(t.TempDir(), "test", c.limit)
			defer s.close()
			want := make([]uint64, c.n)
			for i := range want {
				want[i] = c.gen()
				if err := s.add(want[i]); err != nil {
					t.Fatal(err)
				}
			}
			slices.Sort(want)
			it, err := s.iter()
			if err != nil {
				t.Fatal(err)
			}
			defer it.close()
			if (s.sorter != nil) != c.sorter {
				t.Errorf("went the sorter's way: %v; want %v", s.sorter != nil, c.sorter)
			}
			if (s.spilledBytes() > 0) != c.spilled {
				t.Errorf("spilled %d bytes; want spilling %v", s.spilledBytes(), c.spilled)
			}
			got := make([]uint64, 0, c.n)
			for v, ok := it.next(); ok; v, ok = it.next() {
				got = append(got, v)
			}
			if err := it.Err(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got %d values, want %d, or in another order", len(got), len(want))
			}
		})
	}
}
