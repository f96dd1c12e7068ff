package jobspec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/internal/cputime"
	"github.com/neardup/neardup/internal/sketch"
)

// refSet is the set sortSet must make: slices.Sort and slices.Compact.
func refSet(f []uint64) []uint64 {
	f = slices.Clone(f)
	slices.Sort(f)
	return slices.Compact(f)
}

// exactVerifier returns a Verifier of exact verification at threshold th
// (0: the default) over the shingles spec names, and the sketch it was made
// for; it fails the test if any of them cannot be made. Features do not
// depend on the sketch, so a second call gives a Verifier making the same
// sets.
func exactVerifier(tb testing.TB, th float64, spec string) (*Verifier, sketch.Sketch) {
	tb.Helper()
	job, err := (&Options{Threshold: th, Verify: VerifyExact, Spec: mustSpec(tb, spec)}).Job()
	if err != nil {
		tb.Fatal(err)
	}
	sk, err := job.Sketch.New()
	if err != nil {
		tb.Fatal(err)
	}
	v, err := job.NewVerifier(sk)
	if err != nil {
		tb.Fatal(err)
	}
	return v, sk
}

// randWords returns n words "w<i>", i drawn by rng from [0, vocab); with
// pad > 0 each word first draws 0 to pad−1 letters 'x' to put after its "w"
// (words of varied lengths). The draws are in this order, so that a test's
// texts stay the same for its seed.
func randWords(rng *rand.Rand, n, vocab, pad int) []string {
	w := make([]string, n)
	for i := range w {
		if pad > 0 {
			w[i] = fmt.Sprintf("w%s%d", strings.Repeat("x", rng.IntN(pad)), rng.IntN(vocab))
		} else {
			w[i] = fmt.Sprint("w", rng.IntN(vocab))
		}
	}
	return w
}

// TestSortSet checks sortSet against slices.Sort + Compact on random
// lists of every length up to past smallSet, of hashes spread over 64 bits,
// of values crowded into a narrow range or onto a few values (many
// repeats, few home slots: long runs in sortTable's table, moved up as
// smaller values arrive, and runs past the last home), of extremes (0,
// MaxUint64) and already sorted or reversed lists, reusing the table of
// earlier calls as Features does.
func TestSortSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 1))
	gens := map[string]func(n int) []uint64{
		"hashes": func(n int) []uint64 {
			f := make([]uint64, n)
			for i := range f {
				f[i] = rng.Uint64()
			}
			return f
		},
		"narrow": func(n int) []uint64 {
			base := rng.Uint64()
			f := make([]uint64, n)
			for i := range f {
				f[i] = base + rng.Uint64N(uint64(3*n+1))
			}
			return f
		},
		"repeats": func(n int) []uint64 {
			vals := []uint64{0, 1, 7, 1 << 63, ^uint64(0), rng.Uint64()}
			f := make([]uint64, n)
			for i := range f {
				f[i] = vals[rng.IntN(len(vals))]
			}
			return f
		},
		"clustered": func(n int) []uint64 {
			// Most values in one bucket, a few far away.
			f := make([]uint64, n)
			for i := range f {
				f[i] = uint64(rng.IntN(1000))
				if rng.IntN(8) == 0 {
					f[i] = ^uint64(0) - uint64(rng.IntN(4))
				}
			}
			return f
		},
		"sorted": func(n int) []uint64 {
			f := make([]uint64, n)
			for i := range f {
				f[i] = rng.Uint64()
			}
			slices.Sort(f)
			return f
		},
		"reversed": func(n int) []uint64 {
			f := make([]uint64, n)
			for i := range f {
				f[i] = rng.Uint64()
			}
			slices.Sort(f)
			slices.Reverse(f)
			return f
		},
	}
	var s setSorter
	for name, gen := range gens {
		for n := 0; n <= smallSet+40; n++ {
			for range 3 {
				f := gen(n)
				want := refSet(f)
				got := s.sortSet(f)
				if !slices.Equal(got, want) {
					t.Fatalf("%s n=%d: sortSet = %v; want %v", name, n, got, want)
				}
				if len(got) > 0 && &got[0] != &f[0] {
					t.Fatalf("%s n=%d: the set is not in f's memory", name, n)
				}
			}
		}
	}
	// Large lists go to the radix sort.
	f := gens["hashes"](5000)
	f = append(f, f[:100]...)
	want := refSet(f)
	if got := new(setSorter).sortSet(f); !slices.Equal(got, want) {
		t.Fatal("sortSet of 5,100 values with 100 repeats differs from slices.Sort")
	}
}

