package dedup

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/internal/cputime"
)

// againstBenchCorpus generates, with the repository's generator
// (internal/tools/gencorpus, seed 5, 20% near duplicates), 11·n documents
// and cuts them into a reference corpus of the first 10·n and an input of
// the last n, whose near duplicates fall in the reference and in itself; it
// writes the reference's signature file too, and returns the three paths.
func againstBenchCorpus(b *testing.B, n int) (ref, refSigs, input string) {
	b.Helper()
	dir := b.TempDir()
	all := filepath.Join(dir, "all.jsonl")
	cmd := exec.Command("go", "run", "./internal/tools/gencorpus", "-docs", fmt.Sprint(11*n), "-seed", "5", "-o", all)
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("gencorpus: %v\n%s", err, out)
	}
	docs := readJSONL(b, all)
	ref, input, refSigs = filepath.Join(dir, "ref.jsonl"), filepath.Join(dir, "input.jsonl"), filepath.Join(dir, "ref.ndsf")
	writeJSONL(b, ref, docs[:10*n])
	writeJSONL(b, input, docs[10*n:])
	writeSigs(b, refSigs, docs[:10*n], &Options{})
	return ref, refSigs, input
}

// BenchmarkAgainst measures issue 13's claim: deduplicating an input
// against a reference ten times its size given as signatures costs about
// what the input alone costs, well under deduplicating reference and input
// together from text. Bytes per second are of the input in every case:
//
//	input              dedup INPUT: the input alone
//	against-signatures dedup --against REF.ndsf INPUT: the reference read
//	                   and banded, not signed
//	against-corpus     dedup --against REF.jsonl INPUT: the reference signed
//	ref+input          dedup REF INPUT: both from text
//
// NEARDUP_BENCH_DOCS sets n, the input's documents (default 5,000: the
// reference holds 50,000, about 90 MB with the input).
func BenchmarkAgainst(b *testing.B) {
	n := 5000
	if s := os.Getenv("NEARDUP_BENCH_DOCS"); s != "" {
		fmt.Sscan(s, &n)
	}
	ref, refSigs, input := againstBenchCorpus(b, n)
	st, err := os.Stat(input)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		inputs  []string
		against []string
	}{
		{"input", []string{input}, nil},
		{"against-signatures", []string{input}, []string{refSigs}},
		{"against-corpus", []string{input}, []string{ref}},
		{"ref+input", []string{ref, input}, nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(st.Size())
			b.ReportAllocs()
			var rep *Report
			cpu0 := cputime.Process()
			for b.Loop() {
				rep, err = Run(context.Background(), c.inputs, b.TempDir(), &Options{Against: c.against, Memory: 1 << 30})
				if err != nil {
					b.Fatal(err)
				}
			}
			cputime.ReportPerOp(b, cputime.Process()-cpu0)
			b.ReportMetric(float64(rep.Counts.Removed), "removed")
			b.ReportMetric(float64(rep.PeakRSSBytes)/(1<<20), "peakRSS-MiB")
			for _, tm := range rep.Timings {
				b.ReportMetric(tm.Seconds*1000, tm.Stage+"-ms")
			}
		})
	}
}
