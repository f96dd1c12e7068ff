package cluster

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

var sinkResult *Result

// BenchmarkCluster clusters 1M documents linked by 1M edges (mostly local,
// so there are many small clusters and some long chains). b.SetBytes counts
// the 16-byte edges.
func BenchmarkCluster(b *testing.B) {
	const n, m = 1_000_000, 1_000_000
	edges, attrs := randomGraph(rand.New(rand.NewPCG(1, 1)), n, m)
	for _, mode := range []string{"Components", "Star"} {
		for _, p := range []Policy{{Kind: KeepFirst}, {Kind: KeepLongest}} {
			b.Run(fmt.Sprintf("%s/%v", mode, p), func(b *testing.B) {
				b.SetBytes(int64(16 * len(edges)))
				b.ReportAllocs()
				opts := &Options{Threshold: 0.8, Keep: p}
				for b.Loop() {
					var err error
					if mode == "Star" {
						sinkResult, err = Star(n, edges, attrs, opts)
					} else {
						sinkResult, err = Components(n, edges, attrs, opts)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/doc")
			})
		}
	}
}

// BenchmarkComponentsSparse clusters the dedup cluster stage's input shape
// on 5M short documents: 5M documents, ~487k edges in (a, b) order, most
// components of two (25 % duplicates, a few larger groups). It reports
// ns/edge.
func BenchmarkComponentsSparse(b *testing.B) {
	const n = 5_000_000
	edges := sparseGraph(rand.New(rand.NewPCG(2, 2)), n)
	b.SetBytes(int64(16 * len(edges)))
	b.ReportAllocs()
	opts := &Options{Threshold: 0.5}
	for b.Loop() {
		var err error
		sinkResult, err = Components(n, edges, nil, opts)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(edges)), "ns/edge")
}

// sparseGraph returns ~487k edges over n documents in (a, b) order: one
// document in twelve has a near-duplicate later on, one in sixty-four of
// those a third copy.
func sparseGraph(rng *rand.Rand, n int) []Edge {
	var edges []Edge
	for a := 0; a < n; a++ {
		if rng.IntN(12) != 0 {
			continue
		}
		b := a + 1 + rng.IntN(n-a)
		if b >= n {
			continue
		}
		edges = append(edges, Edge{A: uint32(a), B: uint32(b), Sim: 0.9})
		if rng.IntN(5) == 0 && b+1 < n {
			edges = append(edges, Edge{A: uint32(a), B: uint32(b + 1 + rng.IntN(n-b-1)), Sim: 0.8})
		}
	}
	slices.SortFunc(edges, func(x, y Edge) int {
		return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B))
	})
	return edges
}
