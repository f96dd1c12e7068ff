package shingle

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// TestFoldRunsEveryRune checks the two facts foldRuns rests on, over every
// code point: an ASCII character is a normalisation boundary that nothing
// before it combines with, so NFKC(x + a) = NFKC(x) + a; and case folding a
// code point does not look at what follows it, so Fold(x + a) = Fold(x) +
// Fold(a), for an ASCII letter, space, punctuation and digit a.
func TestFoldRunsEveryRune(t *testing.T) {
	for b := 0; b < utf8.RuneSelf; b++ {
		if !norm.NFKC.PropertiesString(string(rune(b))).BoundaryBefore() {
			t.Errorf("NFKC: ASCII %q is not a boundary before", rune(b))
		}
	}
	step := rune(1)
	if testing.Short() {
		step = 7
	}
	fold := cases.Fold()
	followers := []string{"A", " ", "1"}
	for r := rune(utf8.RuneSelf); r <= utf8.MaxRune; r += step {
		if !utf8.ValidRune(r) {
			continue
		}
		x := string(r)
		nx, fx := norm.NFKC.String(x), fold.String(x)
		for _, a := range followers {
			if got := norm.NFKC.String(x + a); got != nx+a {
				t.Fatalf("NFKC(%U + %q) = %+q, want %+q", r, a, got, nx+a)
			}
			if got, want := fold.String(x+a), fx+fold.String(a); got != want {
				t.Fatalf("Fold(%U + %q) = %+q, want %+q", r, a, got, want)
			}
		}
	}
}

// TestFoldRunsMixedText compares the Shingler with the reference on texts of
// ASCII words mixed with the code points that make normalisation and folding
// hard: combining marks after ASCII letters and after other marks (which
// NFKC reorders), compatibility characters that become ASCII, Hangul jamo
// that compose, and letters whose folding changes their length.
func TestFoldRunsMixedText(t *testing.T) {
	hard := []string{
		"\u0301", "\u0300", "\u0327", "\u0338", "\u0323\u0302", "\u0302\u0323", "\u034f",
		"\u00a0", "\u2003", "\u2019", "\u201c", "\u2013", "\ufb01", "\u2460", "\uff21", "\u00bd",
		"\u1100", "\u1161", "\u11a8", "\uac00", "\u00df", "\u0130", "\u03a3", "\u1e9e", "\u0149",
		"\u00c5", "\u212b", "\u0041\u030a", "\u03c2", "\u1f88", "\U0001d400", "\U0001f600",
		"\ufffd", "\u3000", "\u0660", "\u2028", "\xff", "\xc3", "\xe2\x82",
		"\u304b", "\u3099", "\u309a", "\u65e5", "\u672c", "\u3001", "\uff0c", "\uff76", "\uff9e",
		"\u00e9", "\u1100\u1161", "\u0915\u093c", "\u05d0\u05b7",
	}
	ascii := []string{"e", "A", "word", "Quick", " ", "  ", ".", ", ", "-", "'", "1", "x_y", "\n", "<", "=", "\u0020"}
	rng := rand.New(rand.NewPCG(1, 2))
	texts := make([]string, 0, 1500)
	for range cap(texts) {
		var b strings.Builder
		for n := rng.IntN(40); n >= 0; n-- {
			if rng.IntN(3) == 0 {
				b.WriteString(hard[rng.IntN(len(hard))])
			} else {
				b.WriteString(ascii[rng.IntN(len(ascii))])
			}
		}
		texts = append(texts, b.String())
	}
	for _, spec := range testSpecs {
		s := MustNew(spec)
		for _, text := range texts {
			got := s.AppendFeatures(nil, []byte(text))
			if want := reference(spec, []byte(text)); !slices.Equal(got, want) {
				t.Fatalf("%v on %+q:\ngot  %d features %x\nwant %d features %x", spec, text, len(got), head(got), len(want), head(want))
			}
		}
	}
}

// TestFoldUnicodeStretches compares the Shingler with the reference on texts
// whose long ASCII stretches (0 to 100 bytes, often dense in separators) lie
// between non-ASCII code points, for every spec that treats ASCII
// differently, so the vector blocks of foldUnicode start in every state: after
// a separator or not, at every offset, with every tail.
func TestFoldUnicodeStretches(t *testing.T) {
	others := []string{"\u00e9", "\u2019", "\u00a0", "e\u0301", "\u00df", "\u0130", "\u65e5", "\U0001f600", "\xff", "\xc3", "\xe2\x82", "\xed\xa0\x80"}
	rng := rand.New(rand.NewPCG(7, 11))
	texts := make([]string, 0, 200)
	for range cap(texts) {
		var b strings.Builder
		for k := rng.IntN(4); k >= 0; k-- {
			n := rng.IntN(101)
			for range n {
				if rng.IntN(2) == 0 {
					b.WriteByte(" ,.-'xA\t1_"[rng.IntN(10)])
				} else {
					b.WriteByte(byte(rng.IntN(0x80)))
				}
			}
			b.WriteString(others[rng.IntN(len(others))])
		}
		texts = append(texts, b.String())
	}
	specs := asciiSpecs()
	for _, sp := range asciiSpecs() {
		sp.NFKC = true
		specs = append(specs, sp)
	}
	for _, spec := range specs {
		s := MustNew(spec)
		for _, text := range texts {
			got := s.AppendFeatures(nil, []byte(text))
			if want := reference(spec, []byte(text)); !slices.Equal(got, want) {
				t.Fatalf("%v on %+q:\ngot  %d features %x\nwant %d features %x", spec, text, len(got), head(got), len(want), head(want))
			}
		}
	}
}

