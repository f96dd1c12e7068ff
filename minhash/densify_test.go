package minhash

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neardup/neardup/shingle"
)

// densifyTheory is the cost of one-permutation hashing with densification
// by re-hashing for a set of n distinct features in K bins, under ideal
// hashing (each feature's bin uniform and independent in every round).
//
// Round 0 throws n balls into K bins; every round r = 1..K−1 throws n more,
// independently. So after rounds 0..t the bins have received n(t+1)
// independent uniform balls, and the number R of densification rounds (the
// first t at whose end no bin is empty) satisfies
//
//	P(R ≤ t) = P(n(t+1) balls cover K bins),
//
// the coupon collector's: R = ⌈T/n⌉ − 1 for T the number of balls that
// first covers K bins, so E[R] ≈ K·H_K/n − 1/2 and the features hashed,
// n·(1 + R) ≈ K·H_K + n/2, hardly depend on n. The occupancy distribution
// after m balls is computed exactly (a Markov chain on the number of occupied
// bins), which gives R's distribution with no approximation for t < K; rounds
// K..2K−1 walk the bins instead, and the mass there is tail (reported; below
// 10^-6 for n ≥ 20 at K = 128).
type densifyTheory struct {
	k, n int
	// E0 is the number of bins empty after round 0: mean K(1−1/K)^n.
	e0Mean, e0Var float64
	// P is the probability that a given empty bin is filled in a round,
	// 1 − (1 − 1/K)^n.
	p float64
	// R, the densification rounds: P(R = t) for t < K, and its moments.
	rProb            []float64
	rMean, rVar, rM4 float64
	tail             float64 // P(R ≥ K)
	// OpenScans is E Σ_{r=1..R} |bins empty after round r−1| = E0/p: the
	// work of a loop that re-checks every still-empty bin after each round.
	openScans float64
}

func newDensifyTheory(k, n int) densifyTheory {
	th := densifyTheory{k: k, n: n}
	q := math.Pow(1-1/float64(k), float64(n))
	th.p = 1 - q
	occ := make([]float64, k+1) // occ[j] = P(j bins occupied)
	occ[0] = 1
	next := make([]float64, k+1)
	throw := func() {
		for j := range next {
			next[j] = occ[j] * float64(j) / float64(k)
			if j > 0 {
				next[j] += occ[j-1] * float64(k-j+1) / float64(k)
			}
		}
		occ, next = next, occ
	}
	for range n {
		throw()
	}
	for j, pj := range occ {
		e := float64(k - j)
		th.e0Mean += pj * e
		th.e0Var += pj * e * e
	}
	th.e0Var -= th.e0Mean * th.e0Mean
	th.openScans = th.e0Mean / th.p
	covered := occ[k] // P(R ≤ 0)
	th.rProb = append(th.rProb, covered)
	for t := 1; t < k; t++ {
		for range n {
			throw()
		}
		th.rProb = append(th.rProb, occ[k]-covered)
		covered = occ[k]
	}
	th.tail = 1 - covered
	for t, pt := range th.rProb {
		th.rMean += pt * float64(t)
	}
	for t, pt := range th.rProb {
		d := float64(t) - th.rMean
		th.rVar += pt * d * d
		th.rM4 += pt * d * d * d * d
	}
	return th
}

// gumbelRounds is the usual approximation of E[R]: the maximum of E0
// geometric variables of success probability p, ln E0/λ + γ/λ + 1/2 with
// λ = −ln(1−p).
func (th densifyTheory) gumbelRounds() float64 {
	lambda := -math.Log(1 - th.p)
	return math.Log(th.e0Mean)/lambda + 0.5772156649/lambda + 0.5
}

// couponRounds is E[R] ≈ K·H_K/n − 1/2.
func (th densifyTheory) couponRounds() float64 {
	h := 0.0
	for i := 1; i <= th.k; i++ {
		h += 1 / float64(i)
	}
	return float64(th.k)*h/float64(th.n) - 0.5
}

