package cluster_test

import (
	"fmt"

	"github.com/neardup/neardup/cluster"
)

// A chain of five documents, each 0.85 similar to the next: Components
// joins all of them, Star keeps pairs whose members are linked directly.
func Example() {
	edges := []cluster.Edge{{A: 0, B: 1, Sim: 0.85}, {A: 1, B: 2, Sim: 0.85}, {A: 2, B: 3, Sim: 0.85}, {A: 3, B: 4, Sim: 0.85}}
	opts := &cluster.Options{Threshold: 0.8}

	comp, _ := cluster.Components(5, edges, nil, opts)
	fmt.Println("components:", comp.Clusters)
	star, _ := cluster.Star(5, edges, nil, opts)
	fmt.Println("star:", star.Clusters, "removed:", star.AppendRemoved(nil))
	// Output:
	// components: [{0 [0 1 2 3 4]}]
	// star: [{0 [0 1]} {2 [2 3]}] removed: [1 3]
}

func ExampleParsePolicy() {
	p, err := cluster.ParsePolicy("longest")
	if err != nil {
		panic(err)
	}
	edges := []cluster.Edge{{A: 0, B: 1, Sim: 0.9}, {A: 1, B: 2, Sim: 0.95}}
	attrs := &cluster.Attrs{Lengths: []int64{120, 300, 300}}
	r, _ := cluster.Components(3, edges, attrs, &cluster.Options{Keep: p})
	fmt.Printf("keep %d of %v (%v)\n", r.Clusters[0].Kept, r.Clusters[0].Members, p)
	// Output: keep 1 of [0 1 2] (longest)
}

// Edges streamed, here from a generator: a chain of a thousand documents
// never held as a slice. StarSeq wants them in visit order, as (A, B)
// ascending is under KeepFirst.
func ExampleStarSeq() {
	chain := func(yield func(cluster.Edge) bool) {
		for d := range uint32(999) {
			if !yield(cluster.Edge{A: d, B: d + 1, Sim: 0.9}) {
				return
			}
		}
	}
	opts := &cluster.Options{Threshold: 0.8}
	comp, _ := cluster.ComponentsSeq(1000, chain, nil, opts)
	star, _ := cluster.StarSeq(1000, chain, nil, opts)
	fmt.Println("components:", comp.Metrics.Clusters, "cluster of", comp.Metrics.Largest)
	fmt.Println("star:", star.Metrics.Clusters, "clusters, removed", star.Metrics.Removed)
	// Output:
	// components: 1 cluster of 1000
	// star: 500 clusters, removed 500
}
