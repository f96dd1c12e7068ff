package dedup

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"

	"github.com/neardup/neardup/internal/cputime"
)

// GoSourceCorpus writes every .go file under GOROOT/src (about 7,700 files,
// 100 MB of real text) as JSONL documents {"id": path, "text": source} to
// path, in lexical path order, and returns its size.
func GoSourceCorpus(tb testing.TB, path string) int64 {
	tb.Helper()
	root := filepath.Join(runtime.GOROOT(), "src")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		return enc.Encode(doc{ID: filepath.ToSlash(rel), Text: string(data)})
	})
	if err != nil {
		tb.Fatal(err)
	}
	st, _ := f.Stat()
	return st.Size()
}

// BenchmarkDedupGoSource measures the whole batch job — reading JSONL,
// signing, banding, candidates, exact verification, clustering, writing all
// outputs — on the Go source tree (~100 MB), bytes of input per second.
func BenchmarkDedupGoSource(b *testing.B) {
	in := filepath.Join(b.TempDir(), "gosrc.jsonl")
	size := GoSourceCorpus(b, in)
	for _, v := range []Verify{VerifyExact, VerifyEstimate} {
		b.Run("verify="+v.String(), func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			var rep *Report
			cpu0 := cputime.Process()
			for b.Loop() {
				var err error
				rep, err = Run(context.Background(), []string{in}, b.TempDir(), &Options{Verify: v})
				if err != nil {
					b.Fatal(err)
				}
			}
			cputime.ReportPerOp(b, cputime.Process()-cpu0)
			b.ReportMetric(float64(rep.Counts.VerifiedPairs), "pairs")
			b.ReportMetric(float64(rep.PeakRSSBytes)/(1<<20), "peakRSS-MiB")
			for _, tm := range rep.Timings {
				b.ReportMetric(tm.Seconds*1000, tm.Stage+"-ms")
			}
		})
	}
}

// BenchmarkSignBandCandidates measures what minhash-lsh style libraries do
// after shingling — signatures, band keys, candidate pairs — on the Go source
// tree's features (word 5-grams, computed before the timer), on all cores.
// Bytes per second are of the source text the features came from.
func BenchmarkSignBandCandidates(b *testing.B) {
	in := filepath.Join(b.TempDir(), "gosrc.jsonl")
	GoSourceCorpus(b, in)
	docs := readJSONL(b, in)
	sh := shingle.MustNew(shingle.Prose)
	features := make([][]uint64, len(docs))
	var size int64
	for i, d := range docs {
		features[i] = sh.AppendFeatures(nil, []byte(d.Text))
		size += int64(len(d.Text))
	}
	params := minhash.Params{K: 128}
	params.EnsureDefaults()
	bands, _ := lsh.ForRecall(0.8, 128, 0.99)
	workers := runtime.GOMAXPROCS(0)
	b.SetBytes(size)
	b.ReportAllocs()
	var pairs int
	cpu0 := cputime.Process()
	for b.Loop() {
		entries := make([][]uint64, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				h := minhash.MustNewHasher(params)
				var sig minhash.Signature
				var slots, keys []uint64
				for i := w; i < len(features); i += workers {
					sig = h.Sign(sig[:0], features[i])
					slots = params.AppendSlots(slots[:0], sig)
					keys = bands.AppendKeys(keys[:0], slots)
					entries[w] = lsh.AppendEntries(entries[w], keys, uint32(i), 32)
				}
			}()
		}
		wg.Wait()
		var all []uint64
		for _, e := range entries {
			all = append(all, e...)
		}
		got, _, err := lsh.Candidates(nil, all, 32, &lsh.CandidateOptions{Workers: workers})
		if err != nil {
			b.Fatal(err)
		}
		pairs = len(got)
	}
	cputime.ReportPerOp(b, cputime.Process()-cpu0)
	b.ReportMetric(float64(pairs), "candidates")
}