// TestFoldRunsCJK compares the Shingler with the reference on random texts of
// CJK code points, most of them inert (copied as they are), mixed with those
// that join them: kana voicing marks after kana, half-width kana and their
// marks, Hangul jamo that compose into syllables, full-width forms,
// ideographic space and punctuation, and ASCII.
func TestFoldRunsCJK(t *testing.T) {
	parts := []string{
		"\u65e5", "\u672c", "\u8a9e", "\u4e2d", "\u6587", "\u304b", "\u306f", "\u30ab", "\u30cf",
		"\u3099", "\u309a", "\uff76", "\uff9e", "\uff9f", "\u3000", "\u3001", "\u3002", "\uff0c",
		"\uff21", "\uff41", "\uff11", "\u1100", "\u1161", "\u11a8", "\uac00", "\ud55c", "\u3131",
		"\u2460", "\u3300", "\u00e9", "e\u0301", " ", "a", "B", "1", ".", "\U00020000", "\U0002f800",
	}
	rng := rand.New(rand.NewPCG(13, 17))
	specs := append([]Spec{CJK, Prose, Web}, testSpecs...)
	for range 400 {
		var b strings.Builder
		for n := rng.IntN(30); n >= 0; n-- {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		text := b.String()
		for _, spec := range specs {
			got := MustNew(spec).AppendFeatures(nil, []byte(text))
			if want := reference(spec, []byte(text)); !slices.Equal(got, want) {
				t.Fatalf("%v on %+q:\ngot  %d features %x\nwant %d features %x", spec, text, len(got), head(got), len(want), head(want))
			}
		}
	}
}

// TestClassifyEveryRune checks classify, which reads runeTable for the Basic
// Multilingual Plane, against the definition (as reference.go states it,
// straight from Unicode's tables: referenceClass) for every code point and every spec that
// classifies differently.
func TestClassifyEveryRune(t *testing.T) {
	step := rune(1)
	if testing.Short() {
		step = 7
	}
	for _, spec := range asciiSpecs() {
		if spec.CaseFold {
			continue // classify sees folded text; the flag changes nothing here
		}
		s := MustNew(spec)
		for r := rune(0); r <= utf8.MaxRune; r += step {
			if !utf8.ValidRune(r) {
				continue
			}
			c, sep := referenceClass(spec, r)
			if sep {
				c = ' '
			}
			if got, gotSep := s.classify(r); got != c || gotSep != sep {
				t.Fatalf("%v: classify(%U) = %U, %v; want %U, %v", spec, r, got, gotSep, c, sep)
			}
		}
	}
}

// TestDecodeRune compares decodeRune with utf8.DecodeRune on every three-byte
// prefix (followed by a continuation byte), cut at every length from 0 to 4.
func TestDecodeRune(t *testing.T) {
	var p [4]byte
	p[3] = 0x80
	for a := range 256 {
		for b := range 256 {
			for c := range 256 {
				p[0], p[1], p[2] = byte(a), byte(b), byte(c)
				for n := 0; n <= 4; n++ {
					r, size := decodeRune(p[:n])
					if wr, wsize := utf8.DecodeRune(p[:n]); r != wr || size != wsize {
						t.Fatalf("decodeRune(%x) = %U, %d; want %U, %d", p[:n], r, size, wr, wsize)
					}
				}
			}
		}
	}
}

// TestIndexNonASCII checks indexNonASCII against a byte loop for every length
// up to 100 and every position of the first non-ASCII byte (or none), with
// more non-ASCII bytes after it.
func TestIndexNonASCII(t *testing.T) {
	for n := range 101 {
		for at := 0; at <= n; at++ {
			p := bytes.Repeat([]byte{'a'}, n)
			for k := at; k < n; k += 3 {
				p[k] = 0x80 | byte(k)
			}
			if got := indexNonASCII(p); got != at {
				t.Fatalf("indexNonASCII(%q) = %d; want %d", p, got, at)
			}
		}
	}
}
