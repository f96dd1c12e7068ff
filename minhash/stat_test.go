package minhash

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// makePair returns two sets of random features whose union has m elements
// and whose intersection has round(j·m), so their Jaccard similarity is known
// exactly.
func makePair(r *rand.Rand, m int, j float64) (a, b []uint64, exact float64) {
	inter := int(math.Round(j * float64(m)))
	rest := m - inter
	for i := 0; i < inter; i++ {
		f := r.Uint64()
		a = append(a, f)
		b = append(b, f)
	}
	for i := 0; i < rest; i++ {
		if i%2 == 0 {
			a = append(a, r.Uint64())
		} else {
			b = append(b, r.Uint64())
		}
	}
	return a, b, float64(inter) / float64(m)
}

// estimates returns the estimator's value for (a, b) under seeds 0..n-1.
func estimates(p Params, a, b []uint64, n int) []float64 {
	out := make([]float64, n)
	for s := range out {
		q := p
		q.Seed = uint64(s)
		h := MustNewHasher(q)
		sa := h.Sign(nil, a)
		sb := h.Sign(nil, b)
		out[s] = h.Params().Estimate(sa, sb)
	}
	return out
}

func meanVar(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
}

// ophVariance is the variance of the one-permutation estimator with
// densification by re-hashing (64-bit slots) for a union of m elements of
// which inter are shared, under ideal random hashing. Each element falls in a
// uniform bin with a uniform value in round 0; each bin left empty is then
// owned by the element of least value among those that reach it in the first
// round r ≥ 1 that any does, where an element reaches a uniform bin in rounds
// 1..K−1 and bin (b0 + r) mod K in rounds K..2K−1. A slot agrees between the
// two sets exactly when its owner (in the union) is shared, so
//
//	Ĵ = Σ_{shared x} c_x / K,  c_x = the slots x owns.
//
// The distribution of the ownership counts is sampled (only that: no hash
// function of the package is used). Since the counts are exchangeable and sum
// to K, Var Ĵ = J(1−J)/K · m²·Var(c_x)/((m−1)·K): for a multinomial
// allocation (K independent owners, classic MinHash) the last factor is 1; for
// re-hashing, where each element gets one bin a round until all are owned,
// the counts are more even and it is about 1/2 for m ≪ K. For m ≫ K every bin
// is owned in round 0 and the variance tends to J(1−J)/K·(1 − (K−1)/(m−1))
// (Li, Owen & Zhang 2012).
func ophVariance(k, m, inter int) float64 {
	key := [3]int{k, m, inter}
	if v, ok := ophVarianceCache[key]; ok {
		return v
	}
	r := rand.New(rand.NewPCG(uint64(k), uint64(m)<<20|uint64(inter)))
	// Enough trials for a relative standard error of about 1–2% in the
	// variance (sqrt(2/trials)), bounded in total work.
	trials := min(40000, max(5000, 20000000/m))
	var sum, sumSq float64
	val := make([]float64, k)
	owner := make([]int, k)
	b0 := make([]int, m)
	open := make([]bool, k) // unowned at the start of a round
	for range trials {
		for i := range owner {
			owner[i] = -1
		}
		for e := range b0 {
			b0[e] = r.IntN(k)
			if v := r.Float64(); owner[b0[e]] < 0 || v < val[b0[e]] {
				val[b0[e]], owner[b0[e]] = v, e
			}
		}
		for round := 1; ; round++ {
			n := 0
			for i, o := range owner {
				open[i] = o < 0
				n += b2i(o < 0)
			}
			if n == 0 {
				break
			}
			for e := range b0 {
				b := r.IntN(k)
				if round >= k {
					b = (b0[e] + round) % k
				}
				if v := r.Float64(); open[b] && (owner[b] < 0 || v < val[b]) {
					val[b], owner[b] = v, e
				}
			}
		}
		g := 0
		for _, o := range owner {
			if o < inter {
				g++
			}
		}
		q := float64(g) / float64(k)
		sum += q
		sumSq += q * q
	}
	n := float64(trials)
	mean := sum / n
	v := (sumSq/n - mean*mean) * n / (n - 1)
	ophVarianceCache[key] = v
	return v
}

var ophVarianceCache = map[[3]int]float64{}

