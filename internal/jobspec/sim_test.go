package jobspec

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestAppendSim checks AppendSim's own rounding against strconv's on every
// kind of similarity: the estimates j/2^k (exact halves among them), values
// a few ulps either side of each half, random bits in [0, 1], and the values
// left to strconv (negative, -0, over 1, NaN, infinities).
func TestAppendSim(t *testing.T) {
	check := func(x float64) {
		t.Helper()
		got := string(AppendSim([]byte("x"), x))
		if want := "x" + strconv.FormatFloat(x, 'f', 6, 64); got != want {
			t.Fatalf("AppendSim(%v = %#x) = %q; want %q", x, math.Float64bits(x), got, want)
		}
	}
	for _, x := range []float64{0, 1, math.Copysign(0, -1), -1, -0.5, 1.0000001, 2, 1e6, math.NaN(), math.Inf(1), math.Inf(-1),
		math.SmallestNonzeroFloat64, 0.5e-6, 1.5e-6, 2.5e-6, 0.9999995, math.Nextafter(1, 0), 0.0078125} {
		check(x)
	}
	for k := range 21 {
		for j := 0; j <= 1<<k; j++ {
			check(float64(j) / float64(int(1)<<k))
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200000 {
		half := (float64(rng.IntN(1000000)) + 0.5) / 1e6
		x := half
		for range 4 {
			x = math.Nextafter(x, 0)
		}
		for range 9 {
			check(x)
			x = math.Nextafter(x, 2)
		}
		check(rng.Float64())
		check(math.Float64frombits(rng.Uint64N(math.Float64bits(1) + 1)))
		i, u := rng.IntN(200)+1, rng.IntN(200)+1 // Jaccard-like ratios
		check(float64(min(i, u)) / float64(max(i, u)))
	}
}

var sinkSim []byte

// BenchmarkAppendSim formats estimates j/128 and exact ratios.
func BenchmarkAppendSim(b *testing.B) {
	xs := make([]float64, 1024)
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range xs {
		if i%2 == 0 {
			xs[i] = float64(rng.IntN(129)) / 128
		} else {
			xs[i] = float64(rng.IntN(100)) / float64(100+rng.IntN(50))
		}
	}
	for _, way := range []struct {
		name string
		fn   func([]byte, float64) []byte
	}{
		{"AppendSim", AppendSim},
		{"strconv", func(dst []byte, x float64) []byte { return strconv.AppendFloat(dst, x, 'f', 6, 64) }},
	} {
		b.Run("way="+way.name, func(b *testing.B) {
			b.ReportAllocs()
			var dst []byte
			for i := 0; b.Loop(); i++ {
				dst = way.fn(dst[:0], xs[i%len(xs)])
			}
			sinkSim = dst
		})
	}
}
