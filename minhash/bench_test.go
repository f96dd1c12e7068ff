package minhash

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/shingle"

	"github.com/neardup/neardup/internal/cputime"
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

// shortDocs returns up to count short texts cut from the bundled articles,
// each a run of consecutive words (joined by single spaces) with exactly n
// distinct word 5-grams under shingle.Prose, the runs not overlapping: real
// text of the length of short web documents (n = 29 for the median 33
// words).
func shortDocs(tb testing.TB, n, count int) [][]byte {
	return cutShort(tb, []int{n}, count)
}

// cutShort is shortDocs for pieces whose feature counts cycle through ns.
func cutShort(tb testing.TB, ns []int, count int) [][]byte {
	docs, _ := benchDocs(tb)
	sh := shingle.MustNew(shingle.Prose)
	var out [][]byte
	var fs []uint64
	var distinct []uint64
	features := func(words [][]byte) int {
		fs = sh.AppendFeatures(fs[:0], bytes.Join(words, []byte{' '}))
		return len(fs)
	}
	for _, d := range docs {
		words := bytes.Fields(d)
		for i := 0; len(out) < count; {
			n := ns[len(out)%len(ns)]
			if i+n+4 > len(words) {
				break
			}
			// Normalisation may split a word (punctuation) or drop one, so
			// look for the run length that gives n features.
			w := n + 4
			for tries := 0; tries < 8 && i+w <= len(words); tries++ {
				c := features(words[i : i+w])
				if c == n {
					break
				}
				if c < n {
					w++
				} else {
					w--
				}
			}
			if i+w > len(words) || features(words[i:i+w]) != n {
				i++
				continue
			}
			// Sorted, not a map: callgrind counts instructions, and a map's
			// random seed would make setup's count vary from run to run.
			distinct = append(distinct[:0], fs...)
			slices.Sort(distinct)
			if len(slices.Compact(distinct)) == n {
				out = append(out, bytes.Join(words[i:i+w], []byte{' '}))
			}
			i += w
		}
	}
	return out
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
	c0 := cputime.Process()
	for b.Loop() {
		for _, d := range docs {
			dst = h.SignText(dst[:0], sh, d)
		}
	}
	cputime.ReportThroughput(b, total, cputime.Process()-c0)
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

// BenchmarkShortDocs splits the cost of signing short documents (K = 128
// one-permutation, 32-bit slots, word 5-grams) into stages, per document of
// n features, over 1,000 pieces of real text (shortDocs):
//
//	shingle   tokenise, normalise and hash the n-grams (AppendFeatures)
//	bin       Reset and round 0: n bin updates, features kept (Push)
//	densify   bin, then list the empty bins and run the re-hashing rounds
//	sign      densify, then the K slots finalised (fmix64) and packed: Sign
//	signtext  the fused path neardup sign takes: shingle and sign in one
//
// Stage costs are differences of neighbours (densify − bin is the rounds,
// sign − densify the finalisation); instruction counts under callgrind make
// them exact (BENCHMARKS.md, "Short documents"). Bytes are the texts' bytes
// in every stage, so that MB/s compare across stages.
func BenchmarkShortDocs(b *testing.B) {
	for _, n := range []int{20, 30, 40, 50} {
		b.Run("n="+itoa(n), func(b *testing.B) { benchShortDocs(b, n) })
	}
}

func benchShortDocs(b *testing.B, n int) {
	sh := shingle.MustNew(shingle.Prose)
	texts := shortDocs(b, n, 1000)
	if len(texts) < 1000 {
		b.Fatalf("n=%d: %d texts; want 1000", n, len(texts))
	}
	var total int64
	feats := make([][]uint64, len(texts))
	for i, t := range texts {
		total += int64(len(t))
		feats[i] = sh.AppendFeatures(nil, t)
	}
	h := MustNewHasher(Params{})
	sig := make(Signature, 0, h.Params().Words())
	var fs []uint64
	stages := []struct {
		name string
		doc  func(i int)
	}{
		{"shingle", func(i int) { fs = sh.AppendFeatures(fs[:0], texts[i]) }},
		{"bin", func(i int) { h.Reset(); h.Push(feats[i]) }},
		{"densify", func(i int) {
			h.Reset()
			h.Push(feats[i])
			if h.countEmpty() > 0 {
				h.rehash(h.feats)
			}
		}},
		{"sign", func(i int) { sig = h.Sign(sig[:0], feats[i]) }},
		{"signtext", func(i int) { sig = h.SignText(sig[:0], sh, texts[i]) }},
	}
	for _, st := range stages {
		b.Run(st.name, func(b *testing.B) {
			b.SetBytes(total)
			b.ReportAllocs()
			c0 := cputime.Process()
			for b.Loop() {
				for i := range texts {
					st.doc(i)
				}
			}
			reportPerDoc(b, len(texts), cputime.Process()-c0)
		})
	}
}

// reportPerDoc reports the wall and CPU time per document of b.N passes over
// docs documents.
func reportPerDoc(b *testing.B, docs int, cpu time.Duration) {
	n := float64(b.N) * float64(docs)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/doc")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/doc")
	}
}
