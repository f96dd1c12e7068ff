package dedup

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"slices"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/internal/docid"
	"github.com/neardup/neardup/internal/sketch"
)

// readGolden reads Options.Golden, if set, before any work, so that a bad
// path or file fails the run at once. The truth must list every pair down to
// the run's threshold.
func readGolden(o *Options) (*eval.PairFile, error) {
	if o.Golden == "" {
		return nil, nil
	}
	f, err := os.Open(o.Golden)
	if err != nil {
		return nil, fmt.Errorf("dedup: golden set: %w", err)
	}
	defer f.Close()
	pf, err := eval.ReadPairFile(bufio.NewReaderSize(f, 1<<20), o.Golden)
	if err != nil {
		return nil, err
	}
	if pf.Threshold > o.Threshold {
		return nil, fmt.Errorf("%w: golden set %s lists pairs with J >= %v only; the run's threshold is %v",
			ErrInvalidOptions, o.Golden, pf.Threshold, o.Threshold)
	}
	return pf, nil
}

// scoreGolden scores the verified pairs and the clusters against the truth:
// pairs by id, recall by similarity band beside the run's S-curve, clusters
// against the truth's connected components over the documents read (bad
// records excluded). Ids are compared in the form they read back from the
// outputs (docid.Canonical), as eval.ReadPairFile returns the truth's.
//
// The verified pairs are read in one pass, never held: only those among
// the truth pairs are given to eval.ScorePairs, and the others counted
// (eval.PairScore.AddPredicted), which is exact while no two documents in
// pairs share a canonical id; when some do (two pairs could then be one),
// every pair is held, as eval.SortPairs wants them.
func (r *run) scoreGolden(truth *eval.PairFile) (*eval.Score, error) {
	id := func(d uint32) string { return docid.Canonical(string(r.docs.id(d))) }
	shared := false // do two documents in pairs share a canonical id?
	seen := map[string]struct{}{}
	for d := range r.tally.best {
		if !r.tally.inPair(d) {
			continue
		}
		k := id(uint32(d))
		if _, ok := seen[k]; ok {
			shared = true
			break
		}
		seen[k] = struct{}{}
	}
	seen = nil
	var pred []eval.LabeledPair
	var others int64 // distinct predicted pairs not among the truth pairs
	err := r.eachEdge(func(e edge) error {
		p := eval.LabeledPair{A: id(e.a), B: id(e.b), J: e.Sim()}
		if shared {
			pred = append(pred, p)
			return nil
		}
		if p.A == p.B {
			return nil // as eval.SortPairs drops it
		}
		if p.A > p.B {
			p.A, p.B = p.B, p.A
		}
		if _, ok := slices.BinarySearchFunc(truth.Pairs, p, compareLabeledIDs); ok {
			pred = append(pred, p)
		} else {
			others++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	pred = eval.SortPairs(pred)
	s := &eval.Score{Truth: r.opts.Golden, Bands: r.job.Sketch.Bands.Bands, Rows: r.job.Sketch.Bands.Rows, Bits: r.job.Sketch.Params.Bits}
	curve := eval.SCurve(r.job.Sketch.Bands, r.job.Sketch.Params.Bits)
	if r.job.Sketch.Kind == sketch.SimHash {
		curve = r.job.Sketch.CandidateProbability // the unit-weight model
	}
	s.Pairs = eval.ScorePairs(truth.Pairs, pred, eval.ScoreOptions{Threshold: r.job.Threshold, Curve: curve})
	s.Pairs.AddPredicted(others)
	clusters := make([][]string, len(r.result.Clusters))
	for i, c := range r.result.Clusters {
		for _, m := range c.Members {
			clusters[i] = append(clusters[i], id(m))
		}
	}
	docs := r.rep.Counts.Documents - r.rep.Counts.Bad + int64(r.ref.m) // and the reference documents in pairs
	cs := eval.ScoreClusters(truth.Pairs, r.job.Threshold, clusters, docs)
	s.Clusters = &cs
	return s, nil
}

// compareLabeledIDs orders pairs by (A, B), as eval sorts them.
func compareLabeledIDs(x, y eval.LabeledPair) int {
	if c := cmp.Compare(x.A, y.A); c != 0 {
		return c
	}
	return cmp.Compare(x.B, y.B)
}
