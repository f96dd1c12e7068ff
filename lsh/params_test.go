package lsh

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"testing"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		p  Params
		ok bool
	}{
		{Params{Bands: 1, Rows: 1}, true},
		{Params{Bands: 9, Rows: 13}, true},
		{Params{Bands: 9, Rows: 13, Probe: 1}, true},
		{Params{Bands: 9, Rows: 13, Probe: 2}, true},
		{Params{Bands: MaxSlots, Rows: 1}, true},
		{Params{Bands: 0, Rows: 8}, false},
		{Params{Bands: 8, Rows: 0}, false},
		{Params{Bands: -1, Rows: 8}, false},
		{Params{Bands: MaxSlots, Rows: 2}, false},
		{Params{Bands: 4, Rows: 8, Probe: 3}, false},
		{Params{Bands: 4, Rows: 8, Probe: -1}, false},
		{Params{Bands: 4, Rows: 1, Probe: 1}, false},
		{Params{Bands: 4, Rows: 2, Probe: 2}, false},
		{Params{Bands: 1000, Rows: 64, Probe: 1}, true},
		{Params{Bands: 1025, Rows: 64, Probe: 1}, false}, // 65600 keys
		{Params{Bands: 40, Rows: 64, Probe: 2}, false},   // 80640 keys
	}
	for _, tt := range tests {
		err := tt.p.Validate()
		if (err == nil) != tt.ok {
			t.Errorf("%+v.Validate() = %v; want ok=%v", tt.p, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidParams) {
			t.Errorf("%+v.Validate() = %v; want an error wrapping ErrInvalidParams", tt.p, err)
		}
	}
}

func TestKeysPerDoc(t *testing.T) {
	tests := []struct {
		p    Params
		want int
	}{
		{Params{Bands: 9, Rows: 13}, 9},
		{Params{Bands: 9, Rows: 13, Probe: 1}, 9 * 13},
		{Params{Bands: 9, Rows: 13, Probe: 2}, 9 * 78},
		{Params{Bands: 16, Rows: 8, Probe: 2}, 16 * 28},
	}
	for _, tt := range tests {
		if got := tt.p.KeysPerDoc(); got != tt.want {
			t.Errorf("%v.KeysPerDoc() = %d; want %d", tt.p, got, tt.want)
		}
		if got := len(tt.p.AppendKeys(nil, make([]uint64, tt.p.Slots()))); got != tt.want {
			t.Errorf("len(%v.AppendKeys) = %d; want %d", tt.p, got, tt.want)
		}
	}
}

func TestProbabilityHandChecked(t *testing.T) {
	tests := []struct {
		p    Params
		j    float64
		want float64
	}{
		{Params{Bands: 1, Rows: 1}, 0.3, 0.3},                 // P = j
		{Params{Bands: 2, Rows: 1}, 0.5, 0.75},                // 1 − (1/2)²
		{Params{Bands: 1, Rows: 2}, 0.5, 0.25},                // (1/2)²
		{Params{Bands: 3, Rows: 2}, 0.5, 37.0 / 64},           // 1 − (3/4)³
		{Params{Bands: 2, Rows: 2, Probe: 1}, 0.5, 15.0 / 16}, // q = 1 − (1−j)² = 3/4; 1 − (1/4)²
		{Params{Bands: 1, Rows: 3, Probe: 2}, 0.5, 7.0 / 8},   // q = 1 − (1−j)³
		{Params{Bands: 1, Rows: 3, Probe: 1}, 0.5, 4.0 / 8},   // q = j³ + 3j²(1−j)
		{Params{Bands: 20, Rows: 5}, 0.5, 1 - math.Pow(31.0/32, 20)},
	}
	for _, tt := range tests {
		if got := tt.p.Probability(tt.j); math.Abs(got-tt.want) > 1e-15 {
			t.Errorf("%v.Probability(%v) = %v; want %v", tt.p, tt.j, got, tt.want)
		}
	}
}

var exactParams = []Params{
	{Bands: 1, Rows: 1},
	{Bands: 2, Rows: 1},
	{Bands: 1, Rows: 2},
	{Bands: 20, Rows: 5},
	{Bands: 9, Rows: 13},
	{Bands: 32, Rows: 4},
	{Bands: 3, Rows: 30},
	{Bands: 4, Rows: 8, Probe: 1},
	{Bands: 9, Rows: 13, Probe: 1},
	{Bands: 6, Rows: 6, Probe: 2},
}

