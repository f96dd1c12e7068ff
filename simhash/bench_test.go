package simhash

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neardup/neardup/shingle"

	"github.com/neardup/neardup/internal/cputime"
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

// BenchmarkFingerprintText measures text → fingerprint (normalisation on)
// over the bundled articles, in bytes of text per second, beside
// minhash's BenchmarkSignText (same corpus, same specs): TF weighting, and
// TF-IDF with the articles' own document frequencies (default DF table:
// 2 rows × 2^20 counters).
func BenchmarkFingerprintText(b *testing.B) {
	texts, total := articleTexts(b)
	for _, s := range []struct {
		name string
		spec shingle.Spec
	}{
		{"char5", shingle.Spec{Unit: shingle.Char, N: 5, NFKC: true, CaseFold: true, FoldPunct: true, FoldSpace: true}},
		{"word5", shingle.Prose},
	} {
		idf := articlesIDF(b, s.spec, texts)
		for _, w := range []struct {
			name string
			h    *Hasher
		}{{"tf", &Hasher{}}, {"tfidf", NewHasher(idf)}} {
			b.Run(s.name+"/"+w.name, func(b *testing.B) {
				sh := shingle.MustNew(s.spec)
				b.SetBytes(total)
				b.ReportAllocs()
				c0 := cputime.Process()
				for b.Loop() {
					for _, t := range texts {
						sinkU64 = w.h.FingerprintText(sh, t)
					}
				}
				cputime.ReportThroughput(b, total, cputime.Process()-c0)
			})
		}
		b.Run(s.name+"/df-pass", func(b *testing.B) {
			sh := shingle.MustNew(s.spec)
			df, _ := NewDFTable(DFOptions{})
			b.SetBytes(total)
			b.ReportAllocs()
			c0 := cputime.Process()
			for b.Loop() {
				for _, t := range texts {
					df.AddText(sh, t)
				}
			}
			cputime.ReportThroughput(b, total, cputime.Process()-c0)
		})
	}
}

// BenchmarkLayoutPairs measures the batch candidate step in memory on random
// fingerprints: entries, radix sort, grouping with the Hamming filter. It
// reports the time per entry and the comparisons per entry, which is what
// plan's cost model weighs (an entry against a comparison).
func BenchmarkLayoutPairs(b *testing.B) {
	const n = 1 << 20
	r := rand.New(rand.NewPCG(51, 52))
	fps := randFeatures(r, n)
	for _, o := range []Options{{}, {MaxDistance: 3, Blocks: 5}, {MaxDistance: 3, Blocks: 6}, {MaxDistance: 6, Blocks: 8}} {
		l, err := NewLayout(o)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("n=1M/K=%d/B=%d", l.MaxDistance(), l.Blocks()), func(b *testing.B) {
			entries := int64(n * l.Tables())
			b.SetBytes(8 * entries)
			var m PairMetrics
			var dst []uint64
			for b.Loop() {
				dst, m, err = l.Pairs(dst[:0], fps, l.MaxDistance(), nil)
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(entries), "ns/entry")
			b.ReportMetric(m.ComparisonsPerEntry(), "comparisons/entry")
		})
	}
}

// BenchmarkGrouperCompare measures the grouping step alone on sorted
// entries whose buckets are large (8-bit keys: about 4096 documents a bucket
// at n = 1M), so that its time is nearly all bucket comparisons.
func BenchmarkGrouperCompare(b *testing.B) {
	const n = 1 << 20
	r := rand.New(rand.NewPCG(53, 54))
	fps := randFeatures(r, n)
	l, err := NewLayout(Options{MaxDistance: 7, Blocks: 8}) // 8 tables of 8-bit keys
	if err != nil {
		b.Fatal(err)
	}
	var es []uint64
	for i, fp := range fps {
		es = l.AppendEntries(es, fp, uint32(i), 20)
	}
	slices.Sort(es)
	es = es[:len(es)/8] // the first table
	g, err := l.NewGrouper(fps, 20, 3, &PairOptions{Cap: NoCap})
	if err != nil {
		b.Fatal(err)
	}
	var dst []uint64
	for b.Loop() {
		dst, _ = g.Append(dst[:0], es)
		dst = g.Flush(dst)
	}
	m := g.Metrics()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(m.Comparisons), "ns/comparison")
}
