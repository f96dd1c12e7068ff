package plan

import (
	"errors"
	"flag"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/simhash"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// simCorpus returns n documents as feature multisets: random originals of
// 100–400 features, and near copies (a quarter of the documents) with a
// random share of their features replaced, so that pair similarities spread
// from about 0.3 to 1. It also returns the sets (eval.Normalize).
func simCorpus(r *rand.Rand, n int) (docs, sets [][]uint64) {
	for len(docs) < n {
		if len(docs) > 0 && r.IntN(4) == 0 {
			src := docs[r.IntN(len(docs))]
			d := slices.Clone(src)
			edit := r.Float64() * 0.25
			for i := range d {
				if r.Float64() < edit {
					d[i] = r.Uint64()
				}
			}
			docs = append(docs, d)
			continue
		}
		d := make([]uint64, 100+r.IntN(300))
		for i := range d {
			d[i] = r.Uint64()
		}
		docs = append(docs, d)
	}
	for _, d := range docs {
		sets = append(sets, eval.Normalize(slices.Clone(d)))
	}
	return docs, sets
}

func simSample(t testing.TB, r *rand.Rand, n int, workers int) (*SimHashSample, [][]uint64) {
	t.Helper()
	docs, sets := simCorpus(r, n)
	fps := make([]uint64, n)
	for i, d := range docs {
		fps[i] = simhash.Fingerprint(d)
	}
	s, err := MeasureSimHash(sets, fps, 0, 0.3, 20000, 1, &eval.Options{Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	return s, sets
}

// TestMeasureSimHash checks the sample against brute force: every pair at
// or above the floor with its distance, the histogram of all pairs, and the
// same result for any number of workers.
func TestMeasureSimHash(t *testing.T) {
	s1, sets := simSample(t, rand.New(rand.NewPCG(91, 92)), 600, 1)
	s3, _ := simSample(t, rand.New(rand.NewPCG(91, 92)), 600, 3)
	if !slices.Equal(s1.Pairs, s3.Pairs) || s1.Distances != s3.Distances || !slices.Equal(s1.Below, s3.Below) {
		t.Fatal("the sample depends on the worker count")
	}
	fps := s1.Fingerprints
	var want []SimHashPair
	var hist [65]int64
	for a := range sets {
		for b := a + 1; b < len(sets); b++ {
			d := simhash.Distance(fps[a], fps[b])
			hist[d]++
			if j := eval.Jaccard(sets[a], sets[b]); j >= 0.3 {
				want = append(want, SimHashPair{int32(a), int32(b), j, d})
			}
		}
	}
	if !slices.Equal(s1.Pairs, want) {
		t.Fatalf("%d pairs; want %d from brute force", len(s1.Pairs), len(want))
	}
	if s1.Distances != hist {
		t.Fatalf("distance histogram differs from brute force")
	}
	if len(want) < 100 {
		t.Fatalf("only %d pairs at J ≥ 0.3; the corpus should plant more", len(want))
	}
	if s1.Drawn != 20000 || len(s1.Below) == 0 {
		t.Fatalf("drawn %d, below the floor %d", s1.Drawn, len(s1.Below))
	}
	for _, x := range s1.Below {
		if x.J >= 0.3 {
			t.Fatalf("a drawn pair at J = %v is not below the floor", x.J)
		}
	}
	if _, err := MeasureSimHash(sets, fps[:10], 0, 0.3, 0, 1, nil); !errors.Is(err, ErrInput) {
		t.Errorf("fingerprints of another length: %v; want ErrInput", err)
	}
}

// TestMakeSimHash checks the plan's figures against direct counts on its
// sample: recall, candidates, the choice of k, and that the chosen layout is
// the cheapest.
func TestMakeSimHash(t *testing.T) {
	s, _ := simSample(t, rand.New(rand.NewPCG(93, 94)), 800, 0)
	in := SimHashInput{Documents: 1_000_000, Threshold: 0.8, Recall: 0.5, Sample: s}
	p, err := MakeSimHash(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rows) != simhash.MaxMaxDistance+1 {
		t.Fatalf("%d rows; want k = 0..%d", len(p.Rows), simhash.MaxMaxDistance)
	}
	n, N := 800.0, 1e6
	scale := 2 * (N - 1) / (n * (n - 1))
	truePairs := 0
	for _, x := range s.Pairs {
		if x.J >= 0.8 {
			truePairs++
		}
	}
	if p.TruePairs != truePairs || truePairs < 30 {
		t.Fatalf("TruePairs = %d; want %d (and at least 30)", p.TruePairs, truePairs)
	}
	prev := -1.0
	for _, r := range p.Rows {
		hit, within := 0, int64(0)
		for _, x := range s.Pairs {
			if x.J >= 0.8 && x.Distance <= r.K {
				hit++
			}
		}
		for d := 0; d <= r.K; d++ {
			within += s.Distances[d]
		}
		if want := float64(hit) / float64(truePairs); r.Recall != want {
			t.Errorf("k=%d: recall %v; want %v", r.K, r.Recall, want)
		}
		if want := float64(within) * scale; math.Abs(r.CandidatesPerDoc-want) > 1e-9*want {
			t.Errorf("k=%d: candidates/doc %v; want %v", r.K, r.CandidatesPerDoc, want)
		}
		if r.Recall < prev {
			t.Errorf("k=%d: recall %v below k−1's %v", r.K, r.Recall, prev)
		}
		prev = r.Recall
		// The layout is the cheapest over every block count.
		docBits := uint(bits.Len64(uint64(N - 1)))
		for b := r.K + 1; b <= simhash.MaxBlocks; b++ {
			mk := r.K
			if mk == 0 {
				mk = simhash.ExactMatch
			}
			l, err := simhash.NewLayout(simhash.Options{MaxDistance: mk, Blocks: b})
			if err != nil {
				continue
			}
			if c := p.Input.evalLayout(l, docBits, scale); c.Cost < r.Layout.Cost*(1-1e-12) {
				t.Errorf("k=%d: layout B=%d costs %v, less than the chosen B=%d's %v", r.K, b, c.Cost, r.Layout.Blocks, r.Layout.Cost)
			}
		}
	}
	// The choice: the least k reaching the recall.
	for _, r := range p.Rows {
		if r.Recall >= 0.5 {
			if p.K != r.K || !p.Feasible {
				t.Errorf("chose k = %d (feasible %v); want %d", p.K, p.Feasible, r.K)
			}
			break
		}
	}
	// k = 3 and N = 1e6: four tables of 16-bit keys give (N−1)·4/2^16 = 61
	// comparisons per document, far below what another table costs.
	for _, r := range p.Rows {
		if r.K == 3 && (r.Layout.Blocks != 4 || math.Abs(r.Layout.ModelComparisons-4*(N-1)/65536) > 1e-6) {
			t.Errorf("k=3: layout %+v; want B = 4 and %v model comparisons", r.Layout, 4*(N-1)/65536)
		}
	}

	// Fixed k and blocks.
	q, err := MakeSimHash(SimHashInput{Documents: 1e6, Threshold: 0.8, Recall: 0.01, MaxDistance: 5, Blocks: 8, Sample: s})
	if err != nil {
		t.Fatal(err)
	}
	if q.K != 5 || q.Layout.Blocks != 8 || q.Layout.Tables != 56 || len(q.Rows) != 1 {
		t.Errorf("fixed k=5 B=8: got k=%d %+v, %d rows", q.K, q.Layout, len(q.Rows))
	}

	// Infeasible: the plan for the largest k comes with the error.
	q, err = MakeSimHash(SimHashInput{Documents: 1e6, Threshold: 0.3, Recall: 0.999, Sample: s})
	if !errors.Is(err, ErrInfeasible) || q == nil || q.Feasible || q.K != simhash.MaxMaxDistance {
		t.Errorf("unreachable recall: %v, plan %v; want ErrInfeasible with the k = 8 plan", err, q != nil)
	}
}

// TestMakeSimHashDocBits: with the drivers' 32 document bits, keys are
// what is left beside the table and document bits, never the prefix a
// smaller corpus would allow.
func TestMakeSimHashDocBits(t *testing.T) {
	s, _ := simSample(t, rand.New(rand.NewPCG(97, 98)), 400, 0)
	for _, docBits := range []int{0, 32} {
		p, err := MakeSimHash(SimHashInput{Documents: 1_000_000, Threshold: 0.8, Recall: 0.01, MaxDistance: 3, Blocks: 6, DocBits: docBits, Sample: s})
		if err != nil {
			t.Fatal(err)
		}
		want := 20 // bits.Len(999,999)
		if docBits != 0 {
			want = docBits
		}
		l, _ := simhash.NewLayout(simhash.Options{MaxDistance: 3, Blocks: 6})
		if p.DocBits != want || p.Layout.MaxKeyBits != l.KeyBits(0, uint(want)) {
			t.Errorf("DocBits %d: plan's %d, keys up to %d bits; want %d and %d", docBits, p.DocBits, p.Layout.MaxKeyBits, want, l.KeyBits(0, uint(want)))
		}
	}
}

func TestMakeSimHashErrors(t *testing.T) {
	s, _ := simSample(t, rand.New(rand.NewPCG(95, 96)), 200, 0)
	for _, in := range []SimHashInput{
		{},
		{Sample: s, Threshold: 0.2},            // below the floor
		{Sample: s, Threshold: 1},              // out of range
		{Sample: s, Recall: 1.5},               // out of range
		{Sample: s, MaxDistance: 9},            // beyond simhash.MaxMaxDistance
		{Sample: s, Blocks: 17},                // beyond simhash.MaxBlocks
		{Sample: s, EntryCost: -1},             // negative
		{Sample: s, Documents: 1},              // too few
		{Sample: s, MaxDistance: 4, Blocks: 3}, // fewer blocks than k + 1
		{Sample: s, DocBits: 33},               // wider than a document number
		{Sample: s, DocBits: -1},               // negative
		{Sample: &SimHashSample{Docs: 2, Floor: 0.5, Fingerprints: []uint64{1, 2}, Pairs: []SimHashPair{{0, 1, 0.6, 1}}}}, // no pair at J ≥ t
	} {
		if _, err := MakeSimHash(in); !errors.Is(err, ErrInput) {
			t.Errorf("MakeSimHash(%+v): %v; want ErrInput", in, err)
		}
	}
}

// TestSimHashPlanPredicts checks the planner's predictions from a sample
// against the whole corpus: for every k, the recall over the corpus's pairs
// at J ≥ t and the candidate pairs within k; for the chosen k, the pairs
// come from the batch pipeline itself (simhash.Layout.Pairs with the planned
// layout). The sample is a random half; tolerances are 4.5 standard errors
// of the sample's estimates.
func TestSimHashPlanPredicts(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a 4,000-document join")
	}
	r := rand.New(rand.NewPCG(97, 98))
	docs, sets := simCorpus(r, 4000)
	fps := make([]uint64, len(docs))
	for i, d := range docs {
		fps[i] = simhash.Fingerprint(d)
	}
	idx := r.Perm(len(docs))[:2000]
	var ssets [][]uint64
	var sfps []uint64
	for _, i := range idx {
		ssets = append(ssets, sets[i])
		sfps = append(sfps, fps[i])
	}
	s, err := MeasureSimHash(ssets, sfps, 0, 0.5, 0, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	const th = 0.8
	p, err := MakeSimHash(SimHashInput{Documents: int64(len(docs)), Threshold: th, Recall: 0.6, Sample: s})
	if err != nil {
		t.Fatal(err)
	}
	truth, err := eval.AllPairs(sets, th, nil)
	if err != nil {
		t.Fatal(err)
	}
	var hist [65]int64
	for a := range fps {
		for b := a + 1; b < len(fps); b++ {
			hist[simhash.Distance(fps[a], fps[b])]++
		}
	}
	within := int64(0)
	for _, row := range p.Rows {
		found := 0
		for _, x := range truth {
			if simhash.Distance(fps[x.A], fps[x.B]) <= row.K {
				found++
			}
		}
		within += hist[row.K]
		recall := float64(found) / float64(len(truth))
		se := math.Sqrt(max(row.Recall*(1-row.Recall), 0.25/float64(p.TruePairs)) / float64(p.TruePairs))
		cand := 2 * float64(within) / float64(len(docs))
		c := row.CandidatesPerDoc / p.Scale // the sample's pairs within k
		t.Logf("k=%d: recall predicted %.4f ± %.4f, measured %.4f; candidates/doc predicted %.4f (%v sample pairs), measured %.4f",
			row.K, row.Recall, se, recall, row.CandidatesPerDoc, c, cand)
		if math.Abs(recall-row.Recall) > 4.5*se {
			t.Errorf("k=%d: recall predicted %.4f ± %.4f; measured %.4f", row.K, row.Recall, se, recall)
		}
		// The sample's count c is about Poisson: relative error 1/√c.
		if c > 0 && math.Abs(cand-row.CandidatesPerDoc)/row.CandidatesPerDoc > 4.5/math.Sqrt(c) {
			t.Errorf("k=%d: candidates/doc predicted %.4f; measured %.4f", row.K, row.CandidatesPerDoc, cand)
		}
	}
	if p.TruePairs < 100 {
		t.Fatalf("only %d sample pairs at J ≥ %v; the test wants at least 100", p.TruePairs, th)
	}
	// The chosen layout's batch pairs are exactly the pairs within k.
	l, err := simhash.NewLayout(simhash.Options{MaxDistance: p.K, Blocks: p.Layout.Blocks})
	if err != nil {
		t.Fatal(err)
	}
	pairs, _, err := l.Pairs(nil, fps, p.K, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := int64(0)
	for d := 0; d <= p.K; d++ {
		want += hist[d]
	}
	if int64(len(pairs)) != want {
		t.Errorf("k=%d B=%d: the batch pipeline finds %d pairs; a comparison of all pairs %d", p.K, p.Layout.Blocks, len(pairs), want)
	}
}

// TestSimHashPlanGolden pins the plan's text on a fixed synthetic sample.
func TestSimHashPlanGolden(t *testing.T) {
	s, _ := simSample(t, rand.New(rand.NewPCG(99, 100)), 500, 0)
	p, err := MakeSimHash(SimHashInput{Documents: 100_000, Threshold: 0.8, Recall: 0.75, Sample: s})
	if err != nil {
		t.Fatal(err)
	}
	got := p.String()
	path := filepath.Join("testdata", "simhash_plan.txt")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("plan text differs from %s (run with -update to accept):\n%s", path, got)
	}
}
