package drift

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestBins(t *testing.T) {
	for _, tc := range []struct {
		bounds []float64
		x      float64
		want   int
	}{
		{SimilarityBounds, 0, 0},
		{SimilarityBounds, 0.05, 1},
		{SimilarityBounds, 0.1, 1},
		{SimilarityBounds, 0.1000001, 2},
		{SimilarityBounds, 0.8, 9},
		{SimilarityBounds, 0.985, 14},
		{SimilarityBounds, 1, 15},
		{SimilarityBounds, math.NaN(), 16},
		{FeatureBounds, 0, 0},
		{FeatureBounds, 4, 0},
		{FeatureBounds, 5, 1},
		{FeatureBounds, 300, 7},
		{FeatureBounds, 1 << 20, 18},
		{FeatureBounds, 1<<20 + 1, 19},
		{ByteBounds, 16, 0},
		{ByteBounds, 17, 1},
		{ByteBounds, 1000, 6},
		{ByteBounds, 1 << 20, 16},
		{ByteBounds, 1 << 24, 17},
	} {
		if got := Bin(tc.bounds, tc.x); got != tc.want {
			t.Errorf("Bin(%v…, %g) = %d; want %d", tc.bounds[:2], tc.x, got, tc.want)
		}
	}
	// Prometheus's ExponentialBuckets(4, 2, 19) and (16, 2, 17).
	if len(SimilarityBounds) != 16 || len(FeatureBounds) != 19 || FeatureBounds[18] != 1<<20 || len(ByteBounds) != 17 || ByteBounds[16] != 1<<20 {
		t.Errorf("bounds %v %v %v", SimilarityBounds, FeatureBounds, ByteBounds)
	}
	for _, b := range [][]float64{SimilarityBounds, FeatureBounds, ByteBounds} {
		for i := 1; i < len(b); i++ {
			if !(b[i-1] < b[i]) {
				t.Errorf("bounds %v: %g then %g; want strictly ascending", b, b[i-1], b[i])
			}
		}
	}
}

func TestHistogramMergeQuantileJSON(t *testing.T) {
	a, b := New(FeatureBounds), New(FeatureBounds)
	for _, x := range []float64{1, 2, 3, 100} {
		a.Add(x)
	}
	b.Add(5000)
	b.Add(1e9)
	var m Histogram
	if err := m.Merge(a); err != nil {
		t.Fatal(err)
	}
	if err := m.Merge(b); err != nil {
		t.Fatal(err)
	}
	if m.N() != 6 || a.N() != 4 {
		t.Fatalf("merged N %d, a's %d; want 6 and 4 (a unchanged)", m.N(), a.N())
	}
	if q := m.Quantile(0.5); q != 4 {
		t.Errorf("median bin bound %g; want 4 (the third value, 3, is in the bin ≤ 4)", q)
	}
	if q := m.Quantile(1); !math.IsInf(q, 1) {
		t.Errorf("max bin bound %g; want +Inf (1e9 is past the last bound)", q)
	}
	if q := New(FeatureBounds).Quantile(0.5); !math.IsNaN(q) {
		t.Errorf("median of nothing %g; want NaN", q)
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back Histogram
	if err := json.Unmarshal(data, &back); err != nil || !reflect.DeepEqual(back, m) {
		t.Errorf("JSON round trip: %v, %+v; want %+v", err, back, m)
	}
	if err := m.Merge(New(ByteBounds)); !errors.Is(err, ErrBins) || m.N() != 6 {
		t.Errorf("merging other bins: %v, N %d; want ErrBins and no change", err, m.N())
	}
	if _, err := Compare(m, Histogram{Upper: FeatureBounds, Counts: []int64{1}}); !errors.Is(err, ErrBins) {
		t.Errorf("Compare with mismatched counts: %v; want ErrBins", err)
	}
}

// TestKolmogorovQ against tabulated values of the Kolmogorov distribution
// (the critical values 1.2238, 1.3581 and 1.6276 of α = 0.10, 0.05, 0.01).
func TestKolmogorovQ(t *testing.T) {
	for _, tc := range []struct{ lambda, want float64 }{
		{0, 1}, {0.5, 0.9639}, {1.2238, 0.10}, {1.3581, 0.05}, {1.6276, 0.01}, {3, 3.05e-8},
	} {
		if got := KolmogorovQ(tc.lambda); math.Abs(got-tc.want) > 1e-3*max(tc.want, 1e-5) && math.Abs(got-tc.want) > 1e-4 {
			t.Errorf("Q(%g) = %.6g; want %.4g", tc.lambda, got, tc.want)
		}
	}
}

// sample draws n lognormal text lengths (median m bytes) into a histogram.
func sample(rng *rand.Rand, n int, m float64) Histogram {
	h := New(ByteBounds)
	for range n {
		h.Add(math.Exp(math.Log(m) + rng.NormFloat64()))
	}
	return h
}

// TestCompareCalibrated: under the null hypothesis (both samples from one
// distribution) Compare rejects at level 0.05 at most about 5% of the time
// (binning makes it conservative), and never calls a distribution moved;
// with the median length half as large again, it finds the shift every time.
// 400 trials: the number of rejections is at most 20 + 3 standard deviations
// of a binomial(400, 0.05), √(400·0.05·0.95) ≈ 4.4.
func TestCompareCalibrated(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const trials = 400
	rejected, moved := 0, 0
	for range trials {
		c, err := Compare(sample(rng, 2000, 1500), sample(rng, 3000, 1500))
		if err != nil {
			t.Fatal(err)
		}
		if c.P < 0.05 {
			rejected++
		}
		if c.Moved {
			moved++
		}
	}
	if limit := 20 + 3*math.Sqrt(trials*0.05*0.95); float64(rejected) > limit {
		t.Errorf("%d of %d null trials rejected at 0.05; want at most %.0f", rejected, trials, limit)
	}
	if moved > 0 {
		t.Errorf("%d null trials called moved; want none", moved)
	}
	t.Logf("null: %d of %d rejected at 0.05", rejected, trials)
	for range 20 {
		c, err := Compare(sample(rng, 2000, 1500), sample(rng, 3000, 2250))
		if err != nil {
			t.Fatal(err)
		}
		if !c.Moved || c.P > 1e-6 || c.PSI < MaterialPSI {
			t.Fatalf("median 1500 → 2250 bytes: %+v; want moved (p < 1e-6, PSI ≥ %g)", c, MaterialPSI)
		}
	}
	// Over a million documents a tiny shift is significant but not
	// material: not moved.
	c, err := Compare(sample(rng, 1_000_000, 1500), sample(rng, 1_000_000, 1530))
	if err != nil {
		t.Fatal(err)
	}
	if c.P > Alpha || c.Moved {
		t.Errorf("median 1500 → 1530 over 10⁶ documents: %+v; want significant (p < %g) but not moved", c, Alpha)
	}
	if c, _ := Compare(New(ByteBounds), sample(rng, 10, 100)); c.P != 1 || c.Moved || c.N1 != 0 {
		t.Errorf("against an empty sample: %+v; want p 1, not moved", c)
	}
}
