package eval

import (
	mbits "math/bits"
	"runtime"
	"slices"
	"sync"
)

// bruteForce returns every pair (i < j) with float64(o)/float64(u) >= tmin,
// sorted by (A, B), by examining all N·(N−1)/2 pairs. It uses none of the
// join's filters, orderings or bounds. The exact overlap of every pair is the
// number of features the two sets share, counted in two parts: features in
// many sets are columns of a per-set bitset (shared count = popcount of the
// AND), the others are counted through a plain map-built inverted index. The
// split only balances the two costs. crossCheck verifies the overlaps with
// plain merges, so the reference does not rest on itself.
func bruteForce(sets [][]uint64, tmin float64) []Pair {
	n := len(sets)
	ids := map[uint64]int32{}
	var lists [][]int32
	all := make([][]int32, n) // feature ids of each set
	for d, s := range sets {
		all[d] = make([]int32, len(s))
		for k, f := range s {
			id, ok := ids[f]
			if !ok {
				id = int32(len(lists))
				ids[f] = id
				lists = append(lists, nil)
			}
			lists[id] = append(lists[id], int32(d))
			all[d][k] = id
		}
	}
	// Heavy features: the k most frequent, k a multiple of 64 chosen to
	// minimise n²/2·k/64 word ANDs plus Σ df²/2 counter increments for the
	// rest, an increment costing about four ANDs (measured).
	byDF := make([]int32, len(lists))
	for i := range byDF {
		byDF[i] = int32(i)
	}
	slices.SortStableFunc(byDF, func(a, b int32) int { return len(lists[b]) - len(lists[a]) })
	var light float64
	for _, l := range lists {
		light += 2 * float64(len(l)) * float64(len(l))
	}
	bestK, bestCost := 0, light
	pairCost := float64(n) * float64(n) / 2
	for k := 0; k < len(byDF); {
		for end := k + 64; k < end && k < len(byDF); k++ {
			df := float64(len(lists[byDF[k]]))
			light -= 2 * df * df
		}
		if cost := pairCost*float64((k+63)/64) + light; cost < bestCost {
			bestK, bestCost = k, cost
		}
	}
	column := make([]int, len(lists))
	for i := range column {
		column[i] = -1
	}
	for c, f := range byDF[:bestK] {
		column[f] = c
	}
	words := (bestK + 63) / 64
	bits := make([]uint64, n*words)
	dense := make([][]int32, n) // light features only
	for d, s := range all {
		for _, id := range s {
			if c := column[id]; c >= 0 {
				bits[d*words+c/64] |= 1 << (c % 64)
			} else {
				dense[d] = append(dense[d], id)
			}
		}
	}

	outs := make([][]Pair, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			cnt := make([]int32, n)
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				for _, f := range dense[i] {
					for _, j := range lists[f] {
						if int(j) > i {
							cnt[j]++
						}
					}
				}
				bi := bits[i*words : (i+1)*words]
				var out []Pair
				for j := i + 1; j < n; j++ { // every pair, overlap or not
					o := int(cnt[j])
					cnt[j] = 0
					for w, x := range bits[j*words : (j+1)*words] {
						o += mbits.OnesCount64(x & bi[w])
					}
					u := len(sets[i]) + len(sets[j]) - o
					if u > 0 && float64(o)/float64(u) >= tmin {
						out = append(out, Pair{A: int32(i), B: int32(j), Overlap: int32(o), Jaccard: float64(o) / float64(u)})
					}
				}
				outs[i] = out
			}
		})
	}
	wg.Wait()
	return slices.Concat(outs...)
}

// filterPairs returns the pairs of ps with Jaccard >= t.
func filterPairs(ps []Pair, t float64) []Pair {
	var out []Pair
	for _, p := range ps {
		if p.Jaccard >= t {
			out = append(out, p)
		}
	}
	return out
}