// TestVerifyFeatures: VerifyFeatures decides as Verify does, and Estimate
// is Verify's Est, on random pairs of short texts sharing some of their words.
func TestVerifyFeatures(t *testing.T) {
	v, sk := exactVerifier(t, 0.5, "word:2")
	signer, _ := sk.NewSketcher()
	rng := rand.New(rand.NewPCG(5, 5))
	text := func(base []string) []byte {
		w := slices.Clone(base)
		for i := range w {
			if rng.IntN(4) == 0 {
				w[i] = fmt.Sprint("x", rng.IntN(50))
			}
		}
		return []byte(strings.Join(w, " "))
	}
	passed := 0
	for range 500 {
		base := randWords(rng, 3+rng.IntN(20), 40, 0)
		ta, tb := text(base), text(base)
		fa := v.Features(nil, ta)
		fb := v.Features(nil, tb)
		sa, _ := signer.Sign(nil, ta)
		sb, _ := signer.Sign(nil, tb)
		d, ok := v.Verify(sa, sb, fa, fb)
		exact, ok2 := v.VerifyFeatures(fa, fb)
		if want := eval.Jaccard(fa, fb); exact != want || d.Exact != want || ok != ok2 || ok != (want >= 0.5) {
			t.Fatalf("VerifyFeatures = %v, %v; Verify %+v, %v; Jaccard %v", exact, ok2, d, ok, want)
		}
		if e := v.Estimate(sa, sb); e != d.Est || e != sk.Similarity(sa, sb) {
			t.Fatalf("Estimate = %v; Verify's Est %v", e, d.Est)
		}
		if ok {
			passed++
		}
	}
	if passed == 0 || passed == 500 {
		t.Fatalf("%d of 500 pairs passed; want some of each", passed)
	}
}

// BenchmarkSortSet sorts feature lists of short documents (20–60 random
// 64-bit hashes, a few repeated) into sets: sort=slices is slices.Sort and
// slices.Compact (what radix.Sort did below its cutoff), sort=small is
// sortSet. Bytes are those of the values.
func BenchmarkSortSet(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	lists := make([][]uint64, 4096)
	var size int64
	for i := range lists {
		f := make([]uint64, 20+rng.IntN(41))
		for j := range f {
			f[j] = rng.Uint64()
		}
		f[len(f)-1] = f[0]
		lists[i] = f
		size += int64(8 * len(f))
	}
	for _, way := range []string{"slices", "small"} {
		b.Run("sort="+way, func(b *testing.B) {
			var buf []uint64
			var s setSorter
			b.SetBytes(size)
			cpu0 := cputime.Process()
			for b.Loop() {
				for _, f := range lists {
					buf = append(buf[:0], f...)
					switch way {
					case "slices":
						slices.Sort(buf)
						buf = slices.Compact(buf)
					default:
						buf = s.sortSet(buf)
					}
				}
			}
			cputime.ReportPerOp(b, cputime.Process()-cpu0)
		})
	}
}

