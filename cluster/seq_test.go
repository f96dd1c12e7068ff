package cluster

import (
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// visitSorted returns edges sorted as StarSeq reads them: by the position
// (VisitOrder) of the endpoint visited first, then of the other, with
// unused edges and self-loops mixed in at random places.
func visitSorted(t *testing.T, rng *rand.Rand, n int, edges []Edge, attrs *Attrs, opts *Options) []Edge {
	t.Helper()
	pos, err := VisitOrder(n, attrs, opts)
	if err != nil {
		t.Fatal(err)
	}
	var used, other []Edge
	for _, e := range edges {
		if e.A != e.B && e.Sim >= opts.Threshold {
			used = append(used, e)
		} else {
			other = append(other, e)
		}
	}
	key := func(e Edge) (uint32, uint32) {
		p, q := pos[e.A], pos[e.B]
		return min(p, q), max(p, q)
	}
	slices.SortFunc(used, func(x, y Edge) int {
		x0, x1 := key(x)
		y0, y1 := key(y)
		if x0 != y0 {
			return int(x0) - int(y0)
		}
		return int(x1) - int(y1)
	})
	for _, e := range other {
		i := rng.IntN(len(used) + 1)
		used = slices.Insert(used, i, e)
	}
	return used
}

// TestSeqEqualsSlice: on random graphs under every policy, threshold and
// reference count, ComponentsSeq over the edges in any order, and StarSeq
// over the edges in visit order (endpoints either way round), return what
// Components and Star return over the slice, metrics included.
func TestSeqEqualsSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	sizes := []struct{ n, m int }{{0, 0}, {1, 0}, {2, 1}, {10, 8}, {200, 150}, {200, 600}, {3000, 2500}, {500, 5000}}
	for _, sz := range sizes {
		for _, p := range policies {
			for _, thr := range []float64{0, 0.8} {
				for _, ref := range []int{0, min(sz.n, 7)} {
					name := fmt.Sprintf("n=%d/m=%d/%v/t=%v/ref=%d", sz.n, sz.m, p, thr, ref)
					edges, attrs := randomGraph(rng, sz.n, sz.m)
					if sz.n > 0 {
						edges = append(edges, Edge{A: 0, B: 0, Sim: 1}) // a self-loop
					}
					opts := &Options{Threshold: thr, Keep: p, Reference: ref}
					comp, err := Components(sz.n, edges, attrs, opts)
					if err != nil {
						t.Fatal(err)
					}
					compSeq, err := ComponentsSeq(sz.n, slices.Values(shuffled(rng, edges)), attrs, opts)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(compSeq, comp) {
						t.Fatalf("%s: ComponentsSeq differs from Components", name)
					}
					star, err := Star(sz.n, edges, attrs, opts)
					if err != nil {
						t.Fatal(err)
					}
					sorted := visitSorted(t, rng, sz.n, edges, attrs, opts)
					for i := range sorted {
						if rng.IntN(2) == 0 {
							sorted[i].A, sorted[i].B = sorted[i].B, sorted[i].A
						}
					}
					starSeq, err := StarSeq(sz.n, slices.Values(sorted), attrs, opts)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if !reflect.DeepEqual(starSeq, star) {
						t.Fatalf("%s: StarSeq differs from Star:\ngot  %v\nwant %v", name, starSeq.Clusters, star.Clusters)
					}
				}
			}
		}
	}
}

// TestStarSeqOrder: StarSeq rejects used edges out of visit order, naming
// the edge, rather than returning another clustering.
func TestStarSeqOrder(t *testing.T) {
	edges := []Edge{{A: 2, B: 3, Sim: 1}, {A: 0, B: 0, Sim: 1}, {A: 1, B: 2, Sim: 0.1}, {A: 1, B: 4, Sim: 1}}
	_, err := StarSeq(5, slices.Values(edges), nil, &Options{Threshold: 0.5})
	if !errors.Is(err, ErrInvalidEdge) || !strings.Contains(err.Error(), "edges[3] = (1, 4)") {
		t.Fatalf("err = %v; want ErrInvalidEdge naming edges[3] = (1, 4)", err)
	}
	// The unused and self-loop edges out of order are fine.
	if _, err := StarSeq(5, slices.Values(edges[:3]), nil, &Options{Threshold: 0.5}); err != nil {
		t.Fatal(err)
	}
}

// TestSeqErrors: the sequence forms reject what the slice forms reject,
// numbering the edge as the slice forms do.
func TestSeqErrors(t *testing.T) {
	edges := []Edge{{A: 0, B: 1, Sim: 1}, {A: 1, B: 9, Sim: 1}}
	for name, f := range map[string]func(int, iter.Seq[Edge], *Attrs, *Options) (*Result, error){"ComponentsSeq": ComponentsSeq, "StarSeq": StarSeq} {
		_, err := f(3, slices.Values(edges), nil, nil)
		_, want := Components(3, edges, nil, nil)
		if !errors.Is(err, ErrInvalidEdge) || err.Error() != want.Error() {
			t.Errorf("%s: err = %v; want %v", name, err, want)
		}
		if _, err := f(3, slices.Values(edges[:1]), nil, &Options{Keep: Policy{Kind: KeepLongest}}); !errors.Is(err, ErrMissingAttrs) {
			t.Errorf("%s without lengths: err = %v; want ErrMissingAttrs", name, err)
		}
	}
}
