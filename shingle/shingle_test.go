package shingle

import (
	"bufio"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/zeebo/xxh3"
)

// sampleTexts covers every code path: ASCII, accented Latin (composed and
// decomposed), full-width forms, CJK, emoji, invalid UTF-8, separators only,
// empty, fewer units than N, digits, underscores and mixed whitespace.
var sampleTexts = []string{
	"",
	" \t\n ",
	"a",
	"one two",
	"The quick brown fox jumps over the lazy dog.",
	"The QUICK brown fox -- jumps over the lazy dog!!",
	"Café crème brûlée à la française, s'il vous plaît.",
	"Cafe\u0301 cre\u0300me (decomposed accents)",
	"Ｆｕｌｌ－ｗｉｄｔｈ ＡＢＣ １２３ and ﬁ ligature",
	"日本語のテキストです。東京は日本の首都です。",
	"中文文本，没有空格。北京是中国的首都。",
	"한국어 텍스트입니다",
	"emoji 😀👍🏽 family 👨‍👩‍👧 flags 🇫🇷",
	"bad \xff\xfe utf8 \xc3 mid\xe2\x82 end",
	"\xff\xfe\xfd",
	"Straße STRASSE straße ǅemal",
	"snake_case identifiers_here and CamelCase, x_1 = y_2;",
	"Prices: $1,299.99 on 2024-05-01 and 3.5% off, call 555-0100",
	"tabs\tand\nnewlines\r\nand\u00a0nbsp\u2003em space",
	"mostly ascii with one “curly quote” inside it here",
	"ΣΊΣΥΦΟΣ σίσυφος Σίσυφος",
}

var testSpecs = []Spec{
	Prose, Code, CJK, Web,
	{Unit: Word, N: 1},
	{Unit: Word, N: 3, CaseFold: true, FoldDigits: true},
	{Unit: Token, N: 2, NFKC: true, FoldPunct: true},
	{Unit: Token, N: 5},
	{Unit: Char, N: 1},
	{Unit: Char, N: 2, FoldSpace: true},
	{Unit: Char, N: 4, CaseFold: true, FoldPunct: true},
	{Unit: Char, N: 5, NFKC: true, CaseFold: true, FoldPunct: true, FoldSpace: true},
	{Unit: Char, N: 5},
	{Unit: Char, N: 8, CaseFold: true, FoldSpace: true},
	{Unit: Char, N: 9, FoldSpace: true},
	{Unit: Char, N: 20, FoldSpace: true, Seed: 7},
	{Unit: Word, N: 5, CaseFold: true, FoldPunct: true, Seed: 1 << 40},
	{Unit: Word, N: 5, CaseFold: true, Key: &Key{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}},
	{Unit: Char, N: 5, CaseFold: true, FoldSpace: true, Key: &Key{15: 0xff}},
}

func TestMatchesReference(t *testing.T) {
	texts := append([]string(nil), sampleTexts...)
	texts = append(texts, realTexts(t, 50)...)
	for _, spec := range testSpecs {
		s := MustNew(spec)
		for _, text := range texts {
			got := s.AppendFeatures(nil, []byte(text))
			want := reference(spec, []byte(text))
			if !slices.Equal(got, want) {
				t.Errorf("%v on %q:\ngot  %d features %x\nwant %d features %x", spec, trunc(text), len(got), head(got), len(want), head(want))
			}
		}
	}
}

