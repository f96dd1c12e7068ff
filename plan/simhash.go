package plan

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/simhash"
)

// SimHash planning: choosing the Hamming distance k and the block-permutation
// layout for a Jaccard threshold.
//
// SimHash has no S-curve to invert: a fingerprint estimates the angle between
// weighted feature vectors, not the Jaccard similarity of the sets, and how
// Hamming distance relates to Jaccard depends on the corpus (document lengths,
// repeated features, the weighting). So the planner measures it: on a sample,
// the exact join lists every pair at or above a floor with its distance, and
// a comparison of all C(n,2) fingerprint pairs (a popcount each) counts the
// pairs at every distance. From these, for each k, the recall (the share of
// the sample's pairs at J ≥ t within distance k) and the candidates per
// document (pairs within k, scaled from the sample to the corpus) are counts,
// not a model. The model is printed beside them for orientation: for unit
// weights, each bit differs with probability θ/π (Charikar), cos θ =
// |A∩B|/√(|A|·|B|), which for a given J is least, 2J/(1+J), when |A| = |B|;
// so d ~ Binomial(64, arccos(2J/(1+J))/π) is the pessimistic unit-weight
// model.

// Defaults of SimHashInput.
const (
	// DefaultSimHashRecall is SimHashInput.Recall's default.
	DefaultSimHashRecall = 0.95
	// DefaultEntryCost is SimHashInput.EntryCost's default,
	// simhash.DefaultEntryCost: one batch entry (8 bytes built,
	// radix-sorted or spilled, and scanned) costs about as much as 64
	// bucket comparisons (a popcount of two fingerprints already at hand).
	// Measured with simhash's BenchmarkLayoutPairs and
	// BenchmarkGrouperCompare on the project's shared 2-vCPU machine, in
	// two sessions: 78–115 ns an entry in memory against 1.65 ns a
	// comparison (a ratio of 47–70), and 140–205 ns against 2.1 ns (67–97);
	// spilling to disk makes entries dearer still.
	DefaultEntryCost = simhash.DefaultEntryCost
)

// SimHashPair is one pair of sample documents: their indexes in the sample
// (A < B), their exact Jaccard similarity and the Hamming distance of their
// fingerprints.
type SimHashPair struct {
	A, B     int32   `json:"-"`
	J        float64 `json:"j"`
	Distance int     `json:"distance"`
}

// SimHashSample is the measured relation between Hamming distance and Jaccard
// similarity on a sample of a corpus. Plain data; MeasureSimHash makes one.
type SimHashSample struct {
	// Docs is the number of documents in the sample.
	Docs int64 `json:"docs"`
	// MeanFeatures is their mean number of distinct features.
	MeanFeatures float64 `json:"mean_features"`
	// MeanBytes is their mean text length in bytes; 0 when not known.
	MeanBytes float64 `json:"mean_bytes"`
	// Floor is the similarity from which Pairs lists every pair exactly.
	Floor float64 `json:"floor"`
	// Fingerprints are the sample's fingerprints, by document.
	Fingerprints []uint64 `json:"-"`
	// Pairs is every pair of the sample with J ≥ Floor (the exact join),
	// with its distance.
	Pairs []SimHashPair `json:"-"`
	// Distances counts all C(Docs, 2) pairs of the sample by Hamming
	// distance, 0..64.
	Distances [65]int64 `json:"distances"`
	// Drawn is the number of random pairs drawn.
	Drawn int64 `json:"drawn"`
	// Below holds the drawn pairs that fell below Floor. Each stands for
	// (C(Docs,2) − len(Pairs))/len(Below) pairs.
	Below []SimHashPair `json:"-"`
}

