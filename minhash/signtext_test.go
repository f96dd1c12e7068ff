package minhash

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/goldentext"
	"github.com/neardup/neardup/shingle"
)

// signTextSpecs cover every path of SignText: the fused word and token loop,
// the fused (vector or Go) character 4- to 8-gram loop, and the chunked
// paths for other n, keyed specs and non-ASCII text.
var signTextSpecs = []shingle.Spec{
	shingle.Prose, shingle.Code, shingle.CJK, shingle.Web,
	{Unit: shingle.Char, N: 5, NFKC: true, CaseFold: true, FoldPunct: true, FoldSpace: true},
	{Unit: shingle.Char, N: 1, FoldSpace: true},
	{Unit: shingle.Char, N: 3},
	{Unit: shingle.Char, N: 4, CaseFold: true, FoldSpace: true},
	{Unit: shingle.Char, N: 5},
	{Unit: shingle.Char, N: 6, FoldPunct: true, FoldSpace: true, Seed: 99},
	{Unit: shingle.Char, N: 7, CaseFold: true, FoldDigits: true},
	{Unit: shingle.Char, N: 8, FoldSpace: true, Seed: 1 << 50},
	{Unit: shingle.Char, N: 9, FoldSpace: true},
	{Unit: shingle.Char, N: 5, CaseFold: true, FoldSpace: true, Key: &shingle.Key{3: 7}},
	{Unit: shingle.Word, N: 1},
	{Unit: shingle.Word, N: 3, CaseFold: true, FoldDigits: true},
	{Unit: shingle.Word, N: 5, CaseFold: true, Key: &shingle.Key{1, 2, 3}},
	{Unit: shingle.Token, N: 2, NFKC: true, FoldPunct: true},
	{Unit: shingle.Token, N: 5},
}

// signTextParams cover the fused path (power-of-two K, including the smallest
// and a large one) and the chunked one (other K, KHash).
var signTextParams = []Params{
	{}, {K: 64, Bits: 8}, {K: 256, Bits: 64, Seed: 42}, {K: 2}, {K: 1}, {K: 100}, {Scheme: KHash, Bits: 16},
}

// signTextTexts returns texts of every length from 0 to 40 (so every
// remainder of the vector loops), real articles and the golden texts.
func signTextTexts(t testing.TB) [][]byte {
	r := rand.New(rand.NewPCG(7, 11))
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789  ,.-'_!?\t\n\"()$+"
	var texts [][]byte
	for n := 0; n <= 40; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		texts = append(texts, b)
	}
	for _, g := range goldentext.Texts {
		texts = append(texts, []byte(g.Text))
	}
	docs, _ := benchDocs(t)
	return append(texts, docs[:60]...)
}

// TestSignTextMatchesFeatures checks that SignText gives exactly the signature
// of Sign over AppendFeatures, and counts the same features, for every path.
func TestSignTextMatchesFeatures(t *testing.T) {
	texts := signTextTexts(t)
	for _, spec := range signTextSpecs {
		sh := shingle.MustNew(spec)
		for _, p := range signTextParams {
			h, ref := MustNewHasher(p), MustNewHasher(p)
			for _, text := range texts {
				features := sh.AppendFeatures(nil, text)
				want := ref.Sign(nil, features)
				before := h.Metrics().Features
				got := h.SignText(nil, sh, text)
				if !slices.Equal(got, want) {
					t.Fatalf("%v %v on %q: SignText %x; want %x", spec, h.Params(), text[:min(len(text), 40)], got[:1], want[:1])
				}
				if n := h.Metrics().Features - before; n != int64(len(features)) {
					t.Fatalf("%v %v on %q: counted %d features; want %d", spec, h.Params(), text[:min(len(text), 40)], n, len(features))
				}
				if h.Empty() != (len(features) == 0) {
					t.Fatalf("%v: Empty() = %v with %d features", spec, h.Empty(), len(features))
				}
			}
		}
	}
}

func TestSignTextNoAllocations(t *testing.T) {
	texts := signTextTexts(t)
	for _, spec := range signTextSpecs {
		sh := shingle.MustNew(spec)
		h := MustNewHasher(Params{})
		dst := make(Signature, 0, h.Params().Words())
		for _, text := range texts {
			dst = h.SignText(dst[:0], sh, text) // warm up the scratch buffers
		}
		for _, text := range texts[len(texts)-3:] {
			if a := testing.AllocsPerRun(10, func() { dst = h.SignText(dst[:0], sh, text) }); a != 0 {
				t.Errorf("%v: %v allocations per SignText; want 0", spec, a)
			}
		}
	}
}

// FuzzSignText: any bytes, under several specs and params, give SignText
// exactly Sign's signature of AppendFeatures.
func FuzzSignText(f *testing.F) {
	for _, g := range goldentext.Texts {
		f.Add([]byte(g.Text), uint8(0))
	}
	f.Add([]byte("The quick brown fox, the lazy dog -- and 'quotes'.  Twice."), uint8(4))
	shinglers := make([]*shingle.Shingler, len(signTextSpecs))
	for i, sp := range signTextSpecs {
		shinglers[i] = shingle.MustNew(sp)
	}
	hashers := make([]*Hasher, len(signTextParams))
	refs := make([]*Hasher, len(signTextParams))
	for i, p := range signTextParams {
		hashers[i], refs[i] = MustNewHasher(p), MustNewHasher(p)
	}
	f.Fuzz(func(t *testing.T, text []byte, which uint8) {
		sh := shinglers[int(which)%len(shinglers)]
		i := int(which) / len(shinglers) % len(hashers)
		want := refs[i].Sign(nil, sh.AppendFeatures(nil, text))
		if got := hashers[i].SignText(nil, sh, text); !slices.Equal(got, want) {
			t.Fatalf("%v %v on %q: SignText differs from Sign", sh.Spec(), hashers[i].Params(), text)
		}
	})
}