// TestDensifyTheory checks the exact computation against the closed forms
// it must reproduce: E0 = K(1−1/K)^n, Var E0 from the pairwise occupancy,
// and the coupon collector's K·H_K balls for the rounds.
func TestDensifyTheory(t *testing.T) {
	for _, n := range []int{20, 30, 40, 50, 200} {
		th := newDensifyTheory(128, n)
		k := float64(th.k)
		q1, q2 := math.Pow(1-1/k, float64(n)), math.Pow(1-2/k, float64(n))
		if want := k * q1; math.Abs(th.e0Mean-want) > 1e-9*want {
			t.Errorf("n=%d: E[E0] = %v; want K(1−1/K)^n = %v", n, th.e0Mean, want)
		}
		if want := k*(k-1)*q2 + k*q1 - k*k*q1*q1; math.Abs(th.e0Var-want) > 1e-6*want {
			t.Errorf("n=%d: Var E0 = %v; want %v", n, th.e0Var, want)
		}
		// E[T] = K·H_K exactly, and n·R < T ≤ n·(R+1), so
		// E[T]/n − 1 ≤ E[R] < E[T]/n (up to the tail).
		kh := th.couponRounds() + 0.5
		if th.rMean < kh-1-1e-9 || th.rMean >= kh {
			t.Errorf("n=%d: E[R] = %v; want in [K·H_K/n − 1, K·H_K/n) = [%v, %v)", n, th.rMean, kh-1, kh)
		}
		if th.tail > 1e-6 {
			t.Errorf("n=%d: P(R ≥ K) = %v; want below 1e-6 (the table would be inexact)", n, th.tail)
		}
		t.Logf("n=%3d: E0 %.2f (sd %.2f)  p %.4f  E[R] %.3f (sd %.3f; Gumbel %.2f, coupon %.2f)  hashes n(1+R) %.0f  open scans E0/p %.0f  tail %.1e",
			n, th.e0Mean, math.Sqrt(th.e0Var), th.p, th.rMean, math.Sqrt(th.rVar), th.gumbelRounds(), th.couponRounds(),
			float64(n)*(1+th.rMean), th.openScans, th.tail)
	}
}

// TestDensifyRoundsMatchTheory measures the rounds the Hasher runs
// (Metrics.Rounds) and the bins it finds empty (Metrics.EmptyBins) on random
// sets of n distinct features against densifyTheory.
//
// Bounds from the math: the mean of N independent sets has standard error
// sd/√N with sd from the exact distribution; the sample variance has
// standard error √((μ4 − σ⁴)/N). Each must be within z = 4.5 standard errors
// (a two-sided chance below 7e-6 per check for a correct implementation,
// normal approximation). At N = 20,000 that is ±0.26 rounds for n = 20 and
// ±0.07 for n = 50: one round too many or too few fails.
func TestDensifyRoundsMatchTheory(t *testing.T) {
	const z = 4.5
	sets := 20000
	if testing.Short() {
		sets = 4000
	}
	for _, n := range []int{20, 30, 40, 50} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			th := newDensifyTheory(128, n)
			h := MustNewHasher(Params{K: 128})
			r := rand.New(rand.NewPCG(12, uint64(n)))
			f := make([]uint64, n)
			var sig Signature
			var sumR, sumR2, sumE float64
			for range sets {
				for i := range f {
					f[i] = r.Uint64()
				}
				m0 := h.Metrics()
				sig = h.Sign(sig[:0], f)
				m1 := h.Metrics()
				rounds := float64(m1.Rounds - m0.Rounds)
				sumR += rounds
				sumR2 += rounds * rounds
				sumE += float64(m1.EmptyBins - m0.EmptyBins)
			}
			N := float64(sets)
			meanR, meanE := sumR/N, sumE/N
			varR := (sumR2 - N*meanR*meanR) / (N - 1)
			check := func(what string, got, want, se float64) {
				t.Helper()
				if d := math.Abs(got - want); d > z*se {
					t.Errorf("%s %.4f; want %.4f ± %.4f (%.1f SE); off by %.1f SE", what, got, want, z*se, z, d/se)
				}
			}
			check("mean rounds", meanR, th.rMean, math.Sqrt(th.rVar/N))
			check("variance of rounds", varR, th.rVar, math.Sqrt((th.rM4-th.rVar*th.rVar)/N))
			check("mean empty bins", meanE, th.e0Mean, math.Sqrt(th.e0Var/N))
			t.Logf("%d sets: rounds %.3f (theory %.3f), var %.2f (%.2f), empty bins %.2f (%.2f)",
				sets, meanR, th.rMean, varR, th.rVar, meanE, th.e0Mean)
		})
	}
}

