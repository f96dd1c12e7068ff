package lsh

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/radix"
)

var (
	sinkKeys  []uint64
	sinkFloat float64
	sinkP     Params
)

func BenchmarkAppendKeys(b *testing.B) {
	for _, p := range []Params{{Bands: 16, Rows: 8}, {Bands: 9, Rows: 13}, {Bands: 32, Rows: 4}, {Bands: 16, Rows: 8, Probe: 1}} {
		slots := randomSlots(rand.New(rand.NewPCG(1, 1)), p.Slots())
		dst := make([]uint64, 0, p.KeysPerDoc())
		b.Run(p.String(), func(b *testing.B) {
			b.SetBytes(int64(8 * p.Slots()))
			b.ReportAllocs()
			for b.Loop() {
				dst = p.AppendKeys(dst[:0], slots)
			}
			sinkKeys = dst
		})
	}
}

// benchEntries returns the entries of docs documents of 16 band keys each;
// one document in ten repeats half of the keys of an earlier one, the rest
// are random, so there are real buckets and pairs.
func benchEntries(docs, bands int) ([]uint64, uint) {
	rng := rand.New(rand.NewPCG(42, 42))
	docBits := DocBits(docs)
	entries := make([]uint64, 0, docs*bands)
	for d := range docs {
		src := -1
		if d > 0 && rng.IntN(10) == 0 {
			src = rng.IntN(d)
		}
		for band := range bands {
			if src >= 0 && band%2 == 0 {
				entries = append(entries, PackEntry(entries[src*bands+band], uint32(d), docBits))
			} else {
				entries = append(entries, PackEntry(rng.Uint64(), uint32(d), docBits))
			}
		}
	}
	return entries, docBits
}

// BenchmarkCandidates measures the in-memory batch path, entries to sorted
// unique pairs, for 1M documents × 16 bands (b.SetBytes counts the 8-byte
// entries); ns/doc divides by the document count.
func BenchmarkCandidates(b *testing.B) {
	for _, docs := range []int{10_000, 1_000_000} {
		const bands = 16
		orig, docBits := benchEntries(docs, bands)
		entries := make([]uint64, len(orig))
		var pairs []uint64
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("docs=%d/bands=%d/workers=%d", docs, bands, workers), func(b *testing.B) {
				b.SetBytes(int64(8 * len(orig)))
				b.ReportAllocs()
				var m CandidateMetrics
				opts := &CandidateOptions{Workers: workers}
				for b.Loop() {
					b.StopTimer()
					copy(entries, orig)
					b.StartTimer()
					var err error
					pairs, m, err = Candidates(pairs[:0], entries, docBits, opts)
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(docs), "ns/doc")
				b.ReportMetric(float64(m.UniquePairs), "pairs")
				sinkKeys = pairs
			})
		}
	}
}

// BenchmarkSortEntries compares SortEntries (key bits only, then runs) with
// a full radix sort of the same 16M entries.
func BenchmarkSortEntries(b *testing.B) {
	orig, docBits := benchEntries(1_000_000, 16)
	entries := make([]uint64, len(orig))
	scratch := make([]uint64, len(orig))
	for _, name := range []string{"SortEntries", "radix.Sort"} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(8 * len(orig)))
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				copy(entries, orig)
				b.StartTimer()
				if name == "SortEntries" {
					scratch = SortEntries(entries, scratch, docBits)
				} else {
					scratch = radix.Sort(entries, scratch)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ns/doc")
			sinkKeys = entries
		})
	}
}

// BenchmarkMapBaseline is the map[uint64][]uint32 grouping the design notes
// compare the packed, sorted entries with.
func BenchmarkMapBaseline(b *testing.B) {
	const docs, bands = 1_000_000, 16
	orig, docBits := benchEntries(docs, bands)
	b.SetBytes(int64(8 * len(orig)))
	b.ReportAllocs()
	for b.Loop() {
		m := make(map[uint64][]uint32)
		for _, e := range orig {
			k := EntryKey(e, docBits)
			m[k] = append(m[k], EntryDoc(e, docBits))
		}
		var pairs []uint64
		for _, ds := range m {
			for x := range ds {
				for y := x + 1; y < len(ds); y++ {
					pairs = append(pairs, PackPair(ds[x], ds[y]))
				}
			}
		}
		slices.Sort(pairs)
		sinkKeys = slices.Compact(pairs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/docs, "ns/doc")
}

func BenchmarkProbability(b *testing.B) {
	for _, p := range []Params{{Bands: 9, Rows: 13}, {Bands: 9, Rows: 13, Probe: 1}} {
		b.Run(p.String(), func(b *testing.B) {
			b.ReportAllocs()
			j := 0.0
			for b.Loop() {
				sinkFloat += p.Probability(j)
				j += 1e-6
				if j > 1 {
					j = 0
				}
			}
		})
	}
}

func BenchmarkOptimal(b *testing.B) {
	for _, k := range []int{64, 128, 256} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkP, _ = Optimal(0.8, k, 0.5, 0.5)
			}
		})
	}
}

// BenchmarkAppendKeys32 is AppendKeys32 of one signature of 32-bit slots
// packed two a word (dedup's default is 16 bands of 6 rows), on the vector
// kernel where the CPU has it (kernel=vec) and on the Go loops
// (kernel=go). SetBytes counts the packed signature's bytes read.
func BenchmarkAppendKeys32(b *testing.B) {
	kernels := []bool{false}
	if useAVX512 {
		kernels = append(kernels, true)
	}
	for _, p := range []Params{{Bands: 16, Rows: 6}, {Bands: 16, Rows: 8}, {Bands: 32, Rows: 4}, {Bands: 9, Rows: 13}} {
		r := rand.New(rand.NewPCG(1, 1))
		const n = 64 // signatures, cycled
		w := (p.Slots() + 1) / 2
		packed := randomSlots(r, n*w)
		dst := make([]uint64, 0, p.KeysPerDoc())
		for _, vec := range kernels {
			name := p.String() + "/kernel=go"
			if vec {
				name = p.String() + "/kernel=vec"
			}
			b.Run(name, func(b *testing.B) {
				defer func(v bool) { useAVX512 = v }(useAVX512)
				useAVX512 = vec
				b.SetBytes(int64(8 * w))
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					dst = p.AppendKeys32(dst[:0], packed[i*w:(i+1)*w])
					i = (i + 1) % n
				}
				sinkKeys = dst
			})
		}
	}
}
