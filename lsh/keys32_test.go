package lsh

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// refKeys is the key function as the AppendKeys doc comment states it, one
// key at a time with no shortcut (no precomputed band starts, no bands side
// by side): the reference the fast paths are checked against.
func refKeys(p Params, slots []uint64) []uint64 {
	rnd := func(a, x uint64) uint64 { return bits.RotateLeft64(a+x*prime2, 31) * prime1 }
	fin := func(h uint64) uint64 {
		h ^= h >> 33
		h *= prime2
		h ^= h >> 29
		h *= prime3
		h ^= h >> 32
		return h
	}
	var keys []uint64
	var subsets func(start int, o []int)
	for i := range p.Bands {
		band := slots[i*p.Rows : (i+1)*p.Rows]
		emit := func(o []int) {
			h := rnd(rnd(prime5, uint64(i)), uint64(len(o)))
			for _, x := range o {
				h = rnd(h, uint64(x))
			}
			for j, v := range band {
				if !slices.Contains(o, j) {
					h = rnd(h, v)
				}
			}
			keys = append(keys, fin(h))
		}
		subsets = func(start int, o []int) {
			if len(o) == p.Probe {
				emit(o)
				return
			}
			for x := start; x < p.Rows; x++ {
				subsets(x+1, append(o, x))
			}
		}
		subsets(0, nil)
	}
	return keys
}

// pack32 packs 32-bit slots two a word, the lower half first, as a
// minhash.Signature of 32-bit slots holds them.
func pack32(slots []uint64) []uint64 {
	packed := make([]uint64, (len(slots)+1)/2)
	for j, v := range slots {
		packed[j/2] |= uint64(uint32(v)) << (32 * (j % 2))
	}
	return packed
}

// keyCases are bandings with every shape the fast paths split on: bands
// fewer than, a multiple of and not a multiple of four; even and odd rows;
// past the 256 precomputed band starts; each probe level.
var keyCases = []Params{
	{Bands: 1, Rows: 1}, {Bands: 1, Rows: 6}, {Bands: 3, Rows: 5}, {Bands: 4, Rows: 6},
	{Bands: 5, Rows: 7}, {Bands: 16, Rows: 6}, {Bands: 16, Rows: 8}, {Bands: 9, Rows: 13},
	{Bands: 7, Rows: 2}, {Bands: 300, Rows: 2}, {Bands: 301, Rows: 3}, {Bands: 64, Rows: 1},
	{Bands: 16, Rows: 8, Probe: 1}, {Bands: 5, Rows: 3, Probe: 2}, {Bands: 2, Rows: 70, Probe: 1},
	{Bands: 3, Rows: 65, Probe: 2},
}

// TestAppendKeysReference checks AppendKeys against refKeys on random
// slots, and that it appends to what dst holds.
func TestAppendKeysReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, p := range keyCases {
		for range 5 {
			slots := randomSlots(rng, p.Slots()+rng.IntN(3))
			want := refKeys(p, slots)
			if got := p.AppendKeys(nil, slots); !slices.Equal(got, want) {
				t.Fatalf("%v: AppendKeys = %x; want %x", p, got, want)
			}
			prefix := []uint64{1, 2, 3}
			if got := p.AppendKeys(prefix, slots); !slices.Equal(got[:3], []uint64{1, 2, 3}) || !slices.Equal(got[3:], want) {
				t.Fatalf("%v: AppendKeys after a prefix = %x; want 1 2 3 then %x", p, got, want)
			}
		}
	}
}

// TestAppendKeys32 checks that AppendKeys32 of packed 32-bit slots gives
// the keys of AppendKeys (and refKeys) of the slots unpacked, whatever
// their odd or even count, and ignores slots past Bands·Rows.
func TestAppendKeys32(t *testing.T) {
	for _, vec := range []bool{false, true} {
		if vec && !useAVX512 {
			t.Log("no AVX-512 here: the vector kernel is not tested")
			continue
		}
		t.Run(fmt.Sprintf("vec=%v", vec), func(t *testing.T) {
			defer func(v bool) { useAVX512 = v }(useAVX512)
			useAVX512 = vec
			testAppendKeys32(t, append(slices.Clip(keyCases), vecCases...))
		})
	}
}

