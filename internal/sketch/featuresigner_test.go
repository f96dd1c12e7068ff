package sketch

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
)

// bandsFor returns a banding of p's K.
func bandsFor(t *testing.T, p minhash.Params) lsh.Params {
	t.Helper()
	b, err := lsh.ForRecall(0.8, p.K, 0.99)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// minHashSketcherOf returns a Sketcher of c and a Shingler of its Spec.
func minHashSketcherOf(t *testing.T, c Config) (Sketcher, *shingle.Shingler) {
	t.Helper()
	sk, err := c.New()
	if err != nil {
		t.Fatal(err)
	}
	k, err := sk.NewSketcher()
	if err != nil {
		t.Fatal(err)
	}
	sh, err := shingle.New(c.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return k, sh
}

// randomText returns n words drawn from a vocabulary of v, so that small v
// repeats shingles within a text.
func randomText(rng *rand.Rand, n, v int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(" ,.\n"[rng.IntN(4)])
		}
		w := rng.IntN(v)
		b.WriteString("w")
		for ; w > 0; w /= 7 {
			b.WriteByte(byte('a' + w%7))
		}
		if rng.IntN(9) == 0 {
			b.WriteString("É")
		}
	}
	return b.String()
}

// TestSignFeaturesIsSign: a MinHash Sketcher signs a text's feature set
// (shingle.Shingler.AppendFeatures) bit for bit as it signs the text — the
// set as made, sorted without repeats, shuffled with repeats — and says
// empty alike, for every scheme, power-of-two K or not, word and character
// shingles and texts from none to a few thousand features (bins left empty
// and densified, the lazy path past keepFeatures·K, repeats in the text).
func TestSignFeaturesIsSign(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 1))
	params := []minhash.Params{{}, {K: 100, Seed: 5}, {K: 64, Scheme: minhash.KHash, Bits: 16, Seed: 9}, {K: 256, Bits: 8, Seed: 3}, {K: 16, Bits: 64}}
	for _, spec := range []string{"word:5", "word:1", "char:5"} {
		for _, p := range params {
			p.EnsureDefaults()
			k, sh := minHashSketcherOf(t, Config{Spec: mustSpec(t, spec), Params: p, Bands: bandsFor(t, p)})
			fs, ok := k.(FeatureSigner)
			if !ok {
				t.Fatalf("%s %v: the MinHash Sketcher is no FeatureSigner", spec, p)
			}
			var want, got, feats []uint64
			for i := range 300 {
				n := []int{0, 1, 3, 6, 20, 40, 200, 1000}[i%8]
				text := randomText(rng, n, 1+rng.IntN(2*n+1))
				if i%50 == 0 {
					text = texts[i/50%len(texts)]
				}
				var wantEmpty, gotEmpty bool
				want, wantEmpty = k.Sign(want[:0], []byte(text))
				feats = sh.AppendFeatures(feats[:0], []byte(text))
				got, gotEmpty = fs.SignFeatures(got[:0], feats)
				if !slices.Equal(got, want) || gotEmpty != wantEmpty {
					t.Fatalf("%s %v, %d words: SignFeatures of the features differs from Sign (empty %v, want %v)", spec, p, n, gotEmpty, wantEmpty)
				}
				set := slices.Compact(slices.Sorted(slices.Values(feats)))
				if got, _ = fs.SignFeatures(got[:0], set); !slices.Equal(got, want) {
					t.Fatalf("%s %v, %d words: SignFeatures of the sorted set differs from Sign", spec, p, n)
				}
				mixed := append(slices.Clone(set), set[:len(set)/3]...)
				rng.Shuffle(len(mixed), func(i, j int) { mixed[i], mixed[j] = mixed[j], mixed[i] })
				if got, _ = fs.SignFeatures(got[:0], mixed); !slices.Equal(got, want) {
					t.Fatalf("%s %v, %d words: SignFeatures of the shuffled set with repeats differs from Sign", spec, p, n)
				}
			}
		}
	}
}

