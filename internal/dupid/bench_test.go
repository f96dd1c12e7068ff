package dupid

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/neardup/neardup/internal/cputime"
)

// BenchmarkDetector adds n distinct ids of 16 bytes ("g" and 15 digits, like
// gencorpus's) with their positions and runs First, in memory and under a
// budget that spills, in two ways: way=log keeps the ids (Add), way=hashed
// is dedup's (AddHash with hashes made beforehand, Options.IDAt). SetBytes
// counts the id bytes; ns/id is the cost per id of the whole check and
// cpu-s/op the process's CPU time (background work and garbage collection
// included). The hashes of way=hashed are made outside the timed loop: in
// dedup they are made on the workers.
func BenchmarkDetector(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		for _, mem := range []int64{DefaultMemory, 4 << 20} {
			// One arena, not a slice per id, so that the garbage collector
			// does not scan a million pointers of the benchmark's own.
			const idLen = 16
			arena := make([]byte, 0, n*idLen)
			for i := range n {
				arena = fmt.Appendf(arena, "g%015d", uint64(i)*2654435761%1_000_000_000_000_000)
			}
			hashes := make([]uint64, n)
			for i := range hashes {
				hashes[i] = Hash(arena[i*idLen : (i+1)*idLen])
			}
			bytes := int64(len(arena))
			for _, way := range []string{"log", "hashed"} {
				name := "n=" + strconv.Itoa(n) + "/mem=" + strconv.FormatInt(mem>>20, 10) + "MiB/way=" + way
				b.Run(name, func(b *testing.B) {
					b.SetBytes(bytes)
					b.ReportAllocs()
					var spilled int64
					cpu0 := cputime.Process()
					for b.Loop() {
						o := &Options{Memory: mem, TempDir: b.TempDir()}
						if way == "hashed" {
							o.IDAt = func(i int64) []byte { return arena[i*idLen : (i+1)*idLen] }
						}
						d, err := New(o)
						if err != nil {
							b.Fatal(err)
						}
						for i := range n {
							id := arena[i*idLen : (i+1)*idLen]
							pos := Position{File: "corpus.jsonl", Line: int64(i + 1), Index: int64(i)}
							if way == "hashed" {
								err = d.AddHash(hashes[i], id, pos)
							} else {
								err = d.Add(id, pos)
							}
							if err != nil {
								b.Fatal(err)
							}
						}
						spilled = d.SpilledBytes()
						dup, err := d.First()
						if err != nil || dup != nil {
							b.Fatalf("got %v, %v; want no duplicate", dup, err)
						}
						d.Close()
					}
					cputime.ReportPerOp(b, cputime.Process()-cpu0)
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/id")
					b.ReportMetric(float64(spilled)/float64(n), "spilled-B/id")
				})
			}
		}
	}
}
