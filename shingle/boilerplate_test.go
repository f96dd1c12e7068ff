package shingle

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// multiLineTexts are texts of several lines that share some lines (as pages
// of one site do), with the edges the definition names: "\r\n", blank and
// separator-only lines, a last line without "\n", lines that differ only in
// case or punctuation, non-ASCII lines.
func multiLineTexts(t testing.TB) []string {
	shared := []string{
		"Home | News | Sport | Weather",
		"home news sport weather!!",
		"Cookies: we use cookies to improve your experience.",
		"© 2024 Example Media Ltd. All rights reserved.",
		"Straße — Café crème, full-width ＡＢＣ",
		"   ",
		"",
		"Share this: Facebook Twitter Email\r",
	}
	var texts []string
	rng := rand.New(rand.NewPCG(1, 2))
	body := realTexts(t, 12)
	for i, b := range body {
		var lines []string
		for _, l := range shared {
			if rng.IntN(3) > 0 {
				lines = append(lines, l)
			}
		}
		words := strings.Fields(b)
		for j := 0; j < len(words); j += 17 + i {
			lines = append(lines, strings.Join(words[j:min(j+17+i, len(words))], " "))
		}
		rng.Shuffle(len(lines), func(a, b int) { lines[a], lines[b] = lines[b], lines[a] })
		text := strings.Join(lines, "\n")
		if i%2 == 0 {
			text += "\n"
		}
		texts = append(texts, text)
	}
	return append(texts, "only one line", "", "\n\n", "a\nb", "Home | News | Sport | Weather\n")
}

// lineSet returns the boilerplate set of the given lines under spec (their
// line hashes as AppendLines computes them).
func lineSet(t testing.TB, spec Spec, lines ...string) *Boilerplate {
	t.Helper()
	s := MustNew(spec)
	var hs []uint64
	for _, l := range lines {
		for _, ln := range s.AppendLines(nil, []byte(l)) {
			hs = append(hs, ln.Hash)
		}
	}
	return NewBoilerplate(hs)
}

// TestBoilerplateMatchesReference checks the Shingler's line dropping (each
// line normalised once, the kept ones joined) against the definition
// (reference: drop the lines from the raw text, then normalise and shingle
// it), for every test spec and several sets.
func TestBoilerplateMatchesReference(t *testing.T) {
	texts := multiLineTexts(t)
	sets := [][]string{
		{"Home | News | Sport | Weather"},
		{"Cookies: we use cookies to improve your experience.", "© 2024 Example Media Ltd. All rights reserved.", "Share this: Facebook Twitter Email"},
		{"Straße — Café crème, full-width ＡＢＣ", "home news sport weather", "   "},
	}
	for _, base := range testSpecs {
		for _, lines := range sets {
			spec := base
			spec.Boilerplate = lineSet(t, base, lines...)
			s := MustNew(spec)
			for _, text := range texts {
				got := s.AppendFeatures(nil, []byte(text))
				want := reference(spec, []byte(text))
				if !slices.Equal(got, want) {
					t.Errorf("%v dropping %q on %q:\ngot  %d features %x\nwant %d features %x", base, lines, trunc(text), len(got), head(got), len(want), head(want))
				}
				// The fused path (AddBins) and Stream see the same text.
				var streamed []uint64
				s.Stream([]byte(text), make([]uint64, 0, 7), func(c []uint64) { streamed = append(streamed, c...) })
				if !slices.Equal(streamed, want) {
					t.Errorf("%v: Stream differs from AppendFeatures on %q", base, trunc(text))
				}
			}
		}
	}
}