// MeasureSimHash measures a sample: sets are the documents' feature sets,
// normalised (eval.Normalize), and fps their fingerprints, made as the corpus
// will be (same spec and weighting); bytes is the sample's total text length
// (0 if unknown). The exact join (eval) lists every pair with J ≥ floor, all
// C(n,2) fingerprint pairs are compared for the distance histogram (n²/2
// popcounts, spread over opts.Workers goroutines: about a second at n =
// 50,000), and draws random pairs (i ≠ j, from a PCG seeded with seed) give
// the relation below the floor. floor must be in (0, 1]. Deterministic for
// its arguments, whatever the worker count. fps is kept (not copied) in the
// result.
func MeasureSimHash(sets [][]uint64, fps []uint64, bytes int64, floor float64, draws int, seed uint64, opts *eval.Options) (*SimHashSample, error) {
	n := len(sets)
	if n < 2 {
		return nil, fmt.Errorf("%w: sample of %d documents; want at least 2", ErrInput, n)
	}
	if len(fps) != n {
		return nil, fmt.Errorf("%w: %d fingerprints for %d documents; want one each", ErrInput, len(fps), n)
	}
	s := &SimHashSample{Docs: int64(n), Floor: floor, Fingerprints: fps}
	var feats int64
	for _, x := range sets {
		feats += int64(len(x))
	}
	s.MeanFeatures = float64(feats) / float64(n)
	s.MeanBytes = float64(bytes) / float64(n)
	err := eval.AllPairsFunc(sets, floor, opts, func(p eval.Pair) bool {
		s.Pairs = append(s.Pairs, SimHashPair{p.A, p.B, p.Jaccard, simhash.Distance(fps[p.A], fps[p.B])})
		return true
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(s.Pairs, func(x, y SimHashPair) int {
		if x.A != y.A {
			return int(x.A - y.A)
		}
		return int(x.B - y.B)
	})
	s.Distances = distanceHistogram(fps, opts.EnsureDefaults().Workers)
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	for range draws {
		i := rng.IntN(n)
		j := rng.IntN(n - 1)
		if j >= i {
			j++
		}
		s.Drawn++
		if x := eval.Jaccard(sets[i], sets[j]); x < floor {
			a, b := int32(min(i, j)), int32(max(i, j))
			s.Below = append(s.Below, SimHashPair{a, b, x, simhash.Distance(fps[i], fps[j])})
		}
	}
	return s, nil
}

// distanceHistogram counts all pairs of fps by Hamming distance; row i goes
// to worker i mod workers, and the sums do not depend on the split.
func distanceHistogram(fps []uint64, workers int) [65]int64 {
	workers = max(1, min(workers, len(fps)))
	hs := make([][65]int64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			h := &hs[w]
			for i := w; i < len(fps); i += workers {
				a := fps[i]
				for _, b := range fps[i+1:] {
					h[bits.OnesCount64(a^b)]++
				}
			}
		})
	}
	wg.Wait()
	var h [65]int64
	for _, x := range hs {
		for d, c := range x {
			h[d] += c
		}
	}
	return h
}

// SimHashBitFlip is simhash.BitFlip: the unit-weight model's probability
// that a bit of two fingerprints differs at Jaccard similarity j.
func SimHashBitFlip(j float64) float64 { return simhash.BitFlip(j) }

// SimHashModelRecall is simhash.ModelRecall: the unit-weight model's
// probability that a pair at Jaccard similarity j is within Hamming
// distance k.
func SimHashModelRecall(j float64, k int) float64 { return simhash.ModelRecall(j, k) }

// SimHashInput is the target of a SimHash plan. Zero fields take their
// defaults; Sample is required. Plain data.
type SimHashInput struct {
	// Documents is the corpus size N. Default: the sample's size.
	Documents int64
	// Threshold is the Jaccard similarity t at or above which documents
	// are near duplicates. Default 0.8 (DefaultThreshold); range (0, 1),
	// at or above the sample's Floor.
	Threshold float64
	// Recall is the least share of the sample's pairs at J ≥ t that must
	// fall within distance k. Default 0.95; range (0, 1].
	Recall float64
	// MaxDistance fixes k. 0 means choose: the least k in
	// 0..simhash.MaxMaxDistance reaching Recall; simhash.ExactMatch (−1)
	// fixes k = 0.
	MaxDistance int
	// Blocks fixes the number of blocks B (k+1..simhash.MaxBlocks). 0 means
	// choose: for the chosen k, the layout of least cost (see EntryCost).
	Blocks int
	// EntryCost is the cost of one batch entry in bucket comparisons; the
	// layout minimises Tables·EntryCost + comparisons per document.
	// Default DefaultEntryCost (64).
	EntryCost float64
	// DocBits is the document bits of a batch entry, which leave the rest
	// to the table and its key: 0 means the least the corpus needs,
	// bits.Len(Documents − 1); neardup's drivers pack 32 (dedup, Beam and
	// the index number documents in 32 bits whatever the corpus size).
	// Range 0 to 32.
	DocBits int
	// Sample is the measured sample (MeasureSimHash). Required.
	Sample *SimHashSample
}

