package dedup

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkExactTable is the exact-duplicate pass's work for one document:
// a worker's lookup (has) and the collector's decision (resolve), over
// 4M random 128-bit hashes of which a quarter repeat an earlier one, under
// a 1 GiB budget (the table holds them all).
func BenchmarkExactTable(b *testing.B) {
	const n = 1 << 22
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([][2]uint64, n)
	for i := range keys {
		if i > 0 && r.IntN(4) == 0 {
			keys[i] = keys[r.IntN(i)]
		} else {
			keys[i] = [2]uint64{r.Uint64(), r.Uint64()}
		}
	}
	b.SetBytes(16)
	b.ReportAllocs()
	e := newExactPass(1<<30, b.TempDir())
	doc := uint32(0)
	for i := 0; b.Loop(); i++ {
		if i == n {
			b.StopTimer()
			e = newExactPass(1<<30, b.TempDir())
			i, doc = 0, 0
			b.StartTimer()
		}
		k := keys[i]
		_ = e.has(k) // a worker's question; the collector resolves every document
		if _, err := e.resolve(k, doc); err != nil {
			b.Fatal(err)
		}
		doc++
	}
}
