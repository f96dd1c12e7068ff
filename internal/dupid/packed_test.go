package dupid

import (
	"fmt"
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

// TestPackedStoreShared checks shared against a scan of iter's sorted
// values (the values whose high 32 bits another value has), on one and
// several goroutines, with values sharing their high bits in twos, threes
// and long runs, and that it reads nothing on the sorter's way.
func TestPackedStoreShared(t *testing.T) {
	const low = 1<<32 - 1
	rng := rand.New(rand.NewPCG(5, 6))
	cases := []struct {
		name   string
		n      int
		limit  int64
		gen    func() uint64
		sorter bool
	}{
		{"empty", 0, 1 << 20, rng.Uint64, false},
		{"one", 1, 1 << 20, rng.Uint64, false},
		{"distinct", 50_000, 1 << 20, rng.Uint64, false},
		// 2^14 high values for 60,000: most share theirs with others.
		{"collisions", 60_000, 1 << 20, func() uint64 { return rng.Uint64N(1<<14)<<50 | rng.Uint64N(1<<32) }, false},
		{"one high value", 5_000, 1 << 20, func() uint64 { return 9<<56 | rng.Uint64N(1<<32) }, false},
		{"past the limit", 50_000, 10_000, func() uint64 { return rng.Uint64N(1<<12)<<52 | rng.Uint64N(1<<32) }, true},
	}
	for _, c := range cases {
		vs := make([]uint64, c.n)
		for i := range vs {
			vs[i] = c.gen()
		}
		sorted := slices.Clone(vs)
		slices.Sort(sorted)
		var want []uint64 // by a count of each high value
		count := map[uint64]int{}
		for _, v := range vs {
			count[v&^low]++
		}
		for _, v := range vs {
			if count[v&^low] > 1 {
				want = append(want, v&low)
			}
		}
		slices.Sort(want)
		if c.name == "collisions" && len(want) < c.n/2 {
			t.Fatalf("%s: only %d values shared: the case tests little", c.name, len(want))
		}
		for _, workers := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("%s/workers=%d", c.name, workers), func(t *testing.T) {
				s := newPackedStore(t.TempDir(), "test", c.limit)
				defer s.close()
				for _, v := range vs {
					if err := s.add(v); err != nil {
						t.Fatal(err)
					}
				}
				got, ok, err := s.shared(low, workers)
				if err != nil {
					t.Fatal(err)
				}
				if ok == c.sorter {
					t.Fatalf("workers %d: read in memory %v; want %v", workers, ok, !c.sorter)
				}
				// What is left for iter: everything on the sorter's way,
				// nothing otherwise.
				it, err := s.iter()
				if err != nil {
					t.Fatal(err)
				}
				defer it.close()
				var rest []uint64
				for v, ok := it.next(); ok; v, ok = it.next() {
					rest = append(rest, v)
				}
				if c.sorter {
					if len(got) != 0 || !slices.Equal(rest, sorted) {
						t.Fatalf("workers %d: on the sorter's way, shared gave %d values and iter %d; want 0 and %d", workers, len(got), len(rest), len(sorted))
					}
					return
				}
				if len(rest) != 0 {
					t.Fatalf("workers %d: iter yields %d values after shared", workers, len(rest))
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Fatalf("workers %d: %d values shared, want %d, or others", workers, len(got), len(want))
				}
			})
		}
	}
}

// TestAppendShared checks the scan of one sorted bucket by hand.
func TestAppendShared(t *testing.T) {
	const low = 1<<32 - 1
	h := func(hi, lo uint64) uint64 { return hi<<32 | lo }
	vs := []uint64{h(1, 5), h(2, 7), h(2, 3), h(3, 1), h(4, 9), h(4, 2), h(4, 4), h(5, 0)}
	got := appendShared(nil, vs, low)
	if want := []uint64{7, 3, 9, 2, 4}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got := appendShared(nil, nil, low); len(got) != 0 {
		t.Fatalf("empty: got %v", got)
	}
}