// EnsureDefaults returns a copy of in with zero fields set to defaults.
func (in SimHashInput) EnsureDefaults() SimHashInput {
	if in.Documents == 0 && in.Sample != nil {
		in.Documents = in.Sample.Docs
	}
	if in.Threshold == 0 {
		in.Threshold = DefaultThreshold
	}
	if in.Recall == 0 {
		in.Recall = DefaultSimHashRecall
	}
	if in.EntryCost == 0 {
		in.EntryCost = DefaultEntryCost
	}
	return in
}

// Validate reports whether in (after defaults) is usable; errors wrap
// ErrInput and name the field.
func (in SimHashInput) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInput}, args...)...)
	}
	switch {
	case in.Sample == nil:
		return bad("a SimHash plan needs a measured sample (MeasureSimHash)")
	case in.Sample.Docs < 2 || int64(len(in.Sample.Fingerprints)) != in.Sample.Docs:
		return bad("sample of %d documents with %d fingerprints; want at least 2, one fingerprint each", in.Sample.Docs, len(in.Sample.Fingerprints))
	case in.Documents < 2:
		return bad("documents %d; want at least 2", in.Documents)
	case !(in.Threshold > 0 && in.Threshold < 1):
		return bad("threshold %v; want 0 < t < 1", in.Threshold)
	case in.Threshold < in.Sample.Floor:
		return bad("threshold %v below the sample's floor %v: pairs between them are not listed", in.Threshold, in.Sample.Floor)
	case !(in.Recall > 0 && in.Recall <= 1):
		return bad("recall %v; want 0 < recall <= 1", in.Recall)
	case in.MaxDistance < simhash.ExactMatch || in.MaxDistance > simhash.MaxMaxDistance:
		return bad("max distance %d; want 0 (choose), -1 (k = 0) or 1..%d", in.MaxDistance, simhash.MaxMaxDistance)
	case in.Blocks < 0 || in.Blocks > simhash.MaxBlocks:
		return bad("blocks %d; want 0 (choose) or up to %d", in.Blocks, simhash.MaxBlocks)
	case !(in.EntryCost > 0) || math.IsInf(in.EntryCost, 0):
		return bad("entry cost %v; want positive", in.EntryCost)
	case in.DocBits < 0 || in.DocBits > 32:
		return bad("document bits %d; want 0 (the least the corpus needs) to 32", in.DocBits)
	}
	return nil
}

// SimHashLayout is one block-permutation layout and what it costs per
// document. Plain data.
type SimHashLayout struct {
	// Blocks is B; Tables is C(B, k), the entries per document.
	Blocks int `json:"blocks"`
	Tables int `json:"tables"`
	// MinKeyBits and MaxKeyBits are the shortest and longest table keys an
	// entry keeps at the corpus's document bits (simhash.Layout.KeyBits).
	MinKeyBits int `json:"min_key_bits"`
	MaxKeyBits int `json:"max_key_bits"`
	// ModelComparisons is the comparisons per document in buckets for
	// random fingerprints: Σ_t (N − 1)·2^−keyBits_t.
	ModelComparisons float64 `json:"model_comparisons_per_doc"`
	// MeasuredComparisons is the sample's pairs sharing a table key,
	// summed over tables and scaled like candidates.
	MeasuredComparisons float64 `json:"measured_comparisons_per_doc"`
	// Comparisons is the larger of the two, the figure the cost uses.
	Comparisons float64 `json:"comparisons_per_doc"`
	// Cost is Tables·EntryCost + Comparisons.
	Cost float64 `json:"cost"`
}