// TestDecide: Decide passes exactly the pairs VerifyFeatures passes, with
// the same similarity, on random sets of 0–80 values of all size ratios
// drawn from a small range (so that they overlap), at thresholds at and
// around the sizes' ratios, where the bound is tight (one set within the
// other: the similarity is the ratio).
func TestDecide(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	pruned := 0
	for _, th := range []float64{0.05, 0.3, 0.5, 0.7, 0.8, 0.9, 0.99} {
		v, _ := exactVerifier(t, th, "word:2")
		set := func(n int) []uint64 {
			s := make([]uint64, n)
			for i := range s {
				s[i] = rng.Uint64N(100)
			}
			slices.Sort(s)
			return slices.Compact(s)
		}
		for range 3000 {
			fa, fb := set(rng.IntN(81)), set(rng.IntN(81))
			switch rng.IntN(4) {
			case 0: // fb within fa
				fb = slices.Clone(fa[:rng.IntN(len(fa)+1)])
			case 1: // near copies: fa with a few values changed
				fb = slices.Clone(fa)
				for range rng.IntN(4) {
					if len(fb) > 0 {
						fb[rng.IntN(len(fb))] = 100 + rng.Uint64N(100)
					}
				}
				slices.Sort(fb)
				fb = slices.Compact(fb)
			}
			want, wantOK := v.VerifyFeatures(fa, fb)
			got, ok := v.Decide(fa, fb)
			if ok != wantOK || ok && got != want {
				t.Fatalf("threshold %v, sizes %d, %d: Decide = %v, %v; VerifyFeatures %v, %v", th, len(fa), len(fb), got, ok, want, wantOK)
			}
			lo, hi := min(len(fa), len(fb)), max(len(fa), len(fb))
			if hi > 0 && float64(lo)/float64(hi) < th {
				pruned++
			}
		}
	}
	if pruned == 0 {
		t.Error("no pair was decided by its sizes: the test does not reach the bound")
	}
}

// TestMinOverlap: minOverlap gives the least overlap whose similarity, as
// eval.Jaccard computes it, reaches the threshold, found by trying every
// overlap, for sizes 0–70 at thresholds that make the real-valued bound
// land on and beside integers (1/3, 0.5, 0.8 and 0.75 of sizes that divide
// evenly), 0 and 1.
func TestMinOverlap(t *testing.T) {
	for _, th := range []float64{0, 0.05, 1.0 / 3, 0.5, 0.6, 0.75, 0.8, 0.9, 0.99, 1} {
		for na := range 71 {
			for nb := range 71 {
				want := -1
				for k := 0; k <= min(na, nb); k++ {
					if eval.Jaccard(seq(0, na), seq(na-k, nb)) >= th {
						want = k
						break
					}
				}
				got, ok := minOverlap(na, nb, th)
				if ok != (want >= 0) || ok && got != want {
					t.Fatalf("threshold %v, sizes %d, %d: minOverlap = %d, %v; want %d", th, na, nb, got, ok, want)
				}
			}
		}
	}
}

// seq returns the set lo, lo+1, …, lo+n−1.
func seq(lo, n int) []uint64 {
	s := make([]uint64, n)
	for i := range s {
		s[i] = uint64(lo + i)
	}
	return s
}

// BenchmarkPairCheck decides 4,096 candidate pairs of short documents'
// feature sets (20–45 word:5 features) at threshold 0.8, as the candidates of
// 5M short documents mix them: two in five near copies (the last word
// changed) and the rest sharing a fragment of 5–15 words (of any length):
// way=verify is VerifyFeatures (the Jaccard of every pair), way=decide is
// Decide (pairs too different in size not merged). Bytes are those of the
// two sets.
func BenchmarkPairCheck(b *testing.B) {
	v, _ := exactVerifier(b, 0.8, "word:5")
	rng := rand.New(rand.NewPCG(4, 8))
	words := func(n int) []string { return randWords(rng, n, 50000, 0) }
	type pair struct{ a, b []uint64 }
	pairs := make([]pair, 4096)
	var size int64
	for i := range pairs {
		wa := words(20 + rng.IntN(26))
		var wb []string
		if rng.IntN(5) < 2 {
			wb = slices.Clone(wa)
			wb[len(wb)-1] = "changed"
		} else {
			k := 5 + rng.IntN(11)
			wb = append(words(rng.IntN(30)), wa[:min(k, len(wa))]...)
		}
		fa := v.Features(nil, []byte(strings.Join(wa, " ")))
		fb := v.Features(nil, []byte(strings.Join(wb, " ")))
		pairs[i] = pair{slices.Clone(fa), slices.Clone(fb)}
		size += int64(8 * (len(fa) + len(fb)))
	}
	for _, way := range []string{"verify", "decide"} {
		b.Run("way="+way, func(b *testing.B) {
			b.SetBytes(size)
			passed := 0
			cpu0 := cputime.Process()
			for b.Loop() {
				passed = 0
				for _, p := range pairs {
					var ok bool
					if way == "verify" {
						_, ok = v.VerifyFeatures(p.a, p.b)
					} else {
						_, ok = v.Decide(p.a, p.b)
					}
					if ok {
						passed++
					}
				}
			}
			cputime.ReportPerOp(b, cputime.Process()-cpu0)
			b.ReportMetric(float64(passed), "passed")
		})
	}
}

