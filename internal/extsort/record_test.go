package extsort

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

// TestRecordSorterMatchesSort: every limit (in memory, a few runs, many
// runs) yields the records slices.SortFunc gives, duplicates, equal first
// keys and equal keys with other payloads included, and Close of the
// iterator removes the runs.
func TestRecordSorterMatchesSort(t *testing.T) {
	for _, tc := range []struct{ n, limit int }{{0, 1024}, {10, 1024}, {3000, 1024}, {50000, 1024}, {50000, 1 << 20}} {
		t.Run(fmt.Sprintf("n=%d,limit=%d", tc.n, tc.limit), func(t *testing.T) {
			dir := t.TempDir()
			r := rand.New(rand.NewPCG(uint64(tc.n), uint64(tc.limit)))
			s := NewRecords(dir, "test", tc.limit)
			var want []Record
			for i := range tc.n {
				rec := Record{Key: [2]uint64{r.Uint64() >> r.IntN(64), r.Uint64()}, Val: [2]uint64{r.Uint64(), r.Uint64()}}
				if len(want) > 0 {
					o := want[r.IntN(len(want))]
					switch {
					case i%7 == 0: // a duplicate
						rec = o
					case i%5 == 0: // same first key word
						rec.Key[0] = o.Key[0]
					case i%3 == 0: // same key, another payload
						rec.Key = o.Key
					}
				}
				want = append(want, rec)
				if err := s.Add(rec); err != nil {
					t.Fatal(err)
				}
			}
			slices.SortFunc(want, CompareRecords)
			if s.Len() != int64(tc.n) {
				t.Errorf("Len %d", s.Len())
			}
			if spilled := s.Runs() > 0; spilled != (tc.n >= tc.limit) || spilled != (s.SpilledBytes() > 0) {
				t.Errorf("%d runs, %d bytes spilled", s.Runs(), s.SpilledBytes())
			}
			it, err := s.Iter()
			if err != nil {
				t.Fatal(err)
			}
			var got []Record
			for rec, ok := it.Next(); ok; rec, ok = it.Next() {
				got = append(got, rec)
			}
			if it.Err() != nil {
				t.Fatal(it.Err())
			}
			if err := it.Close(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got %d records, not those of slices.SortFunc (%d)", len(got), len(want))
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("%d files left in the temporary directory", len(left))
			}
		})
	}
}

// TestRecordSorterTruncatedRun: a run cut inside a record is an error, not
// a short result.
func TestRecordSorterTruncatedRun(t *testing.T) {
	s := NewRecords(t.TempDir(), "test", 1024)
	for i := range 2000 {
		if err := s.Add(Record{Key: [2]uint64{uint64(i), 1}, Val: [2]uint64{2, 3}}); err != nil {
			t.Fatal(err)
		}
	}
	name := s.runs[0]
	st, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(name, st.Size()-5); err != nil {
		t.Fatal(err)
	}
	it, err := s.Iter()
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for _, ok := it.Next(); ok; _, ok = it.Next() {
		n++
	}
	if it.Err() == nil {
		t.Errorf("read %d records of a truncated run without error", n)
	}
}
