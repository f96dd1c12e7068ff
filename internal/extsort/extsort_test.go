package extsort

import (
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

func TestSorterMatchesSort(t *testing.T) {
	for _, tc := range []struct{ n, limit int }{{0, 1024}, {10, 1024}, {5000, 1024}, {100000, 1024}, {100000, 50000}, {300000, 1 << 20}} {
		for _, unique := range []bool{false, true} {
			r := rand.New(rand.NewPCG(uint64(tc.n), uint64(tc.limit)))
			dir := t.TempDir()
			s := New(dir, "test", tc.limit)
			var want []uint64
			for i := 0; i < tc.n; i++ {
				v := r.Uint64() >> (r.IntN(4) * 16) // many small values and duplicates
				if i%7 == 0 && len(want) > 0 {
					v = want[r.IntN(len(want))]
				}
				want = append(want, v)
				if err := s.Add(v); err != nil {
					t.Fatal(err)
				}
			}
			slices.Sort(want)
			if unique {
				want = slices.Compact(want)
			}
			spilled := s.Runs() > 0
			it, err := s.Iter(unique)
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for v, ok := it.Next(); ok; v, ok = it.Next() {
				got = append(got, v)
			}
			if it.Err() != nil {
				t.Fatal(it.Err())
			}
			if err := it.Close(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("n=%d limit=%d unique=%v: got %d values; want %d", tc.n, tc.limit, unique, len(got), len(want))
			}
			if tc.n > tc.limit && !spilled {
				t.Errorf("n=%d limit=%d: nothing spilled", tc.n, tc.limit)
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("runs left behind: %d files", len(left))
			}
		}
	}
}

// TestSorterClose: a Sorter abandoned before Iter removes its runs on Close.
func TestSorterClose(t *testing.T) {
	dir := t.TempDir()
	s := New(dir, "test", 1024)
	for i := range 5000 {
		if err := s.Add(uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if s.Runs() == 0 {
		t.Fatal("nothing spilled")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("runs left behind: %d files", len(left))
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
