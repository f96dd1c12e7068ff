package eval

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// corpusCase builds one test corpus's texts; it may skip.
type corpusCase struct {
	name  string
	short bool // word 5-grams also run under -short and -race
	// shortChar: char 5-grams also run under -short (never under -race).
	shortChar bool
	texts     func(t *testing.T) [][]byte
}

func agreementCorpora() []corpusCase {
	return []corpusCase{
		{"articles", true, false, func(t *testing.T) [][]byte { return loadArticles(t) }},
		{"gosrc", false, false, func(t *testing.T) [][]byte { return goSources(t, 2500, 6<<10) }},
		{"articles-edits", true, false, func(t *testing.T) [][]byte {
			return plantEdits(loadArticles(t)[:800], 2400, 0.15, 1)
		}},
		{"gosrc-edits", false, false, func(t *testing.T) [][]byte {
			return plantEdits(goSources(t, 2000, 6<<10)[1000:1800], 2400, 0.15, 2)
		}},
		{"zipf-edits", true, true, func(t *testing.T) [][]byte {
			return plantEdits(zipfTexts(800, 3), 2400, 0.15, 3)
		}},
	}
}

var agreementThresholds = []float64{0.3, 0.5, 0.8}

// TestAllPairsAgreesWithBruteForce checks the join against an N² brute force
// on real and realistic corpora of at least 2,000 documents, for word and char
// 5-grams, at several thresholds and worker counts.
func TestAllPairsAgreesWithBruteForce(t *testing.T) {
	for _, cc := range agreementCorpora() {
		for _, kind := range []featureKind{word5, char5} {
			t.Run(cc.name+"/"+kind.String(), func(t *testing.T) {
				quick := testing.Short() || raceEnabled
				if quick && !cc.short || testing.Short() && kind == char5 && !cc.shortChar {
					t.Skip("long configuration; skipped with -short and -race")
				}
				if raceEnabled && kind == char5 {
					t.Skip("char 5-grams are slow under -race")
				}
				texts := cc.texts(t)
				if len(texts) < 2000 {
					t.Fatalf("corpus has %d documents; want >= 2000", len(texts))
				}
				start := time.Now()
				sets := featurize(texts, kind)
				tFeat := time.Since(start)
				start = time.Now()
				want := bruteForce(sets, slices.Min(agreementThresholds))
				tBrute := time.Since(start)
				crossCheck(t, sets, want)

				start = time.Now()
				c, err := NewCollection(sets, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, th := range agreementThresholds {
					wantT := filterPairs(want, th)
					got, err := c.AllPairs(th)
					if err != nil {
						t.Fatal(err)
					}
					comparePairs(t, fmt.Sprintf("t=%v", th), got, wantT)
					if len(wantT) == 0 {
						t.Errorf("t=%v: brute force found no pairs; the corpus does not exercise the join", th)
					}
				}
				tJoin := time.Since(start)

				// Other worker counts give the identical remap and result; at
				// one threshold, as the brute force already pins each result.
				tw := 0.5
				if kind == char5 {
					tw = 0.8 // char 5-grams at low thresholds are slow to join
				}
				ref, _ := c.AllPairs(tw) // c has the default, GOMAXPROCS workers
				for _, w := range []int{1, 7} {
					cw, err := NewCollection(sets, &Options{Workers: w})
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(cw.toks, c.toks) || !slices.Equal(cw.ids, c.ids) {
						t.Errorf("workers=%d: remap differs", w)
					}
					got, err := cw.AllPairs(tw)
					if err != nil {
						t.Fatal(err)
					}
					comparePairs(t, fmt.Sprintf("workers=%d, t=%v", w, tw), got, ref)
				}
				t.Logf("%d docs, %d features: pairs %d/%d/%d at t=0.3/0.5/0.8; features %v, brute force %v, join (3 thresholds) %v",
					len(sets), c.Features(), len(filterPairs(want, 0.3)), len(filterPairs(want, 0.5)), len(filterPairs(want, 0.8)),
					tFeat.Round(time.Millisecond), tBrute.Round(time.Millisecond), tJoin.Round(time.Millisecond))
			})
		}
	}
}

// crossCheck verifies the brute force's overlaps with plain merges on (a
// sample of) the pairs it reports and on random other pairs, so that the
// reference does not rest on its own inverted index.
func crossCheck(t *testing.T, sets [][]uint64, ps []Pair) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	for k := range min(len(ps), 3000) {
		p := ps[k]
		if len(ps) > 3000 {
			p = ps[rng.IntN(len(ps))]
		}
		if o := Overlap(sets[p.A], sets[p.B]); o != int(p.Overlap) {
			t.Fatalf("brute force overlap(%d, %d) = %d; merge says %d", p.A, p.B, p.Overlap, o)
		}
		if j := Jaccard(sets[p.A], sets[p.B]); j != p.Jaccard {
			t.Fatalf("brute force Jaccard(%d, %d) = %v; Jaccard says %v", p.A, p.B, p.Jaccard, j)
		}
	}
	for range 2000 {
		a, b := rng.IntN(len(sets)), rng.IntN(len(sets))
		if a == b {
			continue
		}
		a, b = min(a, b), max(a, b)
		_, found := slices.BinarySearchFunc(ps, Pair{A: int32(a), B: int32(b)}, cmpPair)
		if j := Jaccard(sets[a], sets[b]); found != (j >= 0.3) {
			t.Fatalf("brute force has pair (%d, %d): %v; but Jaccard = %v", a, b, found, j)
		}
	}
}

func cmpPair(p, q Pair) int {
	if p.A != q.A {
		return int(p.A) - int(q.A)
	}
	return int(p.B) - int(q.B)
}

// comparePairs reports the differences between got and want, both sorted.
func comparePairs(t *testing.T, what string, got, want []Pair) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	if !slices.IsSortedFunc(got, cmpPair) {
		t.Errorf("%s: result not sorted by (A, B)", what)
	}
	var missing, extra, wrong int
	i, j := 0, 0
	for i < len(got) || j < len(want) {
		switch {
		case j == len(want) || i < len(got) && cmpPair(got[i], want[j]) < 0:
			if extra++; extra <= 5 {
				t.Errorf("%s: extra pair %+v", what, got[i])
			}
			i++
		case i == len(got) || cmpPair(got[i], want[j]) > 0:
			if missing++; missing <= 5 {
				t.Errorf("%s: missing pair %+v", what, want[j])
			}
			j++
		default:
			if got[i] != want[j] {
				if wrong++; wrong <= 5 {
					t.Errorf("%s: got %+v; want %+v", what, got[i], want[j])
				}
			}
			i++
			j++
		}
	}
	t.Errorf("%s: got %d pairs; want %d (%d missing, %d extra, %d differ)", what, len(got), len(want), missing, extra, wrong)
}
