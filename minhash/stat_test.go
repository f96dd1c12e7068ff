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

// ophVariance is the variance of the one-permutation estimator with optimal
// densification (64-bit slots) for a union of m elements of which inter are
// shared, under ideal random hashing. Given where the elements fall, let U be
// the number of non-empty bins of the union and G the number whose minimum is
// shared. An own slot agrees exactly when its bin's minimum is shared; each of
// the K−U densified slots borrows from the first union-non-empty bin of its own
// independent probe sequence, which is uniform over the U bins, so it agrees
// with probability G/U independently of the others. Hence
//
//	E[Ĵ | bins] = G/U,  Var[Ĵ | bins] = (K−U)·(G/U)(1−G/U)/K²,
//	Var Ĵ = Var(G/U) + E[(K−U)(G/U)(1−G/U)]/K².
//
// The outer expectation over where m elements fall among K bins is taken by
// sampling that placement (only that: no hash function of the package is
// used). For m ≫ K this tends to J(1−J)/K·(1 − (K−1)/(m−1)) (Li, Owen & Zhang
// 2012); for m of 5 to 50 and K = 128 it is 1.2 to 1.6 times J(1−J)/K, because
// two elements that share a bin hide one of them from every slot.
func ophVariance(k, m, inter int) float64 {
	key := [3]int{k, m, inter}
	if v, ok := ophVarianceCache[key]; ok {
		return v
	}
	r := rand.New(rand.NewPCG(uint64(k), uint64(m)<<20|uint64(inter)))
	// Enough placements for a relative standard error of about 1–2% in the
	// variance (sqrt(2/trials)), bounded in total work.
	trials := min(100000, max(5000, 20000000/m))
	var sum, sumSq, inner float64
	min := make([]float64, k)
	shared := make([]bool, k)
	for range trials {
		for i := range min {
			min[i] = 2
		}
		for e := 0; e < m; e++ {
			b, v := r.IntN(k), r.Float64()
			if v < min[b] {
				min[b], shared[b] = v, e < inter
			}
		}
		u, g := 0, 0
		for i, v := range min {
			if v < 2 {
				u++
				if shared[i] {
					g++
				}
			}
		}
		q := float64(g) / float64(u)
		sum += q
		sumSq += q * q
		inner += float64(k-u) * q * (1 - q)
	}
	n := float64(trials)
	mean := sum / n
	v := sumSq/n - mean*mean + inner/n/float64(k*k)
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
//   - Where the sets are large against K (m ≥ 10·K for one-permutation) the
//     variance must also be within ±30% of the classic J(1−J)/K·(b-bit factor),
//     i.e. one-permutation hashing loses nothing against K hash functions. For
//     sets of 5 to 50 elements at K = 128 densified one-permutation hashing has
//     1.2–1.6 times that variance (see ophVariance), which the test asserts
//     through V and reports.
func TestEstimatorStatistics(t *testing.T) {
	seeds := 1000
	if testing.Short() {
		seeds = 400
	}
	type config struct {
		name string
		p    Params
		m    int // union size
	}
	configs := []config{
		{"khash/k128/64bit/m200", Params{K: 128, Scheme: KHash, Bits: 64}, 200},
		{"khash/k128/32bit/m200", Params{K: 128, Scheme: KHash, Bits: 32}, 200},
		{"khash/k128/1bit/m200", Params{K: 128, Scheme: KHash, Bits: 1}, 200},
		{"oph/k128/64bit/m2000", Params{K: 128, Scheme: OnePermutation, Bits: 64}, 2000},
		{"oph/k128/32bit/m2000", Params{K: 128, Scheme: OnePermutation, Bits: 32}, 2000},
		{"oph/k128/8bit/m2000", Params{K: 128, Scheme: OnePermutation, Bits: 8}, 2000},
		{"oph/k128/4bit/m2000", Params{K: 128, Scheme: OnePermutation, Bits: 4}, 2000},
		{"oph/k128/2bit/m2000", Params{K: 128, Scheme: OnePermutation, Bits: 2}, 2000},
		{"oph/k128/1bit/m2000", Params{K: 128, Scheme: OnePermutation, Bits: 1}, 2000},
		{"oph/k128/64bit/m20-short", Params{K: 128, Scheme: OnePermutation, Bits: 64}, 20},
		{"oph/k128/32bit/m10-short", Params{K: 128, Scheme: OnePermutation, Bits: 32}, 10},
		{"oph/k100/64bit/m20-short-nonpow2", Params{K: 100, Scheme: OnePermutation, Bits: 64}, 20},
	}
	if !testing.Short() {
		configs = append(configs, config{"oph/k256/16bit/m5000", Params{K: 256, Scheme: OnePermutation, Bits: 16}, 5000})
	}
	for _, c := range configs {
		for _, j := range []float64{0.05, 0.2, 0.5, 0.8, 0.95} {
			t.Run(fmt.Sprintf("%s/J=%.2f", c.name, j), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(c.m), math.Float64bits(j)))
				a, b, exact := makePair(r, c.m, j)
				inter := int(math.Round(exact * float64(c.m)))
				p := c.p
				p.EnsureDefaults()
				mean, v := meanVar(estimates(p, a, b, seeds))
				want := expectedVariance(p, c.m, inter)
				se := math.Sqrt(want / float64(seeds))
				if d := math.Abs(mean - exact); d > 4*se {
					t.Errorf("mean estimate %.4f; want %.4f ± %.4f (4 SE); off by %.1f SE", mean, exact, 4*se, d/se)
				}
				if ratio := v / want; ratio < 0.7 || ratio > 1.3 {
					t.Errorf("variance %.3g; want %.3g ± 30%% (ratio %.3f)", v, want, ratio)
				}
				classic := p.Variance(exact)
				if p.Scheme == KHash || c.m >= 10*p.K {
					if ratio := v / classic; ratio < 0.7 || ratio > 1.3 {
						t.Errorf("variance %.3g; want classic %.3g ± 30%% (ratio %.3f)", v, classic, ratio)
					}
				}
				t.Logf("J=%.3f mean %.4f var %.3g; theory %.3g (ratio %.3f); classic %.3g (ratio %.3f)", exact, mean, v, want, v/want, classic, v/classic)
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
