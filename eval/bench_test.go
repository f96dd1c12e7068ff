package eval

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// The benchmark corpus: every .go file under GOROOT/src (about 7.7k files,
// 100 MB with Go 1.26), word 5-gram features.
var goroot struct {
	once  sync.Once
	texts [][]byte
	bytes int64
	sets  [][]uint64
}

func gorootCorpus(b *testing.B) ([][]byte, [][]uint64, int64) {
	b.Helper()
	goroot.once.Do(func() {
		goroot.texts = goSources(b, 0, 0)
		for _, t := range goroot.texts {
			goroot.bytes += int64(len(t))
		}
		goroot.sets = featurize(goroot.texts, word5)
	})
	if goroot.sets == nil {
		b.Skip("GOROOT sources unavailable")
	}
	return goroot.texts, goroot.sets, goroot.bytes
}

func reportDocs(b *testing.B, docs int) {
	b.ReportMetric(float64(docs)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}

// BenchmarkFeaturesGoroot measures the test tokenizer alone (word 5-grams,
// xxh3, sort and dedup), for scale: it is not part of the join.
func BenchmarkFeaturesGoroot(b *testing.B) {
	texts, _, size := gorootCorpus(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		featurize(texts, word5)
	}
	reportDocs(b, len(texts))
}

// BenchmarkAllPairsGoroot measures the whole join from feature sets: building
// the Collection (token remap) and joining it, at several thresholds and
// worker counts. Bytes are the source text's.
func BenchmarkAllPairsGoroot(b *testing.B) {
	texts, sets, size := gorootCorpus(b)
	for _, t := range []float64{0.5, 0.8} {
		for _, w := range []int{1, runtime.GOMAXPROCS(0)} {
			b.Run(fmt.Sprintf("t=%v/workers=%d", t, w), func(b *testing.B) {
				b.SetBytes(size)
				b.ReportAllocs()
				var pairs int
				for b.Loop() {
					ps, err := AllPairs(sets, t, &Options{Workers: w})
					if err != nil {
						b.Fatal(err)
					}
					pairs = len(ps)
				}
				reportDocs(b, len(texts))
				b.ReportMetric(float64(pairs), "pairs")
			})
		}
	}
}

// BenchmarkCollectionGoroot measures NewCollection alone: validation,
// frequency ordering and the remap to tokens.
func BenchmarkCollectionGoroot(b *testing.B) {
	texts, sets, size := gorootCorpus(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewCollection(sets, nil); err != nil {
			b.Fatal(err)
		}
	}
	reportDocs(b, len(texts))
}

// BenchmarkJoinGoroot measures Collection.AllPairs alone: prefix index,
// probing, verification and the final sort.
func BenchmarkJoinGoroot(b *testing.B) {
	texts, sets, size := gorootCorpus(b)
	c, err := NewCollection(sets, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, t := range []float64{0.3, 0.5, 0.8} {
		b.Run(fmt.Sprintf("t=%v", t), func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			var pairs int
			for b.Loop() {
				ps, err := c.AllPairs(t)
				if err != nil {
					b.Fatal(err)
				}
				pairs = len(ps)
			}
			reportDocs(b, len(texts))
			b.ReportMetric(float64(pairs), "pairs")
		})
	}
}

// BenchmarkJoinArticles measures Collection.AllPairs on the articles set, for
// word and char 5-grams: char 5-grams at a low threshold are the hard case for
// prefix filtering, as their prefixes reach frequent features.
func BenchmarkJoinArticles(b *testing.B) {
	texts := loadArticles(b)
	var size int64
	for _, t := range texts {
		size += int64(len(t))
	}
	for _, kind := range []featureKind{word5, char5} {
		c, err := NewCollection(featurize(texts, kind), nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range []float64{0.3, 0.5, 0.8} {
			b.Run(fmt.Sprintf("%v/t=%v", kind, t), func(b *testing.B) {
				b.SetBytes(size)
				b.ReportAllocs()
				var pairs int
				for b.Loop() {
					ps, err := c.AllPairs(t)
					if err != nil {
						b.Fatal(err)
					}
					pairs = len(ps)
				}
				reportDocs(b, len(texts))
				b.ReportMetric(float64(pairs), "pairs")
			})
		}
	}
}
