package docstore

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

func TestStoreSpillsAndReads(t *testing.T) {
	// 16 MiB: chunks of 4 MiB, in huge pages (hugepage.Advise), spilled.
	for _, budget := range []int64{0, 1 << 20, 16 << 20, 1 << 40} {
		s := New(t.TempDir(), "test", budget)
		r := rand.New(rand.NewPCG(1, uint64(budget)))
		var want [][]uint64
		for i := 0; i < 600; i++ {
			rec := make([]uint64, r.IntN(3000))
			if i%200 == 0 {
				rec = make([]uint64, s.chunkSize/8+17) // spans chunks
			}
			for j := range rec {
				rec[j] = r.Uint64()
			}
			idx, err := s.AppendUint64s(rec)
			if err != nil || idx != i {
				t.Fatalf("Append: %d, %v", idx, err)
			}
			want = append(want, rec)
		}
		if budget < 1<<40 && s.SpilledBytes() == 0 {
			t.Fatalf("nothing spilled under a budget of %d", budget)
		}
		if budget == 1<<40 && s.SpilledBytes() != 0 {
			t.Fatal("spilled under a huge budget")
		}
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				var buf []uint64
				for i := g; i < len(want); i += 4 {
					var err error
					buf, err = s.GetUint64s(buf[:0], i)
					if err != nil || !slices.Equal(buf, want[i]) {
						t.Errorf("record %d: err %v, equal %v", i, err, slices.Equal(buf, want[i]))
						return
					}
				}
			}(g)
		}
		wg.Wait()
		s.Close()
	}
}

// TestStoreStaysWithinBudget: chunks scale with the budget, so memory held
// stays within the budget (or the two-chunk floor of 128 KiB) plus the chunk
// being filled, small budgets included.
func TestStoreStaysWithinBudget(t *testing.T) {
	for _, tc := range []struct {
		budget, chunk int64
	}{
		{0, minChunk}, {100 << 10, minChunk}, {1 << 20, 256 << 10}, {4 << 20, 1 << 20},
		{8 << 20, 2 << 20}, {32 << 20, maxChunk}, {1 << 30, maxChunk},
	} {
		if got := chunkFor(tc.budget); got != tc.chunk {
			t.Errorf("chunkFor(%d) = %d; want %d", tc.budget, got, tc.chunk)
		}
		if tc.budget > 32<<20 {
			continue // same chunks as 32 MiB; filling would take seconds
		}
		s := New(t.TempDir(), "test", tc.budget)
		limit := max(tc.budget, 2*tc.chunk) + tc.chunk
		rec := make([]byte, 3000)
		peak := int64(0)
		for s.Size() < 4*limit {
			if _, err := s.Append(rec); err != nil {
				t.Fatal(err)
			}
			peak = max(peak, s.MemoryBytes())
		}
		if peak > limit {
			t.Errorf("budget %d: %d bytes in memory; want at most %d", tc.budget, peak, limit)
		}
		if got, want := s.SpilledBytes()+s.MemoryBytes(), s.Size(); got < want {
			t.Errorf("budget %d: %d bytes spilled or held; want at least the %d stored", tc.budget, got, want)
		}
		s.Close()
	}
}

// TestSpillReusesChunks: a store past its budget writes its oldest chunk out
// and fills that chunk's memory again, allocating nothing per chunk.
func TestSpillReusesChunks(t *testing.T) {
	s := New(t.TempDir(), "test", 1<<20) // chunks of 256 KiB
	defer s.Close()
	rec := make([]byte, s.chunkSize)
	for range 8 { // well past the budget
		if _, err := s.Append(rec); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := s.Append(rec); err != nil {
			t.Fatal(err)
		}
	})
	// The record offsets grow by append: an allocation now and then.
	if allocs >= 0.5 {
		t.Errorf("%.2f allocations a chunk appended; want (almost) none", allocs)
	}
	if s.MemoryBytes() > s.budget {
		t.Errorf("%d bytes in memory; want at most the budget %d", s.MemoryBytes(), s.budget)
	}
	got, err := s.Get(nil, 3)
	if err != nil || len(got) != len(rec) {
		t.Fatalf("record 3: %d bytes, %v; want %d", len(got), err, len(rec))
	}
}

// TestViewUint64s: ViewUint64s gives every record's values, read by four
// goroutines at once, under budgets that spill most chunks, some and none,
// with records empty, short, long and straddling chunks; records whole in a
// chunk held in memory are given in place (their memory is the chunk's, not
// the buffer's), the others are read into the buffer, which is reused.
func TestViewUint64s(t *testing.T) {
	for _, budget := range []int64{0, 4 << 20, 1 << 40} {
		s := New(t.TempDir(), "test", budget)
		r := rand.New(rand.NewPCG(2, uint64(budget)))
		var want [][]uint64
		for i := 0; i < 3000; i++ {
			rec := make([]uint64, r.IntN(80))
			switch {
			case i%500 == 0:
				rec = make([]uint64, s.chunkSize/8+17) // spans chunks
			case i%7 == 0:
				rec = rec[:0]
			case i%11 == 0:
				rec = make([]uint64, r.IntN(5000))
			}
			for j := range rec {
				rec[j] = r.Uint64()
			}
			if _, err := s.AppendUint64s(rec); err != nil {
				t.Fatal(err)
			}
			want = append(want, rec)
		}
		if spilled := s.SpilledBytes(); (budget < 1<<40) != (spilled > 0) {
			t.Fatalf("budget %d: %d bytes spilled", budget, spilled)
		}
		var views, copies [4]int
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var buf []uint64
				for i := g; i < len(want); i += 4 {
					vals, next, err := s.ViewUint64s(buf, i)
					if err != nil || !slices.Equal(vals, want[i]) {
						t.Errorf("budget %d: record %d: err %v, equal %v", budget, i, err, slices.Equal(vals, want[i]))
						return
					}
					lo, hi := s.offs.At(i), s.offs.At(i+1)
					c := s.chunks[lo/s.chunkSize]
					whole := c.mem != nil && lo%s.chunkSize+hi-lo <= s.chunkSize
					if len(vals) > 0 {
						inBuf := cap(next) > 0 && &vals[0] == &next[:1][0]
						if inBuf == whole {
							t.Errorf("budget %d: record %d (whole in a chunk in memory: %v) given in the buffer: %v", budget, i, whole, inBuf)
							return
						}
						if whole {
							views[g]++
						} else {
							copies[g]++
						}
					}
					buf = next
				}
			}()
		}
		wg.Wait()
		v, c := views[0]+views[1]+views[2]+views[3], copies[0]+copies[1]+copies[2]+copies[3]
		if v == 0 || c == 0 {
			t.Errorf("budget %d: %d records in place, %d read; want some of each", budget, v, c)
		}
		s.Close()
	}
}
