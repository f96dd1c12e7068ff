package minhash

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/neardup/neardup/shingle"
)

// benchDocs returns the bundled sample corpus (1,000 news articles, ASCII,
// 1.5 MB): real text, not random bytes.
func benchDocs(b testing.TB) (docs [][]byte, total int64) {
	f, err := os.Open("../testdata/articles_1000.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var rec struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			b.Fatal(err)
		}
		docs = append(docs, []byte(rec.Text))
		total += int64(len(rec.Text))
	}
	return docs, total
}

// BenchmarkSignText measures text → 128-slot signature (normalisation on),
// in bytes of text per second, for each scheme and both common shingles.
//
// The "web" corpus is the same articles typeset as web pages usually are
// (curly quotes and apostrophes, en dashes, no-break spaces): every document
// takes the shingler's Unicode path.
func BenchmarkSignText(b *testing.B) {
	docs, total := benchDocs(b)
	typeset := strings.NewReplacer("'", "\u2019", ` "`, " \u201c", `" `, "\u201d ", " - ", " \u2013 ", ", ", ",\u00a0")
	var web [][]byte
	var webTotal int64
	for _, d := range docs {
		web = append(web, []byte(typeset.Replace(string(d))))
		webTotal += int64(len(web[len(web)-1]))
	}
	shingles := []struct {
		name string
		spec shingle.Spec
	}{
		{"char5", shingle.Spec{Unit: shingle.Char, N: 5, NFKC: true, CaseFold: true, FoldPunct: true, FoldSpace: true}},
		{"word5", shingle.Prose},
	}
	schemes := []struct {
		name string
		p    Params
	}{
		{"oph", Params{K: 128}},
		{"khash", Params{K: 128, Scheme: KHash}},
	}
	for _, s := range shingles {
		for _, sc := range schemes {
			b.Run(s.name+"/"+sc.name, func(b *testing.B) {
				signAll(b, s.spec, sc.p, docs, total)
			})
			if sc.p.Scheme != KHash {
				b.Run("web/"+s.name+"/"+sc.name, func(b *testing.B) {
					signAll(b, s.spec, sc.p, web, webTotal)
				})
			}
		}
	}
}

// signAll signs every document b.N times, reporting bytes per second of
// wall and of CPU time.
func signAll(b *testing.B, spec shingle.Spec, p Params, docs [][]byte, total int64) {
	sh := shingle.MustNew(spec)
	h := MustNewHasher(p)
	dst := make(Signature, 0, h.Params().Words())
	b.SetBytes(total)
	b.ReportAllocs()
	c0 := cpuTime()
	for b.Loop() {
		for _, d := range docs {
			dst = h.SignText(dst[:0], sh, d)
		}
	}
	reportCPU(b, total, cpuTime()-c0)
}

// BenchmarkPush measures the bin update alone, per feature (8 bytes each).
func BenchmarkPush(b *testing.B) {
	features := make([]uint64, 4096)
	state := uint64(1)
	for i := range features {
		features[i] = splitmix64(&state)
	}
	for _, p := range []Params{{K: 128}, {K: 100}, {K: 128, Scheme: KHash}} {
		h := MustNewHasher(p)
		b.Run(h.Params().Scheme.String()+"/k"+itoa(h.Params().K), func(b *testing.B) {
			b.SetBytes(8 * int64(len(features)))
			for b.Loop() {
				h.Reset()
				h.Push(features)
			}
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
