package radix

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// gen returns n values drawn by kind from a fixed-seed generator.
func gen(kind string, n int, seed uint64) []uint64 {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	s := make([]uint64, n)
	for i := range s {
		switch kind {
		case "random":
			s[i] = r.Uint64()
		case "lowbits": // only the low 20 bits vary
			s[i] = r.Uint64() & (1<<20 - 1)
		case "pairs": // packed a<<32|b with 20-bit indices
			s[i] = (r.Uint64()&(1<<20-1))<<32 | r.Uint64()&(1<<20-1)
		case "highbits": // only the top byte varies
			s[i] = r.Uint64() & 0xff00_0000_0000_0000
		case "constant":
			s[i] = 0xdead_beef_0123_4567
		case "dups":
			s[i] = r.Uint64N(7) * 0x0101_0101_0101_0101
		case "sorted":
			s[i] = uint64(i) * 0x9e37_79b9
		case "reversed":
			s[i] = uint64(n-i) * 0x9e37_79b9
		case "skewed": // most values share the top byte: one MSD bucket holds nearly all
			s[i] = r.Uint64() >> 8
			if i%50 == 0 {
				s[i] |= r.Uint64() << 56
			}
		case "oddpasses": // exactly one varying byte: one pass, result lands in scratch
			s[i] = 0x1100_0000_0000_0000 | (r.Uint64()&0xff)<<24
		default:
			panic("unknown kind " + kind)
		}
	}
	return s
}

func TestSortMatchesSlicesSort(t *testing.T) {
	kinds := []string{"random", "lowbits", "pairs", "highbits", "constant", "dups", "sorted", "reversed", "oddpasses", "skewed"}
	sizes := []int{0, 1, 2, SmallCutoff - 1, SmallCutoff, SmallCutoff + 1, 1000, 4097, LSDMax, LSDMax + 1}
	var scratch []uint64
	for _, kind := range kinds {
		for _, n := range sizes {
			t.Run(fmt.Sprintf("%s/%d", kind, n), func(t *testing.T) {
				got := gen(kind, n, uint64(n))
				want := slices.Clone(got)
				slices.Sort(want)
				scratch = Sort(got, scratch)
				if !slices.Equal(got, want) {
					i := 0
					for i < n && got[i] == want[i] {
						i++
					}
					t.Fatalf("Sort differs from slices.Sort at %d: got %#x; want %#x", i, got[i], want[i])
				}
			})
		}
	}
}

func TestSortKey(t *testing.T) {
	for _, shift := range []uint{1, 8, 20, 33, 63} {
		for _, n := range []int{100, SmallCutoff + 10, 5000, LSDMax + 5} {
			t.Run(fmt.Sprintf("shift=%d/n=%d", shift, n), func(t *testing.T) {
				orig := gen("random", n, uint64(n)+uint64(shift))
				// Make equal keys common so that ties actually occur.
				for i := range orig {
					orig[i] = orig[i]&(1<<shift-1) | (orig[i]>>shift%97)<<shift
				}
				got := slices.Clone(orig)
				SortKey(got, nil, shift)
				for i := 1; i < n; i++ {
					if got[i-1]>>shift > got[i]>>shift {
						t.Fatalf("keys out of order at %d: got %#x before %#x", i, got[i-1]>>shift, got[i]>>shift)
					}
				}
				a, b := slices.Clone(orig), slices.Clone(got)
				slices.Sort(a)
				slices.Sort(b)
				if !slices.Equal(a, b) {
					t.Fatalf("SortKey changed the multiset of values")
				}
				again := slices.Clone(orig)
				SortKey(again, make([]uint64, n), shift)
				if !slices.Equal(again, got) {
					t.Fatalf("SortKey is not deterministic")
				}
			})
		}
	}
}

func TestSortKeyPanicsOnShift64(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatalf("SortKey(shift=64) did not panic")
		}
	}()
	SortKey(nil, nil, 64)
}