var exactPoints = []*big.Rat{
	big.NewRat(1, 1000), big.NewRat(1, 100), big.NewRat(1, 10), big.NewRat(1, 4), big.NewRat(1, 2),
	big.NewRat(4, 5), big.NewRat(9, 10), big.NewRat(99, 100), big.NewRat(999, 1000),
}

// relErr returns |got − want| / |want|, or |got| if want is 0.
func relErr(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / math.Abs(want)
}

// TestProbabilityExact checks P and 1 − P against exact rational values,
// in relative terms, so both tails must be accurate: a naive
// 1 − (1 − j^r)^b loses all digits of P near 0 and of 1 − P near 1.
func TestProbabilityExact(t *testing.T) {
	for _, p := range exactParams {
		prob, miss := exactPolys(p)
		for _, x := range exactPoints {
			j := ratFloat(x)
			wantP, wantMiss := ratFloat(prob.eval(x)), ratFloat(miss.eval(x))
			if got := p.Probability(j); relErr(got, wantP) > 1e-12 {
				t.Errorf("%v.Probability(%v) = %v; want %v (rel err %.2g)", p, j, got, wantP, relErr(got, wantP))
			}
			if got := p.missProbability(j); relErr(got, wantMiss) > 1e-12 {
				t.Errorf("%v: 1 − P(%v) = %v; want %v (rel err %.2g)", p, j, got, wantMiss, relErr(got, wantMiss))
			}
		}
	}
}

func TestProbabilityEdges(t *testing.T) {
	for _, p := range exactParams {
		for _, tt := range []struct{ j, want float64 }{{-1, 0}, {0, 0}, {1, 1}, {2, 1}, {math.Inf(-1), 0}, {math.Inf(1), 1}} {
			if got := p.Probability(tt.j); got != tt.want {
				t.Errorf("%v.Probability(%v) = %v; want %v", p, tt.j, got, tt.want)
			}
		}
		if got := p.Probability(math.NaN()); !math.IsNaN(got) {
			t.Errorf("%v.Probability(NaN) = %v; want NaN", p, got)
		}
		prev := 0.0
		for i := 1; i <= 1000; i++ {
			got := p.Probability(float64(i) / 1000)
			if got < prev || got > 1 {
				t.Fatalf("%v.Probability not monotone in [0, 1] at %v: got %v after %v", p, float64(i)/1000, got, prev)
			}
			prev = got
		}
	}
}

func TestAreasExact(t *testing.T) {
	thresholds := []*big.Rat{big.NewRat(1, 10), big.NewRat(1, 2), big.NewRat(4, 5), big.NewRat(9, 10)}
	zero, one := big.NewRat(0, 1), big.NewRat(1, 1)
	for _, p := range exactParams {
		prob, miss := exactPolys(p)
		for _, x := range thresholds {
			th := ratFloat(x)
			wantFP := ratFloat(prob.integral(zero, x))
			wantFN := ratFloat(miss.integral(x, one))
			if got := p.FalsePositiveArea(th); math.Abs(got-wantFP) > 1e-13 {
				t.Errorf("%v.FalsePositiveArea(%v) = %.17g; want %.17g", p, th, got, wantFP)
			}
			if got := p.FalseNegativeArea(th); math.Abs(got-wantFN) > 1e-13 {
				t.Errorf("%v.FalseNegativeArea(%v) = %.17g; want %.17g", p, th, got, wantFN)
			}
		}
		if got := p.FalsePositiveArea(0); got != 0 {
			t.Errorf("%v.FalsePositiveArea(0) = %v; want 0", p, got)
		}
		if got := p.FalseNegativeArea(1); got != 0 {
			t.Errorf("%v.FalseNegativeArea(1) = %v; want 0", p, got)
		}
		all := ratFloat(prob.integral(zero, one))
		if got := p.FalsePositiveArea(2); math.Abs(got-all) > 1e-13 {
			t.Errorf("%v.FalsePositiveArea(2) = %v; want ∫₀¹P = %v (clamped)", p, got, all)
		}
	}
}