// SimHashRow is what one k catches and costs. Plain data.
type SimHashRow struct {
	// K is the Hamming distance.
	K int `json:"k"`
	// Recall is the share of the sample's pairs at J ≥ t within distance K.
	Recall float64 `json:"recall"`
	// RecallNearThreshold is that share among the pairs with J in [t,
	// t + 0.05), the hardest true pairs (1 when there are none).
	RecallNearThreshold float64 `json:"recall_near_threshold"`
	// ModelRecallAtThreshold is SimHashModelRecall(t, K).
	ModelRecallAtThreshold float64 `json:"model_recall_at_threshold"`
	// CandidatesPerDoc is the candidate partners per document: the
	// sample's pairs within distance K, times 2(N − 1)/(n(n − 1)).
	CandidatesPerDoc float64 `json:"candidates_per_doc"`
	// TrueCandidatesPerDoc is how many of them have J ≥ t.
	TrueCandidatesPerDoc float64 `json:"true_candidates_per_doc"`
	// Precision is TrueCandidatesPerDoc/CandidatesPerDoc before
	// verification (1 without candidates).
	Precision float64 `json:"precision_before_verification"`
	// Layout is the layout of least cost for K (or the fixed Blocks).
	Layout SimHashLayout `json:"layout"`
}

// SimHashBin is one similarity band of the measured curve. Plain data.
type SimHashBin struct {
	// Lo and Hi bound the band, [Lo, Hi); the last band includes 1.
	Lo, Hi float64
	// Pairs is the sample's pairs in the band; below the floor, the drawn
	// pairs scaled to the sample.
	Pairs float64
	// Drawn is true below the floor, where Pairs is an estimate.
	Drawn bool
	// MeanJ and MeanDistance are the pairs' means.
	MeanJ, MeanDistance float64
	// ModelDistance is 64·SimHashBitFlip(MeanJ).
	ModelDistance float64
	// Within is the share of the pairs within distance K (the plan's k),
	// and ModelWithin the model's SimHashModelRecall(MeanJ, K).
	Within, ModelWithin float64
}

// SimHashPlan is a chosen k and layout for a Jaccard threshold, with what
// they catch and cost, measured on the sample. Plain data.
type SimHashPlan struct {
	// Input is the input, defaults filled in.
	Input SimHashInput `json:"-"`
	// Feasible reports whether K reaches Input.Recall; if not, the plan is
	// for the largest k tried and MakeSimHash also returns an error.
	Feasible bool `json:"feasible"`
	// SimHashRow holds the chosen k, its recall, candidates and layout.
	SimHashRow
	// DocBits is the document bits of a batch entry: Input.DocBits, or
	// bits.Len(N − 1),
	// at most 32.
	DocBits int `json:"doc_bits"`
	// TruePairs is the number of sample pairs with J ≥ t.
	TruePairs int `json:"true_pairs"`
	// Scale is 2(N − 1)/(n(n − 1)): sample pairs to partners per document.
	Scale float64 `json:"scale"`
	// SketchBytes (8) and EntryBytes (8·Tables) are per document;
	// TotalSketchBytes and TotalEntryBytes over N documents.
	SketchBytes      int64 `json:"sketch_bytes_per_doc"`
	EntryBytes       int64 `json:"entry_bytes_per_doc"`
	TotalSketchBytes int64 `json:"total_sketch_bytes"`
	TotalEntryBytes  int64 `json:"total_entry_bytes"`
	// Rows is every k considered, 0..simhash.MaxMaxDistance (or the fixed
	// one), for the table.
	Rows []SimHashRow `json:"rows"`
	// Curve is the measured relation between Jaccard and distance, by band
	// of 0.05, with the model beside it.
	Curve []SimHashBin `json:"-"`
}

