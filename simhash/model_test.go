package simhash

import (
	"math"
	"testing"
)

func TestBinomialCDF(t *testing.T) {
	for _, c := range []struct {
		n int
		p float64
	}{{64, 0.05}, {64, 0.25}, {64, 0.5}, {10, 0.9}} {
		sum := 0.0
		for k := 0; k <= c.n; k++ {
			lg1, _ := math.Lgamma(float64(c.n + 1))
			lg2, _ := math.Lgamma(float64(k + 1))
			lg3, _ := math.Lgamma(float64(c.n - k + 1))
			sum += math.Exp(lg1 - lg2 - lg3 + float64(k)*math.Log(c.p) + float64(c.n-k)*math.Log1p(-c.p))
			if got := binomialCDF(c.n, c.p, k); math.Abs(got-sum) > 1e-12 {
				t.Fatalf("binomialCDF(%d, %v, %d) = %v; want %v", c.n, c.p, k, got, sum)
			}
		}
	}
	if binomialCDF(64, 0.3, -1) != 0 || binomialCDF(64, 0, 0) != 1 || binomialCDF(64, 1, 63) != 0 {
		t.Error("edge cases wrong")
	}
	// The model: identical sets never differ, disjoint ones differ in half
	// the bits; at J = 0.8 the mean distance is 9.7 bits (the package doc's
	// table).
	if BitFlip(1) != 0 || BitFlip(0) != 0.5 {
		t.Errorf("BitFlip(1), (0) = %v, %v; want 0, 0.5", BitFlip(1), BitFlip(0))
	}
	if d := 64 * BitFlip(0.8); math.Abs(d-9.7) > 0.05 {
		t.Errorf("model distance at J = 0.8: %.3f; want 9.7", d)
	}
	if r := ModelRecall(0.8, 64); r != 1 {
		t.Errorf("ModelRecall(0.8, 64) = %v; want 1", r)
	}
}

// TestModelJaccard: ModelJaccard inverts the model's expected distance,
// falls with d, and is 0 from orthogonality on.
func TestModelJaccard(t *testing.T) {
	prev := 2.0
	for d := 0; d <= 64; d++ {
		j := ModelJaccard(d)
		switch {
		case j < 0 || j > 1 || j > prev || (j == prev && d < 32):
			t.Fatalf("ModelJaccard(%d) = %v after %v; want in [0, 1] and falling", d, j, prev)
		case d >= 32 && j != 0:
			t.Fatalf("ModelJaccard(%d) = %v; want 0", d, j)
		case d < 32 && math.Abs(64*BitFlip(j)-float64(d)) > 1e-9:
			t.Fatalf("64·BitFlip(ModelJaccard(%d)) = %v; want %d", d, 64*BitFlip(j), d)
		}
		prev = j
	}
	if ModelJaccard(0) != 1 {
		t.Errorf("ModelJaccard(0) = %v; want 1", ModelJaccard(0))
	}
}