// vecCases are the shapes the vector kernel of 32-bit slots splits on:
// groups of eight bands and the bands left over, every even row count it
// takes (2 to 2·maxVecWords) and the first it does not, past the 256
// precomputed band starts.
var vecCases = []Params{
	{Bands: 8, Rows: 2}, {Bands: 8, Rows: 4}, {Bands: 9, Rows: 6}, {Bands: 15, Rows: 6},
	{Bands: 17, Rows: 6}, {Bands: 24, Rows: 10}, {Bands: 8, Rows: 12}, {Bands: 11, Rows: 14},
	{Bands: 16, Rows: 16}, {Bands: 8, Rows: 18}, {Bands: 7, Rows: 6}, {Bands: 264, Rows: 4},
	{Bands: 259, Rows: 6},
}

func testAppendKeys32(t *testing.T, cases []Params) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, p := range cases {
		for range 5 {
			slots := randomSlots(rng, p.Slots()+rng.IntN(3))
			for j := range slots {
				slots[j] &= 0xffffffff
			}
			if rng.IntN(2) == 0 {
				slots[rng.IntN(len(slots))] = 0xffffffff // the top of the range
			}
			want := refKeys(p, slots)
			packed := pack32(slots)
			if got := p.AppendKeys32(nil, packed); !slices.Equal(got, want) {
				t.Fatalf("%v: AppendKeys32 = %x; want %x", p, got, want)
			}
			if got := p.AppendKeys(nil, slots); !slices.Equal(got, want) {
				t.Fatalf("%v: AppendKeys = %x; want %x", p, got, want)
			}
			// Exactly the words needed: an odd slot count ends mid-word.
			exact := packed[:(p.Slots()+1)/2]
			if got := p.AppendKeys32([]uint64{7}, exact); got[0] != 7 || !slices.Equal(got[1:], want) {
				t.Fatalf("%v: AppendKeys32 after a prefix = %x; want 7 then %x", p, got, want)
			}
		}
	}
}

// TestAppendKeys32Golden: the golden cases whose slots fit in 32 bits,
// packed, give the golden keys.
func TestAppendKeys32Golden(t *testing.T) {
	cases := 0
	forGolden(t, func(p Params, name string, slots, want []uint64) {
		for _, v := range slots {
			if v > 0xffffffff {
				return
			}
		}
		if got := p.AppendKeys32(nil, pack32(slots)); !slices.Equal(got, want) {
			t.Errorf("%v %s: AppendKeys32 = %x; want %x", p, name, got, want)
		}
		cases++
	})
	if cases < 5 {
		t.Fatalf("%d golden cases have 32-bit slots; want at least 5", cases)
	}
}

func TestAppendKeys32Allocs(t *testing.T) {
	for _, p := range []Params{{Bands: 16, Rows: 6}, {Bands: 16, Rows: 8, Probe: 1}, {Bands: 5, Rows: 7, Probe: 2}} {
		packed := randomSlots(rand.New(rand.NewPCG(7, 8)), (p.Slots()+1)/2)
		dst := make([]uint64, 0, p.KeysPerDoc())
		if allocs := testing.AllocsPerRun(100, func() { dst = p.AppendKeys32(dst[:0], packed) }); allocs != 0 {
			t.Errorf("%v: AppendKeys32 with enough capacity: got %v allocs/op; want 0", p, allocs)
		}
	}
}

func TestAppendKeys32Panics(t *testing.T) {
	for _, tt := range []struct {
		p     Params
		words int
	}{
		{Params{Bands: 4, Rows: 4}, 7},
		{Params{Bands: 3, Rows: 3}, 4}, // 9 slots take 5 words
		{Params{Bands: 0, Rows: 4}, 8},
		{Params{Bands: 4, Rows: 4, Probe: 3}, 8},
		{Params{Bands: 4, Rows: 1, Probe: 1}, 8},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%+v.AppendKeys32(%d words) did not panic", tt.p, tt.words)
				}
			}()
			tt.p.AppendKeys32(nil, make([]uint64, tt.words))
		}()
	}
}
