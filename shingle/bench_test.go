package shingle

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// benchCorpora returns real texts to measure on: the bundled news articles
// (ASCII English prose), the same articles typeset as web pages usually are
// ("web": curly quotes and apostrophes, en dashes, no-break spaces, so every
// document takes the Unicode path) and Go source files from GOROOT (code,
// some Unicode).
func benchCorpora(b *testing.B) map[string][][]byte {
	out := map[string][][]byte{}
	typeset := strings.NewReplacer("'", "’", ` "`, " “", `" `, "” ", " - ", " – ", ", ", ", ")
	for _, t := range realTexts(b, 1000) {
		out["articles"] = append(out["articles"], []byte(t))
		out["web"] = append(out["web"], []byte(typeset.Replace(t)))
	}
	var files []string
	filepath.WalkDir(filepath.Join(runtime.GOROOT(), "src", "net", "http"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".go" {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err == nil {
			out["gosrc"] = append(out["gosrc"], data)
		}
	}
	return out
}

// BenchmarkAppendFeatures measures shingling alone (normalise, segment, hash),
// bytes of input text per second, per spec and corpus.
func BenchmarkAppendFeatures(b *testing.B) {
	corpora := benchCorpora(b)
	specs := []struct {
		name string
		spec Spec
	}{
		{"word5", Prose},
		{"char5", Spec{Unit: Char, N: 5, NFKC: true, CaseFold: true, FoldPunct: true, FoldSpace: true}},
		{"char3-cjk", CJK},
		{"token5", Spec{Unit: Token, N: 5, NFKC: true, FoldSpace: true}},
	}
	for _, corpus := range []string{"articles", "web", "gosrc"} {
		docs := corpora[corpus]
		if len(docs) == 0 {
			continue
		}
		var total int64
		for _, d := range docs {
			total += int64(len(d))
		}
		for _, sp := range specs {
			b.Run(corpus+"/"+sp.name, func(b *testing.B) {
				s := MustNew(sp.spec)
				dst := make([]uint64, 0, 1<<20)
				b.SetBytes(total)
				b.ReportAllocs()
				var sink int
				c0 := cpuTime()
				for b.Loop() {
					for _, d := range docs {
						sink += len(s.AppendFeatures(dst[:0], d))
					}
				}
				reportCPU(b, total, cpuTime()-c0)
				b.ReportMetric(float64(sink)/float64(b.N)/float64(len(docs)), "features/doc")
			})
		}
	}
}
