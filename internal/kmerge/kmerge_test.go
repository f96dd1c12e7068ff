package kmerge

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// item is a merged value: a key, a tie-breaker and where it came from.
type item struct {
	key, sub uint64
	src, pos int
}

// TestTreeMatchesStableSort: merging k sorted sources (0 to 70, some empty,
// keys drawn from a small range so that many are equal, equal subs too)
// yields a stable sort of their concatenation by key, then sub, then source:
// what slices.SortStableFunc gives.
func TestTreeMatchesStableSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{0, 1, 2, 3, 5, 8, 17, 70} {
		for _, keys := range []uint64{2, 50, 1 << 62} {
			for _, useTie := range []bool{false, true} {
				srcs := make([][]item, k)
				var all []item
				for s := range srcs {
					n := r.IntN(200)
					if r.IntN(5) == 0 {
						n = 0
					}
					for p := range n {
						srcs[s] = append(srcs[s], item{key: r.Uint64N(keys) << 1, sub: r.Uint64N(3), src: s, pos: p})
					}
					if s == 0 && k > 1 {
						srcs[s] = append(srcs[s], item{key: ^uint64(0) - 1, src: s}) // the largest key a source may hold
					}
					order := func(a, b item) int { return cmp.Compare(a.key, b.key) }
					if useTie {
						order = func(a, b item) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.sub, b.sub)) }
					}
					slices.SortStableFunc(srcs[s], order)
					for p := range srcs[s] {
						srcs[s][p].pos = p
					}
					all = append(all, srcs[s]...)
				}
				heads := make([]item, k)
				var tie func(i, j int) int
				if useTie {
					tie = func(i, j int) int { return cmp.Compare(heads[i].sub, heads[j].sub) }
				}
				want := slices.Clone(all)
				slices.SortStableFunc(want, func(a, b item) int {
					c := cmp.Compare(a.key, b.key)
					if useTie {
						c = cmp.Or(c, cmp.Compare(a.sub, b.sub))
					}
					return cmp.Or(c, cmp.Compare(a.src, b.src))
				})
				tr := New(k, tie)
				next := make([]int, k)
				for s := range k {
					ok := len(srcs[s]) > 0
					var h item
					if ok {
						h = srcs[s][0]
					}
					heads[s] = h
					tr.Set(s, h.key, ok)
					next[s] = 1
				}
				tr.Init()
				var got []item
				for w, ok := tr.Winner(); ok; w, ok = tr.Winner() {
					got = append(got, heads[w])
					if next[w] < len(srcs[w]) {
						heads[w] = srcs[w][next[w]]
						tr.Replace(heads[w].key, true)
						next[w]++
					} else {
						tr.Replace(0, false)
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("k=%d keys<%d tie=%v: merge of %d values differs from the stable sort (%d)", k, keys, useTie, len(got), len(want))
				}
			}
		}
	}
}

func Example() {
	runs := [][]uint64{{1, 4, 9}, {2, 3, 10}, {}, {4, 5}}
	t := New(len(runs), nil)
	for i, r := range runs {
		t.Set(i, first(r), len(r) > 0)
	}
	t.Init()
	for w, ok := t.Winner(); ok; w, ok = t.Winner() {
		fmt.Print(t.Top(), " ")
		runs[w] = runs[w][1:]
		t.Replace(first(runs[w]), len(runs[w]) > 0)
	}
	fmt.Println()
	// Output: 1 2 3 4 4 5 9 10
}

func first(r []uint64) uint64 {
	if len(r) == 0 {
		return 0
	}
	return r[0]
}