func trunc(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

func head(f []uint64) []uint64 { return f[:min(len(f), 4)] }

// realTexts returns up to n texts from the bundled sample corpus.
func realTexts(t testing.TB, n int) []string {
	f, err := os.Open("../testdata/articles_1000.jsonl")
	if err != nil {
		t.Fatalf("bundled sample: %v", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() && len(out) < n {
		var rec struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		out = append(out, rec.Text)
	}
	return out
}

func TestEdgeCases(t *testing.T) {
	s := MustNew(Prose)
	if got := s.AppendFeatures(nil, nil); len(got) != 0 {
		t.Errorf("empty text: got %d features; want 0", len(got))
	}
	if got := s.AppendFeatures(nil, []byte(" ,;. \n")); len(got) != 0 {
		t.Errorf("separators only: got %d features; want 0", len(got))
	}
	// Fewer units than N: exactly one feature, of what is there.
	one := s.AppendFeatures(nil, []byte("just three words"))
	if len(one) != 1 {
		t.Fatalf("3 words at N=5: got %d features; want 1", len(one))
	}
	if again := s.AppendFeatures(nil, []byte("JUST three, words!")); !slices.Equal(one, again) {
		t.Errorf("normalisation: %x != %x", one, again)
	}
	// N units exactly: one feature, and it differs from the N-1 prefix's.
	five := s.AppendFeatures(nil, []byte("a b c d e"))
	four := s.AppendFeatures(nil, []byte("a b c d"))
	if len(five) != 1 || len(four) != 1 || five[0] == four[0] {
		t.Errorf("5 vs 4 units: got %x and %x", five, four)
	}
	// Word order matters inside an n-gram.
	if ab, ba := s.AppendFeatures(nil, []byte("x y z w v")), s.AppendFeatures(nil, []byte("y x z w v")); ab[0] == ba[0] {
		t.Errorf("swapped words share a feature %x", ab[0])
	}
	// A long text has (units - N + 1) features.
	words := strings.Repeat("w ", 1000)
	if got := len(s.AppendFeatures(nil, []byte(words))); got != 996 {
		t.Errorf("1000 words: got %d features; want 996", got)
	}
}

func TestInvalidUTF8(t *testing.T) {
	for _, spec := range testSpecs {
		s := MustNew(spec)
		bad := []byte("abc \xff def \xc3\x28 ghi")
		repl := []byte("abc \uFFFD def \uFFFD( ghi")
		if got, want := s.AppendFeatures(nil, bad), s.AppendFeatures(nil, repl); !slices.Equal(got, want) {
			t.Errorf("%v: invalid bytes are not read as U+FFFD: %x vs %x", spec, head(got), head(want))
		}
	}
}

func TestAppendsAndReuses(t *testing.T) {
	s := MustNew(Prose)
	prefix := []uint64{1, 2, 3}
	got := s.AppendFeatures(slices.Clone(prefix), []byte(sampleTexts[4]))
	if !slices.Equal(got[:3], prefix) {
		t.Fatalf("prefix clobbered: %v", got[:3])
	}
	if want := reference(Prose, []byte(sampleTexts[4])); !slices.Equal(got[3:], want) {
		t.Fatalf("appended %x; want %x", got[3:], want)
	}
	// Reusing the Shingler across texts of different lengths and kinds
	// gives the same answers as a fresh one.
	texts := append(realTexts(t, 20), sampleTexts...)
	for _, text := range texts {
		fresh := MustNew(Prose).AppendFeatures(nil, []byte(text))
		if reused := s.AppendFeatures(nil, []byte(text)); !slices.Equal(fresh, reused) {
			t.Fatalf("reused shingler differs on %q", trunc(text))
		}
	}
}

func TestNoAllocations(t *testing.T) {
	texts := realTexts(t, 5)
	texts = append(texts, sampleTexts...)
	for _, spec := range []Spec{Prose, CJK, {Unit: Char, N: 5, CaseFold: true, FoldSpace: true}, Code} {
		s := MustNew(spec)
		dst := make([]uint64, 0, 1<<16)
		for _, text := range texts {
			s.AppendFeatures(dst[:0], []byte(text)) // warm up
		}
		for _, text := range texts {
			b := []byte(text)
			if a := testing.AllocsPerRun(20, func() { s.AppendFeatures(dst[:0], b) }); a != 0 {
				t.Errorf("%v on %q: %v allocations per call; want 0", spec, trunc(text), a)
			}
		}
	}
}

func TestStreamEveryChunkSize(t *testing.T) {
	text := []byte(realTexts(t, 1)[0] + " " + sampleTexts[9] + sampleTexts[12])
	for _, spec := range []Spec{Prose, CJK, {Unit: Char, N: 5, FoldSpace: true}} {
		s := MustNew(spec)
		want := s.AppendFeatures(nil, text)
		for size := 1; size <= len(want)+1; size++ {
			var got []uint64
			calls := 0
			s.Stream(text, make([]uint64, 0, size), func(c []uint64) {
				if len(c) == 0 || len(c) > size {
					t.Fatalf("chunk of %d with cap %d", len(c), size)
				}
				calls++
				got = append(got, c...)
			})
			if !slices.Equal(got, want) {
				t.Fatalf("%v chunk %d: streamed features differ", spec, size)
			}
			if wantCalls := (len(want) + size - 1) / size; calls != wantCalls {
				t.Fatalf("chunk %d: %d calls; want %d", size, calls, wantCalls)
			}
		}
	}
}

func TestXXH3Short(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 40)
	for _, seed := range []uint64{0, 1, 0xdeadbeef, 1 << 63, r.Uint64()} {
		for n := 1; n <= 32; n++ {
			for trial := 0; trial < 50; trial++ {
				for i := range buf {
					buf[i] = byte(r.Uint32())
				}
				if got, want := xxh3Seed(buf[:n], seed, seed48(seed)), xxh3.HashSeed(buf[:n], seed); got != want {
					t.Fatalf("len %d seed %x: got %x; want %x", n, seed, got, want)
				}
			}
		}
	}
}

func TestSpecStringParse(t *testing.T) {
	for _, spec := range testSpecs {
		if spec.Key != nil {
			if _, err := Parse(spec.String()); !errors.Is(err, ErrInvalidSpec) {
				t.Errorf("keyed %q parsed: err = %v", spec, err)
			}
			if strings.Contains(spec.String(), "0102030405") {
				t.Errorf("key leaked into %q", spec)
			}
			continue
		}
		got, err := Parse(spec.String())
		if err != nil {
			t.Fatalf("Parse(%q): %v", spec, err)
		}
		if got != spec {
			t.Errorf("Parse(%q) = %+v; want %+v", spec, got, spec)
		}
	}
	for _, tc := range []struct {
		in   string
		want Spec
	}{
		{"prose", Prose}, {"code", Code}, {"cjk", CJK}, {"web", Web},
		{"word:3", Spec{Unit: Word, N: 3, NFKC: true, CaseFold: true, FoldPunct: true, FoldSpace: true}},
		{"char:5", Spec{Unit: Char, N: 5, NFKC: true, CaseFold: true, FoldPunct: true, FoldSpace: true}},
	} {
		if got, err := Parse(tc.in); err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "word", "word:0", "word:x", "line:5", "char:65", "v1/word:5/zz/xxh3:0/unicode:15.0.0", "v9/word:5/-/xxh3:0/unicode:15.0.0", "v1/word:5/-/xxh3:0/unicode:1.0"} {
		if _, err := Parse(bad); !errors.Is(err, ErrInvalidSpec) {
			t.Errorf("Parse(%q): err = %v; want ErrInvalidSpec", bad, err)
		}
	}
}

func TestFingerprintsDistinct(t *testing.T) {
	seen := map[uint64]string{}
	for _, spec := range testSpecs {
		fp := spec.Fingerprint()
		if prev, ok := seen[fp]; ok {
			t.Errorf("%q and %q share fingerprint %x", prev, spec, fp)
		}
		seen[fp] = spec.String()
	}
	k2 := Key{9}
	a, b := Prose, Prose
	a.Key, b.Key = &Key{1}, &k2
	if a.Fingerprint() == b.Fingerprint() {
		t.Error("different keys give the same spec fingerprint")
	}
}

func TestValidate(t *testing.T) {
	for _, spec := range []Spec{{}, {Unit: Word}, {Unit: 9, N: 3}, {Unit: Char, N: MaxN + 1}} {
		if _, err := New(spec); !errors.Is(err, ErrInvalidSpec) {
			t.Errorf("New(%+v): err = %v; want ErrInvalidSpec", spec, err)
		}
	}
}

// FuzzAppendFeatures: any bytes, under several specs, never panic and give
// exactly the reference implementation's features.
func FuzzAppendFeatures(f *testing.F) {
	for _, s := range sampleTexts {
		f.Add([]byte(s), uint8(0))
	}
	specs := []Spec{Prose, CJK, Code, Web, {Unit: Char, N: 5, CaseFold: true, FoldSpace: true}, {Unit: Token, N: 2, FoldPunct: true}, {Unit: Char, N: 2}}
	shinglers := make([]*Shingler, len(specs))
	for i, sp := range specs {
		shinglers[i] = MustNew(sp)
	}
	f.Fuzz(func(t *testing.T, text []byte, which uint8) {
		i := int(which) % len(specs)
		got := shinglers[i].AppendFeatures(nil, text)
		if want := reference(specs[i], text); !slices.Equal(got, want) {
			t.Fatalf("%v on %q: got %x; want %x", specs[i], text, got, want)
		}
	})
}
