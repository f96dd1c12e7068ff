package simhash

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

var sinkU64 uint64

// Feature counts of real documents: a word 5-gram per word, so a short news
// item has a few hundred and a long article a few thousand.
var featureCounts = []int{16, 256, 1024, 16384}

func BenchmarkFingerprint(b *testing.B) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, n := range featureCounts {
		fs := randFeatures(r, n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.SetBytes(8 * int64(n))
			b.ReportAllocs()
			for b.Loop() {
				sinkU64 = Fingerprint(fs)
			}
		})
	}
	// The definition, a branch per bit, for comparison.
	fs := randFeatures(r, 1024)
	b.Run("reference/n=1024", func(b *testing.B) {
		b.SetBytes(8 * int64(len(fs)))
		b.ReportAllocs()
		for b.Loop() {
			sinkU64 = refFingerprint(fs)
		}
	})
}

func BenchmarkBuilderAddFeature(b *testing.B) {
	r := rand.New(rand.NewPCG(43, 44))
	fs := randFeatures(r, 1024)
	b.SetBytes(8 * int64(len(fs)))
	b.ReportAllocs()
	var bld Builder
	for b.Loop() {
		bld.Reset()
		for _, f := range fs {
			bld.AddFeature(f)
		}
		sinkU64 = bld.Sum()
	}
}

func BenchmarkFingerprintWeighted(b *testing.B) {
	r := rand.New(rand.NewPCG(45, 46))
	for _, n := range []int{256, 1024} {
		fs := randFeatures(r, n)
		ws := make([]float64, n)
		for i := range ws {
			ws[i] = r.ExpFloat64()
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.SetBytes(8 * int64(n))
			b.ReportAllocs()
			for b.Loop() {
				sinkU64, _ = FingerprintWeighted(fs, ws)
			}
		})
		b.Run(fmt.Sprintf("reference/n=%d", n), func(b *testing.B) {
			b.SetBytes(8 * int64(n))
			b.ReportAllocs()
			for b.Loop() {
				sinkU64 = refWeighted(fs, ws)
			}
		})
	}
}

// benchEntries returns n random entries and q query fingerprints, each within
// 0..3 bits of a stored entry, so that queries have matches.
func benchEntries(n, q int) ([]Entry, []uint64) {
	r := rand.New(rand.NewPCG(47, 48))
	es := make([]Entry, n)
	for i := range es {
		es[i] = Entry{r.Uint64(), uint64(i)}
	}
	qs := make([]uint64, q)
	for i := range qs {
		qs[i] = flipBits(r, es[r.IntN(n)].Fingerprint, r.IntN(4))
	}
	return es, qs
}

func BenchmarkIndexQuery(b *testing.B) {
	const n = 1_000_000
	es, qs := benchEntries(n, 4096)
	for _, o := range []Options{{}, {MaxDistance: 3, Blocks: 5}, {MaxDistance: 3, Blocks: 6}} {
		ix, err := NewIndex(o)
		if err != nil {
			b.Fatal(err)
		}
		ix.Build(es)
		o.EnsureDefaults()
		b.Run(fmt.Sprintf("n=1M/k=3/B=%d", o.Blocks), func(b *testing.B) {
			b.ReportAllocs()
			before := ix.Metrics()
			var dst []Match
			i := 0
			for b.Loop() {
				dst, _ = ix.AppendQuery(dst[:0], qs[i%len(qs)], 3)
				i++
			}
			m := ix.Metrics()
			b.ReportMetric(float64(m.Candidates-before.Candidates)/float64(m.Queries-before.Queries), "candidates/op")
			b.ReportMetric(m.BytesPerEntry(), "B/entry")
		})
		b.Run(fmt.Sprintf("n=1M/k=3/B=%d/parallel", o.Blocks), func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				var dst []Match
				i := 0
				for pb.Next() {
					dst, _ = ix.AppendQuery(dst[:0], qs[i%len(qs)], 3)
					i++
				}
			})
		})
	}
}

func BenchmarkIndexBuild(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		es, _ := benchEntries(n, 1)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.SetBytes(16 * int64(n)) // input entries
			b.ReportAllocs()
			ix, _ := NewIndex(Options{})
			for b.Loop() {
				ix.Build(es)
			}
		})
	}
}

// BenchmarkIndexInsert measures one-by-one inserts into an index that already
// holds n entries, merges included.
func BenchmarkIndexInsert(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		es, _ := benchEntries(n, 1)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			ix, _ := NewIndex(Options{})
			ix.Build(es)
			r := rand.New(rand.NewPCG(49, 50))
			b.ReportAllocs()
			for b.Loop() {
				ix.Insert(r.Uint64(), r.Uint64())
			}
		})
	}
}
