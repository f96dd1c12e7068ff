package eval

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/neardup/neardup/lsh"
)

// DefaultBandWidth is the default ScoreOptions.BandWidth.
const DefaultBandWidth = 0.05

// ScoreOptions configures ScorePairs. The zero value is not usable: set
// Threshold.
type ScoreOptions struct {
	// Threshold is the similarity at or above which a truth pair counts:
	// truth pairs with a known similarity below it are left out. Range
	// (0, 1]. No default.
	Threshold float64
	// BandWidth is the width of the similarity bands recall is broken down
	// by, starting at Threshold: [t, t+w), [t+w, t+2w), …, the last band
	// ending at 1 inclusive. Default DefaultBandWidth (0.05).
	BandWidth float64
	// Curve, when not nil, gives the probability that a pair of similarity
	// j becomes a candidate (the S-curve of the banding used, such as
	// lsh.Params.Probability). Each band then carries the curve's
	// prediction: the mean of Curve over the band's truth pairs. Default
	// nil: no prediction.
	Curve func(j float64) float64
}

// PairScore is how a list of predicted pairs compares with the truth: counts,
// precision, recall and F1, and recall by similarity band. It is plain data,
// deterministic for its inputs.
type PairScore struct {
	// Threshold is ScoreOptions.Threshold.
	Threshold float64 `json:"threshold"`
	// Truth is the number of truth pairs that count (similarity ≥
	// Threshold, or unknown).
	Truth int64 `json:"truth"`
	// Predicted is the number of distinct predicted pairs.
	Predicted int64 `json:"predicted"`
	// TruePositives is the number of counted truth pairs predicted.
	TruePositives int64 `json:"true_positives"`
	// FalsePositives is the number of predicted pairs not among them:
	// Predicted − TruePositives.
	FalsePositives int64 `json:"false_positives"`
	// FalseNegatives is the number of counted truth pairs not predicted:
	// Truth − TruePositives.
	FalseNegatives int64 `json:"false_negatives"`
	// Precision is TP/Predicted; 1 when nothing is predicted.
	Precision float64 `json:"precision"`
	// Recall is TP/Truth; 1 when the truth is empty.
	Recall float64 `json:"recall"`
	// F1 is the harmonic mean of Precision and Recall; 0 when both are 0.
	F1 float64 `json:"f1"`
	// Bands is recall by similarity band, for truth pairs whose similarity
	// is known; empty when none is.
	Bands []BandRecall `json:"bands,omitempty"`
	// PredictedRecall is the curve's prediction of Recall over the truth
	// pairs with a known similarity: the mean of ScoreOptions.Curve over
	// them. Nil without a curve or without such pairs.
	PredictedRecall *float64 `json:"predicted_recall,omitempty"`
}

// BandRecall is the recall of one similarity band [Lo, Hi) (the last band
// includes 1).
type BandRecall struct {
	// Lo is the band's lower similarity bound, inclusive.
	Lo float64 `json:"lo"`
	// Hi is the band's upper bound, exclusive except for the last band,
	// whose Hi is 1.
	Hi float64 `json:"hi"`
	// Truth is the number of counted truth pairs with a known similarity
	// in the band.
	Truth int64 `json:"truth"`
	// Found is how many of them were predicted.
	Found int64 `json:"found"`
	// Recall is Found/Truth; 0 for an empty band.
	Recall float64 `json:"recall"`
	// MeanJ is the mean similarity of the band's truth pairs (0 if empty).
	MeanJ float64 `json:"mean_j"`
	// Predicted is the mean of ScoreOptions.Curve over the band's truth
	// pairs (nil without a curve or for an empty band).
	Predicted *float64 `json:"predicted,omitempty"`
}

