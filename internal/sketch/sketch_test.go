package sketch

import (
	"slices"
	"testing"

	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
)

// texts are short documents, two pairs of near duplicates, an empty one and
// one without words.
var texts = []string{
	"the quick brown fox jumps over the lazy dog by the river bank in the early morning",
	"the quick brown fox jumps over the lazy dog by the river bank in the early evening",
	"an entirely different text about cooking pasta with garlic olive oil and fresh basil leaves",
	"an entirely different text about cooking pasta with garlic olive oil and dried basil leaves",
	"",
	"!!! ...",
}

func mustSpec(t testing.TB, s string) shingle.Spec {
	t.Helper()
	spec, err := shingle.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// TestSketchIsMinHash: the sketch signs as minhash.Hasher.SignText, bands
// as the high BucketKeyBits of lsh's band keys over the slots, and packs
// entries as lsh.AppendEntries did with 32 document bits; the estimate is
// minhash's.
func TestSketchIsMinHash(t *testing.T) {
	for _, p := range []minhash.Params{{}, {K: 64, Scheme: minhash.KHash, Bits: 16, Seed: 9}, {K: 256, Bits: 8, Seed: 3}} {
		p.EnsureDefaults()
		bands, err := lsh.ForRecall(0.7, p.K, 0.99)
		if err != nil {
			t.Fatal(err)
		}
		bands.Probe = 1
		c := Config{Spec: mustSpec(t, "word:3"), Params: p, Bands: bands}
		sketch, err := c.New()
		if err != nil {
			t.Fatal(err)
		}
		sk, _ := sketch.NewSketcher()
		sh := shingle.MustNew(c.Spec)
		h := minhash.MustNewHasher(p)
		if sketch.Words() != p.Words() {
			t.Errorf("%s: Words %d; want %d", p, sketch.Words(), p.Words())
		}
		var sigs []minhash.Signature
		for i, text := range texts {
			got, empty := sk.Sign([]uint64{42}, []byte(text))
			want := h.SignText(minhash.Signature{42}, sh, []byte(text))
			if !slices.Equal(got, want) || empty != h.Empty() {
				t.Fatalf("%s text %d: Sign = %x, %v; want %x, %v", p, i, got, empty, want, h.Empty())
			}
			sig := got[1:]
			sigs = append(sigs, sig)
			keys := sk.AppendBucketKeys([]uint64{7}, sig)
			band := bands.AppendKeys(nil, p.AppendSlots(nil, sig))
			if len(keys) != 1+len(band) || keys[0] != 7 {
				t.Fatalf("%s text %d: %d keys; want 7 and %d", p, i, len(keys), len(band))
			}
			var scratch []uint64
			fromConfig, _ := c.AppendBucketKeys(nil, scratch, sig)
			if !slices.Equal(fromConfig, keys[1:]) {
				t.Errorf("%s text %d: Config.AppendBucketKeys differs from the Sketcher's", p, i)
			}
			full, _ := c.AppendBandKeys([]uint64{7}, scratch, sig)
			if !slices.Equal(full[1:], band) || full[0] != 7 {
				t.Errorf("%s text %d: AppendBandKeys %x; want lsh's band keys %x", p, i, full[1:], band)
			}
			for j := range band {
				if BucketKey(full[1+j]) != keys[1+j] {
					t.Errorf("%s text %d key %d: the bucket key %x is not the band key %x's high bits", p, i, j, keys[1+j], full[1+j])
				}
			}
			entries := AppendEntries(nil, keys[1:], uint32(i))
			old := lsh.AppendEntries(nil, band, uint32(i), 32)
			for j, k := range keys[1:] {
				if k != band[j]>>32 || k >= 1<<BucketKeyBits {
					t.Errorf("%s text %d key %d: %x; want %x", p, i, j, k, band[j]>>32)
				}
				if entries[j] != old[j] || EntryBucket(entries[j]) != k || EntryDoc(entries[j]) != uint32(i) || PackEntry(k, uint32(i)) != old[j] {
					t.Errorf("%s text %d key %d: entry %x; want %x", p, i, j, entries[j], old[j])
				}
			}
		}
		if got, want := sketch.Similarity(sigs[0], sigs[1]), p.Similarity(sigs[0], sigs[1]); got != want {
			t.Errorf("%s: Similarity %v; want %v", p, got, want)
		}
		if m := sk.Metrics(); m.Signatures != int64(len(texts)) {
			t.Errorf("%s: Metrics %+v; want %d signatures", p, m, len(texts))
		}
	}
}

// TestConfigErrors: a Config that cannot make a sketch is refused.
func TestConfigErrors(t *testing.T) {
	p := minhash.Params{}
	p.EnsureDefaults()
	for _, c := range []Config{
		{Spec: mustSpec(t, "word:5"), Params: p, Bands: lsh.Params{Bands: 40, Rows: 4}},
		{Spec: mustSpec(t, "word:5"), Params: p},
		{Spec: mustSpec(t, "word:5"), Params: minhash.Params{K: 128, Bits: 3}, Bands: lsh.Params{Bands: 8, Rows: 4}},
		{Params: p, Bands: lsh.Params{Bands: 8, Rows: 4}},
	} {
		if _, err := c.New(); err == nil {
			t.Errorf("%+v: made a sketch; want an error", c)
		}
	}
}

// TestEmpty: Sketch.Empty is true exactly for the signature Sign returns
// for a text without features, for every slot width (the padding of packed
// slots included), and false for the signatures of texts with features.
func TestEmpty(t *testing.T) {
	for _, p := range []minhash.Params{{}, {K: 7, Bits: 8}, {K: 5, Bits: 1}, {K: 64, Scheme: minhash.KHash, Bits: 64}, {K: 33, Bits: 16, Seed: 4}} {
		p.EnsureDefaults()
		c := Config{Spec: mustSpec(t, "word:3"), Params: p, Bands: lsh.Params{Bands: 1, Rows: 1}}
		s, err := c.New()
		if err != nil {
			t.Fatal(err)
		}
		sk, _ := s.NewSketcher()
		for i, text := range texts {
			sig, empty := sk.Sign(nil, []byte(text))
			if got := s.Empty(sig); got != empty && p.K*p.Bits > 16 {
				t.Errorf("%s text %d: Empty = %v; Sign said %v", p, i, got, empty)
			}
			if empty && !s.Empty(sig) {
				t.Errorf("%s text %d: Empty = false for the signature of a text without features", p, i)
			}
		}
		ones := make([]uint64, p.Words())
		for i := range ones {
			ones[i] = ^uint64(0)
		}
		if p.K*p.Bits%64 != 0 && s.Empty(ones) {
			t.Errorf("%s: Empty of all 64-bit ones (padding set) = true; want false", p)
		}
	}
}

// TestTextHashHeld: both sketches' TextHashHeld is TextHash, and the Sign
// of the same slice after either is a fresh sketcher's Sign (the memo of
// the normalisation is the text's).
func TestTextHashHeld(t *testing.T) {
	p := minhash.Params{}
	p.EnsureDefaults()
	bands, err := lsh.ForRecall(0.7, p.K, 0.99)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []Config{{Spec: mustSpec(t, "word:3"), Params: p, Bands: bands}, simHashConfig(3, 4)} {
		sketch, err := c.New()
		if err != nil {
			t.Fatal(err)
		}
		sk, _ := sketch.NewSketcher()
		ref, _ := sketch.NewSketcher()
		th, rth := sk.(TextHasher), ref.(TextHasher)
		for i, text := range texts {
			b := []byte(text)
			h, l, empty := rth.TextHash(b)
			gh, gl, gempty := th.TextHashHeld(b)
			if gh != h || gl != l || gempty != empty {
				t.Fatalf("text %d: TextHashHeld %x %x %v; want %x %x %v", i, gh, gl, gempty, h, l, empty)
			}
			fresh, _ := sketch.NewSketcher()
			want, wempty := fresh.Sign(nil, b)
			if got, gempty := sk.Sign(nil, b); !slices.Equal(got, want) || gempty != wempty {
				t.Fatalf("text %d: Sign after TextHashHeld %x, %v; want %x, %v", i, got, gempty, want, wempty)
			}
		}
	}
}