func TestSortScratch(t *testing.T) {
	const n = 5000
	data := gen("random", n, 1)

	// Too small a scratch is replaced by a new buffer of len(data).
	small := make([]uint64, 10)
	got := Sort(data, small)
	if len(got) != n {
		t.Fatalf("len(returned scratch) = %d; want %d", len(got), n)
	}
	if &got[0] == &small[0] {
		t.Fatalf("returned scratch aliases the too-small buffer")
	}

	// A big enough scratch is used as is (resliced) and nothing is allocated.
	big := make([]uint64, 2*n)
	data = gen("random", n, 2)
	got = Sort(data, big)
	if len(got) != n || &got[0] != &big[0] {
		t.Fatalf("Sort did not reuse a big enough scratch: len %d, same array %v", len(got), &got[0] == &big[0])
	}
	if !slices.IsSorted(data) {
		t.Fatalf("data not sorted")
	}
	allocs := testing.AllocsPerRun(20, func() {
		Sort(data, big)
	})
	if allocs != 0 {
		t.Fatalf("Sort with big enough scratch: got %v allocs/op; want 0", allocs)
	}

	// Below the cutoff scratch is returned untouched.
	tiny := gen("random", SmallCutoff-1, 3)
	if got := Sort(tiny, nil); got != nil {
		t.Fatalf("Sort of a short input returned non-nil scratch of len %d", len(got))
	}
}

func FuzzSort(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	seed := make([]byte, 8*(SmallCutoff+3))
	for i := range seed {
		seed[i] = byte(i * 37)
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, b []byte) {
		// Repeat the input so the radix path (not only the small-input path) is reached.
		n := len(b) / 8
		var data []uint64
		for len(data) < SmallCutoff+n && n > 0 {
			for i := range n {
				data = append(data, binary.LittleEndian.Uint64(b[8*i:])^uint64(len(data)&3))
			}
		}
		want := slices.Clone(data)
		slices.Sort(want)
		Sort(data, nil)
		if !slices.Equal(data, want) {
			t.Fatalf("Sort(%d values) differs from slices.Sort", len(data))
		}
	})
}

var sink []uint64

func BenchmarkSort(b *testing.B) {
	for _, n := range []int{100, 300, 1_000, 10_000, 100_000, 1_000_000, 10_000_000} {
		if testing.Short() && n > 1_000_000 {
			continue
		}
		for _, kind := range []string{"random", "pairs"} {
			orig := gen(kind, n, 42)
			data := make([]uint64, n)
			scratch := make([]uint64, n)
			b.Run(fmt.Sprintf("radix/%s/n=%d", kind, n), func(b *testing.B) {
				b.SetBytes(int64(8 * n))
				b.ReportAllocs()
				for b.Loop() {
					copy(data, orig)
					scratch = Sort(data, scratch)
				}
				sink = data
			})
			b.Run(fmt.Sprintf("parallel2/%s/n=%d", kind, n), func(b *testing.B) {
				b.SetBytes(int64(8 * n))
				b.ReportAllocs()
				for b.Loop() {
					copy(data, orig)
					scratch = SortKeyParallel(data, scratch, 0, 2)
				}
				sink = data
			})
			b.Run(fmt.Sprintf("slices/%s/n=%d", kind, n), func(b *testing.B) {
				b.SetBytes(int64(8 * n))
				b.ReportAllocs()
				for b.Loop() {
					copy(data, orig)
					slices.Sort(data)
				}
				sink = data
			})
		}
	}
}

func TestSortKeyParallelMatchesSortKey(t *testing.T) {
	sizes := []int{100, LSDMax + 1, 3*LSDMax + 17}
	kinds := []string{"random", "pairs", "skewed", "highbits", "constant", "dups"}
	if testing.Short() || raceEnabled {
		sizes, kinds = sizes[:2], kinds[:3]
	}
	for _, kind := range kinds {
		for _, n := range sizes {
			for _, shift := range []uint{0, 20} {
				orig := gen(kind, n, uint64(n)+7)
				want := slices.Clone(orig)
				SortKey(want, nil, shift)
				for _, workers := range []int{0, 2, 3, 8} {
					got := slices.Clone(orig)
					SortKeyParallel(got, nil, shift, workers)
					if !slices.Equal(got, want) {
						t.Fatalf("%s/n=%d/shift=%d: SortKeyParallel(workers=%d) differs from SortKey", kind, n, shift, workers)
					}
				}
			}
		}
	}
}