// MakeSimHash chooses k and the block layout for in: the least k (or the
// fixed one) whose measured recall over the sample's pairs at J ≥ t reaches
// in.Recall, and for it the number of blocks B minimising Tables·EntryCost +
// comparisons per document (or the fixed B). The result is deterministic. If
// no k up to simhash.MaxMaxDistance reaches the recall, it returns the plan
// for the largest k (Feasible false, so its String shows how far off) and an
// error wrapping ErrInfeasible.
func MakeSimHash(in SimHashInput) (*SimHashPlan, error) {
	in = in.EnsureDefaults()
	if err := in.Validate(); err != nil {
		return nil, err
	}
	s := in.Sample
	t := in.Threshold
	n, N := float64(s.Docs), float64(in.Documents)
	p := &SimHashPlan{Input: in, Scale: 2 * (N - 1) / (n * (n - 1))}
	p.DocBits = min(32, max(1, bits.Len64(uint64(in.Documents-1))))
	if in.DocBits != 0 {
		p.DocBits = in.DocBits
	}
	near := 0
	for _, x := range s.Pairs {
		if x.J >= t {
			p.TruePairs++
			if x.J < t+0.05 {
				near++
			}
		}
	}
	if p.TruePairs == 0 {
		return nil, fmt.Errorf("%w: the sample has no pair at J ≥ %v, so recall cannot be measured; give a larger sample", ErrInput, t)
	}
	ks := []int{in.MaxDistance}
	switch in.MaxDistance {
	case 0:
		ks = ks[:0]
		for k := 0; k <= simhash.MaxMaxDistance; k++ {
			ks = append(ks, k)
		}
	case simhash.ExactMatch:
		ks = []int{0}
	}
	var within int64
	for _, k := range ks {
		r := SimHashRow{K: k, ModelRecallAtThreshold: SimHashModelRecall(t, k)}
		var hit, hitNear int
		var trueWithin int64
		for _, x := range s.Pairs {
			if x.J >= t && x.Distance <= k {
				hit++
				trueWithin++
				if x.J < t+0.05 {
					hitNear++
				}
			}
		}
		within = 0
		for d := 0; d <= k; d++ {
			within += s.Distances[d]
		}
		r.Recall = float64(hit) / float64(p.TruePairs)
		r.RecallNearThreshold = 1
		if near > 0 {
			r.RecallNearThreshold = float64(hitNear) / float64(near)
		}
		r.CandidatesPerDoc = float64(within) * p.Scale
		r.TrueCandidatesPerDoc = float64(trueWithin) * p.Scale
		r.Precision = 1
		if within > 0 {
			r.Precision = float64(trueWithin) / float64(within)
		}
		lay, err := in.bestLayout(k, p.DocBits, p.Scale)
		if err != nil {
			return nil, err
		}
		r.Layout = lay
		p.Rows = append(p.Rows, r)
	}
	chosen := -1
	for i, r := range p.Rows {
		if r.Recall >= in.Recall {
			chosen = i
			break
		}
	}
	p.Feasible = chosen >= 0
	if !p.Feasible {
		chosen = len(p.Rows) - 1
	}
	p.SimHashRow = p.Rows[chosen]
	p.SketchBytes = 8
	p.EntryBytes = 8 * int64(p.Layout.Tables)
	p.TotalSketchBytes = p.SketchBytes * in.Documents
	p.TotalEntryBytes = p.EntryBytes * in.Documents
	p.Curve = s.curve(p.K)
	if !p.Feasible {
		return p, fmt.Errorf("%w: at k = %d, the largest tried, %.4f of the sample's %d pairs at J ≥ %v are within distance k (target %v); SimHash estimates the cosine of weighted vectors, not Jaccard: lower the recall target, raise the threshold, or use MinHash",
			ErrInfeasible, p.K, p.Recall, p.TruePairs, t, in.Recall)
	}
	return p, nil
}

// bestLayout returns the layout of least cost for k (or the fixed Blocks).
func (in *SimHashInput) bestLayout(k, docBits int, scale float64) (SimHashLayout, error) {
	lo, hi := k+1, simhash.MaxBlocks
	if in.Blocks > 0 {
		if in.Blocks < k+1 {
			return SimHashLayout{}, fmt.Errorf("%w: blocks %d for k = %d; want at least k + 1", ErrInput, in.Blocks, k)
		}
		lo, hi = in.Blocks, in.Blocks
	}
	var best SimHashLayout
	found := false
	mk := k
	if k == 0 {
		mk = simhash.ExactMatch
	}
	for b := lo; b <= hi; b++ {
		l, err := simhash.NewLayout(simhash.Options{MaxDistance: mk, Blocks: b})
		if err != nil {
			break // too many tables, and more blocks only add tables
		}
		if found && float64(l.Tables())*in.EntryCost >= best.Cost {
			// Tables never fall as B grows (k fixed), so neither does
			// this lower bound on the cost: no later B can win.
			break
		}
		lay := in.evalLayout(l, uint(docBits), scale)
		if !found || lay.Cost < best.Cost {
			best, found = lay, true
		}
	}
	if !found {
		return best, fmt.Errorf("%w: no layout of %d blocks for k = %d within simhash.MaxTables", ErrInput, in.Blocks, k)
	}
	return best, nil
}

