package cluster

import (
	"fmt"
	"math/rand/v2"
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
