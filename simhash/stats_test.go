package simhash

import (
	"bufio"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/zeebo/xxh3"
)

// distanceStats accumulates, over pairs of fingerprints, the observed Hamming
// distances and what Charikar's theorem predicts for them.
//
// For a pair whose weight vectors are at angle θ, each of the 64 bits differs
// with probability p = θ/π, independently across bits (distinct hash bits of
// independent random features), so the distance is Binomial(64, p), with mean
// 64p and variance 64p(1−p). Pairs are independent, so the total distance over
// the pairs has mean Σ64p_j and variance Σ64p_j(1−p_j), and by the central
// limit theorem it lies within z standard errors of its mean except with
// probability about 2Φ(−z): for z = 4.5, 7e-6.
//
// The theorem is exact for Gaussian hyperplanes; ours have ±1 coordinates and
// are Gaussian only in the limit of many features. The discreteness bias is
// O(1/√n) per bit at worst; measured with sets of about 1000 features it is
// under 0.3% of the mean (|z| < 1.2 with 4000 pairs per level), inside the
// 4.5σ bound.
type distanceStats struct {
	pairs         int
	obs, mean, vr float64
	ds, ms        []float64 // each pair's distance and predicted mean
}

func (s *distanceStats) add(a, b uint64, cos float64) {
	p := math.Acos(min(cos, 1)) / math.Pi
	d := float64(Distance(a, b))
	s.pairs++
	s.obs += d
	s.ds = append(s.ds, d)
	s.ms = append(s.ms, 64*p)
	s.mean += 64 * p
	s.vr += 64 * p * (1 - p)
}

// z returns the standardized deviation of the total distance from its
// prediction.
func (s *distanceStats) z() float64 {
	return (s.obs - s.mean) / math.Sqrt(s.vr)
}

// TestCharikar checks that the mean Hamming distance between fingerprints of
// random sets is 64·θ/π, cos θ = |A∩B|/√(|A||B|), at several similarity
// levels, and that within a level the distance has the binomial variance that
// independent bits give.
func TestCharikar(t *testing.T) {
	const pairs = 600 // per level
	r := rand.New(rand.NewPCG(11, 12))
	for _, level := range []float64{0, 0.3, 0.6, 0.8, 0.9, 0.95, 0.98} {
		var s distanceStats
		for range pairs {
			// Odd sizes, so a unit-weight vote never ties, with
			// level²·|A| ≤ |B| ≤ |A|/level² so that the overlap
			// level·√(|A||B|) fits in both sets.
			na := 1001
			lo, hi := 801, 1201
			if level > 0 {
				lo = max(lo, int(level*level*float64(na))+1)
				hi = min(hi, int(float64(na)/(level*level)))
			}
			lo |= 1 // odd
			nb := lo + 2*r.IntN((hi-lo)/2+1)
			c := int(level * math.Sqrt(float64(na*nb)))
			a := randFeatures(r, na)
			b := append(slices.Clone(a[:c]), randFeatures(r, nb-c)...)
			r.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
			cos := float64(c) / math.Sqrt(float64(na*nb))
			s.add(Fingerprint(a), Fingerprint(b), cos)
		}
		t.Logf("cos %.2f: mean distance %.3f, theory %.3f (z = %.2f)", level, s.obs/pairs, s.mean/pairs, s.z())
		if z := s.z(); math.Abs(z) > 4.5 {
			t.Errorf("cos %.2f: mean distance %.3f; want %.3f ± 4.5σ (z = %.2f)",
				level, s.obs/pairs, s.mean/pairs, z)
		}
		// Variance within the level. By the law of total variance it is the
		// mean of the binomial variances 64p(1−p) plus the variance of the
		// pairs' means 64p (the sizes, hence p, vary a little). The sample
		// variance of P draws has a relative standard error of about
		// √(2/(P−1)) (the binomial's excess kurtosis is negligible here), 5.8%
		// for P = 600; allow 5 of them. Correlated bits (a bit replicated, or
		// bits sharing votes) would inflate it far beyond that.
		sv := sampleVariance(s.ds)
		want := s.vr/pairs + sampleVariance(s.ms)
		if math.Abs(sv/want-1) > 5*math.Sqrt(2.0/(pairs-1)) {
			t.Errorf("cos %.2f: distance variance %.3f; want %.3f ± %.0f%%",
				level, sv, want, 500*math.Sqrt(2.0/(pairs-1)))
		}
	}
}

func sampleVariance(xs []float64) float64 {
	var m float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	var v float64
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return v / float64(len(xs)-1)
}

