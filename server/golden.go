package server

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/minhash"
)

// DefaultGoldenInterval is the default Options.GoldenInterval.
const DefaultGoldenInterval = time.Hour

// Values of the "index" label of the golden metrics.
const (
	GoldenPrimary = "primary"
	GoldenShadow  = "shadow"
)

// GoldenDoc is one document of a golden set: its id, as stored in the index,
// and its text.
type GoldenDoc struct {
	ID   string
	Text string
}

// GoldenSet is a labeled set of documents the server checks against its live
// index, read-only, to measure recall and precision where the truth is known
// (the seed's recall_on_labeled_set). Its documents must be in the index
// under their ids (an index built from a corpus that holds them, or
// inserted): a golden run signs each one under the index's spec and params,
// queries the index at its threshold excluding the document's own id, and
// keeps the matches that are golden documents too. Those predicted pairs are
// scored against Truth as `neardup eval score` scores a pairs.tsv
// (eval.ScorePairs at the index's threshold): matches outside the golden
// set are not labeled and do not count.
//
// A GoldenSet is plain data; the Server does not change it, and the caller
// must not change it while a Server uses it.
type GoldenSet struct {
	// Docs are the golden documents; ids unique and not empty.
	Docs []GoldenDoc
	// Truth are the true pairs among Docs, as eval.ReadPairFile returns
	// them (a truth file of `neardup eval truth`, a pairs.tsv or plain id
	// pairs); every id must be one of Docs'. Truth pairs with a known
	// similarity below the index's threshold do not count.
	Truth []eval.LabeledPair
	// TruthThreshold is the least similarity the truth file lists
	// (eval.PairFile.Threshold), or 0 when it does not say. It must not be
	// above the threshold of the index checked: the truth would miss pairs
	// that count.
	TruthThreshold float64
}

// validate checks s against an index's threshold; errors wrap
// ErrInvalidOptions.
func (s *GoldenSet) validate(threshold float64) error {
	if len(s.Docs) == 0 {
		return fmt.Errorf("%w: the golden set has no document", ErrInvalidOptions)
	}
	ids := make(map[string]bool, len(s.Docs))
	for i, d := range s.Docs {
		if d.ID == "" || len(d.ID) > index.MaxIDLen {
			return fmt.Errorf("%w: golden document %d has an id of %d bytes; want 1..%d", ErrInvalidOptions, i, len(d.ID), index.MaxIDLen)
		}
		if ids[d.ID] {
			return fmt.Errorf("%w: golden document id %q appears twice", ErrInvalidOptions, d.ID)
		}
		ids[d.ID] = true
	}
	for _, p := range s.Truth {
		for _, id := range []string{p.A, p.B} {
			if !ids[id] {
				return fmt.Errorf("%w: golden truth pair (%q, %q) names %q, which is not a golden document", ErrInvalidOptions, p.A, p.B, id)
			}
		}
	}
	if s.TruthThreshold > threshold {
		return fmt.Errorf("%w: the golden truth lists pairs with J >= %v only; it cannot score the index's threshold %v", ErrInvalidOptions, s.TruthThreshold, threshold)
	}
	return nil
}

// GoldenResult is what one golden run found in one index.
type GoldenResult struct {
	// Index is GoldenPrimary or GoldenShadow.
	Index string
	// Score compares the predicted pairs with the truth at the index's
	// threshold: recall and precision are its Recall and Precision.
	Score eval.PairScore
	// Pairs are the predicted pairs: golden documents the index matched to
	// another golden document, sorted by (A, B), each with the estimated
	// similarity of the first query that found it.
	Pairs []eval.LabeledPair
	// Featureless counts golden documents with no feature under the
	// index's spec: they are not queried (the server refuses them too).
	Featureless int
	// Seconds is the run's wall time on this index.
	Seconds float64
}

// goldenClock is what the golden loop needs of time; tests inject a fake so
// that the interval is tested without sleeping.
type goldenClock interface {
	Now() time.Time
	// NewTimer returns a channel that receives once d has passed, and a
	// function that stops the timer.
	NewTimer(d time.Duration) (<-chan time.Time, func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}

// golden is the golden-set monitor of a Server (Options.Golden).
type golden struct {
	set      *GoldenSet
	ids      map[string]bool    // of set.Docs
	truth    []eval.LabeledPair // set.Truth, sorted as eval.ScorePairs needs
	interval time.Duration
	clock    goldenClock

	// shadow, when not nil, returns the shadow index a golden run checks
	// too (index="shadow"), or nil when there is none at the moment. It is
	// the hook of the shadow index (shadow*.go): set it in New, before
	// Serve. The shadow is signed under its own config (spec, params, key),
	// so a shadow with other bands, params or key is measured as it would
	// answer.
	shadow func() index.Index

	// ran, if set (by tests), receives each run's results, failed runs
	// included (with what did finish), after the metrics are updated.
	ran func([]GoldenResult, error)

	mu sync.Mutex // one run at a time

	recall    *prometheus.GaugeVec
	precision *prometheus.GaugeVec
	runs      prometheus.Counter
	failures  prometheus.Counter
	last      prometheus.Gauge
}

// newGolden makes the golden monitor for set and registers its metrics on
// reg.
func newGolden(reg prometheus.Registerer, set *GoldenSet, interval time.Duration) *golden {
	g := &golden{
		set:      set,
		ids:      make(map[string]bool, len(set.Docs)),
		interval: interval,
		clock:    realClock{},
		recall: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "neardup_golden_recall", Help: "Recall on the golden set at the index's threshold, by index (primary, shadow), as of the last successful golden run.",
		}, []string{"index"}),
		precision: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "neardup_golden_precision", Help: "Precision on the golden set at the index's threshold, by index (primary, shadow), as of the last successful golden run.",
		}, []string{"index"}),
		runs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "neardup_golden_runs_total", Help: "Golden-set runs started (failed ones included, those interrupted by shutdown too).",
		}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "neardup_golden_failures_total", Help: "Golden-set runs that failed on some index (not counting those interrupted by shutdown).",
		}),
		last: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "neardup_golden_last_run_timestamp_seconds", Help: "Unix time at which the last successful golden run ended.",
		}),
	}
	for _, d := range set.Docs {
		g.ids[d.ID] = true
	}
	g.truth = eval.SortPairs(slices.Clone(set.Truth))
	reg.MustRegister(g.recall, g.precision, g.runs, g.failures, g.last)
	return g
}

