package drift

import (
	"fmt"
	"math"
)

// Thresholds of Compare's verdict.
const (
	// Alpha is the significance level: a Kolmogorov–Smirnov p-value below
	// it says the two samples are not from one distribution.
	Alpha = 0.01
	// MaterialPSI is the population stability index from which a shift is
	// material: the usual reading is below 0.1 no shift, 0.1 to 0.25 a
	// moderate one, above 0.25 a major one.
	MaterialPSI = 0.1
)

// Comparison is how two binned samples of one quantity differ. It is plain
// data, deterministic for its inputs.
type Comparison struct {
	// N1 and N2 are the sizes of the two samples.
	N1 int64 `json:"n1"`
	N2 int64 `json:"n2"`
	// D is the Kolmogorov–Smirnov statistic on the bins: the largest
	// difference between the two cumulative distributions at a bin bound,
	// in [0, 1].
	D float64 `json:"ks_d"`
	// P is the p-value of D: the probability of a D at least this large if
	// both samples came from one distribution (asymptotic Kolmogorov
	// distribution, effective size N1·N2/(N1+N2)). Binning can only lower D,
	// so P is conservative (too large, never too small). 1 when either
	// sample is empty.
	P float64 `json:"p_value"`
	// PSI is the population stability index, Σ (b_i − a_i) ln(b_i/a_i)
	// over the bins' shares a_i and b_i, each count smoothed by ½ so that an
	// empty bin stays finite. 0 when either sample is empty.
	PSI float64 `json:"psi"`
	// Median1 and Median2 are the upper bounds of the bins that hold each
	// sample's median (+Inf past the last bound, NaN when empty; omitted
	// from JSON then).
	Median1 float64 `json:"-"`
	Median2 float64 `json:"-"`
	// Moved reports a shift that is both significant (P < Alpha) and
	// material (PSI ≥ MaterialPSI).
	Moved bool `json:"moved"`
}

// Compare compares the samples a and b, which must have the same bins
// (errors wrap ErrBins otherwise).
//
// Why both statistics: the Kolmogorov–Smirnov test says whether a difference
// is more than sampling noise, but over millions of documents every
// difference is significant, however small; the population stability index
// measures how large the shift is whatever the sample sizes, but says
// nothing about noise when the samples are small. A distribution has moved
// when it has by both.
func Compare(a, b Histogram) (Comparison, error) {
	if err := a.check(); err != nil {
		return Comparison{}, err
	}
	if err := b.check(); err != nil {
		return Comparison{}, err
	}
	if len(a.Upper) != len(b.Upper) {
		return Comparison{}, fmt.Errorf("%w: %d and %d bounds", ErrBins, len(a.Upper), len(b.Upper))
	}
	for i := range a.Upper {
		if a.Upper[i] != b.Upper[i] {
			return Comparison{}, fmt.Errorf("%w: bound %d is %g and %g", ErrBins, i, a.Upper[i], b.Upper[i])
		}
	}
	c := Comparison{N1: a.N(), N2: b.N(), P: 1, Median1: a.Quantile(0.5), Median2: b.Quantile(0.5)}
	if c.N1 == 0 || c.N2 == 0 {
		return c, nil
	}
	n1, n2 := float64(c.N1), float64(c.N2)
	var cum1, cum2 float64
	k := float64(len(a.Counts))
	for i := range a.Counts {
		x, y := float64(a.Counts[i]), float64(b.Counts[i])
		cum1 += x
		cum2 += y
		c.D = max(c.D, math.Abs(cum1/n1-cum2/n2))
		p := (x + 0.5) / (n1 + 0.5*k)
		q := (y + 0.5) / (n2 + 0.5*k)
		c.PSI += (q - p) * math.Log(q/p)
	}
	ne := n1 * n2 / (n1 + n2)
	c.P = KolmogorovQ((math.Sqrt(ne) + 0.12 + 0.11/math.Sqrt(ne)) * c.D)
	c.Moved = c.P < Alpha && c.PSI >= MaterialPSI
	return c, nil
}

// KolmogorovQ returns the survival function of the Kolmogorov distribution,
// Q(λ) = 2 Σ_{j≥1} (−1)^{j−1} e^{−2j²λ²}: the probability that √n·D exceeds
// λ for large n. Q(0) = 1; the series is summed until its terms vanish.
func KolmogorovQ(lambda float64) float64 {
	if lambda < 0.2 {
		return 1 // the series converges slowly here, and Q is 1 to 1e-15
	}
	var sum, sign float64 = 0, 1
	for j := 1; j <= 100; j++ {
		term := sign * math.Exp(-2*float64(j*j)*lambda*lambda)
		sum += term
		if math.Abs(term) < 1e-16*math.Abs(sum) {
			break
		}
		sign = -sign
	}
	return min(1, max(0, 2*sum))
}