// TestDensifyRoundsRealText does the same on short real texts through
// SignText (the fused path neardup sign takes): pieces of the bundled
// articles with 20 to 50 word 5-grams, no two sharing a feature (so that
// they are independent under ideal hashing). Each piece has its own n, so
// the sums of rounds and empty bins are compared with the sums of their
// expectations, within z = 4.5 standard errors of the summed variances.
func TestDensifyRoundsRealText(t *testing.T) {
	const z = 4.5
	sh := shingle.MustNew(shingle.Prose)
	h := MustNewHasher(Params{K: 128})
	theory := map[int]densifyTheory{}
	seen := map[uint64]bool{}
	var sumR, wantR, varR, sumE, wantE, varE float64
	pieces := 0
	var sig Signature
	var fs []uint64
	var ns []int
	for n := 20; n <= 50; n++ {
		ns = append(ns, n)
	}
	for _, text := range cutShort(t, ns, 5000) {
		fs = sh.AppendFeatures(fs[:0], text)
		n := len(fs) // distinct: cutShort checks
		shared := false
		for _, f := range fs {
			shared = shared || seen[f]
			seen[f] = true
		}
		if shared {
			continue
		}
		th, ok := theory[n]
		if !ok {
			th = newDensifyTheory(128, n)
			theory[n] = th
		}
		m0 := h.Metrics()
		sig = h.SignText(sig[:0], sh, text)
		m1 := h.Metrics()
		sumR += float64(m1.Rounds - m0.Rounds)
		sumE += float64(m1.EmptyBins - m0.EmptyBins)
		wantR += th.rMean
		varR += th.rVar
		wantE += th.e0Mean
		varE += th.e0Var
		pieces++
	}
	if pieces < 1000 {
		t.Fatalf("only %d independent pieces of text; want at least 1000", pieces)
	}
	N := float64(pieces)
	if d := math.Abs(sumR - wantR); d > z*math.Sqrt(varR) {
		t.Errorf("%d pieces: mean rounds %.4f; want %.4f ± %.4f (%.1f SE)", pieces, sumR/N, wantR/N, z*math.Sqrt(varR)/N, z)
	}
	if d := math.Abs(sumE - wantE); d > z*math.Sqrt(varE) {
		t.Errorf("%d pieces: mean empty bins %.4f; want %.4f ± %.4f (%.1f SE)", pieces, sumE/N, wantE/N, z*math.Sqrt(varE)/N, z)
	}
	t.Logf("%d pieces of 20–50 features: rounds %.3f (theory %.3f ± %.3f SE), empty bins %.2f (%.2f ± %.2f SE)",
		pieces, sumR/N, wantR/N, math.Sqrt(varR)/N, sumE/N, wantE/N, math.Sqrt(varE)/N)
}

// referenceSlots computes the one-permutation slots of a feature set
// straight from the definition (docs/signature-format.md §3, the
// "equivalently" form): each bin empty in round 0 takes the least key over
// all features and all rounds 1..2K−1 that reach it. No shortcut of the
// Hasher's (early stop, skipped bins, batching) is used.
func referenceSlots(p Params, features []uint64) []uint64 {
	p.EnsureDefaults()
	state := p.Seed
	mult := splitmix64(&state) | 1
	dseed := splitmix64(&state)
	k := uint64(p.K)
	bin := func(v uint64) uint64 { hi, _ := bits.Mul64(v, k); return hi }
	slots := make([]uint64, p.K)
	for i := range slots {
		slots[i] = empty
	}
	for _, f := range features {
		v := f * mult
		slots[bin(v)] = min(slots[bin(v)], v)
	}
	if len(features) == 0 {
		return slots
	}
	keys := make([]uint64, p.K)
	for i := range keys {
		keys[i] = empty
	}
	for r := uint64(1); r < 2*k; r++ {
		m := fmix64(dseed+r) | 1
		for _, f := range features {
			v := f * m
			b := bin(v)
			if r >= k {
				b = (bin(f*mult) + r) % k
			}
			keys[b] = min(keys[b], r<<47|v>>17)
		}
	}
	for i, v := range slots {
		if v == empty {
			v = keys[i]
		}
		slots[i] = fmix64(v)
	}
	return slots
}

