package lsh

import (
	"errors"
	"math"
	"math/big"
	"testing"
)

// exactAreas returns FP(t) and FN(t) of plain banding (Probe 0) from the
// binomial expansion (1 − s^r)^b = Σ C(b, i)(−1)^i s^(ri), integrated term
// by term in 512-bit floating point (the alternating sum cancels at most
// about 2^128 for b ≤ 128):
//
//	FP(t) = Σ_{i=1}^{b} C(b,i)(−1)^(i+1) t^(ri+1)/(ri+1)
//	FN(t) = Σ_{i=0}^{b} C(b,i)(−1)^i (1 − t^(ri+1))/(ri+1)
func exactAreas(b, r int, t *big.Float) (fp, fn float64) {
	const prec = 512
	nf := func() *big.Float { return new(big.Float).SetPrec(prec) }
	sumFP, sumFN := nf(), nf()
	tr := nf().SetInt64(1) // t^r raised to i
	rpow := nf().SetInt64(1)
	for range r {
		rpow.Mul(rpow, t)
	}
	for i := 0; i <= b; i++ {
		c := nf().SetInt(new(big.Int).Binomial(int64(b), int64(i)))
		ti1 := nf().Mul(tr, t) // t^(ri+1)
		den := nf().SetInt64(int64(r*i + 1))
		fnTerm := nf().Sub(nf().SetInt64(1), ti1)
		fnTerm.Mul(fnTerm, c).Quo(fnTerm, den)
		fpTerm := nf().Mul(ti1, c)
		fpTerm.Quo(fpTerm, den)
		if i%2 == 0 {
			sumFN.Add(sumFN, fnTerm)
			if i > 0 {
				sumFP.Sub(sumFP, fpTerm)
			}
		} else {
			sumFN.Sub(sumFN, fnTerm)
			sumFP.Add(sumFP, fpTerm)
		}
		tr.Mul(tr, rpow)
	}
	fp, _ = sumFP.Float64()
	fn, _ = sumFN.Float64()
	return fp, fn
}

// bruteOptimal is datasketch's _optimal_param over exact areas.
func bruteOptimal(t *big.Float, k int, fpW, fnW float64) Params {
	best, bestErr := Params{}, math.Inf(1)
	for b := 1; b <= k; b++ {
		for r := 1; r <= k/b; r++ {
			fp, fn := exactAreas(b, r, t)
			if e := fpW*fp + fnW*fn; e < bestErr {
				best, bestErr = Params{Bands: b, Rows: r}, e
			}
		}
	}
	return best
}

func TestExactAreasAgree(t *testing.T) {
	// The two exact references (binomial sum and rational polynomial) agree.
	for _, p := range []Params{{Bands: 9, Rows: 13}, {Bands: 20, Rows: 5}, {Bands: 3, Rows: 30}} {
		prob, miss := exactPolys(p)
		x := big.NewRat(4, 5)
		fp, fn := exactAreas(p.Bands, p.Rows, new(big.Float).SetPrec(512).SetRat(x))
		wantFP := ratFloat(prob.integral(big.NewRat(0, 1), x))
		wantFN := ratFloat(miss.integral(x, big.NewRat(1, 1)))
		if relErr(fp, wantFP) > 1e-15 || relErr(fn, wantFN) > 1e-15 {
			t.Errorf("%v: binomial sums FP %v FN %v; rational polynomials FP %v FN %v", p, fp, fn, wantFP, wantFN)
		}
	}
}

func TestOptimalDatasketch(t *testing.T) {
	got, err := Optimal(0.8, 128, 0.5, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	want := bruteOptimal(big.NewFloat(0.8).SetPrec(512), 128, 0.5, 0.5)
	if got != want {
		t.Fatalf("Optimal(0.8, 128, 0.5, 0.5) = %v; brute force over exact areas gives %v", got, want)
	}
	// datasketch's _optimal_param gives the same.
	if want := (Params{Bands: 9, Rows: 13}); got != want {
		t.Fatalf("Optimal(0.8, 128, 0.5, 0.5) = %v; want %v as datasketch", got, want)
	}
	if p := got.Probability(0.8); math.Abs(p-0.40) > 0.005 {
		t.Errorf("P(0.8) = %v; want ≈ 0.40", p)
	}
}

func TestOptimalBruteForce(t *testing.T) {
	tests := []struct {
		t        float64
		k        int
		fpW, fnW float64
	}{
		{0.5, 128, 0.5, 0.5},
		{0.9, 128, 0.5, 0.5},
		{0.8, 64, 0.3, 0.7},
		{0.7, 100, 0.1, 0.9},
		{0.8, 256, 0.5, 0.5},
		{0.8, 16, 1, 0},
		{0.8, 16, 0, 1},
		{0.6, 1, 0.5, 0.5},
	}
	if testing.Short() || raceEnabled {
		tests = tests[:3]
	}
	for _, tt := range tests {
		got, err := Optimal(tt.t, tt.k, tt.fpW, tt.fnW)
		if err != nil {
			t.Fatal(err)
		}
		want := bruteOptimal(new(big.Float).SetPrec(512).SetFloat64(tt.t), tt.k, tt.fpW, tt.fnW)
		if got != want {
			t.Errorf("Optimal(%v, %d, %v, %v) = %v; brute force gives %v", tt.t, tt.k, tt.fpW, tt.fnW, got, want)
		}
	}
}

// TestOptimalExtremes: with fnWeight 0 the error is the FP area, least for
// the most selective banding (b = 1, r = k); with fpWeight 0 it is the FN
// area, least for the most permissive one (b = k, r = 1).
func TestOptimalExtremes(t *testing.T) {
	if got, _ := Optimal(0.8, 16, 1, 0); got != (Params{Bands: 1, Rows: 16}) {
		t.Errorf("Optimal with fnWeight 0 = %v; want b=1 r=16 (least FP area)", got)
	}
	if got, _ := Optimal(0.8, 16, 0, 1); got != (Params{Bands: 16, Rows: 1}) {
		t.Errorf("Optimal with fpWeight 0 = %v; want b=16 r=1 (least FN area)", got)
	}
	if got, _ := Optimal(0.8, 1, 0.5, 0.5); got != (Params{Bands: 1, Rows: 1}) {
		t.Errorf("Optimal with k = 1 = %v; want b=1 r=1", got)
	}
}

func TestOptimalErrors(t *testing.T) {
	tests := []struct {
		t        float64
		k        int
		fpW, fnW float64
	}{
		{0, 128, 0.5, 0.5}, {1, 128, 0.5, 0.5}, {math.NaN(), 128, 0.5, 0.5}, {-0.5, 128, 0.5, 0.5},
		{0.8, 0, 0.5, 0.5}, {0.8, MaxSlots + 1, 0.5, 0.5},
		{0.8, 128, -1, 0.5}, {0.8, 128, 0.5, math.Inf(1)}, {0.8, 128, math.NaN(), 1}, {0.8, 128, 0, 0},
	}
	for _, tt := range tests {
		if _, err := Optimal(tt.t, tt.k, tt.fpW, tt.fnW); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Optimal(%v, %d, %v, %v) error = %v; want ErrInvalidArgument", tt.t, tt.k, tt.fpW, tt.fnW, err)
		}
	}
}