// TestBoilerplateDropsWholeTemplate is the case boilerplate removal is for:
// a text wrapped in a template whose lines are all in the set has exactly
// the features of the text alone.
func TestBoilerplateDropsWholeTemplate(t *testing.T) {
	header := []string{"Example News", "Home | World | Business | Sport", "Subscribe to our newsletter"}
	footer := []string{"About us | Contact | Privacy", "© Example News 2024"}
	for _, base := range []Spec{Prose, Web, Code, {Unit: Char, N: 5, FoldSpace: true}} {
		spec := base
		spec.Boilerplate = lineSet(t, base, append(header, footer...)...)
		plain, stripped := MustNew(base), MustNew(spec)
		for _, body := range realTexts(t, 20) {
			page := strings.Join(header, "\n") + "\n" + body + "\n" + strings.Join(footer, "\n") + "\n"
			got := stripped.AppendFeatures(nil, []byte(page))
			want := plain.AppendFeatures(nil, []byte(body))
			if !slices.Equal(got, want) {
				t.Fatalf("%v: the wrapped page has %d features, the body %d", base, len(got), len(want))
			}
		}
	}
}

func TestAppendLines(t *testing.T) {
	text := "First line\r\n\n  \nSECOND, line!\nlast"
	for _, spec := range testSpecs {
		got := MustNew(spec).AppendLines(nil, []byte(text))
		var want []Line
		start := 0
		for _, l := range strings.SplitAfter(text, "\n") {
			content := strings.TrimSuffix(l, "\n")
			if n := referenceNormalise(spec, []byte(content)); n != "" {
				want = append(want, Line{Hash: referenceHash(spec, n), Start: start, End: start + len(content)})
			}
			start += len(l)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%v: got %v; want %v", spec, got, want)
		}
	}
	// Lines that differ only in what the spec folds are one line.
	s := MustNew(Prose)
	a := s.AppendLines(nil, []byte("Home | News"))
	b := s.AppendLines(nil, []byte("  home news!!"))
	if len(a) != 1 || len(b) != 1 || a[0].Hash != b[0].Hash {
		t.Errorf("prose lines %v and %v differ", a, b)
	}
}

// TestBoilerplateSpecForm: without lines the canonical form and fingerprint
// are those of the spec alone (the golden vectors pin them); with lines, a
// sixth part names their count and fingerprint, so that two sets give two
// fingerprints, and the form parses back only with its set.
func TestBoilerplateSpecForm(t *testing.T) {
	none := Prose
	none.Boilerplate = NewBoilerplate(nil)
	if none.Boilerplate != nil || none.String() != Prose.String() || none.Fingerprint() != Prose.Fingerprint() {
		t.Fatalf("an empty set changes the spec: %s", none)
	}
	a, b := Prose, Prose
	a.Boilerplate = NewBoilerplate([]uint64{3, 1, 2, 2})
	b.Boilerplate = NewBoilerplate([]uint64{1, 2, 4})
	if got := a.Boilerplate.Lines(); !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Errorf("lines %v; want [1 2 3]", got)
	}
	want := Prose.String() + "/boilerplate:1:3:"
	if !strings.HasPrefix(a.String(), want) || len(a.String()) != len(want)+16 {
		t.Errorf("canonical form %q; want %q and 16 hex digits", a, want)
	}
	if a.Fingerprint() == b.Fingerprint() || a.Fingerprint() == Prose.Fingerprint() {
		t.Errorf("fingerprints do not cover the set: %x %x %x", a.Fingerprint(), b.Fingerprint(), Prose.Fingerprint())
	}
	if _, err := Parse(a.String()); !errors.Is(err, ErrInvalidSpec) {
		t.Errorf("Parse(%q) = %v; want ErrInvalidSpec (the lines are not in the form)", a, err)
	}
	got, err := ParseCanonical(a.String(), nil, a.Boilerplate)
	if err != nil || got.Fingerprint() != a.Fingerprint() {
		t.Errorf("ParseCanonical with its set: %v, %v", got, err)
	}
	if _, err := ParseCanonical(a.String(), nil, b.Boilerplate); !errors.Is(err, ErrInvalidSpec) {
		t.Errorf("ParseCanonical with another set: %v; want ErrInvalidSpec", err)
	}
	if _, err := ParseCanonical(a.String(), nil, nil); !errors.Is(err, ErrInvalidSpec) {
		t.Errorf("ParseCanonical without the set: %v; want ErrInvalidSpec", err)
	}
	keyed := a
	keyed.Key = &Key{7}
	if got, err := ParseCanonical(keyed.String(), &Key{7}, a.Boilerplate); err != nil || got.String() != keyed.String() {
		t.Errorf("ParseCanonical of a keyed spec with lines: %v, %v", got, err)
	}
	if got, err := ParseCanonical(Web.String(), nil, nil); err != nil || got != Web {
		t.Errorf("ParseCanonical(%q) = %v, %v", Web.String(), got, err)
	}
}

