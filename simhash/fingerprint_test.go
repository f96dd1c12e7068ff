package simhash

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// refFingerprint is the definition, one bit at a time.
func refFingerprint(features []uint64) uint64 {
	var fp uint64
	for i := 0; i < 64; i++ {
		vote := 0
		for _, f := range features {
			if f>>i&1 == 1 {
				vote++
			} else {
				vote--
			}
		}
		if vote > 0 {
			fp |= 1 << i
		}
	}
	return fp
}

// refWeighted is the weighted definition, one bit at a time, summing in input
// order as FingerprintWeighted documents.
func refWeighted(features []uint64, weights []float64) uint64 {
	var fp uint64
	for i := 0; i < 64; i++ {
		vote := 0.0
		for j, f := range features {
			if f>>i&1 == 1 {
				vote += weights[j]
			} else {
				vote -= weights[j]
			}
		}
		if vote > 0 {
			fp |= 1 << i
		}
	}
	return fp
}

func randFeatures(r *rand.Rand, n int) []uint64 {
	fs := make([]uint64, n)
	for i := range fs {
		fs[i] = r.Uint64()
	}
	return fs
}

func TestFingerprintSmall(t *testing.T) {
	const a, b, c = 0xF0F0_0000_FFFF_1234, 0x0FF0_FFFF_0000_4321, 0x00FF_F0F0_0F0F_AAAA
	for _, tc := range []struct {
		name     string
		features []uint64
		want     uint64
	}{
		{"empty", nil, 0},
		{"one", []uint64{a}, a},
		{"all ones", []uint64{math.MaxUint64}, math.MaxUint64},
		{"twice", []uint64{a, a}, a},
		{"two ties to AND", []uint64{a, b}, a & b},
		{"three is majority", []uint64{a, b, c}, a&b | a&c | b&c},
		{"count weighs", []uint64{a, b, b}, b},
		{"complement ties", []uint64{a, a ^ math.MaxUint64}, 0},
	} {
		if got := Fingerprint(tc.features); got != tc.want {
			t.Errorf("%s: Fingerprint = %#x; want %#x", tc.name, got, tc.want)
		}
	}
}

// TestFingerprintReference covers every path of the carry-save counter: short
// tails, whole blocks, the byte-lane flush after 255 blocks, and the
// biased inputs where a lane would overflow if flushed late.
func TestFingerprintReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 15, 16, 17, 31, 32, 33, 100, 255 * 16, 255*16 + 1, 256 * 16, 3*255*16 + 7, 20000} {
		for _, gen := range []struct {
			name string
			f    func() uint64
		}{
			{"uniform", r.Uint64},
			{"sparse", func() uint64 { return r.Uint64() & r.Uint64() & r.Uint64() }},
			{"dense", func() uint64 { return r.Uint64() | r.Uint64() | r.Uint64() }},
			{"all ones", func() uint64 { return math.MaxUint64 }},
		} {
			fs := make([]uint64, n)
			for i := range fs {
				fs[i] = gen.f()
			}
			want := refFingerprint(fs)
			if got := Fingerprint(fs); got != want {
				t.Errorf("n=%d %s: Fingerprint = %#x; want %#x", n, gen.name, got, want)
			}
		}
	}
}

// TestCounterTail covers the tail lanes' own flush, which Fingerprint and
// Builder never reach (their tails are shorter than a block).
func TestCounterTail(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, n := range []int{254, 255, 256, 600} {
		fs := randFeatures(r, n)
		var c counter
		c.addTail(fs[:2*n/3])
		c.addBlocks(fs[2*n/3:])
		if got, want := c.sum(), refFingerprint(fs); got != want {
			t.Errorf("n=%d: sum = %#x; want %#x", n, got, want)
		}
	}
}

func TestFingerprintOrderIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{2, 16, 101, 1000, 5000} {
		fs := randFeatures(r, n)
		// Repeat some features so the multiset has counts above 1.
		fs = append(fs, fs[:n/3]...)
		want := Fingerprint(fs)
		for range 5 {
			r.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
			if got := Fingerprint(fs); got != want {
				t.Fatalf("n=%d: shuffled Fingerprint = %#x; want %#x", n, got, want)
			}
		}
	}
}

// TestBuilderChunks checks that streaming in every chunk size, and feature by
// feature, gives the one-call result, and that Sum does not disturb the state.
func TestBuilderChunks(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	fs := randFeatures(r, 4200)
	want := Fingerprint(fs)
	var b Builder
	for chunk := 1; chunk <= 70; chunk++ {
		b.Reset()
		for rest := fs; len(rest) > 0; {
			n := min(chunk, len(rest))
			b.AddFeatures(rest[:n])
			rest = rest[n:]
			_ = b.Sum() // must not change the state
		}
		if got := b.Sum(); got != want {
			t.Fatalf("chunk %d: Sum = %#x; want %#x", chunk, got, want)
		}
	}
	b.Reset()
	for i, f := range fs {
		b.AddFeature(f)
		if i%997 == 0 {
			if got, want := b.Sum(), Fingerprint(fs[:i+1]); got != want {
				t.Fatalf("after %d features: Sum = %#x; want %#x", i+1, got, want)
			}
		}
	}
	if got := b.Sum(); got != want {
		t.Fatalf("one by one: Sum = %#x; want %#x", got, want)
	}
	var zero Builder
	if got := zero.Sum(); got != 0 {
		t.Errorf("empty Builder Sum = %#x; want 0", got)
	}
}

