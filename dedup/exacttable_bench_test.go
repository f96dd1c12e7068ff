package dedup

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/neardup/neardup/internal/cputime"
)

// BenchmarkExactTable is the exact-duplicate pass's work for one document,
// as in the sign stage: a worker's lookup (has) and, a batch later (the
// collector takes a batch once a worker has signed it), the collector's
// decisions (resolve) on the batch's documents in turn, after the batch's
// prefetch, and after the last document the late detector's search
// (finish), made once every 4M documents. The hashes are 4M random 128-bit
// ones of which a quarter repeat an earlier one, in batches of 4,096, under
// a 1 GiB budget (the table holds the first 4,605,510 different ones, all
// of them; before, 1,572,864, the others going to the late detector) and
// under 16 GiB (where either holds them all); presized: the table sized
// for the documents at once (exactPass.presize), else grown by doubling.
// cpu-ns/op is the process's CPU time per document.
func BenchmarkExactTable(b *testing.B) {
	const n = 1 << 22
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([][2]uint64, n)
	hashes := make([]uint64, 0, 2*n)
	for i := range keys {
		if i > 0 && r.IntN(4) == 0 {
			keys[i] = keys[r.IntN(i)]
		} else {
			keys[i] = [2]uint64{r.Uint64(), r.Uint64()}
		}
		hashes = append(hashes, keys[i][0], keys[i][1])
	}
	for _, mem := range []int64{1 << 30, 16 << 30} {
		for _, presize := range []bool{false, true} {
			b.Run(fmt.Sprintf("memory=%dGiB/presized=%v", mem>>30, presize), func(b *testing.B) { benchExactTable(b, mem, presize, keys, hashes) })
		}
	}
}

func benchExactTable(b *testing.B, memory int64, presize bool, keys [][2]uint64, hashes []uint64) {
	const batch = 4096
	n := len(keys)
	b.SetBytes(16)
	b.ReportAllocs()
	newPass := func() *exactPass {
		e := newExactPass(memory, b.TempDir())
		if presize { // sized for the documents at once, as from the first batch
			e.presize(int64(n))
		}
		return e
	}
	e := newPass()
	cpu := cputime.Process()
	for i := 0; b.Loop(); i++ {
		if i == n+batch {
			if err := e.finish(func(_, _ uint32) {}); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			e = newPass()
			i = 0
			b.StartTimer()
		}
		if i < n {
			_ = e.has(keys[i]) // a worker's question
		}
		d := i - batch // the collector's document
		if d < 0 {
			continue
		}
		if d%batch == 0 {
			e.prefetch(hashes[2*d : 2*min(d+batch, n)])
		}
		if _, err := e.resolve(keys[d], uint32(d)); err != nil {
			b.Fatal(err)
		}
	}
	if cpu := cputime.Process() - cpu; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