// TestBoilerplateJSON: a spec with lines survives encoding/json (how a job
// ships it to pipeline workers) with its set and fingerprint.
func TestBoilerplateJSON(t *testing.T) {
	spec := Web
	spec.Boilerplate = NewBoilerplate([]uint64{0, 42, 1 << 63, 7})
	data, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	var back Spec
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.String() != spec.String() || !slices.Equal(back.Boilerplate.Lines(), spec.Boilerplate.Lines()) {
		t.Fatalf("round trip: %s; want %s", back, spec)
	}
	for _, h := range []uint64{0, 42, 1 << 63, 7} {
		if !back.Boilerplate.Contains(h) {
			t.Errorf("decoded set lacks %d", h)
		}
	}
	if back.Boilerplate.Contains(8) {
		t.Error("decoded set holds 8")
	}
	var plain Spec
	if err := json.Unmarshal([]byte(`{"Unit":1,"N":5}`), &plain); err != nil || plain.Boilerplate != nil {
		t.Errorf("a spec without lines decodes to %v, %v", plain.Boilerplate, err)
	}
}

func TestBoilerplateContains(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	in := make([]uint64, 1000)
	for i := range in {
		in[i] = rng.Uint64() &^ 1 // even
	}
	b := NewBoilerplate(in)
	for _, h := range in {
		if !b.Contains(h) {
			t.Fatalf("set lacks %x", h)
		}
		if b.Contains(h | 1) {
			t.Fatalf("set holds %x", h|1)
		}
	}
	var nilSet *Boilerplate
	if nilSet.Contains(0) || nilSet.Len() != 0 {
		t.Error("the nil set is not empty")
	}
}

// TestTextHash: texts with the same normalised text (after dropping lines)
// have the same hash, others not; the features after TextHash are those
// without it, whatever is asked next.
func TestTextHash(t *testing.T) {
	spec := Prose
	spec.Boilerplate = lineSet(t, Prose, "Home | News")
	s := MustNew(spec)
	same := []string{"The quick brown fox.", "the QUICK brown fox!!", "Home | News\nThe quick brown fox.", "  the quick\nbrown fox "}
	h0, l0, empty := s.TextHash([]byte(same[0]))
	if empty {
		t.Fatal("empty")
	}
	for _, text := range same[1:] {
		if h, l, _ := s.TextHash([]byte(text)); h != h0 || l != l0 {
			t.Errorf("%q hashes to %x%x; %q to %x%x", text, h, l, same[0], h0, l0)
		}
	}
	if h, l, _ := s.TextHash([]byte("The quick brown fox jumps.")); h == h0 && l == l0 {
		t.Error("different texts hash alike")
	}
	if _, _, empty := s.TextHash([]byte("\n !! \n")); !empty {
		t.Error("a text of punctuation is not empty")
	}
	keyed := spec
	keyed.Key = &Key{1}
	if h, l, _ := MustNew(keyed).TextHash([]byte(same[0])); h == h0 && l == l0 {
		t.Error("the keyed hash equals the unkeyed one")
	}
	// The memo: features after TextHash of the same slice, of another slice
	// and of a changed slice are the plain features.
	plain := MustNew(spec)
	for _, text := range multiLineTexts(t) {
		b := []byte(text)
		want := plain.AppendFeatures(nil, b)
		s.TextHash(b)
		if got := s.AppendFeatures(nil, b); !slices.Equal(got, want) {
			t.Fatalf("features after TextHash differ on %q", trunc(text))
		}
		s.TextHash(b)
		other := []byte("something else entirely, five words or more")
		if got := s.AppendFeatures(nil, other); !slices.Equal(got, plain.AppendFeatures(nil, other)) {
			t.Fatal("features of another text after TextHash differ")
		}
	}
}

