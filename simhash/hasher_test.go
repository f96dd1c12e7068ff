package simhash

import (
	"bufio"
	"encoding/json"
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"github.com/neardup/neardup/shingle"
)

// articleTexts returns the texts of the bundled articles.
func articleTexts(tb testing.TB) (texts [][]byte, total int64) {
	tb.Helper()
	f, err := os.Open("../testdata/articles_1000.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var rec struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			tb.Fatal(err)
		}
		texts = append(texts, []byte(rec.Text))
		total += int64(len(rec.Text))
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return texts, total
}

// articlesIDF returns the IDF of the bundled articles under spec.
func articlesIDF(tb testing.TB, spec shingle.Spec, texts [][]byte) *IDF {
	tb.Helper()
	sh := shingle.MustNew(spec)
	df, err := NewDFTable(DFOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	for _, t := range texts {
		df.AddText(sh, t)
	}
	return df.IDF()
}

// TestHasherDefinition checks FingerprintText against the definitions: TF is
// Fingerprint of the features with repeats; TF-IDF is the weighted
// fingerprint with each occurrence voting its IDF weight, computed one bit at
// a time. Both specs exercise long and short documents (a char 3-gram spec
// makes many features per text, several chunks of the shingler).
func TestHasherDefinition(t *testing.T) {
	texts, _ := articleTexts(t)
	texts = append(texts, nil, []byte("one"), []byte("a b c d e f"))
	step := 1
	if raceEnabled || testing.Short() {
		step = 7
	}
	for _, spec := range []shingle.Spec{shingle.Prose, {Unit: shingle.Char, N: 3, FoldSpace: true}} {
		sh := shingle.MustNew(spec)
		idf := articlesIDF(t, spec, texts)
		var tf Hasher // the zero value: TF
		tfidf := NewHasher(idf)
		if tf.DFFingerprint() != 0 || tfidf.DFFingerprint() != idf.Fingerprint() || idf.Fingerprint() == 0 {
			t.Fatalf("DFFingerprint: tf %x, tfidf %x; want 0 and %x", tf.DFFingerprint(), tfidf.DFFingerprint(), idf.Fingerprint())
		}
		var fs []uint64
		var ws []float64
		for i := 0; i < len(texts); i += step {
			fs = sh.AppendFeatures(fs[:0], texts[i])
			if got, want := tf.FingerprintText(sh, texts[i]), Fingerprint(fs); got != want {
				t.Fatalf("%v text %d: TF FingerprintText = %#x; want Fingerprint = %#x", spec, i, got, want)
			}
			if tf.Features() != len(fs) {
				t.Fatalf("%v text %d: TF Features() = %d; want %d", spec, i, tf.Features(), len(fs))
			}
			ws = ws[:0]
			for _, f := range fs {
				ws = append(ws, float64(idf.Weight(f)))
			}
			want := refWeighted(fs, ws)
			if got := tfidf.FingerprintText(sh, texts[i]); got != want {
				t.Fatalf("%v text %d: TF-IDF FingerprintText = %#x; want %#x", spec, i, got, want)
			}
			if tfidf.Features() != len(fs) {
				t.Fatalf("%v text %d: TF-IDF Features() = %d; want %d", spec, i, tfidf.Features(), len(fs))
			}
			if got := tfidf.FingerprintFeatures(fs); got != want || tfidf.Features() != len(fs) {
				t.Fatalf("%v text %d: TF-IDF FingerprintFeatures = %#x (%d features); want %#x (%d)", spec, i, got, tfidf.Features(), want, len(fs))
			}
			if got, err := FingerprintWeighted(fs, ws); err != nil || got != want {
				t.Fatalf("%v text %d: FingerprintWeighted = %#x, %v; want %#x", spec, i, got, err, want)
			}
		}
	}
}

// TestHasherWeightedPlanes checks the bit-plane counter on random features
// with random weights in the full range, many features (past the counters'
// 255-block flush) and few, in random order: it must equal the one-bit-at-a-
// time definition, whatever the order.
func TestHasherWeightedPlanes(t *testing.T) {
	r := rand.New(rand.NewPCG(81, 82))
	var p planes
	for _, n := range []int{0, 1, 2, 15, 16, 17, 300, 5000, 70000} {
		fs := randFeatures(r, n)
		ws := make([]uint16, n)
		wf := make([]float64, n)
		for i := range ws {
			ws[i] = uint16(8 + r.IntN(363-8+1))
			if i%5 == 0 {
				ws[i] = 8 // many equal weights: ties within a plane
			}
			wf[i] = float64(ws[i])
		}
		want := refWeighted(fs, wf)
		for round := range 3 {
			p.reset()
			for i, f := range fs {
				p.add(f, ws[i])
			}
			if got := p.sum(); got != want {
				t.Fatalf("n=%d round %d: %#x; want %#x", n, round, got, want)
			}
			r.Shuffle(n, func(i, j int) { fs[i], fs[j] = fs[j], fs[i]; ws[i], ws[j] = ws[j], ws[i] })
		}
	}
	// Exact ties: two features with opposite bits and equal weights give
	// votes of exactly 0, so bit 0 everywhere.
	p.reset()
	p.add(0x0123456789ABCDEF, 77)
	p.add(^uint64(0x0123456789ABCDEF), 77)
	if got := p.sum(); got != 0 {
		t.Errorf("tied votes: %#x; want 0", got)
	}
}

// TestHasherCopyAndAllocs checks that a copied Hasher computes with its own
// state and that fingerprinting a text allocates nothing after the first.
func TestHasherCopyAndAllocs(t *testing.T) {
	texts, _ := articleTexts(t)
	sh := shingle.MustNew(shingle.Prose)
	idf := articlesIDF(t, shingle.Prose, texts[:100])
	for _, h := range []*Hasher{{}, NewHasher(idf)} {
		want := h.FingerprintText(sh, texts[3])
		c := *h // a copy made after use holds the original's bound sink
		if got := c.FingerprintText(sh, texts[3]); got != want {
			t.Fatalf("copy: %#x; want %#x", got, want)
		}
		if got := h.FingerprintText(sh, texts[3]); got != want {
			t.Fatalf("original after the copy was used: %#x; want %#x", got, want)
		}
		if raceEnabled {
			continue
		}
		for _, tx := range texts[:50] {
			h.FingerprintText(sh, tx) // warm the shingler's buffers
		}
		i := 0
		if a := testing.AllocsPerRun(100, func() {
			h.FingerprintText(sh, texts[i%50])
			i++
		}); a != 0 {
			t.Errorf("DFFingerprint %x: %v allocations per text; want 0", h.DFFingerprint(), a)
		}
	}
	df, _ := NewDFTable(DFOptions{Rows: 1, LogWidth: 12})
	for _, tx := range texts[:50] {
		df.AddText(sh, tx)
	}
	if raceEnabled {
		return
	}
	i := 0
	if a := testing.AllocsPerRun(100, func() {
		df.AddText(sh, texts[i%50])
		i++
	}); a != 0 {
		t.Errorf("DFTable.AddText: %v allocations per text; want 0", a)
	}
}

// TestIDFShared checks that one IDF serves Hashers on several goroutines (it
// is immutable): each gets the fingerprints a single Hasher computes alone.
// Run under -race.
func TestIDFShared(t *testing.T) {
	texts, _ := articleTexts(t)
	texts = texts[:200]
	idf := articlesIDF(t, shingle.Prose, texts)
	want := make([]uint64, len(texts))
	h := NewHasher(idf)
	sh := shingle.MustNew(shingle.Prose)
	for i, tx := range texts {
		want[i] = h.FingerprintText(sh, tx)
	}
	const workers = 4
	got := make([][]uint64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			h := NewHasher(idf)
			sh := shingle.MustNew(shingle.Prose)
			for i := range texts {
				tx := texts[(i+w*37)%len(texts)]
				got[w] = append(got[w], h.FingerprintText(sh, tx))
			}
		})
	}
	wg.Wait()
	for w := range workers {
		for i := range texts {
			if g, x := got[w][i], want[(i+w*37)%len(texts)]; g != x {
				t.Fatalf("worker %d text %d: %#x; want %#x", w, i, g, x)
			}
		}
	}
}