// evalLayout computes a layout's key lengths, comparisons and cost.
func (in *SimHashInput) evalLayout(l *simhash.Layout, docBits uint, scale float64) SimHashLayout {
	lay := SimHashLayout{Blocks: l.Blocks(), Tables: l.Tables(), MinKeyBits: 64}
	fps := in.Sample.Fingerprints
	keys := make([]uint64, len(fps))
	var shared int64
	lay.ModelComparisons = l.ModelComparisons(in.Documents, docBits)
	for t := range l.Tables() {
		kb := l.KeyBits(t, docBits)
		lay.MinKeyBits = min(lay.MinKeyBits, kb)
		lay.MaxKeyBits = max(lay.MaxKeyBits, kb)
		for i, fp := range fps {
			keys[i] = l.Key(t, fp) >> (64 - kb)
		}
		slices.Sort(keys)
		for i := 0; i < len(keys); {
			j := i + 1
			for j < len(keys) && keys[j] == keys[i] {
				j++
			}
			s := int64(j - i)
			shared += s * (s - 1) / 2
			i = j
		}
	}
	lay.MeasuredComparisons = float64(shared) * scale
	lay.Comparisons = max(lay.ModelComparisons, lay.MeasuredComparisons)
	lay.Cost = float64(lay.Tables)*in.EntryCost + lay.Comparisons
	return lay
}

