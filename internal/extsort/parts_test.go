package extsort

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// TestWidePartsMatchSort: the parts of IterParts, read in order, yield the
// entries slices.SortFunc gives, for every limit (in memory, a few runs,
// many runs), part count and boundary alignment; no part is empty unless
// all are; keys equal above bit shift share a part; and the parts read on
// goroutines of their own (under -race) yield the same.
func TestWidePartsMatchSort(t *testing.T) {
	for _, tc := range []struct {
		n, limit int
		narrow   bool
	}{{0, 1024, false}, {1, 1024, false}, {300, 1024, false}, {5000, 1024, false}, {30000, 1024, false}, {30000, 1 << 20, false}, {20000, 2048, false}, {20000, 2048, true}} {
		for _, parts := range []int{1, 3, 8, 64} {
			for _, shift := range []uint{0, 32, 60} {
				name := fmt.Sprintf("n=%d/limit=%d/narrow=%v/parts=%d/shift=%d", tc.n, tc.limit, tc.narrow, parts, shift)
				r := rand.New(rand.NewPCG(uint64(tc.n), uint64(parts)))
				want := randomWide(r, tc.n, tc.narrow)
				s := NewWide(t.TempDir(), "test", tc.limit)
				for _, e := range want {
					if err := s.Add(e.Key, uint64(e.Doc)); err != nil {
						t.Fatal(err)
					}
				}
				slices.SortFunc(want, compareWide)
				p, err := s.IterParts(parts, shift)
				if err != nil {
					t.Fatal(err)
				}
				if p.Len() < 1 || p.Len() > parts {
					t.Fatalf("%s: %d parts", name, p.Len())
				}
				got := make([][]Wide, p.Len())
				var wg sync.WaitGroup
				errs := make([]error, p.Len())
				for i := range p.Len() {
					wg.Go(func() {
						it, err := p.Part(i)
						if err != nil {
							errs[i] = err
							return
						}
						for e, ok := it.Next(); ok; e, ok = it.Next() {
							got[i] = append(got[i], e)
						}
						errs[i] = it.Err()
						it.Close()
					})
				}
				wg.Wait()
				for _, err := range errs {
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
				}
				if err := p.Close(); err != nil {
					t.Fatal(err)
				}
				for i := range got {
					if len(got[i]) == 0 && tc.n > 0 {
						t.Errorf("%s: part %d of %d empty", name, i, len(got))
					}
					if i > 0 && len(got[i]) > 0 && len(got[i-1]) > 0 {
						a, b := got[i-1][len(got[i-1])-1].Key, got[i][0].Key
						if a>>shift == b>>shift {
							t.Errorf("%s: keys %#x and %#x, equal above bit %d, in parts %d and %d", name, a, b, shift, i-1, i)
						}
					}
				}
				if all := slices.Concat(got...); !slices.Equal(all, want) {
					t.Fatalf("%s: got %d entries, not those of slices.SortFunc (%d)", name, len(all), len(want))
				}
				if parts > 1 && parts <= 8 && tc.n >= 20000 && !tc.narrow && shift < 60 && p.Len() != parts {
					t.Errorf("%s: %d parts of %d random keys", name, p.Len(), tc.n)
				}
			}
		}
	}
}

// TestWideSorterChunks: whatever the chunk size (one chunk a run, or runs
// merged from chunks sorted one by one, the last one short), the runs
// written are byte for byte the same, and Iter and IterParts yield the
// entries slices.SortFunc gives, from chunks in memory only (a limit above
// the entries) or chunks and runs.
func TestWideSorterChunks(t *testing.T) {
	for _, tc := range []struct{ n, limit int }{{0, 1024}, {20000, 5000}, {20000, 1 << 20}, {4000, 1024}} {
		r := rand.New(rand.NewPCG(uint64(tc.n), 7))
		want := randomWide(r, tc.n, false)
		var runs [][]byte
		for k, chunk := range []int{0, 1000, 333, 64} {
			name := fmt.Sprintf("n=%d/limit=%d/chunk=%d", tc.n, tc.limit, chunk)
			s := NewWide(t.TempDir(), "test", tc.limit)
			if chunk > 0 {
				s.chunk = chunk
			}
			for i, e := range want {
				if err := s.Add(e.Key, uint64(e.Doc)); err != nil {
					t.Fatal(err)
				}
				if i%997 == 0 && len(s.buf) > s.chunk {
					t.Fatalf("%s: a chunk of %d entries", name, len(s.buf))
				}
			}
			s.wait()
			var files []byte
			for _, f := range s.runs {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				files = append(append(files, b...), '|')
			}
			if k == 0 {
				runs = append(runs, files)
			} else if !bytes.Equal(files, runs[0]) {
				t.Errorf("%s: runs differ from those of one chunk a run", name)
			}
			if tc.n > tc.limit && len(s.runs) == 0 {
				t.Errorf("%s: nothing spilled", name)
			}
			sorted := slices.SortedFunc(slices.Values(want), compareWide)
			var got []Wide
			if k%2 == 0 {
				it, err := s.Iter()
				if err != nil {
					t.Fatal(err)
				}
				for e, ok := it.Next(); ok; e, ok = it.Next() {
					got = append(got, e)
				}
				if err := it.Err(); err != nil {
					t.Fatal(err)
				}
				if err := it.Close(); err != nil {
					t.Fatal(err)
				}
			} else {
				p, err := s.IterParts(4, 8)
				if err != nil {
					t.Fatal(err)
				}
				for i := range p.Len() {
					it, err := p.Part(i)
					if err != nil {
						t.Fatal(err)
					}
					for e, ok := it.Next(); ok; e, ok = it.Next() {
						got = append(got, e)
					}
					if err := it.Err(); err != nil {
						t.Fatal(err)
					}
					it.Close()
				}
				if err := p.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if !slices.Equal(got, sorted) {
				t.Fatalf("%s: got %d entries, not those of slices.SortFunc (%d)", name, len(got), len(sorted))
			}
			left, _ := filepath.Glob(filepath.Join(s.dir, "*"))
			if len(left) > 0 {
				t.Errorf("%s: %d files left", name, len(left))
			}
		}
	}
}
