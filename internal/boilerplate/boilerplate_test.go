package boilerplate

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/sitetemplate"
	"github.com/neardup/neardup/shingle"
)

// articles returns the bundled articles' texts.
func articles(t testing.TB) []string {
	t.Helper()
	f, err := os.Open("../../testdata/articles_1000.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var rec struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		out = append(out, rec.Text)
	}
	return out
}

// writeCorpus writes texts as JSON Lines with ids d0, d1, … and returns the
// path.
func writeCorpus(t testing.TB, texts []string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "corpus.jsonl")
	var b strings.Builder
	for i, text := range texts {
		line, _ := json.Marshal(map[string]string{"id": fmt.Sprint("d", i), "text": text})
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func templateSet(t testing.TB, spec shingle.Spec) []uint64 {
	sh := shingle.MustNew(spec)
	var hs []uint64
	for _, l := range sitetemplate.Lines() {
		for _, ln := range sh.AppendLines(nil, []byte(l)) {
			hs = append(hs, ln.Hash)
		}
	}
	slices.Sort(hs)
	return slices.Compact(hs)
}

// TestCountSiteTemplate: on the articles wrapped in one template, auto
// finds exactly the template's lines, at the first bin past the unique
// tail (every article is one line of its own), and reports their texts.
func TestCountSiteTemplate(t *testing.T) {
	var pages []string
	for _, a := range articles(t) {
		pages = append(pages, sitetemplate.Wrap(a))
	}
	path := writeCorpus(t, pages)
	res, err := Count(context.Background(), []string{path}, nil, shingle.Prose, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := templateSet(t, shingle.Prose)
	if got := res.Set.Lines(); !slices.Equal(got, want) {
		t.Fatalf("set of %d lines; want the template's %d", len(got), len(want))
	}
	if !res.Auto || res.MinDocs != 512 || res.Documents != 1000 || res.Lines != len(want) || res.Dropped != int64(1000*len(want)) {
		t.Errorf("auto %v, N %d, documents %d, lines %d, dropped %d; want auto, 512 (the bin of 1000), 1000, %d, %d",
			res.Auto, res.MinDocs, res.Documents, res.Lines, res.Dropped, len(want), 1000*len(want))
	}
	if !strings.Contains(res.Reason, "512–1023 documents") {
		t.Errorf("reason %q does not name the bin", res.Reason)
	}
	if len(res.Top) != DefaultTop {
		t.Fatalf("%d top lines; want %d", len(res.Top), DefaultTop)
	}
	isLine := func(text string) bool { // a template line, or its first 200 bytes
		for _, l := range sitetemplate.Lines() {
			if l == text || len(text) >= 190 && strings.HasPrefix(l, text) {
				return true
			}
		}
		return false
	}
	for _, tl := range res.Top {
		if tl.Docs != 1000 || !isLine(tl.Text) {
			t.Errorf("top line %+v is not a template line in 1000 documents", tl)
		}
	}
	// The histogram: the articles in bin 0, the template in bin 9.
	if h := res.Histogram; len(h) != 10 || h[0].Lines != 1000 || h[9].Lines != int64(len(want)) || h[9].MinDocs != 512 {
		t.Errorf("histogram %+v", h)
	}
}

// TestCountExact compares the counts with a plain map count on a corpus of
// random lines drawn with skewed frequencies, for explicit N, and checks
// that neither workers nor a budget that spills change anything.
func TestCountExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	vocab := make([]string, 3000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("line number %d of the vocabulary, with words %d", i, rng.IntN(1000))
	}
	var texts []string
	for range 3000 {
		var lines []string
		for range 3 + rng.IntN(20) {
			// Zipf-like: low ranks are common.
			k := int(float64(len(vocab)) * rng.Float64() * rng.Float64() * rng.Float64())
			lines = append(lines, vocab[k])
		}
		texts = append(texts, strings.Join(lines, "\n"))
	}
	path := writeCorpus(t, texts)
	sh := shingle.MustNew(shingle.Web)
	df := map[uint64]int64{}
	for _, text := range texts {
		seen := map[uint64]bool{}
		for _, l := range sh.AppendLines(nil, []byte(text)) {
			if !seen[l.Hash] {
				seen[l.Hash] = true
				df[l.Hash]++
			}
		}
	}
	for _, n := range []int{2, 10, 50} {
		var want []uint64
		for h, k := range df {
			if k >= int64(n) {
				want = append(want, h)
			}
		}
		slices.Sort(want)
		var first *Result
		for _, o := range []Options{{MinDocs: n, Workers: 1}, {MinDocs: n, Workers: 3, Memory: 1 << 20, TempDir: t.TempDir()}} {
			res, err := Count(context.Background(), []string{path}, nil, shingle.Web, &o)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Set.Lines(); !slices.Equal(got, want) {
				t.Fatalf("N %d, %+v: %d lines; want %d", n, o, len(got), len(want))
			}
			if first == nil {
				first = res
				continue
			}
			res.Set, first.Set = nil, nil
			if !reflect.DeepEqual(res, first) {
				t.Errorf("N %d: results differ with workers and budget:\n%+v\n%+v", n, res, first)
			}
		}
		for _, tl := range first.Top {
			var h uint64
			fmt.Sscanf(tl.Hash, "%x", &h)
			if df[h] != tl.Docs || tl.Text == "" {
				t.Errorf("top line %+v: counted %d", tl, df[h])
			}
		}
	}
}

func TestChooseN(t *testing.T) {
	for _, c := range []struct {
		name  string
		hist  []int64
		limit int
		want  int
	}{
		{"template far out", []int64{1000, 0, 0, 0, 0, 0, 0, 0, 0, 33}, MaxLines, 512},
		{"geometric tail only", []int64{100000, 10000, 1000, 100, 10, 1}, MaxLines, 0},
		{"bump over the tail", []int64{100000, 10000, 1000, 100, 300, 20}, MaxLines, 16},
		{"too few lines", []int64{1000, 0, 0, 3}, MaxLines, 0},
		{"first bin too big for the set", []int64{100, 0, 0, 50, 10}, 20, 16},
		{"nothing at all", nil, MaxLines, 0},
	} {
		n, reason, err := chooseN(0, 0, c.hist, c.limit)
		if err != nil || n != c.want {
			t.Errorf("%s: N %d (%v); want %d; %s", c.name, n, err, c.want, reason)
		}
	}
	if _, _, err := chooseN(3, 50, nil, 20); !errors.Is(err, ErrTooManyLines) {
		t.Errorf("50 lines for a set of 20: %v; want ErrTooManyLines", err)
	}
	if n, _, err := chooseN(3, 20, nil, 20); n != 3 || err != nil {
		t.Errorf("given N: %d, %v", n, err)
	}
}

func TestOptions(t *testing.T) {
	for _, o := range []Options{{MinDocs: 1}, {MinDocs: -2}, {Memory: 1000}, {Top: -1}} {
		if _, err := Count(context.Background(), []string{"x.jsonl"}, nil, shingle.Prose, &o); !errors.Is(err, ErrBadOptions) {
			t.Errorf("%+v: %v; want ErrBadOptions", o, err)
		}
	}
}

// TestCMS: estimates never fall below the true counts.
func TestCMS(t *testing.T) {
	c := newCMS(1 << 12) // small: collisions
	rng := rand.New(rand.NewPCG(7, 8))
	want := map[uint64]uint32{}
	for range 100000 {
		h := rng.Uint64() % 20000
		h *= 0x9e3779b97f4a7c15
		want[h]++
		if est := c.add(h); est < want[h] {
			t.Fatalf("estimate %d below count %d", est, want[h])
		}
	}
	for h, n := range want {
		if c.estimate(h) < n {
			t.Fatalf("estimate %d below count %d", c.estimate(h), n)
		}
	}
}

// TestCountSkipBad: records are read as the corpus options say: a JSON line
// that does not parse fails the count, or under SkipBad is left out.
func TestCountSkipBad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.jsonl")
	var b strings.Builder
	for i := range 10 {
		fmt.Fprintf(&b, `{"id":"%d","text":"footer line\nbody %d"}`+"\n", i, i)
	}
	b.WriteString("not json\n")
	os.WriteFile(path, []byte(b.String()), 0o644)
	if _, err := Count(context.Background(), []string{path}, nil, shingle.Prose, &Options{MinDocs: 5}); err == nil {
		t.Fatal("a bad record without SkipBad is not an error")
	}
	res, err := Count(context.Background(), []string{path}, &corpus.Options{SkipBad: true}, shingle.Prose, &Options{MinDocs: 5})
	if err != nil || res.Documents != 10 || res.Lines != 1 || res.Top[0].Text != "footer line" {
		t.Fatalf("%+v, %v", res, err)
	}
}

