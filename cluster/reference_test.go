package cluster

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestReference checks Options.Reference on random graphs, for both modes
// and every policy: a cluster holding a reference document keeps one (the
// lowest under Components), no reference document is removed, Removed
// counts exactly the other documents not kept, Components' membership does
// not change, and Star's removed documents stay linked to their centre.
func TestReference(t *testing.T) {
	const thr = 0.5
	rng := rand.New(rand.NewPCG(17, 17))
	policies := []Policy{{Kind: KeepFirst}, {Kind: KeepLongest}, {Kind: KeepField, Field: "score"}}
	for trial := range 60 {
		n := 2 + rng.IntN(60)
		ref := rng.IntN(n + 1)
		var edges []Edge
		for range rng.IntN(3 * n) {
			a, b := uint32(rng.IntN(n)), uint32(rng.IntN(n))
			edges = append(edges, Edge{A: a, B: b, Sim: rng.Float64()})
		}
		attrs := &Attrs{Lengths: make([]int64, n), Values: make([]float64, n)}
		for i := range n {
			attrs.Lengths[i] = int64(rng.IntN(5))
			attrs.Values[i] = float64(rng.IntN(5))
		}
		for _, p := range policies {
			for _, mode := range []string{"components", "star"} {
				name := fmt.Sprintf("trial %d n=%d ref=%d %v %s", trial, n, ref, p, mode)
				run := func(ref int) *Result {
					f := Components
					if mode == "star" {
						f = Star
					}
					res, err := f(n, edges, attrs, &Options{Threshold: thr, Keep: p, Reference: ref})
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					return res
				}
				res, plain := run(ref), run(0)
				removed := 0
				for d := range n {
					kept := res.IsKept(uint32(d))
					if d < ref && !kept {
						t.Fatalf("%s: reference document %d not kept", name, d)
					}
					if d >= ref && !kept {
						removed++
					}
				}
				if res.Metrics.Removed != removed {
					t.Fatalf("%s: Metrics.Removed = %d; want %d", name, res.Metrics.Removed, removed)
				}
				for _, c := range res.Clusters {
					if int(c.Members[0]) < ref {
						if int(c.Kept) >= ref {
							t.Fatalf("%s: cluster %v holds reference documents and keeps %d", name, c.Members, c.Kept)
						}
						if mode == "components" && c.Kept != c.Members[0] {
							t.Fatalf("%s: cluster %v keeps %d; want its lowest reference member", name, c.Members, c.Kept)
						}
					}
					if mode == "star" {
						for _, m := range c.Members {
							if m != c.Kept && !hasEdge(edges, m, c.Kept, thr) {
								t.Fatalf("%s: member %d of the star of %d has no edge ≥ %v to it", name, m, c.Kept, thr)
							}
						}
					}
				}
				if mode == "components" {
					members := func(r *Result) [][]uint32 {
						var out [][]uint32
						for _, c := range r.Clusters {
							out = append(out, c.Members)
						}
						return out
					}
					if !reflect.DeepEqual(members(res), members(plain)) {
						t.Fatalf("%s: Reference changed the components", name)
					}
				}
			}
		}
	}
}

// TestReferenceOutranksPolicy: a longer (or higher-valued) document does
// not displace a reference document, and a reference star claims first.
func TestReferenceOutranksPolicy(t *testing.T) {
	edges := []Edge{{A: 0, B: 2, Sim: 0.9}, {A: 1, B: 2, Sim: 0.9}, {A: 2, B: 3, Sim: 0.9}}
	attrs := &Attrs{Lengths: []int64{1, 1, 100, 5}}
	opts := &Options{Threshold: 0.5, Keep: Policy{Kind: KeepLongest}, Reference: 2}
	comp, err := Components(4, edges, attrs, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(comp.Clusters) != 1 || comp.Clusters[0].Kept != 0 || !comp.IsKept(1) || comp.IsKept(2) || comp.IsKept(3) || comp.Metrics.Removed != 2 {
		t.Fatalf("Components: %+v, removed %d; want one cluster keeping 0, with 1 kept too and 2, 3 removed", comp.Clusters, comp.Metrics.Removed)
	}
	star, err := Star(4, edges, attrs, opts)
	if err != nil {
		t.Fatal(err)
	}
	// 0 is visited first and claims 2; 1 has no unclaimed neighbour left
	// and stays alone; 3, whose only neighbour is claimed, too.
	want := []Cluster{{Kept: 0, Members: []uint32{0, 2}}}
	if !reflect.DeepEqual(star.Clusters, want) || star.Metrics.Removed != 1 {
		t.Fatalf("Star: %+v, removed %d; want %+v, removed 1", star.Clusters, star.Metrics.Removed, want)
	}
	if _, err := Components(4, edges, attrs, &Options{Reference: 5}); err == nil {
		t.Fatal("Reference above n accepted")
	}
}
