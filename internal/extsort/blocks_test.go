package extsort

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"unsafe"
)

// TestBlockPool: blocks have the capacity asked for, never overlap while in
// use, a block put back is the next one given of its size (and only of its
// size; blocks of other sizes are not reused), a slab's too short rest is not lost.
func TestBlockPool(t *testing.T) {
	for _, hold := range []int64{1 << 20, 64 << 20, 4 << 30} {
		t.Run(fmt.Sprintf("hold=%d", hold), func(t *testing.T) {
			a := newBlockPool(hold)
			if got := int64(8 * a.slabLen); got < slabMin || got > slabMax || (got < slabMax && got < hold/16) {
				t.Fatalf("slab of %d bytes for a hold of %d", got, hold)
			}
			r := rand.New(rand.NewPCG(1, uint64(hold)))
			type span struct{ lo, hi uintptr }
			inUse := map[uintptr]span{}
			addr := func(b []uint64) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b[:1]))) }
			var held [][]uint64
			for range 3000 {
				if len(held) > 0 && r.IntN(3) == 0 {
					i := r.IntN(len(held))
					b := held[i]
					held[i] = held[len(held)-1]
					held = held[:len(held)-1]
					delete(inUse, addr(b))
					a.put(b)
					if got := a.get(cap(b)); (class(cap(b)) >= 0 && addr(got) != addr(b)) || len(got) != 0 || cap(got) != cap(b) {
						t.Fatalf("a block of %d put back: got %#x (len %d); want %#x, empty", cap(b), addr(got), len(got), addr(b))
					}
					if class(cap(b)) < 0 {
						continue // not reused: a new one was given, and dropped
					}
					held = append(held, b)
					inUse[addr(b)] = span{addr(b), addr(b) + uintptr(8*cap(b))}
					continue
				}
				n := partMinBlock << r.IntN(9)
				if r.IntN(10) == 0 {
					n = 1000 // a staging block of a small budget: not a power of two
				}
				b := a.get(n)
				if len(b) != 0 || cap(b) != n {
					t.Fatalf("get(%d): len %d, cap %d", n, len(b), cap(b))
				}
				s := span{addr(b), addr(b) + uintptr(8*n)}
				for _, o := range inUse {
					if s.lo < o.hi && o.lo < s.hi {
						t.Fatalf("block [%#x, %#x) overlaps [%#x, %#x)", s.lo, s.hi, o.lo, o.hi)
					}
				}
				b = append(b, uint64(n)) // written: it is memory of its own
				inUse[s.lo] = s
				held = append(held, b)
			}
			if a.slabs == 0 {
				t.Fatal("no slab")
			}
			// The power-of-two blocks carved or freed exceed those held by
			// at most a slab and the free lists' contents.
			free := 0
			for c, l := range a.free {
				free += len(l) << c
			}
			use := 0
			for _, b := range held {
				use += cap(b)
			}
			if int64(use+free) > int64(a.slabs)*int64(a.slabLen) {
				t.Errorf("%d words held and %d free from %d slabs of %d", use, free, a.slabs, a.slabLen)
			}
		})
	}
}

// TestPartitionedPoolWithinBudget: spilling or not, the slabs a store
// carves its blocks from hold no more than its blocks' share of the budget,
// a slab and the free lists' bound (16 MiB) more; the blocks of spilled
// ranges are reused.
func TestPartitionedPoolWithinBudget(t *testing.T) {
	for _, budget := range []int64{1 << 20, 8 << 20, 256 << 20, 1 << 30} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			s := NewPartitioned(t.TempDir(), "test", budget)
			defer s.Close()
			words := wideWords(1 << 21)
			for i := 0; i < len(words); i += 1 << 12 {
				if err := s.Add(words[i : i+1<<12]...); err != nil {
					t.Fatal(err)
				}
			}
			slabs := int64(s.pool.slabs) * int64(8*s.pool.slabLen)
			if limit := s.hold + int64(8*s.pool.slabLen) + 16<<20; slabs > limit {
				t.Errorf("%d slabs of %d bytes for %d bytes of blocks; want at most %d", s.pool.slabs, 8*s.pool.slabLen, s.hold, limit)
			}
			if 8<<21 < budget/2 != (s.Runs() == 0) { // a word an entry: 16 a document, in order
				t.Errorf("%d ranges spilled at a budget of %d", s.Runs(), budget)
			}
		})
	}
}

// minorFaults is the process's minor page faults so far.
func minorFaults(b testing.TB) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Minflt
}

// BenchmarkPartitionedAdd adds 2^22 entries to a Partitioned store that
// holds them all (the larger budget's case) or spills (16 MiB): Add's
// scatter into the ranges' blocks, the blocks' first touch (faults/op, the
// process's minor page faults) and, spilling, the segments' writes.
// SetBytes counts the 16 bytes an entry is given as (two words).
func BenchmarkPartitionedAdd(b *testing.B) {
	const n = 1 << 22
	words := wideWords(n)
	for _, mem := range []struct {
		name   string
		budget int64
	}{{"fits", 1 << 30}, {"spill", 16 << 20}} {
		b.Run("mem="+mem.name, func(b *testing.B) {
			b.SetBytes(16 * n)
			b.ReportAllocs()
			defer reportCPU(b, cpuTime(b))
			f0 := minorFaults(b)
			defer func() { b.ReportMetric(float64(minorFaults(b)-f0)/float64(b.N), "faults/op") }()
			for b.Loop() {
				s := NewPartitioned(b.TempDir(), "bench", mem.budget)
				for i := 0; i < len(words); i += 1 << 12 {
					if err := s.Add(words[i : i+1<<12]...); err != nil {
						b.Fatal(err)
					}
				}
				sink += uint64(s.Len())
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