// TestLinesFile: a count written as a lines file reads back to the same set
// (and top lines) under the same spec, and is refused under another.
func TestLinesFile(t *testing.T) {
	var pages []string
	for _, a := range articles(t)[:100] {
		pages = append(pages, sitetemplate.Wrap(a))
	}
	pages = append(pages, "a line with a \"quote\"\tand a tab\n"+sitetemplate.Wrap("x"))
	path := writeCorpus(t, pages)
	res, err := Count(context.Background(), []string{path}, nil, shingle.Web, &Options{MinDocs: 50})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteLines(&b, shingle.Web, res); err != nil {
		t.Fatal(err)
	}
	back, err := ReadLines(strings.NewReader(b.String()), "lines.tsv", shingle.Web)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Set.Lines(), res.Set.Lines()) || !reflect.DeepEqual(back.Top, res.Top) || back.MinDocs != 50 || back.Documents != 101 {
		t.Fatalf("read back %+v\nwrote %+v", back, res)
	}
	if _, err := ReadLines(strings.NewReader(b.String()), "lines.tsv", shingle.Prose); !errors.Is(err, ErrBadFile) {
		t.Errorf("under another spec: %v; want ErrBadFile", err)
	}
	cut := b.String()[:len(b.String())-40]
	cut = cut[:strings.LastIndexByte(cut, '\n')+1]
	if _, err := ReadLines(strings.NewReader(cut), "lines.tsv", shingle.Web); !errors.Is(err, ErrBadFile) {
		t.Errorf("cut short: %v; want ErrBadFile", err)
	}
	for _, bad := range []string{"", "id\ttext\n", "# neardup boilerplate v1 spec=" + shingle.Web.String() + "\nzz\t1\tx\n"} {
		if _, err := ReadLines(strings.NewReader(bad), "x", shingle.Web); !errors.Is(err, ErrBadFile) {
			t.Errorf("%q: %v; want ErrBadFile", bad, err)
		}
	}
}
