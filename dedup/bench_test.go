package dedup

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
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
			for b.Loop() {
				var err error
				rep, err = Run(context.Background(), []string{in}, b.TempDir(), &Options{Verify: v})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rep.Counts.VerifiedPairs), "pairs")
			b.ReportMetric(float64(rep.PeakRSSBytes)/(1<<20), "peakRSS-MiB")
			for _, tm := range rep.Timings {
				b.ReportMetric(tm.Seconds*1000, tm.Stage+"-ms")
			}
		})
	}
}
