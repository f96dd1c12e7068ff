package extsort

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// BenchmarkSingleFilter marks and splits one range's entries as
// PartIterator.load does under SkipSingles, the single keys' entries of a
// third of the documents counted (dedup's case): n entries of random keys (the range's top byte the
// same), about 4 % of them in keys shared by 2–3 entries (5M short
// documents' ranges hold 290k, 4 % in shared keys). kept/op is the share
// of the single keys' entries the filter kept (took for shared ones);
// cpu-ns/entry is the process's user + sys time an entry. form=wide reads
// them as Wide (mark, seal, split); form=words as the words a Partitioned store
// holds them in, in document order (markWords, seal, splitWords: the documents
// decoded as they are split).
func BenchmarkSingleFilter(b *testing.B) {
	for _, n := range []int{1 << 12, 300_000} {
		r := rand.New(rand.NewPCG(5, 6))
		var es []Wide
		single := 0
		for len(es) < n {
			k, copies := 7<<56|r.Uint64()>>8, 1
			if r.IntN(60) == 0 {
				copies = 2 + r.IntN(2)
			} else {
				single++
			}
			for c := range min(copies, n-len(es)) {
				es = append(es, Wide{Key: k, Doc: uint32(len(es)/16 + c)})
			}
		}
		r.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
		// The words Partitioned holds them in: in document order, as added.
		ordered := slices.Clone(es)
		slices.SortStableFunc(ordered, func(x, y Wide) int { return cmp.Compare(x.Doc, y.Doc) })
		ws := rangeWords(ordered)[7]
		for _, form := range []string{"wide", "words"} {
			b.Run(fmt.Sprintf("n=%d/form=%s", n, form), func(b *testing.B) {
				f := newSingleFilter(n)
				f.f = make([]uint64, f.words)
				dst := make([]Wide, n)
				// Single entries of a third of the documents counted, as
				// dedup's late copies.
				var third DocSet
				for d := range uint32(n/16 + 3) {
					if d%3 == 0 {
						for int(d>>6) >= len(third.Bits) {
							third.Bits = append(third.Bits, 0)
						}
						third.Bits[d>>6] |= 1 << (d & 63)
					}
				}
				b.SetBytes(16 * int64(n))
				b.ReportAllocs()
				k := 0
				start := cpuTime(b)
				for b.Loop() {
					clear(f.f)
					if form == "wide" {
						f.mark(es)
						f.seal()
						k, _ = f.split(es, dst, 0, third, 0)
						continue
					}
					f.markWords(ws, 7<<56, false)
					f.seal()
					d := wordDecoder{top: 7 << 56}
					var err error
					if k, _, err = f.splitWords(ws, dst, 0, third, 0, &d); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(k-(n-single))/float64(single), "kept/op")
				b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N)/float64(n), "cpu-ns/entry")
			})
		}
	}
}