// ScorePairs compares predicted pairs with truth pairs, by id. Both lists
// must be sorted by (A, B) without duplicates and with A < B, as
// ReadPairFile returns them. Truth pairs whose similarity is known and below
// opts.Threshold do not count; predicted pairs count as they are, whatever
// their similarity. It panics if opts.Threshold is not in (0, 1], which is a
// programmer error.
func ScorePairs(truth, predicted []LabeledPair, opts ScoreOptions) PairScore {
	t := opts.Threshold
	if !(t > 0 && t <= 1) {
		panic(fmt.Sprintf("eval: ScorePairs threshold %v; want 0 < t <= 1", t))
	}
	w := opts.BandWidth
	if !(w > 0) {
		w = DefaultBandWidth
	}
	s := PairScore{Threshold: t, Predicted: int64(len(predicted))}
	nb := max(1, int(math.Ceil((1-t)/w-1e-9)))
	bands := make([]BandRecall, nb)
	// Edges on a 1e-9 grid, so that 0.8 + 0.05 is the float64 0.85 a file
	// says, not 0.8500000000000001.
	edge := func(i int) float64 { return min(1, math.Round((t+float64(i)*w)*1e9)/1e9) }
	for i := range bands {
		bands[i].Lo, bands[i].Hi = edge(i), edge(i+1)
	}
	curveSum := make([]float64, nb)
	var known int64
	var curveAll float64
	i, j := 0, 0
	for i < len(truth) {
		tp := truth[i]
		if tp.HasJ() && tp.J < t {
			i++
			continue
		}
		// Advance the predictions to tp.
		for j < len(predicted) && compareIDs(predicted[j], tp) < 0 {
			j++
		}
		found := j < len(predicted) && compareIDs(predicted[j], tp) == 0
		s.Truth++
		if found {
			s.TruePositives++
		}
		if tp.HasJ() {
			k := min(nb-1, int((tp.J-t)/w))
			// Guard float edges: the band must hold tp.J.
			for k > 0 && tp.J < bands[k].Lo {
				k--
			}
			for k < nb-1 && tp.J >= bands[k+1].Lo {
				k++
			}
			bands[k].Truth++
			bands[k].MeanJ += tp.J
			if found {
				bands[k].Found++
			}
			known++
			if opts.Curve != nil {
				p := opts.Curve(tp.J)
				curveSum[k] += p
				curveAll += p
			}
		}
		i++
	}
	s.FalsePositives = s.Predicted - s.TruePositives
	s.FalseNegatives = s.Truth - s.TruePositives
	s.Precision = ratio(s.TruePositives, s.Predicted)
	s.Recall = ratio(s.TruePositives, s.Truth)
	s.F1 = f1(s.Precision, s.Recall)
	if known > 0 {
		for k := range bands {
			b := &bands[k]
			if b.Truth > 0 {
				b.Recall = float64(b.Found) / float64(b.Truth)
				b.MeanJ /= float64(b.Truth)
				if opts.Curve != nil {
					v := curveSum[k] / float64(b.Truth)
					b.Predicted = &v
				}
			}
		}
		s.Bands = bands
		if opts.Curve != nil {
			v := curveAll / float64(known)
			s.PredictedRecall = &v
		}
	}
	return s
}

// AddPredicted counts n more distinct predicted pairs that are not truth
// pairs (false positives), as if ScorePairs had been given them, and updates
// Precision and F1: so that a caller whose predicted pairs do not fit in
// memory can give ScorePairs only those among the truth pairs, and count the
// others. n must be 0 or more.
func (s *PairScore) AddPredicted(n int64) {
	s.Predicted += n
	s.FalsePositives = s.Predicted - s.TruePositives
	s.Precision = ratio(s.TruePositives, s.Predicted)
	s.F1 = f1(s.Precision, s.Recall)
}

// ratio returns a/b, or 1 when b is 0 (nothing asked, nothing missed).
func ratio(a, b int64) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