// wordShingles returns the distinct xxh3 hashes of the word 5-grams of text,
// sorted: a small stand-in for package shingle.
func wordShingles(text string) []uint64 {
	w := strings.Fields(strings.ToLower(text))
	var fs []uint64
	for i := 0; i+5 <= len(w); i++ {
		fs = append(fs, xxh3.HashString(strings.Join(w[i:i+5], " ")))
	}
	slices.Sort(fs)
	return slices.Compact(fs)
}

// cosine returns |A∩B|/√(|A||B|) for sorted distinct sets.
func cosine(a, b []uint64) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	inter := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			inter++
			i++
			j++
		}
	}
	return float64(inter) / math.Sqrt(float64(len(a))*float64(len(b)))
}

// articles returns the ids, texts' word 5-gram sets, and labelled pairs of an
// articles file, or skips the test if the data is absent.
func articles(t testing.TB, name string) (ids []string, sets map[string][]uint64, truth [][2]string) {
	t.Helper()
	dir := "../../shared/data/articles/"
	f, err := os.Open(dir + name + ".train")
	if err != nil {
		t.Skipf("evaluation data absent: %v", err)
	}
	defer f.Close()
	sets = make(map[string][]uint64)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		id, text, _ := strings.Cut(sc.Text(), " ")
		ids = append(ids, id)
		sets[id] = wordShingles(text)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	tr, err := os.ReadFile(dir + name + ".truth")
	if err != nil {
		t.Skipf("evaluation data absent: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(tr)), "\n") {
		a, b, ok := strings.Cut(line, " ")
		if !ok || sets[a] == nil || sets[b] == nil {
			t.Fatalf("bad truth line %q", line)
		}
		truth = append(truth, [2]string{a, b})
	}
	return ids, sets, truth
}

// TestArticles checks the theory on real text: the labelled near-duplicate
// pairs (Jaccard ≈ 0.96) and random other pairs have the distances that
// 64·θ/π predicts from their exact cosines, and an index over the articles
// answers exactly.
func TestArticles(t *testing.T) {
	ids, sets, truth := articles(t, "articles_2500")
	fps := make(map[string]uint64, len(ids))
	for _, id := range ids {
		fps[id] = Fingerprint(sets[id])
	}
	labelled := make(map[[2]string]bool)
	var dup distanceStats
	found3 := 0
	for _, p := range truth {
		labelled[p], labelled[[2]string{p[1], p[0]}] = true, true
		a, b := fps[p[0]], fps[p[1]]
		dup.add(a, b, cosine(sets[p[0]], sets[p[1]]))
		if Distance(a, b) <= 3 {
			found3++
		}
	}
	if z := dup.z(); math.Abs(z) > 4.5 {
		t.Errorf("labelled pairs: mean distance %.2f; want %.2f ± 4.5σ (z = %.2f)",
			dup.obs/float64(dup.pairs), dup.mean/float64(dup.pairs), z)
	}
	t.Logf("labelled pairs: mean distance %.2f (theory %.2f); %d of %d within 3 bits",
		dup.obs/float64(dup.pairs), dup.mean/float64(dup.pairs), found3, len(truth))

	r := rand.New(rand.NewPCG(13, 14))
	var other distanceStats
	for other.pairs < 5000 {
		a, b := ids[r.IntN(len(ids))], ids[r.IntN(len(ids))]
		if a == b || labelled[[2]string{a, b}] {
			continue
		}
		other.add(fps[a], fps[b], cosine(sets[a], sets[b]))
	}
	if z := other.z(); math.Abs(z) > 4.5 {
		t.Errorf("other pairs: mean distance %.2f; want %.2f ± 4.5σ (z = %.2f)",
			other.obs/float64(other.pairs), other.mean/float64(other.pairs), z)
	}

	// The index finds exactly what a scan finds, on real fingerprints.
	ix, err := NewIndex(Options{MaxDistance: 6, Blocks: 8})
	if err != nil {
		t.Fatal(err)
	}
	var entries []Entry
	for i, id := range ids {
		entries = append(entries, Entry{fps[id], uint64(i)})
	}
	ix.Build(entries)
	step := 1
	if raceEnabled || testing.Short() {
		step = 10
	}
	for i := 0; i < len(ids); i += step {
		id := ids[i]
		for _, k := range []int{0, 3, 6} {
			got, err := ix.Query(fps[id], k)
			if err != nil {
				t.Fatal(err)
			}
			if want := bruteForce(entries, fps[id], k); !slices.Equal(got, want) {
				t.Fatalf("doc %d k=%d: Query = %v; want %v", i, k, got, want)
			}
		}
	}
}