func TestForRecallHandChecked(t *testing.T) {
	tests := []struct {
		t      float64
		k      int
		recall float64
		want   Params
	}{
		// k = 1: only b = r = 1, P(0.5) = 0.5.
		{0.5, 1, 0.5, Params{Bands: 1, Rows: 1}},
		// k = 2: (1,1) P = 0.5 and (1,2) P = 0.25 miss; (2,1) P = 0.75.
		{0.5, 2, 0.7, Params{Bands: 2, Rows: 1}},
		// k = 4, recall 0.5: (1,1) has FP = ∫₀^½ s = 0.125; (2,1) 0.208, (3,1), (4,1) more;
		// (2,2) P = 0.4375 and r ≥ 2 with b = 1 miss.
		{0.5, 4, 0.5, Params{Bands: 1, Rows: 1}},
		// t = 0.8, recall 0.95, k = 128: with r = 7, b = 12 gives
		// 1 − (1 − 0.8⁷)¹² = 0.9406 and b = 13 gives 0.9531.
		{0.8, 128, 0.95, Params{Bands: 13, Rows: 7}},
	}
	for _, tt := range tests {
		got, err := ForRecall(tt.t, tt.k, tt.recall)
		if err != nil || got != tt.want {
			t.Errorf("ForRecall(%v, %d, %v) = %v, %v; want %v", tt.t, tt.k, tt.recall, got, err, tt.want)
		}
		if err == nil && got.Probability(tt.t) < tt.recall {
			t.Errorf("ForRecall(%v, %d, %v) = %v with P = %v below the recall", tt.t, tt.k, tt.recall, got, got.Probability(tt.t))
		}
	}
}

func TestForRecallBruteForce(t *testing.T) {
	tests := []struct {
		t      float64
		k      int
		recall float64
	}{
		{0.8, 128, 0.95}, {0.5, 64, 0.9}, {0.7, 32, 0.5}, {0.8, 128, 0.99}, {0.9, 256, 0.999},
	}
	if testing.Short() || raceEnabled {
		tests = tests[:3]
	}
	for _, tt := range tests {
		got, err := ForRecall(tt.t, tt.k, tt.recall)
		if err != nil {
			t.Fatal(err)
		}
		// Brute force: every b·r ≤ k meeting the recall, least exact FP area,
		// ties to fewer slots then fewer bands.
		tf := new(big.Float).SetPrec(512).SetFloat64(tt.t)
		want, wantFP := Params{}, math.Inf(1)
		for b := 1; b <= tt.k; b++ {
			for r := 1; r <= tt.k/b; r++ {
				p := Params{Bands: b, Rows: r}
				if p.Probability(tt.t) < tt.recall {
					continue
				}
				fp, _ := exactAreas(b, r, tf)
				if fp < wantFP {
					want, wantFP = p, fp
				}
			}
		}
		if got != want {
			t.Errorf("ForRecall(%v, %d, %v) = %v; brute force gives %v", tt.t, tt.k, tt.recall, got, want)
		}
	}
}

func TestForRecallErrors(t *testing.T) {
	if _, err := ForRecall(0.5, 1, 0.6); !errors.Is(err, ErrNoParams) {
		t.Errorf("ForRecall(0.5, 1, 0.6) error = %v; want ErrNoParams", err)
	}
	for _, tt := range []struct {
		t      float64
		k      int
		recall float64
	}{{0, 8, 0.5}, {1, 8, 0.5}, {0.5, 0, 0.5}, {0.5, 8, 0}, {0.5, 8, 1.5}, {0.5, 8, math.NaN()}} {
		if _, err := ForRecall(tt.t, tt.k, tt.recall); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("ForRecall(%v, %d, %v) error = %v; want ErrInvalidArgument", tt.t, tt.k, tt.recall, err)
		}
	}
}
