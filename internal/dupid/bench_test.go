package dupid

import (
	"fmt"
	"strconv"
	"testing"
)

// BenchmarkDetector adds n distinct ids of 16 bytes ("g" and 15 digits, like
// gencorpus's) with their positions and runs First, in memory and under a
// budget that spills. SetBytes counts the id bytes; ns/id is the cost per id
// of the whole check.
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
			bytes := int64(len(arena))
			b.Run("n="+strconv.Itoa(n)+"/mem="+strconv.FormatInt(mem>>20, 10)+"MiB", func(b *testing.B) {
				b.SetBytes(bytes)
				b.ReportAllocs()
				var spilled int64
				for b.Loop() {
					d, err := New(&Options{Memory: mem, TempDir: b.TempDir()})
					if err != nil {
						b.Fatal(err)
					}
					for i := range n {
						id := arena[i*idLen : (i+1)*idLen]
						if err := d.Add(id, Position{File: "corpus.jsonl", Line: int64(i + 1), Index: int64(i)}); err != nil {
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
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/id")
				b.ReportMetric(float64(spilled)/float64(n), "spilled-B/id")
			})
		}
	}
}
