package dedup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/internal/cputime"
)

// BenchmarkExactPass measures what the exact-duplicate pass saves: the
// whole job (reading, signing, banding, candidates, exact verification,
// clustering, writing) on 10,000 documents — articles and their near
// duplicates, of which a share are exact copies (to the spec) of earlier
// documents — with the pass (the default) and without it
// (Options.SkipExactPass). Bytes per second are of the JSONL input; the
// outputs are the same (TestExactPass). Compare with
//
//	go test ./dedup -run '^$' -bench ExactPass -count 6 | tee out.txt
//	benchstat -col /pass out.txt
func BenchmarkExactPass(b *testing.B) {
	for _, share := range []float64{0, 0.3} {
		docs, copies := exactCopyCorpus(b, 10000, share, 0, 1)
		in := filepath.Join(b.TempDir(), "in.jsonl")
		writeJSONL(b, in, docs)
		st, err := os.Stat(in)
		if err != nil {
			b.Fatal(err)
		}
		for _, pass := range []bool{false, true} {
			b.Run(fmt.Sprintf("copies=%.0f%%/pass=%v", 100*share, pass), func(b *testing.B) {
				b.SetBytes(st.Size())
				b.ReportAllocs()
				var rep *Report
				cpu0 := cputime.Process()
				for b.Loop() {
					var err error
					rep, err = Run(context.Background(), []string{in}, b.TempDir(), &Options{SkipExactPass: !pass})
					if err != nil {
						b.Fatal(err)
					}
				}
				cputime.ReportPerOp(b, cputime.Process()-cpu0)
				b.ReportMetric(float64(copies), "copies")
				b.ReportMetric(float64(rep.Counts.ExactDuplicates), "exact-dups")
				b.ReportMetric(float64(rep.Signatures.Features), "features-signed")
			})
		}
	}
}
