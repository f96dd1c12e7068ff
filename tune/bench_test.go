package tune

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkRun tunes five bandings (the frontier at t = 0.8 for k = 128)
// over a signature file of 128 32-bit slots a document, in memory; the
// bytes are the file's.
func BenchmarkRun(b *testing.B) {
	bandings, err := Frontier(0.8, 128, []float64{0.5, 0.8, 0.9, 0.95, 0.99}, 0)
	if err != nil || len(bandings) != 5 {
		b.Fatalf("frontier %v, %v; want 5 bandings", bandings, err)
	}
	for _, n := range []int{10_000, 100_000} {
		c := familyCorpusBits(n, 128, 32, 0, 1)
		data := c.file(b)
		truth := truthFor(c, n/2, 2)
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var sink int64
			for b.Loop() {
				res, err := Run(context.Background(), open(b, data), truth, &Options{Bandings: bandings, TempDir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				sink += res.Bandings[0].Candidates
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
			_ = sink
		})
	}
}
