package lsh

import (
	"fmt"
	"math"
)

// Limits on Params.
const (
	// MaxProbe is the highest multi-probe level: level m emits C(Rows, m)
	// keys per band, which grows too fast beyond 2 to be worth it (see the
	// package doc).
	MaxProbe = 2

	// MaxSlots is the largest Bands·Rows accepted: no MinHash signature in
	// this project is longer.
	MaxSlots = 1 << 16

	// MaxKeysPerDoc is the largest number of keys per document,
	// Bands·C(Rows, Probe), accepted: each key costs 8 bytes per document in
	// the batch pipeline and a posting in an Index.
	MaxKeysPerDoc = 1 << 16
)

// Params is a banding of MinHash signatures: the first Bands·Rows slots are
// cut into Bands bands of Rows consecutive slots each, and two documents
// become candidates when, in at least one band, they agree on all Rows slots
// (Probe = 0) or on at least Rows−Probe of them (multi-probe, Probe ≥ 1).
//
// The zero value is not valid; build Params with a literal, [Optimal] or
// [ForRecall], and check literals with [Params.Validate]. Params is a small
// value type: methods never modify it, are safe for concurrent use, and are
// deterministic. Two documents' band keys are comparable only when both
// signatures are comparable (same shingle spec, k, scheme and seed) and were
// banded with equal Params.
type Params struct {
	// Bands is the number of bands, b. At least 1.
	Bands int

	// Rows is the number of signature slots per band, r. At least 1.
	Rows int

	// Probe is the multi-probe level m, 0..MaxProbe and less than Rows; 0
	// (the default) is plain banding with one key per band. Level m ≥ 1
	// replaces each band's key by the C(Rows, m) keys of the band with m
	// rows left out, so a pair collides in a band when at most m of its
	// rows differ. See AppendKeys and the package doc.
	Probe int
}

// Validate reports whether p is a usable banding; errors wrap
// ErrInvalidParams and name the field and the rule it broke.
func (p Params) Validate() error {
	switch {
	case p.Bands < 1:
		return fmt.Errorf("%w: Bands = %d; must be at least 1", ErrInvalidParams, p.Bands)
	case p.Rows < 1:
		return fmt.Errorf("%w: Rows = %d; must be at least 1", ErrInvalidParams, p.Rows)
	case p.Bands > MaxSlots/p.Rows:
		return fmt.Errorf("%w: Bands·Rows = %d·%d; must be at most %d", ErrInvalidParams, p.Bands, p.Rows, MaxSlots)
	case p.Probe < 0 || p.Probe > MaxProbe:
		return fmt.Errorf("%w: Probe = %d; must be in 0..%d", ErrInvalidParams, p.Probe, MaxProbe)
	case p.Probe > 0 && p.Probe >= p.Rows:
		return fmt.Errorf("%w: Probe = %d with Rows = %d; Probe must be less than Rows", ErrInvalidParams, p.Probe, p.Rows)
	case p.Bands*choose(p.Rows, p.Probe) > MaxKeysPerDoc:
		return fmt.Errorf("%w: Bands·C(Rows, Probe) = %d keys per document; must be at most %d",
			ErrInvalidParams, p.Bands*choose(p.Rows, p.Probe), MaxKeysPerDoc)
	}
	return nil
}

// String returns p as "b=9 r=13" or, with probing, "b=9 r=13 probe=1".
func (p Params) String() string {
	if p.Probe == 0 {
		return fmt.Sprintf("b=%d r=%d", p.Bands, p.Rows)
	}
	return fmt.Sprintf("b=%d r=%d probe=%d", p.Bands, p.Rows, p.Probe)
}

// Slots returns Bands·Rows, the number of signature slots the banding reads.
func (p Params) Slots() int { return p.Bands * p.Rows }

// KeysPerBand returns the number of keys AppendKeys emits per band:
// C(Rows, Probe), which is 1 without probing.
func (p Params) KeysPerBand() int { return choose(p.Rows, p.Probe) }

// KeysPerDoc returns the number of keys AppendKeys emits per document:
// Bands·C(Rows, Probe).
func (p Params) KeysPerDoc() int { return p.Bands * p.KeysPerBand() }

// choose returns the binomial coefficient C(n, k) for the small k used here
// (k ≤ MaxProbe); it saturates at math.MaxInt32 to keep Validate's product
// from overflowing.
func choose(n, k int) int {
	if k < 0 || k > n {
		return 0
	}
	c := 1
	for i := range k {
		c = c * (n - i) / (i + 1)
		if c > math.MaxInt32 {
			return math.MaxInt32
		}
	}
	return c
}

