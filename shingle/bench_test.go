package shingle

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/cputime"
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
	out["cjk"] = syntheticCJK(1000)
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

// syntheticCJK returns n Japanese-like documents of about 500 code points
// (1.5 KB): sentences of kanji (Zipf-distributed over 2,000 ideographs),
// hiragana and katakana, with the ideographic comma and full stop, some
// full-width digits and an occasional ASCII word. It is not real text — the
// bundled sample has none — but it takes the same paths real CJK text does.
func syntheticCJK(n int) [][]byte {
	rng := rand.New(rand.NewPCG(42, 42))
	zipf := rand.NewZipf(rng, 1.1, 1, 1999)
	docs := make([][]byte, n)
	for d := range docs {
		var b strings.Builder
		for b.Len() < 1500 {
			for range 8 + rng.IntN(30) {
				switch x := rng.IntN(100); {
				case x < 45:
					b.WriteRune(rune(0x4e00 + zipf.Uint64()*7)) // kanji
				case x < 80:
					b.WriteRune(rune(0x3041 + rng.IntN(83))) // hiragana
				case x < 95:
					b.WriteRune(rune(0x30a1 + rng.IntN(86))) // katakana
				case x < 97:
					b.WriteRune(rune(0xff10 + rng.IntN(10))) // full-width digits
				case x < 98:
					b.WriteString(" Go ")
				default:
					b.WriteRune('、') // 、
				}
			}
			b.WriteRune('。') // 。
		}
		docs[d] = []byte(b.String())
	}
	return docs
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
	for _, corpus := range []string{"articles", "web", "cjk", "gosrc"} {
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
				c0 := cputime.Process()
				for b.Loop() {
					for _, d := range docs {
						sink += len(s.AppendFeatures(dst[:0], d))
					}
				}
				cputime.ReportThroughput(b, total, cputime.Process()-c0)
				b.ReportMetric(float64(sink)/float64(b.N)/float64(len(docs)), "features/doc")
			})
		}
	}
}