// TestDensifyMatchesDefinition compares the Hasher's slots with
// referenceSlots on random sets of 1 to 400 features (some with repeats)
// for several K, powers of two and not, odd and even, under several seeds and
// slot widths: every path of the densification (rounds below K, the walk of
// rounds K..2K−1, sets that leave no bin empty) and of the finalisation.
func TestDensifyMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for _, k := range []int{1, 2, 3, 8, 64, 100, 128, 256} {
		for _, c := range []struct {
			seed uint64
			bits int
		}{{0, 64}, {42, 64}, {0, 32}, {7, 8}} {
			seed := c.seed
			p := Params{K: k, Seed: seed, Bits: c.bits}
			h := MustNewHasher(p)
			mask := uint64(1)<<c.bits - 1 // all ones for 64
			for _, n := range []int{1, 2, 3, 5, 10, 20, 29, 33, 50, 90, 200, 400} {
				for trial := range 4 {
					f := make([]uint64, n)
					for i := range f {
						f[i] = r.Uint64()
						if trial == 3 && i > 0 && i%3 == 0 {
							f[i] = f[i-1] // repeats change nothing
						}
					}
					want := referenceSlots(p, f)
					for i := range want {
						want[i] &= mask
					}
					got := h.Params().AppendSlots(nil, h.Sign(nil, f))
					if !slices.Equal(got, want) {
						t.Fatalf("K=%d seed=%d bits=%d n=%d trial %d: slots differ from the definition", k, seed, c.bits, n, trial)
					}
				}
			}
		}
	}
}

// TestDensifyLazyMatchesDefinition covers sets of more than 32·K features
// that still leave bins empty, which the Hasher densifies as features
// arrive (goLazy, pushRounds) rather than from kept features: features are
// chosen to reach only the first half of the bins in round 0, pushed in
// chunks, and the slots compared with referenceSlots.
func TestDensifyLazyMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 13))
	for _, k := range []int{8, 100, 128} {
		p := Params{K: k, Bits: 64}
		h := MustNewHasher(p)
		var f []uint64
		for len(f) < 40*k {
			x := r.Uint64()
			if b, _ := bits.Mul64(x*h.mult, uint64(k)); int(b) < k/2 {
				f = append(f, x)
			}
		}
		h.Reset()
		for c := range slices.Chunk(f, 50) {
			h.Push(c)
		}
		if !h.lazy {
			t.Fatalf("K=%d: %d features did not switch the Hasher to densifying as they arrive", k, len(f))
		}
		got := p.AppendSlots(nil, h.AppendSignature(nil))
		if want := referenceSlots(p, f); !slices.Equal(got, want) {
			t.Fatalf("K=%d, %d features in half the bins: slots differ from the definition", k, len(f))
		}
	}
}

// TestDensifyFirstMatchesDefinition: under DensifyFirst(n), the first n
// slots are referenceSlots' (the whole densification's) and the others zero, for every K, seed,
// width and set size of TestDensifyMatchesDefinition's, n from 1 to K (and
// past it: whole signatures); Rounds never exceed those of the whole
// signature of the same set; and DensifyFirst(0) restores whole
// signatures.
func TestDensifyFirstMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 17))
	for _, k := range []int{1, 3, 64, 100, 128} {
		for _, c := range []struct {
			seed uint64
			bits int
		}{{0, 64}, {0, 32}, {7, 8}} {
			p := Params{K: k, Seed: c.seed, Bits: c.bits}
			h := MustNewHasher(p)
			mask := uint64(1)<<c.bits - 1
			for _, n := range []int{1, 2, 5, 20, 33, 50, 200} {
				for _, need := range []int{1, k / 2, 3 * k / 4, k - 1, k, k + 5} {
					f := make([]uint64, n)
					for i := range f {
						f[i] = r.Uint64()
					}
					want := referenceSlots(p, f)
					for i := range want {
						want[i] &= mask
					}
					m0 := h.Metrics()
					h.Sign(nil, f)
					whole := h.Metrics().Rounds - m0.Rounds
					h.DensifyFirst(need)
					m0 = h.Metrics()
					got := p.AppendSlots(nil, h.Sign(nil, f))
					first := h.Metrics().Rounds - m0.Rounds
					h.DensifyFirst(0)
					upto := need // the slots defined: all for need ≤ 0 (whole signatures)
					if need <= 0 || need > k {
						upto = k
					}
					if !slices.Equal(got[:upto], want[:upto]) {
						t.Fatalf("K=%d seed=%d bits=%d n=%d first %d: the first slots differ from the definition", k, c.seed, c.bits, n, need)
					}
					if slices.ContainsFunc(got[upto:], func(v uint64) bool { return v != 0 }) {
						t.Fatalf("K=%d seed=%d bits=%d n=%d first %d: a slot past the first is not zero", k, c.seed, c.bits, n, need)
					}
					if first > whole {
						t.Fatalf("K=%d n=%d first %d: %d rounds, more than the whole signature's %d", k, n, need, first, whole)
					}
					if need >= k && first != whole {
						t.Fatalf("K=%d n=%d first %d: %d rounds; the whole signature takes %d", k, n, need, first, whole)
					}
					if again := p.AppendSlots(nil, h.Sign(nil, f)); !slices.Equal(again, want) {
						t.Fatalf("K=%d n=%d: DensifyFirst(0) did not restore the whole signature", k, n)
					}
				}
			}
		}
	}
}