func f1(p, r float64) float64 {
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

// ClusterScore compares a predicted clustering with a reference one by pair
// counting. It is plain data, deterministic for its inputs.
type ClusterScore struct {
	// Documents is the number of items clustered, singletons included.
	Documents int64 `json:"documents"`
	// TruthClusters counts the truth clusters of two or more documents.
	TruthClusters int64 `json:"truth_clusters"`
	// PredictedClusters counts the predicted clusters of two or more.
	PredictedClusters int64 `json:"predicted_clusters"`
	// ARI is the adjusted Rand index (Hubert and Arabie 1985): 1 for
	// identical clusterings, about 0 for independent ones.
	ARI float64 `json:"ari"`
	// PairPrecision is the fraction of predicted same-cluster pairs that
	// share a truth cluster, SameBoth/SamePredicted; 1 when SamePredicted
	// is 0.
	PairPrecision float64 `json:"pair_precision"`
	// PairRecall is the fraction of truth same-cluster pairs that share a
	// predicted cluster, SameBoth/SameTruth; 1 when SameTruth is 0.
	PairRecall float64 `json:"pair_recall"`
	// PairF1 is the harmonic mean of PairPrecision and PairRecall.
	PairF1 float64 `json:"pair_f1"`
	// SameTruth is the number of pairs of documents in one truth cluster.
	SameTruth int64 `json:"same_truth"`
	// SamePredicted is the number of pairs in one predicted cluster.
	SamePredicted int64 `json:"same_predicted"`
	// SameBoth is the number of pairs in one cluster of each.
	SameBoth int64 `json:"same_both"`
}

// CompareClusterings scores a predicted clustering against a reference one.
// truth[i] and pred[i] are item i's cluster labels in each (any int64; equal
// labels, same cluster); n ≥ len(truth) is the number of items, the items
// past len(truth) being singletons in both. truth and pred must have equal
// lengths; otherwise it panics (a programmer error).
func CompareClusterings(truth, pred []int64, n int64) ClusterScore {
	if len(truth) != len(pred) {
		panic(fmt.Sprintf("eval: CompareClusterings: %d truth labels, %d predicted", len(truth), len(pred)))
	}
	n = max(n, int64(len(truth)))
	type cell struct{ a, b int64 }
	rows := map[int64]int64{}
	cols := map[int64]int64{}
	cells := map[cell]int64{}
	for i := range truth {
		rows[truth[i]]++
		cols[pred[i]]++
		cells[cell{truth[i], pred[i]}]++
	}
	c2 := func(x int64) int64 { return x * (x - 1) / 2 }
	s := ClusterScore{Documents: n}
	for _, v := range rows {
		s.SameTruth += c2(v)
		if v > 1 {
			s.TruthClusters++
		}
	}
	for _, v := range cols {
		s.SamePredicted += c2(v)
		if v > 1 {
			s.PredictedClusters++
		}
	}
	for _, v := range cells {
		s.SameBoth += c2(v)
	}
	s.PairPrecision = ratio(s.SameBoth, s.SamePredicted)
	s.PairRecall = ratio(s.SameBoth, s.SameTruth)
	s.PairF1 = f1(s.PairPrecision, s.PairRecall)
	s.ARI = adjustedRand(float64(s.SameBoth), float64(s.SameTruth), float64(s.SamePredicted), float64(c2(n)))
	return s
}

// adjustedRand is the ARI from pair counts: index Σ C(n_ij, 2), row and
// column sums Σ C(a_i, 2) and Σ C(b_j, 2), and all pairs C(n, 2). When the
// denominator vanishes the clusterings are identical (all singletons, or
// one cluster each) and the index is 1, as scikit-learn defines it.
func adjustedRand(index, a, b, all float64) float64 {
	if all == 0 {
		return 1
	}
	expected := a * b / all
	maxIndex := (a + b) / 2
	if maxIndex == expected {
		return 1
	}
	return (index - expected) / (maxIndex - expected)
}

// ScoreClusters compares predicted clusters (lists of member ids; documents
// not listed are singletons) with the connected components of the truth
// pairs that count at threshold (similarity ≥ threshold, or unknown).
// documents is the corpus size; if it is smaller than the number of distinct
// ids mentioned, that number is used instead.
func ScoreClusters(truth []LabeledPair, threshold float64, predicted [][]string, documents int64) ClusterScore {
	ids := map[string]int32{}
	idx := func(id string) int32 {
		i, ok := ids[id]
		if !ok {
			i = int32(len(ids))
			ids[id] = i
		}
		return i
	}
	var parent []int32
	grow := func() {
		for len(parent) < len(ids) {
			parent = append(parent, int32(len(parent)))
		}
	}
	find := func(x int32) int32 {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for _, p := range truth {
		if p.HasJ() && p.J < threshold {
			continue
		}
		a, b := idx(p.A), idx(p.B)
		grow()
		ra, rb := find(a), find(b)
		if ra != rb {
			parent[max(ra, rb)] = min(ra, rb)
		}
	}
	// Predicted labels: the cluster's number; unlisted ids their own.
	predOf := map[int32]int64{}
	for c, members := range predicted {
		for _, m := range members {
			predOf[idx(m)] = int64(c)
		}
	}
	grow()
	n := len(ids)
	tl := make([]int64, n)
	pl := make([]int64, n)
	for i := range n {
		tl[i] = int64(find(int32(i)))
		if c, ok := predOf[int32(i)]; ok {
			pl[i] = c
		} else {
			pl[i] = -1 - int64(i) // a singleton label of its own
		}
	}
	return CompareClusterings(tl, pl, documents)
}

// Score is the whole comparison of a run with a truth file, as `neardup eval
// score` prints it and dedup's report.json holds it.
type Score struct {
	// Truth names the truth file.
	Truth string `json:"truth"`
	// Bands is the number of bands of the banding whose S-curve predicted
	// the band recalls; 0 (and omitted) when none was given.
	Bands int `json:"bands,omitempty"`
	// Rows is that banding's rows per band; 0 when none was given.
	Rows int `json:"rows,omitempty"`
	// Bits is the slot width the S-curve assumed; 0 when not known (taken
	// as 64-bit slots).
	Bits int `json:"bits,omitempty"`
	// Pairs scores the pairs.
	Pairs PairScore `json:"pairs"`
	// Clusters scores the clusters; nil (and omitted) when no clustering
	// was given.
	Clusters *ClusterScore `json:"clusters,omitempty"`
}

// String renders the score as an aligned text table.
func (s *Score) String() string {
	var b strings.Builder
	p := s.Pairs
	fmt.Fprintf(&b, "pairs at J >= %v (truth %s)\n", p.Threshold, s.Truth)
	fmt.Fprintf(&b, "  truth %d  predicted %d  true positives %d  false positives %d  false negatives %d\n",
		p.Truth, p.Predicted, p.TruePositives, p.FalsePositives, p.FalseNegatives)
	fmt.Fprintf(&b, "  precision %.4f  recall %.4f  F1 %.4f\n", p.Precision, p.Recall, p.F1)
	if len(p.Bands) > 0 {
		curve := ""
		if s.Bands > 0 {
			curve = fmt.Sprintf("  S-curve b=%d r=%d", s.Bands, s.Rows)
			if s.Bits > 0 && s.Bits < 64 {
				curve += fmt.Sprintf(" (%d-bit slots)", s.Bits)
			}
		}
		fmt.Fprintf(&b, "recall by similarity band%s\n", curve)
		fmt.Fprintf(&b, "  %-13s %8s %8s %8s %10s\n", "band", "truth", "found", "recall", "predicted")
		for _, r := range p.Bands {
			pred := "-"
			if r.Predicted != nil {
				pred = fmt.Sprintf("%.4f", *r.Predicted)
			}
			rec := "-"
			if r.Truth > 0 {
				rec = fmt.Sprintf("%.4f", r.Recall)
			}
			fmt.Fprintf(&b, "  %.3f–%.3f %8d %8d %8s %10s\n", r.Lo, r.Hi, r.Truth, r.Found, rec, pred)
		}
		if p.PredictedRecall != nil {
			fmt.Fprintf(&b, "  %-13s %8s %8s %8.4f %10.4f\n", "all", "", "", p.Recall, *p.PredictedRecall)
		}
	}
	if c := s.Clusters; c != nil {
		fmt.Fprintf(&b, "clusters over %d documents: truth components %d, predicted %d\n", c.Documents, c.TruthClusters, c.PredictedClusters)
		fmt.Fprintf(&b, "  adjusted Rand index %.4f  pair precision %.4f  pair recall %.4f  pair F1 %.4f\n",
			c.ARI, c.PairPrecision, c.PairRecall, c.PairF1)
	}
	return b.String()
}

// SortPairs sorts ps by (A, B) and removes duplicates, swapping A and B
// where needed so that A < B and dropping pairs of an id with itself; it
// returns the shortened slice, which aliases ps. ScorePairs needs its inputs
// in this form.
func SortPairs(ps []LabeledPair) []LabeledPair {
	ps = slices.DeleteFunc(ps, func(p LabeledPair) bool { return p.A == p.B })
	for i := range ps {
		if ps[i].A > ps[i].B {
			ps[i].A, ps[i].B = ps[i].B, ps[i].A
		}
	}
	return sortUniquePairs(ps)
}

// SCurve returns the probability that a pair of Jaccard similarity j becomes
// a candidate under banding p when signature slots keep bits bits: the S-curve
// p.Probability evaluated at the chance that two slots agree, c + (1−c)·j with
// c = 2^−bits the chance that two different minima agree on their low bits (0
// for 64-bit slots, and for bits ≤ 0, which means "not known"). Use it as
// ScoreOptions.Curve.
func SCurve(p lsh.Params, bits int) func(j float64) float64 {
	c := 0.0
	if bits > 0 && bits < 64 {
		c = math.Ldexp(1, -bits)
	}
	return func(j float64) float64 { return p.Probability(c + (1-c)*j) }
}