// TestSimHashIsNoFeatureSigner: SimHash weighs repeated features, so its
// Sketcher must not offer to sign a set.
func TestSimHashIsNoFeatureSigner(t *testing.T) {
	sk, err := simHashConfig(3, 4).New()
	if err != nil {
		t.Fatal(err)
	}
	k, err := sk.NewSketcher()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := k.(FeatureSigner); ok {
		t.Fatal("the SimHash Sketcher is a FeatureSigner")
	}
}

// TestSignForKeysIsSignForKeys: a MinHash Sketcher's SignForKeys gives the
// band keys (AppendKeys, AppendBucketKeys) of Sign's signature and says
// empty alike, for every scheme, K, width and banding (multi-probe too),
// for texts from none to a thousand features, interleaved with Sign and
// SignFeatures on the same Sketcher (which must still give whole
// signatures); and over the short texts it densifies fewer rounds
// (Metrics.Rounds) than Sign.
func TestSignForKeysIsSignForKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 2))
	params := []minhash.Params{{}, {K: 100, Seed: 5}, {K: 64, Scheme: minhash.KHash, Bits: 16, Seed: 9}, {K: 256, Bits: 8, Seed: 3}, {K: 16, Bits: 64}}
	for _, p := range params {
		p.EnsureDefaults()
		for _, probe := range []int{0, 1} {
			bands := bandsFor(t, p)
			bands.Probe = probe
			k, sh := minHashSketcherOf(t, Config{Spec: mustSpec(t, "word:5"), Params: p, Bands: bands})
			ks, ok := k.(KeySigner)
			if !ok {
				t.Fatalf("%v: the MinHash Sketcher is no KeySigner", p)
			}
			fs := k.(FeatureSigner)
			var whole, part, keys, wantKeys, feats, again []uint64
			var roundsWhole, roundsPart int64
			for i := range 300 {
				n := []int{0, 1, 3, 6, 20, 40, 200, 1000}[i%8]
				text := []byte(randomText(rng, n, 1+rng.IntN(2*n+1)))
				m0 := k.Metrics().Rounds
				var wantEmpty, gotEmpty bool
				whole, wantEmpty = k.Sign(whole[:0], text)
				m1 := k.Metrics().Rounds
				part, gotEmpty = ks.SignForKeys(part[:0], text)
				m2 := k.Metrics().Rounds
				if gotEmpty != wantEmpty {
					t.Fatalf("%v, %d words: SignForKeys says empty %v, Sign %v", p, n, gotEmpty, wantEmpty)
				}
				if len(part) != len(whole) {
					t.Fatalf("%v, %d words: SignForKeys appended %d words, Sign %d", p, n, len(part), len(whole))
				}
				if !wantEmpty {
					wantKeys = k.AppendKeys(wantKeys[:0], whole)
					if keys = k.AppendKeys(keys[:0], part); !slices.Equal(keys, wantKeys) {
						t.Fatalf("%v probe %d, %d words: the keys of SignForKeys differ from Sign's", p, probe, n)
					}
					wantKeys = k.AppendBucketKeys(wantKeys[:0], whole)
					if keys = k.AppendBucketKeys(keys[:0], part); !slices.Equal(keys, wantKeys) {
						t.Fatalf("%v probe %d, %d words: the bucket keys of SignForKeys differ from Sign's", p, probe, n)
					}
				}
				// The Sketcher signs whole signatures again after it.
				feats = sh.AppendFeatures(feats[:0], text)
				if again, _ = fs.SignFeatures(again[:0], feats); !slices.Equal(again, whole) {
					t.Fatalf("%v, %d words: SignFeatures after SignForKeys differs from Sign", p, n)
				}
				if again, _ = k.Sign(again[:0], text); !slices.Equal(again, whole) {
					t.Fatalf("%v, %d words: Sign after SignForKeys differs", p, n)
				}
				if n >= 20 && n <= 40 {
					roundsWhole += m1 - m0
					roundsPart += m2 - m1
				}
			}
			if p.Scheme == minhash.OnePermutation && bands.Bands*bands.Rows < p.K && roundsPart >= roundsWhole {
				t.Errorf("%v: SignForKeys ran %d rounds on the short texts, Sign %d; want fewer", p, roundsPart, roundsWhole)
			}
		}
	}
}