// curve bins the sample's pairs by Jaccard similarity, 0.05 wide, from the
// lowest drawn similarity up.
func (s *SimHashSample) curve(k int) []SimHashBin {
	const width = 0.05
	const nb = 20
	var bins [nb]struct {
		w, sumJ, sumD, within float64
		drawn                 bool
	}
	add := func(x SimHashPair, w float64, drawn bool) {
		i := min(nb-1, int(x.J/width+1e-9))
		b := &bins[i]
		b.w += w
		b.sumJ += w * x.J
		b.sumD += w * float64(x.Distance)
		if x.Distance <= k {
			b.within += w
		}
		b.drawn = b.drawn || drawn
	}
	for _, x := range s.Pairs {
		add(x, 1, false)
	}
	n := float64(s.Docs)
	if below := n*(n-1)/2 - float64(len(s.Pairs)); len(s.Below) > 0 && below > 0 {
		w := below / float64(len(s.Below))
		for _, x := range s.Below {
			add(x, w, true)
		}
	}
	var out []SimHashBin
	for i, b := range bins {
		if b.w == 0 {
			continue
		}
		mj := b.sumJ / b.w
		out = append(out, SimHashBin{
			Lo: float64(i) * width, Hi: float64(i+1) * width,
			Pairs: b.w, Drawn: b.drawn,
			MeanJ: mj, MeanDistance: b.sumD / b.w, ModelDistance: 64 * SimHashBitFlip(mj),
			Within: b.within / b.w, ModelWithin: SimHashModelRecall(mj, k),
		})
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// String renders the plan with its arithmetic: the sample, the measured
// curve beside the model, every k's recall and cost, the choice, and memory.
func (p *SimHashPlan) String() string {
	in := p.Input
	s := in.Sample
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	t := in.Threshold
	n, N := float64(s.Docs), float64(in.Documents)
	w("targets: SimHash (64-bit fingerprints), N = %s documents, J ≥ %v, recall ≥ %v over the pairs at J ≥ %v",
		group(in.Documents), t, in.Recall, t)
	w("sample: %s documents, %s features/doc; %s pairs with J ≥ %v exactly (join), %s of them at J ≥ %v;",
		group(s.Docs), trim(s.MeanFeatures), group(int64(len(s.Pairs))), s.Floor, group(int64(p.TruePairs)), t)
	w("  the distances of all C(n,2) = %s pairs (popcounts); %s random pairs drawn below the floor",
		group(int64(n*(n-1)/2)), group(s.Drawn))
	w("  each sample pair stands for C(N,2)/C(n,2) = %.4g corpus pairs; per document, scale = 2(N−1)/(n(n−1)) = %.4g",
		(N*(N-1))/(n*(n-1)), p.Scale)
	w("")
	w("Hamming distance against Jaccard: measured, and the unit-weight model d ~ Binomial(64, θ/π), cos θ = 2J/(1+J)")
	w("  (equal-size sets: the least cosine at a given J, so the model is pessimistic for unit weights)")
	w("  %-9s %12s %7s %7s %9s %9s", "J", "pairs", "mean d", "model", fmt.Sprintf("d ≤ %d", p.K), "model")
	for _, c := range p.Curve {
		est := ""
		if c.Drawn {
			est = "~"
		}
		w("  %.2f–%.2f %12s %7.2f %7.2f %9.4f %9.4f", c.Lo, c.Hi, est+trim(math.Round(c.Pairs)), c.MeanDistance, c.ModelDistance, c.Within, c.ModelWithin)
	}
	w("")
	w("per k (recall over the sample's %s pairs at J ≥ %v; candidates = pairs within k × scale):", group(int64(p.TruePairs)), t)
	w("  %2s %7s %9s %7s %12s %9s  %-20s %12s %9s", "k", "recall", "[t,t+.05)", "model", "cand/doc", "precision", "layout", "comparisons", "cost")
	for _, r := range p.Rows {
		mark := ""
		if r.K == p.K {
			mark = "  ◀"
		}
		w("  %2d %7.4f %9.4f %7.4f %12.4g %9.4f  %-20s %12.4g %9.4g%s", r.K, r.Recall, r.RecallNearThreshold, r.ModelRecallAtThreshold,
			r.CandidatesPerDoc, r.Precision, fmt.Sprintf("B=%d, %d table%s", r.Layout.Blocks, r.Layout.Tables, plural(r.Layout.Tables)), r.Layout.Comparisons, r.Layout.Cost, mark)
	}
	w("")
	if p.Feasible {
		w("choice: k = %d, the least k whose recall reaches %v (%.4f)", p.K, in.Recall, p.Recall)
	} else {
		w("choice: none reaches recall %v; k = %d, the largest tried, catches %.4f", in.Recall, p.K, p.Recall)
	}
	l := p.Layout
	w("  layout: B = %d blocks, C(%d,%d) = %d tables; keys of %d–%d bits (beside %d table bits and %d document bits)",
		l.Blocks, l.Blocks, p.K, l.Tables, l.MinKeyBits, l.MaxKeyBits, bits.Len(uint(l.Tables-1)), p.DocBits)
	w("  rule: the B of least Tables × %v + comparisons per document (an entry costs about %v bucket comparisons)", trim(in.EntryCost), trim(in.EntryCost))
	w("  comparisons per document: random keys Σ_t (N−1)·2^−keyBits = %.4g; measured on the sample (pairs sharing a key × scale) %.4g; using %.4g",
		l.ModelComparisons, l.MeasuredComparisons, l.Comparisons)
	w("  cost: %d × %v + %.4g = %.4g", l.Tables, trim(in.EntryCost), l.Comparisons, l.Cost)
	w("")
	w("recall over the pairs at J ≥ %v: %.4f; among those in [%v, %s): %.4f; the model at J = %v: P(Binomial(64, %.4f) ≤ %d) = %.4f",
		t, p.Recall, t, trim(math.Round((t+0.05)*1e6)/1e6), p.RecallNearThreshold, t, SimHashBitFlip(t), p.K, p.ModelRecallAtThreshold)
	w("candidates per document: %.4g = %.4g true + %.4g false (precision before verification %.4f)",
		p.CandidatesPerDoc, p.TrueCandidatesPerDoc, p.CandidatesPerDoc-p.TrueCandidatesPerDoc, p.Precision)
	w("")
	w("memory:")
	w("  fingerprints  8 B/doc × N = %s", FormatBytes(p.TotalSketchBytes))
	w("  batch entries %d tables × 8 B = %d B/doc × N = %s (sorted externally, spilled past the memory budget)",
		l.Tables, p.EntryBytes, FormatBytes(p.TotalEntryBytes))
	w("  index         %d tables × 16 B = %d B/doc × N = %s (simhash.Index)", l.Tables, 16*l.Tables, FormatBytes(16*int64(l.Tables)*in.Documents))
	return b.String()
}
