package simhash

import "math"

// The unit-weight model of SimHash distances (package doc, "Fingerprints"):
// two sets A and B with unit weights have cosine |A∩B| / √(|A|·|B|), which
// for a given Jaccard similarity J is least, 2J/(1+J), when |A| = |B|; each
// of the 64 bits then differs with probability θ/π, θ the angle, so the
// distance is Binomial(64, θ/π). On real text the relation is looser (TF
// weights, unequal lengths), so a driver measures it on a sample (package
// plan) and uses the model only where one number must stand for a pair.

// BitFlip returns the unit-weight model's probability that a bit of two
// fingerprints differs at Jaccard similarity j: θ/π with cos θ = 2j/(1+j),
// the cosine of two equal-size sets at Jaccard j (the least cosine sets at
// Jaccard j can have, so the model is pessimistic).
func BitFlip(j float64) float64 {
	return math.Acos(min(1, 2*j/(1+j))) / math.Pi
}

// ModelRecall returns the unit-weight model's probability that a pair at
// Jaccard similarity j is within Hamming distance k: P(X ≤ k) for X ~
// Binomial(64, BitFlip(j)).
func ModelRecall(j float64, k int) float64 {
	return binomialCDF(64, BitFlip(j), k)
}

// ModelJaccard returns the Jaccard similarity at which the unit-weight
// model's expected distance 64·BitFlip(J) is d: with c = cos(π·d/64),
// J = c/(2 − c), and 0 from d = 32 (orthogonal vectors) up. It is the
// Jaccard-scale number a single fingerprint pair can offer: 1 at d = 0,
// 0.974 at 2, 0.932 at 4, 0.858 at 8. It is a point on the model, not an
// estimate with a known error: one pair's distance has a standard deviation
// of about 2 bits at J = 0.9, so the same J spans d = 4…9.
func ModelJaccard(d int) float64 {
	if d >= 32 {
		return 0
	}
	c := math.Cos(math.Pi * float64(d) / 64)
	return c / (2 - c)
}

// binomialCDF returns P(X ≤ k), X ~ Binomial(n, p).
func binomialCDF(n int, p float64, k int) float64 {
	switch {
	case k < 0:
		return 0
	case k >= n || p <= 0:
		return 1
	case p >= 1:
		return 0
	}
	// Terms by the ratio of successive probabilities, from P(X = 0).
	term := math.Pow(1-p, float64(n))
	sum := term
	for i := 1; i <= k; i++ {
		term *= float64(n-i+1) / float64(i) * p / (1 - p)
		sum += term
	}
	return min(sum, 1)
}