// Probability returns the probability that two documents whose signatures
// agree slot-wise with probability j (their Jaccard similarity, for MinHash)
// become candidates:
//
//	P(j) = 1 − (1 − q(j))^b,  q(j) = Σ_{i=0}^{m} C(r, i)·j^(r−i)·(1−j)^i
//
// where q is the probability that one band collides: at most m = Probe of its
// r rows differ. With Probe = 0, q(j) = j^r and P is the familiar S-curve
// 1 − (1 − j^r)^b. P is computed as −expm1(b·log(1 − q)), with log1p and
// expm1 where they keep the result accurate near 0 and near 1. Arguments
// below 0 give 0 and above 1 give 1; NaN gives NaN.
func (p Params) Probability(j float64) float64 {
	switch {
	case math.IsNaN(j):
		return j
	case j <= 0:
		return 0
	case j >= 1:
		return 1
	}
	return -math.Expm1(float64(p.Bands) * p.logBandMiss(j))
}

// missProbability returns 1 − P(j) = (1 − q(j))^b for 0 < j < 1, accurate
// also when it is tiny (j near 1), where 1 − Probability(j) would round.
func (p Params) missProbability(j float64) float64 {
	switch {
	case j <= 0:
		return 1
	case j >= 1:
		return 0
	}
	return math.Exp(float64(p.Bands) * p.logBandMiss(j))
}

// logBandMiss returns log(1 − q(j)) for 0 < j < 1, where q is the band
// collision probability. It picks whichever of q and 1 − q is small and
// computes that one directly, so neither cancels.
func (p Params) logBandMiss(j float64) float64 {
	r := float64(p.Rows)
	lj := math.Log(j)
	if p.Probe == 0 {
		q := math.Exp(r * lj) // j^r
		if q < 0.5 {
			return math.Log1p(-q)
		}
		return math.Log(-math.Expm1(r * lj)) // 1 − j^r without cancellation
	}
	// Terms t_i = C(r, i)·j^(r−i)·(1−j)^i, i = number of differing rows.
	l1j := math.Log1p(-j)
	term := func(i int) float64 {
		return math.Exp(lchoose(p.Rows, i) + float64(p.Rows-i)*lj + float64(i)*l1j)
	}
	q := 0.0
	for i := 0; i <= p.Probe; i++ {
		q += term(i)
	}
	if q < 0.5 {
		return math.Log1p(-q)
	}
	miss := 0.0
	for i := p.Rows; i > p.Probe; i-- { // small terms first
		miss += term(i)
	}
	return math.Log(miss)
}

// lchoose returns log C(n, k).
func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// FalsePositiveArea returns ∫₀ᵗ P(s) ds, the area under the S-curve below
// the threshold t: a measure of how many dissimilar pairs (similarity below
// t) become candidates, for similarities spread uniformly. t is clamped to
// [0, 1]. The integral is computed by adaptive Gauss–Kronrod (7/15-point)
// quadrature to an absolute error near 1e-13, which the tests check against
// exact rational closed forms.
func (p Params) FalsePositiveArea(t float64) float64 {
	t = clamp01(t)
	return integrate(p.Probability, 0, t)
}

// FalseNegativeArea returns ∫ₜ¹ (1 − P(s)) ds, the area above the S-curve
// from the threshold t up: a measure of how many similar pairs (similarity
// t or more) are missed. t is clamped to [0, 1]. Accuracy is as for
// FalsePositiveArea.
func (p Params) FalseNegativeArea(t float64) float64 {
	t = clamp01(t)
	return integrate(p.missProbability, t, 1)
}

// CandidateFraction returns the expected fraction of pairs that become
// candidates, given a histogram of their similarities: hist[i] is the number
// (or weight) of pairs whose similarity lies in the i-th of len(hist) equal
// bins over [0, 1]. Within a bin similarities are taken as uniform, so a bin
// contributes its weight times the mean of P over the bin. It returns 0 for
// an empty or all-zero histogram, and an error wrapping ErrInvalidArgument if
// a weight is negative, NaN or infinite. Multiply by the total weight for the
// expected number of candidate pairs.
func (p Params) CandidateFraction(hist []float64) (float64, error) {
	var total, cand float64
	n := float64(len(hist))
	for i, w := range hist {
		if !(w >= 0) || math.IsInf(w, 0) {
			return 0, fmt.Errorf("%w: histogram weight hist[%d] = %v; must be finite and non-negative", ErrInvalidArgument, i, w)
		}
		if w == 0 {
			continue
		}
		lo, hi := float64(i)/n, float64(i+1)/n
		total += w
		cand += w * integrate(p.Probability, lo, hi) / (hi - lo)
	}
	if total == 0 {
		return 0, nil
	}
	return cand / total, nil
}

func clamp01(t float64) float64 {
	return math.Min(1, math.Max(0, t))
}