// TestAppendFeatures: AppendFeatures appends to what dst holds exactly the
// set Features returns, for texts one after another into one slice (as
// verify's workers make a chunk's sets), including empty texts, texts with
// fewer words than a shingle, repeated words, and a text of more than
// smallSet features (the radix path), and leaves dst's values before it as
// they were.
func TestAppendFeatures(t *testing.T) {
	v, _ := exactVerifier(t, 0.5, "word:3")
	ref, _ := exactVerifier(t, 0.5, "word:3")
	rng := rand.New(rand.NewPCG(9, 1))
	var texts [][]byte
	texts = append(texts, nil, []byte("one"), []byte("a a a a a a a a"), []byte("two words"))
	for range 200 {
		texts = append(texts, []byte(strings.Join(randWords(rng, rng.IntN(40), 30, 0), " ")))
	}
	long := make([]string, 700)
	for i := range long {
		long[i] = fmt.Sprint("l", i%400)
	}
	texts = append(texts, []byte(strings.Join(long, " ")))
	dst := []uint64{7, 3, 5} // not a set: must stay as it is
	var want []uint64
	want = append(want, dst...)
	for i, text := range texts {
		n := len(dst)
		dst = v.AppendFeatures(dst, text)
		f := ref.Features(nil, text)
		want = append(want, f...)
		if !slices.Equal(dst[n:], f) {
			t.Fatalf("text %d: got %d features %v; want %v", i, len(dst)-n, dst[n:], f)
		}
	}
	if !slices.Equal(dst, want) {
		t.Fatal("AppendFeatures changed values before the ones it appended")
	}
	if len(ref.Features(nil, texts[len(texts)-1])) <= smallSet {
		t.Fatalf("the long text has at most %d features; want more", smallSet)
	}
}

// BenchmarkAppendFeaturesShort makes the feature sets of short texts (20–45
// words of 4–9 letters from a vocabulary of 50,000, like the short
// documents of issue 12) one after the other into one slice, reset every
// 256 texts, as verify's featureSets makes a chunk's (word:5): the
// shingling and sortSet, without reading the texts. Bytes are the texts'.
func BenchmarkAppendFeaturesShort(b *testing.B) {
	v, _ := exactVerifier(b, 0, "word:5")
	rng := rand.New(rand.NewPCG(33, 1))
	texts := make([][]byte, 4096)
	var size int64
	for i := range texts {
		texts[i] = []byte(strings.Join(randWords(rng, 20+rng.IntN(26), 50000, 4), " "))
		size += int64(len(texts[i]))
	}
	var dst []uint64
	b.SetBytes(size)
	b.ReportAllocs()
	cpu0 := cputime.Process()
	for b.Loop() {
		for i, t := range texts {
			if i%256 == 0 {
				dst = dst[:0]
			}
			dst = v.AppendFeatures(dst, t)
		}
	}
	cputime.ReportPerOp(b, cputime.Process()-cpu0)
	if len(dst) == 0 {
		b.Fatal("no features")
	}
}
