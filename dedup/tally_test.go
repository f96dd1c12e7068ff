package dedup

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/neardup/neardup/internal/jobspec"
)

// TestEdgeTally checks the tally's zero-means-none encoding against the
// NaN-filled array it replaced: the same best estimate for every document,
// the same documents in no pair, with NaN estimates, zeros of both signs,
// negative estimates and repeats.
func TestEdgeTally(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ests := []float64{math.NaN(), 0, math.Copysign(0, -1), -0.5, 1, 0.25, 0.75, math.Float64frombits(math.MaxUint64), math.SmallestNonzeroFloat64}
	for _, n := range []int{1, 2, 10, 1000} {
		for _, edges := range []int{0, 1, 5, 3000} {
			r := &run{rep: &Report{PairSim: jobspec.NewHistogram(false)}, tally: newEdgeTally(n)}
			old := make([]float64, n)
			for i := range old {
				old[i] = math.NaN()
			}
			for range edges {
				e := edge{a: uint32(rng.IntN(n)), b: uint32(rng.IntN(n)), Verdict: jobspec.Verdict{Est: ests[rng.IntN(len(ests))], Exact: -1}}
				if rng.IntN(3) == 0 {
					e.Est = rng.Float64()
				}
				r.tallyEdge(e)
				for _, d := range [2]uint32{e.a, e.b} {
					if s := old[d]; math.IsNaN(s) || e.Est > s {
						old[d] = e.Est
					}
				}
			}
			for d := range n {
				got, ok := r.tally.get(d)
				if want := !math.IsNaN(old[d]); ok != want || r.tally.inPair(d) != want {
					t.Fatalf("n=%d edges=%d doc %d: in a pair %v (inPair %v); want %v", n, edges, d, ok, r.tally.inPair(d), want)
				}
				if ok && math.Float64bits(got) != math.Float64bits(old[d]) {
					t.Fatalf("n=%d edges=%d doc %d: best %v; want %v", n, edges, d, got, old[d])
				}
			}
		}
	}
}
