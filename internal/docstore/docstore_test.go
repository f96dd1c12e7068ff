package docstore

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

func TestStoreSpillsAndReads(t *testing.T) {
	for _, budget := range []int64{0, 1 << 40} {
		s := New(t.TempDir(), "test", budget)
		r := rand.New(rand.NewPCG(1, uint64(budget)))
		var want [][]uint64
		for i := 0; i < 600; i++ {
			rec := make([]uint64, r.IntN(3000))
			if i%200 == 0 {
				rec = make([]uint64, chunkSize/8+17) // spans chunks
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
		if budget == 0 && s.SpilledBytes() == 0 {
			t.Fatal("nothing spilled under a zero budget")
		}
		if budget > 0 && s.SpilledBytes() != 0 {
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
