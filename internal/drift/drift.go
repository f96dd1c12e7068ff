// Package drift holds the distributions that show a shift in a service's or
// a batch run's input — a new template, a new language, a spam wave — and
// the comparison of two of them. The distributions are the estimated
// similarity of each document's best match, its features (shingles, repeats
// included) and the length of its text, in fixed bins that the batch report
// (report.json, "drift") and the service's Prometheus histograms share, so
// that every run and every scrape bins alike. Compare tells whether two
// binned distributions differ, by a Kolmogorov–Smirnov test and the
// population stability index (`neardup report diff`).
//
// A service exports the same distributions as Prometheus histograms with
// the package's bounds as buckets (prometheus.HistogramOpts{Buckets:
// drift.SimilarityBounds}); the bins then match report.json's one for one
// (a Prometheus bucket is cumulative: bin i here is bucket i less bucket
// i−1, the last bin +Inf's count less the last bound's).
//
// It is not a general histogram library: the bins are fixed here, and a
// Histogram holds counts only (no sum, which would make a merged report
// depend on the order of the merge).
package drift

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// ErrBins reports two histograms with different bins, or a histogram whose
// counts do not match its bins; check with errors.Is.
var ErrBins = errors.New("drift: histograms with different bins")

// Bin bounds. Each is a list of upper bounds, ascending: bin i counts the
// values x with Upper[i−1] < x ≤ Upper[i] (the first bin every x ≤
// Upper[0]), as Prometheus's "le" buckets do, and one more bin counts those
// above the last bound. They are the buckets of the service's drift
// histograms (neardup_check_best_similarity, neardup_document_features,
// neardup_document_bytes). The slices are shared: do not change them.
var (
	// SimilarityBounds bins similarities in [0, 1]: 0, 0.1, …, 0.7, then
	// finer where thresholds are set, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99
	// and 1.
	SimilarityBounds = []float64{0, .1, .2, .3, .4, .5, .6, .7, .75, .8, .85, .9, .95, .98, .99, 1}
	// FeatureBounds bins features per document by octaves: 4, 8, 16, …,
	// 2^20.
	FeatureBounds = octaves(4, 19)
	// ByteBounds bins text lengths in bytes by octaves: 16, 32, 64, …, 2^20
	// (1 MiB, the service's default text limit; longer texts of a batch
	// run are in the last bin).
	ByteBounds = octaves(16, 17)
)

// octaves returns the n bounds start·2^i, i = 0…n−1 (Prometheus's
// ExponentialBuckets(start, 2, n)).
func octaves(start float64, n int) []float64 {
	b := make([]float64, n)
	for i := range b {
		b[i] = math.Ldexp(start, i)
	}
	return b
}

// Histogram counts values in fixed bins. Make one with New; it is a plain
// value (JSON round-trips it), not safe for concurrent use, and
// deterministic: the counts do not depend on the order of Add and Merge.
type Histogram struct {
	// Upper are the bins' upper bounds (one of the Bounds above).
	Upper []float64 `json:"upper"`
	// Counts has one count per bound and a last one for the values above
	// the last bound: len(Upper)+1 counts.
	Counts []int64 `json:"counts"`
}

// New returns an empty histogram over bounds (which it shares).
func New(bounds []float64) Histogram {
	return Histogram{Upper: bounds, Counts: make([]int64, len(bounds)+1)}
}

// Bin returns the bin of x: the first i with x ≤ bounds[i], or len(bounds).
// NaN falls in the last bin.
func Bin(bounds []float64, x float64) int {
	i, _ := slices.BinarySearch(bounds, x)
	if math.IsNaN(x) {
		return len(bounds)
	}
	return i
}

// Add counts x once.
func (h *Histogram) Add(x float64) { h.Counts[Bin(h.Upper, x)]++ }

// N returns the number of values counted.
func (h Histogram) N() int64 {
	var n int64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// check reports whether h's counts fit its bins.
func (h Histogram) check() error {
	if len(h.Counts) != len(h.Upper)+1 {
		return fmt.Errorf("%w: %d counts for %d bounds; want one more count than bounds", ErrBins, len(h.Counts), len(h.Upper))
	}
	if !slices.IsSorted(h.Upper) {
		return fmt.Errorf("%w: bounds not ascending", ErrBins)
	}
	for i, c := range h.Counts {
		if c < 0 {
			return fmt.Errorf("%w: count %d of bin %d is negative", ErrBins, c, i)
		}
	}
	return nil
}

// Merge adds o's counts to h's. A zero Histogram (no bins) is nothing: a
// zero o adds nothing, a zero h takes o's bins. Errors wrap ErrBins; h is
// unchanged then.
func (h *Histogram) Merge(o Histogram) error {
	if len(o.Upper) == 0 && len(o.Counts) == 0 {
		return nil
	}
	if len(h.Upper) == 0 && len(h.Counts) == 0 {
		*h = Histogram{Upper: o.Upper, Counts: slices.Clone(o.Counts)}
		return o.check()
	}
	if !slices.Equal(h.Upper, o.Upper) || len(h.Counts) != len(o.Counts) {
		return fmt.Errorf("%w: %d and %d bounds", ErrBins, len(h.Upper), len(o.Upper))
	}
	for i, c := range o.Counts {
		h.Counts[i] += c
	}
	return nil
}

// Quantile returns the upper bound of the bin that holds the q-quantile
// (0 ≤ q ≤ 1) of the counted values, +Inf if that is the last bin, NaN if
// nothing was counted.
func (h Histogram) Quantile(q float64) float64 {
	n := h.N()
	if n == 0 {
		return math.NaN()
	}
	target := int64(math.Ceil(q * float64(n)))
	var cum int64
	for i, c := range h.Counts {
		cum += c
		if cum >= max(target, 1) {
			if i == len(h.Upper) {
				return math.Inf(1)
			}
			return h.Upper[i]
		}
	}
	return math.Inf(1)
}

// Distributions are the three distributions of a run or a service that show
// drift, as report.json's "drift" holds them. The zero value has no bins; use
// NewDistributions.
type Distributions struct {
	// BestSimilarity counts, for every document with at least one verified
	// match, the estimated similarity (from the signatures) of its best
	// match; documents without a match are not counted.
	BestSimilarity Histogram `json:"best_similarity"`
	// Features counts documents by their number of features (shingles,
	// repeats included; 0 for a text without any).
	Features Histogram `json:"features"`
	// TextBytes counts documents by the length of their text, in bytes.
	TextBytes Histogram `json:"text_bytes"`
}

// NewDistributions returns empty distributions over the package's bins.
func NewDistributions() Distributions {
	return Distributions{BestSimilarity: New(SimilarityBounds), Features: New(FeatureBounds), TextBytes: New(ByteBounds)}
}

// AddDocument counts a document of textBytes bytes and features features.
func (d *Distributions) AddDocument(textBytes, features int64) {
	d.TextBytes.Add(float64(textBytes))
	d.Features.Add(float64(features))
}

// Merge adds o's counts to d's. Errors wrap ErrBins.
func (d *Distributions) Merge(o Distributions) error {
	for _, p := range []struct{ a, b *Histogram }{{&d.BestSimilarity, &o.BestSimilarity}, {&d.Features, &o.Features}, {&d.TextBytes, &o.TextBytes}} {
		if err := p.a.Merge(*p.b); err != nil {
			return err
		}
	}
	return nil
}