// TestAreasHighResolution cross-checks the quadrature against a plain
// composite Simpson sum with 65536 panels.
func TestAreasHighResolution(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	simpson := func(f func(float64) float64, a, b float64) float64 {
		const n = 1 << 16
		h := (b - a) / n
		sum := f(a) + f(b)
		for i := 1; i < n; i++ {
			w := 2.0
			if i%2 == 1 {
				w = 4
			}
			sum += w * f(a+float64(i)*h)
		}
		return sum * h / 3
	}
	for _, p := range []Params{{Bands: 9, Rows: 13}, {Bands: 20, Rows: 5}, {Bands: 6, Rows: 6, Probe: 2}} {
		for _, th := range []float64{0.3, 0.8} {
			wantFP := simpson(p.Probability, 0, th)
			wantFN := simpson(func(s float64) float64 { return 1 - p.Probability(s) }, th, 1)
			if got := p.FalsePositiveArea(th); math.Abs(got-wantFP) > 1e-10 {
				t.Errorf("%v.FalsePositiveArea(%v) = %.15g; Simpson sum %.15g", p, th, got, wantFP)
			}
			if got := p.FalseNegativeArea(th); math.Abs(got-wantFN) > 1e-10 {
				t.Errorf("%v.FalseNegativeArea(%v) = %.15g; Simpson sum %.15g", p, th, got, wantFN)
			}
		}
	}
}

// TestGK15Exact checks the quadrature constants: the 15-point Kronrod rule
// integrates polynomials up to degree 22 exactly, the 7-point Gauss rule up
// to degree 13.
func TestGK15Exact(t *testing.T) {
	for n := 0; n <= 22; n++ {
		f := func(x float64) float64 { return math.Pow(x, float64(n)) }
		want := 1 / float64(n+1)
		k, g := gk15(f, 0, 1)
		if math.Abs(k-want) > 2e-16 {
			t.Errorf("Kronrod ∫₀¹ x^%d = %.17g; want %.17g", n, k, want)
		}
		if n <= 13 && math.Abs(g-want) > 2e-16 {
			t.Errorf("Gauss ∫₀¹ x^%d = %.17g; want %.17g", n, g, want)
		}
	}
	if got, want := integrate(math.Sin, 0, math.Pi), 2.0; math.Abs(got-want) > 1e-13 {
		t.Errorf("integrate(sin, 0, π) = %.17g; want %v", got, want)
	}
}

func TestCandidateFraction(t *testing.T) {
	tests := []struct {
		p    Params
		hist []float64
		want float64
	}{
		{Params{Bands: 1, Rows: 1}, []float64{1}, 0.5},               // mean of s over [0,1]
		{Params{Bands: 1, Rows: 1}, []float64{1, 0}, 0.25},           // mean over [0, 1/2]
		{Params{Bands: 1, Rows: 1}, []float64{0, 3}, 0.75},           // mean over [1/2, 1]
		{Params{Bands: 1, Rows: 1}, []float64{1, 1, 1, 1}, 0.5},      // equal weights
		{Params{Bands: 1, Rows: 1}, []float64{3, 0, 0, 1}, 5.0 / 16}, // (3·1/8 + 1·7/8)/4
		{Params{Bands: 2, Rows: 1}, []float64{1}, 2.0 / 3},           // ∫ 2s − s² = 1 − 1/3
		{Params{Bands: 1, Rows: 2}, []float64{1}, 1.0 / 3},           // ∫ s²
		{Params{Bands: 1, Rows: 2}, []float64{0, 1}, 7.0 / 12},       // 2·(1/3 − 1/24)
		{Params{Bands: 9, Rows: 13}, nil, 0},
		{Params{Bands: 9, Rows: 13}, []float64{0, 0}, 0},
	}
	for _, tt := range tests {
		got, err := tt.p.CandidateFraction(tt.hist)
		if err != nil || math.Abs(got-tt.want) > 1e-14 {
			t.Errorf("%v.CandidateFraction(%v) = %v, %v; want %v", tt.p, tt.hist, got, err, tt.want)
		}
	}
	for _, bad := range [][]float64{{-1}, {math.NaN()}, {1, math.Inf(1)}} {
		if _, err := (Params{Bands: 2, Rows: 2}).CandidateFraction(bad); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("CandidateFraction(%v) error = %v; want ErrInvalidArgument", bad, err)
		}
	}
}

func TestParamsString(t *testing.T) {
	for _, tt := range []struct {
		p    Params
		want string
	}{
		{Params{Bands: 9, Rows: 13}, "b=9 r=13"},
		{Params{Bands: 9, Rows: 13, Probe: 1}, "b=9 r=13 probe=1"},
	} {
		if got := fmt.Sprint(tt.p); got != tt.want {
			t.Errorf("String() = %q; want %q", got, tt.want)
		}
	}
}
