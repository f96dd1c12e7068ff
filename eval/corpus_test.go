package eval

// Test-only feature extraction and corpora. The real shingler lives in package
// shingle; these stand-ins are deliberately simple and self-contained.

import (
	"bufio"
	"bytes"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/zeebo/xxh3"
)

const articlesPath = "../../shared/data/articles/articles_2500.train"

// normWords lowercases text and rewrites it as its alphanumeric words joined
// by single spaces, appending to dst; ends receives each word's end offset in
// dst (its start is the previous end + 1, or 0). Non-ASCII letters and digits
// count as alphanumeric.
func normWords(dst []byte, ends []int, text []byte) ([]byte, []int) {
	inWord := false
	for i := 0; i < len(text); {
		c := text[i]
		var alnum bool
		var r rune
		size := 1
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			alnum = 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
		} else {
			r, size = utf8.DecodeRune(text[i:])
			alnum = unicode.IsLetter(r) || unicode.IsDigit(r)
		}
		if alnum {
			if !inWord && len(dst) > 0 {
				dst = append(dst, ' ')
			}
			inWord = true
			if c < utf8.RuneSelf {
				dst = append(dst, c)
			} else {
				dst = utf8.AppendRune(dst, unicode.ToLower(r))
			}
		} else if inWord {
			inWord = false
			ends = append(ends, len(dst))
		}
		i += size
	}
	if inWord {
		ends = append(ends, len(dst))
	}
	return dst, ends
}

// tokenizer holds reusable buffers; not safe for concurrent use.
type tokenizer struct {
	buf  []byte
	ends []int
}

// words appends the xxh3-64 hashes of text's word n-grams (lowercased
// alphanumeric words joined by one space) to dst. A text with fewer than n
// words yields one shingle of all its words, or none if it has no words. The
// result is not normalised.
func (tk *tokenizer) words(dst []uint64, text []byte, n int) []uint64 {
	tk.buf, tk.ends = normWords(tk.buf[:0], tk.ends[:0], text)
	w, e := tk.buf, tk.ends
	if len(e) == 0 {
		return dst
	}
	if len(e) < n {
		return append(dst, xxh3.Hash(w))
	}
	for i := 0; i+n <= len(e); i++ {
		start := 0
		if i > 0 {
			start = e[i-1] + 1
		}
		dst = append(dst, xxh3.Hash(w[start:e[i+n-1]]))
	}
	return dst
}

// chars appends the xxh3-64 hashes of every n-byte window of text after ASCII
// lowercasing and collapsing each run of whitespace to one space (leading and
// trailing whitespace dropped). A shorter non-empty text yields one shingle.
func (tk *tokenizer) chars(dst []uint64, text []byte, n int) []uint64 {
	b := tk.buf[:0]
	space := false
	for _, c := range text {
		switch c {
		case ' ', '\t', '\n', '\r', '\v', '\f':
			space = len(b) > 0
			continue
		}
		if space {
			b = append(b, ' ')
			space = false
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	tk.buf = b
	if len(b) == 0 {
		return dst
	}
	if len(b) < n {
		return append(dst, xxh3.Hash(b))
	}
	for i := 0; i+n <= len(b); i++ {
		dst = append(dst, xxh3.Hash(b[i:i+n]))
	}
	return dst
}

type featureKind int

const (
	word5 featureKind = iota
	char5
)

func (k featureKind) String() string { return [...]string{"word5", "char5"}[k] }

// featurize returns the normalised feature set of every text.
func featurize(texts [][]byte, kind featureKind) [][]uint64 {
	sets := make([][]uint64, len(texts))
	tks := make([]tokenizer, runtime.GOMAXPROCS(0))
	parallelFor(len(tks), len(texts), func(w, i int) {
		tk := &tks[w]
		var s []uint64
		if kind == word5 {
			s = tk.words(make([]uint64, 0, len(texts[i])/5+1), texts[i], 5)
		} else {
			s = tk.chars(make([]uint64, 0, len(texts[i])), texts[i], 5)
		}
		sets[i] = slices.Clip(Normalize(s))
	})
	return sets
}

// loadArticles returns the texts of the articles set, or skips t if absent.
func loadArticles(t testing.TB) [][]byte {
	t.Helper()
	f, err := os.Open(articlesPath)
	if os.IsNotExist(err) {
		t.Skipf("articles data not found at %s", articlesPath)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var texts [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		_, text, _ := bytes.Cut(sc.Bytes(), []byte(" "))
		texts = append(texts, bytes.Clone(text))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return texts
}

// goSources returns up to limit .go files under GOROOT/src of at most maxSize
// bytes each (limit or maxSize ≤ 0: no bound), in sorted path order.
func goSources(t testing.TB, limit, maxSize int) [][]byte {
	t.Helper()
	root := filepath.Join(runtime.GOROOT(), "src")
	var paths []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			if maxSize > 0 {
				info, err := d.Info()
				if err != nil {
					return err
				}
				if info.Size() > int64(maxSize) {
					return nil
				}
			}
			paths = append(paths, path)
		}
		return nil
	})
	if err != nil {
		t.Skipf("GOROOT sources unavailable: %v", err)
	}
	slices.Sort(paths)
	if limit > 0 && len(paths) > limit {
		paths = paths[:limit]
	}
	texts := make([][]byte, len(paths))
	for i, p := range paths {
		if texts[i], err = os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
	}
	if len(texts) < limit {
		t.Skipf("only %d Go files under %s; want %d", len(texts), root, limit)
	}
	return texts
}

// plantEdits returns a corpus of n documents: each base text (cycled) is
// followed by a random number of variants made by word-level edits
// (substitute, insert, delete) at a random rate between 0 and maxRate, so
// many pairs straddle any threshold. Deterministic for a seed.
func plantEdits(base [][]byte, n int, maxRate float64, seed uint64) [][]byte {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var vocab [][]byte
	for _, b := range base[:min(len(base), 200)] {
		vocab = append(vocab, bytes.Fields(b)...)
	}
	out := make([][]byte, 0, n)
	for i := 0; len(out) < n; i++ {
		src := base[i%len(base)]
		out = append(out, src)
		words := bytes.Fields(src)
		for v := rng.IntN(4); v > 0 && len(out) < n; v-- {
			rate := rng.Float64() * maxRate
			var w [][]byte
			for _, word := range words {
				if rng.Float64() >= rate {
					w = append(w, word)
					continue
				}
				switch rng.IntN(3) {
				case 0: // substitute
					w = append(w, vocab[rng.IntN(len(vocab))])
				case 1: // insert
					w = append(w, vocab[rng.IntN(len(vocab))], word)
				case 2: // delete
				}
			}
			out = append(out, bytes.Join(w, []byte(" ")))
		}
	}
	// Shuffle so that near-duplicates are not adjacent.
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// zipfTexts returns n random texts of 50 to 600 words drawn from a Zipf
// distribution over a synthetic vocabulary. Deterministic for a seed.
func zipfTexts(n int, seed uint64) [][]byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	z := rand.NewZipf(rng, 1.1, 1, 20000)
	out := make([][]byte, n)
	for i := range out {
		var b []byte
		for w := 50 + rng.IntN(550); w > 0; w-- {
			if len(b) > 0 {
				b = append(b, ' ')
			}
			k := z.Uint64()
			b = append(b, 'w')
			for ; k > 0; k /= 26 {
				b = append(b, byte('a'+k%26))
			}
		}
		out[i] = b
	}
	return out
}
