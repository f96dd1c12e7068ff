package cli

import (
	"bufio"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// gorootJSONL writes every .go file under GOROOT/src, in path order, as one
// JSONL record {"id": relative path, "text": source} and returns the file's
// path, its size and the number of documents (7,711 in Go 1.26.8); it skips
// b if the sources are missing.
func gorootJSONL(b *testing.B) (path string, size int64, docs int) {
	b.Helper()
	root := filepath.Join(runtime.GOROOT(), "src")
	var paths []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") {
			paths = append(paths, p)
		}
		return nil
	})
	if len(paths) < 1000 {
		b.Skipf("only %d Go files under %s", len(paths), root)
	}
	slices.Sort(paths)
	out := filepath.Join(b.TempDir(), "goroot.jsonl")
	f, err := os.Create(out)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for _, p := range paths {
		text, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		line, _ := json.Marshal(map[string]string{"id": rel, "text": string(text)})
		w.Write(line)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	st, _ := os.Stat(out)
	return out, st.Size(), len(paths)
}

// BenchmarkEvalTruthGoroot measures the whole `neardup eval truth` command
// on the Go source tree as JSONL (7,711 documents, 100 MB in Go 1.26.8):
// reading and parsing JSONL, shingling, the join and writing the truth file.
// Bytes are the JSONL file's; docs/s counts the files found.
func BenchmarkEvalTruthGoroot(b *testing.B) {
	in, size, docs := gorootJSONL(b)
	out := filepath.Join(b.TempDir(), "truth.tsv")
	for _, spec := range []string{"prose", "code"} {
		b.Run("shingle="+spec+"/t=0.5", func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				code := Main(b.Context(), []string{"eval", "truth", "--shingle", spec, "--threshold", "0.5", "-o", out, in},
					IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard})
				if code != 0 {
					b.Fatalf("exit %d", code)
				}
			}
			b.ReportMetric(float64(docs)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
		})
	}
}
