package dedup

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/jobspec"
)

// TestAppendWeakest checks the selection against the stable sort it
// replaced, on clusters with many equal similarities, some without pairs
// and the largest skipped.
func TestAppendWeakest(t *testing.T) {
	sorted := func(weakest []edge, has []bool, skip, k int) []int {
		var order []int
		for i := range weakest {
			if has[i] && i != skip {
				order = append(order, i)
			}
		}
		slices.SortStableFunc(order, func(x, y int) int {
			sx, sy := weakest[x].Sim(), weakest[y].Sim()
			switch {
			case sx < sy:
				return -1
			case sx > sy:
				return 1
			}
			return x - y
		})
		return order[:min(len(order), k)]
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 4, 5, 10, 100, 1000} {
		for _, levels := range []int{1, 3, 1000} {
			for _, k := range []int{0, 1, 3, 7} {
				weakest := make([]edge, n)
				has := make([]bool, n)
				for i := range weakest {
					has[i] = rng.IntN(5) != 0
					weakest[i].Verdict = jobspec.Verdict{Est: float64(rng.IntN(levels)) / float64(levels), Exact: -1}
					if rng.IntN(2) == 0 {
						weakest[i].Exact = float64(rng.IntN(levels)) / float64(levels)
					}
				}
				skip := -1
				if n > 0 {
					skip = rng.IntN(n)
				}
				got := appendWeakest([]int{-7}, weakest, has, skip, k)
				want := append([]int{-7}, sorted(weakest, has, skip, k)...)
				if !slices.Equal(got, want) {
					t.Errorf("n=%d levels=%d k=%d: got %v; want %v", n, levels, k, got, want)
				}
			}
		}
	}
}