func TestFingerprintWeighted(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 2, 3, 50, 1000} {
		fs := randFeatures(r, n)
		ws := make([]float64, n)
		for i := range ws {
			ws[i] = r.ExpFloat64()
		}
		got, err := FingerprintWeighted(fs, ws)
		if err != nil {
			t.Fatal(err)
		}
		if want := refWeighted(fs, ws); got != want {
			t.Errorf("n=%d: FingerprintWeighted = %#x; want %#x", n, got, want)
		}
		var b Builder
		for i, f := range fs {
			if err := b.Add(f, ws[i]); err != nil {
				t.Fatal(err)
			}
		}
		if s := b.Sum(); s != got {
			t.Errorf("n=%d: Builder.Add Sum = %#x; want %#x", n, s, got)
		}
	}
}

// TestWeightsAreCounts checks that integer weights act as repetition counts,
// whatever the order, and that unit and weighted votes add up in a Builder.
func TestWeightsAreCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{1, 2, 7, 40, 300} {
		fs := randFeatures(r, n)
		ws := make([]float64, n)
		var rep []uint64
		for i, f := range fs {
			c := r.IntN(5) // zero weights included
			ws[i] = float64(c)
			for range c {
				rep = append(rep, f)
			}
		}
		want := Fingerprint(rep)
		got, err := FingerprintWeighted(fs, ws)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("n=%d: FingerprintWeighted = %#x; want Fingerprint of repeats %#x", n, got, want)
		}
		// Reversed order, weighted.
		rf, rw := slices.Clone(fs), slices.Clone(ws)
		slices.Reverse(rf)
		slices.Reverse(rw)
		if got, _ := FingerprintWeighted(rf, rw); got != want {
			t.Errorf("n=%d: reversed FingerprintWeighted = %#x; want %#x", n, got, want)
		}
		// Half unit votes, half weighted votes, in one Builder.
		var b Builder
		for i, f := range fs {
			if i%2 == 0 {
				for range int(ws[i]) {
					b.AddFeature(f)
				}
			} else if err := b.Add(f, ws[i]); err != nil {
				t.Fatal(err)
			}
		}
		if got := b.Sum(); got != want {
			t.Errorf("n=%d: mixed Builder Sum = %#x; want %#x", n, got, want)
		}
	}
}

func TestFingerprintWeightedErrors(t *testing.T) {
	fs := []uint64{1, 2, 3}
	for _, tc := range []struct {
		name    string
		weights []float64
		want    error
	}{
		{"short", []float64{1, 2}, ErrWeightsLength},
		{"long", []float64{1, 2, 3, 4}, ErrWeightsLength},
		{"NaN", []float64{1, math.NaN(), 1}, ErrInvalidWeight},
		{"negative", []float64{1, 1, -0.5}, ErrInvalidWeight},
		{"+Inf", []float64{math.Inf(1), 1, 1}, ErrInvalidWeight},
		{"-Inf", []float64{1, math.Inf(-1), 1}, ErrInvalidWeight},
		{"ok with zero and -0", []float64{0, math.Copysign(0, -1), 1}, nil},
	} {
		_, err := FingerprintWeighted(fs, tc.weights)
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("%s: err = %v; want %v", tc.name, err, tc.want)
		}
	}
	var b Builder
	b.AddFeature(0xFF)
	for _, w := range []float64{math.NaN(), -1, math.Inf(1)} {
		if err := b.Add(0, w); !errors.Is(err, ErrInvalidWeight) {
			t.Errorf("Builder.Add(0, %v) err = %v; want ErrInvalidWeight", w, err)
		}
	}
	if got := b.Sum(); got != 0xFF {
		t.Errorf("after rejected weights Sum = %#x; want %#x (unchanged)", got, 0xFF)
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b uint64
		want int
	}{
		{0, 0, 0},
		{0, math.MaxUint64, 64},
		{0b1011, 0b0001, 2},
		{1 << 63, 1, 2},
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%#x, %#x) = %d; want %d", tc.a, tc.b, got, tc.want)
		}
		if got := Distance(tc.b, tc.a); got != tc.want {
			t.Errorf("Distance(%#x, %#x) = %d; want %d", tc.b, tc.a, got, tc.want)
		}
	}
}

func FuzzFingerprint(f *testing.F) {
	f.Add([]byte{}, uint16(0))
	f.Add([]byte("the quick brown fox jumps over the lazy dog"), uint16(3))
	f.Add(make([]byte, 8*300), uint16(17))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint16) {
		fs := make([]uint64, len(data)/8)
		for i := range fs {
			for j := range 8 {
				fs[i] |= uint64(data[8*i+j]) << (8 * j)
			}
		}
		want := refFingerprint(fs)
		if got := Fingerprint(fs); got != want {
			t.Fatalf("Fingerprint = %#x; want %#x", got, want)
		}
		var b Builder
		c := int(chunk%64) + 1
		for rest := fs; len(rest) > 0; {
			n := min(c, len(rest))
			b.AddFeatures(rest[:n])
			rest = rest[n:]
		}
		if got := b.Sum(); got != want {
			t.Fatalf("Builder chunk %d: Sum = %#x; want %#x", c, got, want)
		}
	})
}
