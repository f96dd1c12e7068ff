package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/neardup/neardup/internal/drift"
)

// Drift histograms: what the documents checked look like, so that a shift in
// the input (a new template, a new language, a spam wave, a tokenizer change)
// shows on a dashboard before it shows in recall. Each document a request
// signs is observed once (checks, check-and-inserts and batch lines alike;
// the golden run's documents are not: they are not traffic).
//
// The buckets are internal/drift's bounds, fixed so that series from
// different servers and versions add up and compare, and bin as the batch
// report's drift section does:
//
//   - neardup_check_best_similarity: the similarity of the best match of each
//     checked document, 0 when it has none. Matches are only those at or
//     above the query's threshold, so the histogram is a spike at 0 (new
//     documents) and a shape above the threshold (duplicates); a growing
//     spike near 1 is a wave of exact copies, a shift toward the threshold
//     a change of what "near" means in the input.
//   - neardup_document_features: features (shingles, with repeats) per
//     signed document; a drop means shorter documents or a shingling change,
//     and moves the empty-bin rate and the S-curve.
//   - neardup_document_bytes: text bytes per signed document.

// driftMetrics are the drift histograms (see above).
type driftMetrics struct {
	best     prometheus.Histogram
	features prometheus.Histogram
	bytes    prometheus.Histogram
}

// newDriftMetrics makes the drift histograms and registers them on reg.
func newDriftMetrics(reg prometheus.Registerer) *driftMetrics {
	d := &driftMetrics{
		best: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "neardup_check_best_similarity",
			Help:    "Estimated similarity of the best match of each checked document (0 when it has no match at the threshold).",
			Buckets: drift.SimilarityBounds,
		}),
		features: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "neardup_document_features",
			Help:    "Features (shingles, with repeats) of each signed document.",
			Buckets: drift.FeatureBounds,
		}),
		bytes: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "neardup_document_bytes",
			Help:    "Text bytes of each signed document.",
			Buckets: drift.ByteBounds, // to 1 MiB, the default MaxTextBytes
		}),
	}
	reg.MustRegister(d.best, d.features, d.bytes)
	return d
}

// signed observes one signed document: its text bytes and its features.
func (d *driftMetrics) signed(bytes int, features int64) {
	d.bytes.Observe(float64(bytes))
	d.features.Observe(float64(features))
}

// checked observes the answer to one checked document: dups best first, as
// CheckResult.Duplicates holds them.
func (d *driftMetrics) checked(dups []Duplicate) {
	best := 0.0
	if len(dups) > 0 {
		best = dups[0].Similarity
	}
	d.best.Observe(best)
}