// TestBoilerplateAllLines: a text whose every line is in the set keeps them
// all (it is a duplicate of the other such texts, not an empty document).
func TestBoilerplateAllLines(t *testing.T) {
	spec := Prose
	spec.Boilerplate = lineSet(t, Prose, "Page not found", "Home | News")
	text := []byte("Home | News\n\nPage not found\n")
	got := MustNew(spec).AppendFeatures(nil, text)
	if want := MustNew(Prose).AppendFeatures(nil, text); len(got) == 0 || !slices.Equal(got, want) {
		t.Errorf("all-boilerplate text: %x; want its features %x", got, want)
	}
	if got := MustNew(spec).AppendFeatures(nil, []byte("Home | News\nsomething else")); !slices.Equal(got, MustNew(Prose).AppendFeatures(nil, []byte("something else"))) {
		t.Error("a text with one kept line is not that line")
	}
}

// TestTextHashHeld: TextHashHeld's hash is TextHash's, and the features
// after it of the same slice are the plain features; of another slice, of
// the same length, too (the memo is the slice's). A held slice is taken at
// its word: changed in between, it gets its old text's features, which
// shows that the memo is used without hashing the text.
func TestTextHashHeld(t *testing.T) {
	spec := Prose
	spec.Boilerplate = lineSet(t, Prose, "Home | News")
	s, plain := MustNew(spec), MustNew(spec)
	for _, text := range append(multiLineTexts(t), "", " !! ", "Home | News\nThe quick brown fox.") {
		b := []byte(text)
		h, l, empty := plain.TextHash(b)
		gh, gl, gempty := s.TextHashHeld(b)
		if gh != h || gl != l || gempty != empty {
			t.Fatalf("%q: TextHashHeld %x %x %v; want TextHash's %x %x %v", trunc(text), gh, gl, gempty, h, l, empty)
		}
		want := plain.AppendFeatures(nil, b)
		if got := s.AppendFeatures(nil, b); !slices.Equal(got, want) {
			t.Fatalf("features after TextHashHeld differ on %q", trunc(text))
		}
		s.TextHashHeld(b)
		other := append([]byte(nil), b...) // same bytes, another slice
		if got := s.AppendFeatures(nil, other); !slices.Equal(got, want) {
			t.Fatal("features of another slice after TextHashHeld differ")
		}
	}
	a, b := []byte("first text of some words"), []byte("other text of more words")
	s.TextHashHeld(a)
	copy(a, b) // against the contract
	if got, want := s.AppendFeatures(nil, a), plain.AppendFeatures(nil, []byte("first text of some words")); !slices.Equal(got, want) {
		t.Fatal("a held slice was checked: the memo was not used")
	}
	if got, want := s.AppendFeatures(nil, a), plain.AppendFeatures(nil, b); !slices.Equal(got, want) {
		t.Fatal("the memo was used twice")
	}
}

// TestTextHashReusedBuffer: a caller that reuses one buffer for texts of
// the same length (a parser does) gets each text's own hash and features,
// whether or not it signs in between.
func TestTextHashReusedBuffer(t *testing.T) {
	s, plain := MustNew(Prose), MustNew(Prose)
	buf := []byte("first text of some words")
	h1, l1, _ := s.TextHash(buf)
	copy(buf, "other text of more words") // same length, same slice
	h2, l2, _ := s.TextHash(buf)
	if h1 == h2 && l1 == l2 {
		t.Fatal("the second text got the first one's hash")
	}
	s.TextHash(buf)
	copy(buf, "third text of other word")
	if got, want := s.AppendFeatures(nil, buf), plain.AppendFeatures(nil, buf); !slices.Equal(got, want) {
		t.Fatal("features of a changed buffer are those of its old text")
	}
}