// expectedVariance is the variance the theory gives for p on a union of m
// elements with inter shared. For KHash it is Params.Variance. For
// OnePermutation it is ophVariance plus the accidental agreements of
// truncated slots: each slot whose minima differ agrees with probability
// c = 2^-Bits independently, adding (1−J)·c/((1−c)·K) after the correction.
func expectedVariance(p Params, m, inter int) float64 {
	j := float64(inter) / float64(m)
	if p.Scheme == KHash {
		return p.Variance(j)
	}
	v := ophVariance(p.K, m, inter)
	if p.Bits < 64 {
		c := math.Ldexp(1, -p.Bits)
		v += (1 - j) * c / ((1 - c) * float64(p.K))
	}
	return v
}

// TestEstimatorStatistics checks, for set pairs of known Jaccard J, that the
// estimate over many seeds (independent hash functions) is unbiased and has
// the variance the theory gives.
//
// Bounds, from the math rather than from runs:
//   - V is expectedVariance (for classic MinHash P(1−P)/(K(1−c)²), c = 2^-Bits,
//     P = c + (1−c)J). The mean of n independent estimates has standard error
//     sqrt(V/n); we require |mean − J| ≤ 4 standard errors (a 6e-5 two-sided
//     chance of failing for an unbiased estimator, normal approximation).
//   - The sample variance must be within ±30% of V: the sample variance of n
//     draws has relative standard error about sqrt(2/(n−1)), 4.5% at n = 1000,
//     so ±30% is more than 6 standard errors.
//   - Every scheme's variance must be at most 1.3 times the classic
//     J(1−J)/K·(b-bit factor): no scheme is worse than K hash functions.
//     Where the sets are large against K (m ≥ 10·K for one-permutation) it
//     must also be at least 0.7 times that, i.e. within ±30%. For short sets
//     (5 to 20 elements at K = 128) densification by re-hashing spreads the
//     slots more evenly over the elements than K independent hash functions
//     do, and its variance is about half the classic one (see ophVariance);
//     the test asserts that through V and reports the ratio.
func TestEstimatorStatistics(t *testing.T) {
	if raceEnabled {
		t.Skip("no concurrency to check, and 40 times slower under the race detector")
	}
	seeds := 1000
	if testing.Short() {
		seeds = 400
	}
	issueJ := []float64{0.05, 0.2, 0.5, 0.8, 0.95}
	// Sets of exactly five elements each: union m, intersection 10 − m.
	fiveJ := []float64{1.0 / 9, 2.0 / 8, 3.0 / 7, 4.0 / 6}
	type config struct {
		name string
		p    Params
		m    int // union size; round(J·m) must be J·m exactly
		js   []float64
	}
	configs := []config{
		{"khash/k128/64bit/m200", Params{K: 128, Scheme: KHash, Bits: 64}, 200, issueJ},
		{"khash/k128/32bit/m200", Params{K: 128, Scheme: KHash, Bits: 32}, 200, issueJ},
		{"khash/k128/8bit/m200", Params{K: 128, Scheme: KHash, Bits: 8}, 200, issueJ},
		{"khash/k128/1bit/m200", Params{K: 128, Scheme: KHash, Bits: 1}, 200, issueJ},
		{"oph/k128/64bit/m2000", Params{K: 128, Scheme: OnePermutation, Bits: 64}, 2000, issueJ},
		{"oph/k128/32bit/m2000", Params{K: 128, Scheme: OnePermutation, Bits: 32}, 2000, issueJ},
		{"oph/k128/16bit/m2000", Params{K: 128, Scheme: OnePermutation, Bits: 16}, 2000, issueJ},
		{"oph/k128/8bit/m2000", Params{K: 128, Scheme: OnePermutation, Bits: 8}, 2000, issueJ},
		{"oph/k128/4bit/m2000", Params{K: 128, Scheme: OnePermutation, Bits: 4}, 2000, issueJ},
		{"oph/k128/2bit/m2000", Params{K: 128, Scheme: OnePermutation, Bits: 2}, 2000, issueJ},
		{"oph/k128/1bit/m2000", Params{K: 128, Scheme: OnePermutation, Bits: 1}, 2000, issueJ},
		{"oph/k128/64bit/m20-short", Params{K: 128, Scheme: OnePermutation, Bits: 64}, 20, issueJ},
		{"oph/k128/32bit/m20-short", Params{K: 128, Scheme: OnePermutation, Bits: 32}, 20, issueJ},
		{"oph/k128/8bit/m20-short", Params{K: 128, Scheme: OnePermutation, Bits: 8}, 20, issueJ},
		{"oph/k128/1bit/m20-short", Params{K: 128, Scheme: OnePermutation, Bits: 1}, 20, issueJ},
		{"oph/k128/32bit/five-elements", Params{K: 128, Scheme: OnePermutation, Bits: 32}, 0, fiveJ},
		{"oph/k100/64bit/m20-short-nonpow2", Params{K: 100, Scheme: OnePermutation, Bits: 64}, 20, issueJ},
		{"oph/k128/32bit/m400-some-empty", Params{K: 128, Scheme: OnePermutation, Bits: 32}, 400, issueJ},
	}
	if !testing.Short() {
		configs = append(configs, config{"oph/k256/16bit/m5000", Params{K: 256, Scheme: OnePermutation, Bits: 16}, 5000, issueJ})
	}
	for _, c := range configs {
		for _, j := range c.js {
			m := c.m
			if m == 0 { // five elements a set: |A ∪ B| = 10 − |A ∩ B|
				m = int(math.Round(10 / (1 + j)))
			}
			t.Run(fmt.Sprintf("%s/J=%.2f", c.name, j), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(m), math.Float64bits(j)))
				a, b, exact := makePair(r, m, j)
				if math.Abs(exact-j) > 1e-9 {
					t.Fatalf("union %d cannot give J = %v exactly (got %v)", m, j, exact)
				}
				inter := int(math.Round(exact * float64(m)))
				p := c.p
				p.EnsureDefaults()
				mean, v := meanVar(estimates(p, a, b, seeds))
				want := expectedVariance(p, m, inter)
				if !(want > 0) {
					t.Fatalf("expected variance %v: a degenerate configuration", want)
				}
				se := math.Sqrt(want / float64(seeds))
				if d := math.Abs(mean - exact); d > 4*se {
					t.Errorf("mean estimate %.4f; want %.4f ± %.4f (4 SE); off by %.1f SE", mean, exact, 4*se, d/se)
				}
				if ratio := v / want; ratio < 0.7 || ratio > 1.3 {
					t.Errorf("variance %.3g; want %.3g ± 30%% (ratio %.3f)", v, want, ratio)
				}
				classic := p.Variance(exact)
				if ratio := v / classic; ratio > 1.3 {
					t.Errorf("variance %.3g; want at most 1.3 × classic %.3g (ratio %.3f)", v, classic, ratio)
				}
				if p.Scheme == KHash || m >= 10*p.K {
					if ratio := v / classic; ratio < 0.7 {
						t.Errorf("variance %.3g; want classic %.3g ± 30%% (ratio %.3f)", v, classic, ratio)
					}
				}
				t.Logf("J=%.3f sets %d and %d, mean %.4f var %.3g; theory %.3g (ratio %.3f); classic %.3g (ratio %.3f)",
					exact, len(a), len(b), mean, v, want, v/want, classic, v/classic)
			})
		}
	}
}

// TestEmptyBinRate checks the reported empty-bin rate against its
// expectation: each of K bins is empty with probability (1 − 1/K)^n for a set
// of n elements.
func TestEmptyBinRate(t *testing.T) {
	for _, n := range []int{1, 5, 20, 128, 1000} {
		h := MustNewHasher(Params{K: 128})
		r := rand.New(rand.NewPCG(7, uint64(n)))
		const sets = 400
		for range sets {
			f := make([]uint64, n)
			for i := range f {
				f[i] = r.Uint64()
			}
			h.Sign(nil, f)
		}
		got := h.Metrics().EmptyBinRate()
		p := math.Pow(1-1.0/128, float64(n))
		// Bins are negatively correlated, so the binomial standard error over
		// all sets·K bins is an upper bound; allow 5 of them.
		se := math.Sqrt(p * (1 - p) / float64(sets*128))
		if math.Abs(got-p) > 5*se+1e-12 {
			t.Errorf("n=%d: empty-bin rate %.4f; want %.4f ± %.4f", n, got, p, 5*se)
		}
	}
}