// GoldenRun checks the golden set (Options.Golden) against the index, and
// against the shadow index when one is configured, now: it stores nothing
// and changes nothing in either index. It updates the golden metrics, logs
// one line per index, and returns one result per index checked (primary
// first). Runs are serialized: a call during another run waits for it. It
// returns ErrInvalidOptions if the server has no golden set. On a failure,
// the results returned are those of the indexes checked before it, and the
// metrics of the failed index keep their previous values.
//
// Golden queries go through the index like any other (they count in the
// neardup_index_* metrics) but not through the HTTP API: they are not in
// the request or drift metrics.
func (s *Server) GoldenRun(ctx context.Context) ([]GoldenResult, error) {
	g := s.golden
	if g == nil {
		return nil, fmt.Errorf("%w: the server has no golden set (Options.Golden)", ErrInvalidOptions)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.runs.Inc()
	targets := []struct {
		name string
		idx  index.Index
	}{{GoldenPrimary, s.idx}}
	if g.shadow != nil {
		if sh := g.shadow(); sh != nil {
			targets = append(targets, struct {
				name string
				idx  index.Index
			}{GoldenShadow, sh})
		}
	}
	var out []GoldenResult
	var err error
	for _, t := range targets {
		var r GoldenResult
		r, err = g.check(ctx, t.name, t.idx)
		if err != nil {
			err = fmt.Errorf("golden run on the %s index: %w", t.name, err)
			break
		}
		g.recall.WithLabelValues(t.name).Set(r.Score.Recall)
		g.precision.WithLabelValues(t.name).Set(r.Score.Precision)
		s.log.Info("golden run", "index", t.name, "recall", r.Score.Recall, "precision", r.Score.Precision,
			"truth", r.Score.Truth, "predicted", r.Score.Predicted, "true_positives", r.Score.TruePositives,
			"threshold", r.Score.Threshold, "featureless", r.Featureless, "seconds", r.Seconds)
		out = append(out, r)
	}
	switch {
	case err == nil:
		g.last.Set(float64(g.clock.Now().UnixNano()) / 1e9)
	case ctx.Err() != nil:
		s.log.Info("golden run interrupted", "err", err)
	default:
		g.failures.Inc()
		s.log.Error("golden run failed", "err", err)
	}
	if g.ran != nil {
		g.ran(out, err)
	}
	return out, err
}

// check runs the golden set against one index: sign each golden document
// under the index's config, query at its threshold, keep the matches that
// are golden documents, and score them against the truth.
func (g *golden) check(ctx context.Context, name string, idx index.Index) (GoldenResult, error) {
	start := time.Now()
	res := GoldenResult{Index: name}
	cfg := idx.Config()
	if err := g.set.validate(cfg.Threshold); err != nil {
		return res, err
	}
	sg, err := cfg.NewSigner()
	if err != nil {
		return res, err
	}
	q := index.QueryOptions{Threshold: cfg.Threshold, Limit: index.MaxLimit}
	var sig minhash.Signature
	var pred []eval.LabeledPair
	for _, d := range g.set.Docs {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		var empty bool
		sig, empty = sg.Sign(sig[:0], []byte(d.Text))
		if empty {
			res.Featureless++
			continue
		}
		q.Exclude = d.ID
		ms, err := idx.Query(ctx, sig, &q)
		if err != nil {
			return res, fmt.Errorf("query golden document %q: %w", d.ID, err)
		}
		for _, m := range ms {
			if g.ids[m.ID] {
				pred = append(pred, eval.LabeledPair{A: d.ID, B: m.ID, J: m.Similarity})
			}
		}
	}
	res.Pairs = eval.SortPairs(pred)
	res.Score = eval.ScorePairs(g.truth, res.Pairs, eval.ScoreOptions{Threshold: cfg.Threshold})
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// goldenLoop runs GoldenRun at once, then one interval after each run ends
// (runs never overlap or pile up), until ctx ends. It runs in a goroutine
// of Serve, which cancels ctx at shutdown and waits for it to return.
func (s *Server) goldenLoop(ctx context.Context) {
	g := s.golden
	for {
		s.GoldenRun(ctx) // counted and logged; the next run retries
		c, stop := g.clock.NewTimer(g.interval)
		select {
		case <-ctx.Done():
			stop()
			return
		case <-c:
		}
	}
}