// densifyFirstRounds is the distribution of the rounds R that densification
// runs until m given bins of K (the first m) are filled, for sets of n
// distinct features under ideal hashing, as newDensifyTheory's for m = K:
// a ball lands in one of the m bins with probability m/K, uniformly among
// them, so the chain on how many of them are occupied moves up with
// probability (m − j)/K. Returns E[R] and Var R (rounds below K; the tail
// past K is below 10^-6 for the n tested).
func densifyFirstRounds(k, n, m int) (mean, variance float64) {
	occ := make([]float64, m+1)
	occ[0] = 1
	next := make([]float64, m+1)
	throw := func() {
		for j := range next {
			next[j] = occ[j] * float64(k-m+j) / float64(k)
			if j > 0 {
				next[j] += occ[j-1] * float64(m-j+1) / float64(k)
			}
		}
		occ, next = next, occ
	}
	for range n {
		throw()
	}
	var probs []float64
	covered := occ[m]
	probs = append(probs, covered)
	for t := 1; t < k; t++ {
		for range n {
			throw()
		}
		probs = append(probs, occ[m]-covered)
		covered = occ[m]
	}
	for t, pt := range probs {
		mean += pt * float64(t)
	}
	for t, pt := range probs {
		d := float64(t) - mean
		variance += pt * d * d
	}
	return mean, variance
}

// TestDensifyFirstRoundsMatchTheory measures the rounds of DensifyFirst(96)
// at K = 128 (16 bands of 6 rows, the default banding) on random sets of n
// distinct features against densifyFirstRounds, within z = 4.5 standard
// errors of the mean (as TestDensifyRoundsMatchTheory), and checks the
// theory itself: at m = K it is newDensifyTheory's E[R], and it saves what
// the coupon collector says, K·(H_K − H_m)/n rounds or so (within one
// round: R is T/n rounded).
func TestDensifyFirstRoundsMatchTheory(t *testing.T) {
	const z, need = 4.5, 96
	sets := 20000
	if testing.Short() {
		sets = 4000
	}
	for _, n := range []int{20, 33, 50} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			whole := newDensifyTheory(128, n)
			if m, _ := densifyFirstRounds(128, n, 128); math.Abs(m-whole.rMean) > 1e-9 {
				t.Fatalf("theory: E[R] for all 128 bins %v; newDensifyTheory says %v", m, whole.rMean)
			}
			mean, variance := densifyFirstRounds(128, n, need)
			hk, hm := 0.0, 0.0
			for i := 1; i <= 128; i++ {
				hk += 1 / float64(i)
				if i <= need {
					hm += 1 / float64(i)
				}
			}
			if saved, coupon := whole.rMean-mean, 128*(hk-hm)/float64(n); math.Abs(saved-coupon) > 1 {
				t.Errorf("theory: %.3f rounds saved; the coupon collector says about %.3f", saved, coupon)
			}
			h := MustNewHasher(Params{K: 128})
			h.DensifyFirst(need)
			r := rand.New(rand.NewPCG(31, uint64(n)))
			f := make([]uint64, n)
			var sig Signature
			var sumR, sumR2 float64
			for range sets {
				for i := range f {
					f[i] = r.Uint64()
				}
				m0 := h.Metrics()
				sig = h.Sign(sig[:0], f)
				rounds := float64(h.Metrics().Rounds - m0.Rounds)
				sumR += rounds
				sumR2 += rounds * rounds
			}
			N := float64(sets)
			got := sumR / N
			se := math.Sqrt(variance / N)
			if d := math.Abs(got - mean); d > z*se {
				t.Errorf("mean rounds %.4f; want %.4f ± %.4f (%.1f SE)", got, mean, z*se, z)
			}
			t.Logf("%d sets: rounds %.3f (theory %.3f, sd %.2f); whole signatures %.3f: %.1f %% fewer",
				sets, got, mean, math.Sqrt(variance), whole.rMean, 100*(1-mean/whole.rMean))
		})
	}
}
