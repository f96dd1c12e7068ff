package lsh_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
)

// TestSCurveWithMinHash checks the whole chain the batch job and the index
// rely on — features → minhash signature → band keys — against the S-curve:
// over many seeds, the fraction of pairs of sets with Jaccard similarity J
// that share a band key must be Probability(J), within 4.5 binomial standard
// errors. It covers both schemes, sets far shorter than K (where
// one-permutation hashing fills empty bins by re-hashing, which could make the
// slots of a band depend on each other), sets of unequal size, and sets past
// the hasher's feature buffer (32·K). Slots of a band that were not
// independent would show as a collision rate off the curve.
func TestSCurveWithMinHash(t *testing.T) {
	trials := 2000
	if testing.Short() {
		trials = 500
	}
	bands := lsh.Params{Bands: 16, Rows: 6}
	cases := []struct {
		shared, onlyA, onlyB int // |A∩B|, |A\B|, |B\A|
	}{
		{3, 1, 2},         // 6 elements in all, J = 1/2
		{8, 1, 1},         // J = 0.8
		{25, 10, 20},      // a shared header and short bodies: J = 5/11
		{100, 20, 150},    // J = 10/27
		{800, 100, 100},   // J = 0.8
		{4000, 600, 1400}, // past 32·K features: J = 2/3
	}
	for _, scheme := range []minhash.Scheme{minhash.OnePermutation, minhash.KHash} {
		for _, c := range cases {
			if scheme == minhash.KHash && c.shared > 1000 {
				continue // classic MinHash has no feature buffer; and it is slow
			}
			j := float64(c.shared) / float64(c.shared+c.onlyA+c.onlyB)
			hits := 0
			var a, b, sa, sb, slots, ka, kb []uint64
			for seed := range trials {
				h := minhash.MustNewHasher(minhash.Params{K: 128, Scheme: scheme, Seed: uint64(seed)})
				p := h.Params()
				rng := rand.New(rand.NewPCG(uint64(seed), 17))
				a, b = a[:0], b[:0]
				for range c.shared {
					f := rng.Uint64()
					a = append(a, f)
					b = append(b, f)
				}
				for range c.onlyA {
					a = append(a, rng.Uint64())
				}
				for range c.onlyB {
					b = append(b, rng.Uint64())
				}
				sa = h.Sign(sa[:0], a)
				sb = h.Sign(sb[:0], b)
				slots = p.AppendSlots(slots[:0], sa)
				ka = bands.AppendKeys(ka[:0], slots)
				slots = p.AppendSlots(slots[:0], sb)
				kb = bands.AppendKeys(kb[:0], slots)
				for i := range ka {
					if ka[i] == kb[i] {
						hits++
						break
					}
				}
			}
			got, want := float64(hits)/float64(trials), bands.Probability(j)
			tol := 4.5*math.Sqrt(want*(1-want)/float64(trials)) + 1/float64(trials)
			if math.Abs(got-want) > tol {
				t.Errorf("%v, |A∩B| %d, |A\\B| %d, |B\\A| %d (J = %.3f): %d of %d pairs share a band key (%.4f); Probability = %.4f ± %.4f",
					scheme, c.shared, c.onlyA, c.onlyB, j, hits, trials, got, want, tol)
			}
		}
	}
}
