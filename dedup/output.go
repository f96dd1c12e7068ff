package dedup

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"path/filepath"
	"runtime/debug"
	"slices"

	"github.com/neardup/neardup/cluster"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/extsort"
	"github.com/neardup/neardup/internal/jobspec"
	"golang.org/x/sync/errgroup"
)

// edgeTally is what the report and pairs.tsv need of the verified pairs,
// counted in a pass over them beside the one that clusters them: per
// document, not per pair.
type edgeTally struct {
	// best is each document's best estimate in a pair, its bits inverted
	// (^math.Float64bits) so that zero, what make gives, is "in none": no
	// fill of the whole array (40 MB at 5M documents) before the pass.
	// Only a NaN has the bits that invert to zero, and NaN estimates are
	// never tallied (no estimate is greater than a NaN, nor a NaN greater
	// than one: they never were the best).
	best []uint64
}

func newEdgeTally(n int) *edgeTally {
	return &edgeTally{best: make([]uint64, n)}
}

// get returns document d's best estimate in a pair, and false when d is in
// none.
func (t *edgeTally) get(d int) (float64, bool) {
	v := t.best[d]
	return math.Float64frombits(^v), v != 0
}

// inPair reports whether document d is in a verified pair (with an
// estimate other than NaN).
func (t *edgeTally) inPair(d int) bool { return t.best[d] != 0 }

// add counts est, an estimate other than NaN, as one of document d's.
func (t *edgeTally) add(d uint32, est float64) {
	if v := t.best[d]; v == 0 || est > math.Float64frombits(^v) {
		t.best[d] = ^math.Float64bits(est)
	}
}

// tallyEdge counts edge e into the tally and the report's pair histogram.
func (r *run) tallyEdge(e edge) {
	r.rep.PairSim.Add(e.Verdict)
	if !math.IsNaN(e.Est) {
		r.tally.add(e.a, e.Est)
		r.tally.add(e.b, e.Est)
	}
}

// cluster groups the verified pairs, read from the edge store in one pass
// (two when Star visits documents in another order than their numbers:
// the pairs are sorted by visit order first), and tallies them in a pass
// of its own on a second goroutine: the tally's writes (two random ones an
// edge, into an array of every document) and the unions' finds are each
// mostly cache misses, and the stage was serial.
func (r *run) cluster(ctx context.Context) error {
	n := r.docs.len()
	r.tally = newEdgeTally(n)
	tallied := make(chan error, 1)
	go func() {
		tallied <- r.eachEdge(func(e edge) error {
			r.tallyEdge(e)
			return nil
		})
	}()
	err := r.clusterEdges(n)
	if terr := <-tallied; err == nil {
		err = terr
	}
	return err
}

// clusterEdges sets r.result: the verified pairs of n documents grouped as
// the job says.
func (r *run) clusterEdges(n int) error {
	attrs := r.docs.attrs()
	opts := r.job.ReferenceClusterOptions(r.ref.m) // reference documents placed first
	var readErr error
	edges := func(yield func(cluster.Edge) bool) {
		readErr = r.eachEdge(func(e edge) error {
			if !yield(cluster.Edge{A: e.a, B: e.b, Sim: e.Sim()}) {
				return errStopEdges
			}
			return nil
		})
	}
	var err error
	switch {
	case r.job.Cluster != Star:
		r.result, err = cluster.ComponentsSeq(n, edges, attrs, opts)
	case opts.Keep.Kind == cluster.KeepFirst:
		// Star visits documents by number: edges in (a, b) order are in
		// visit order.
		r.result, err = cluster.StarSeq(n, edges, attrs, opts)
	default:
		r.result, err = r.starByVisit(n, edges, attrs, opts)
	}
	if err != nil {
		return err
	}
	if readErr != nil && !errors.Is(readErr, errStopEdges) {
		return readErr
	}
	return nil
}

// starByVisit is cluster.StarSeq over the edges sorted by the visit order
// of a keep policy, within the pairs' sixteenth of the budget.
func (r *run) starByVisit(n int, edges iter.Seq[cluster.Edge], attrs *cluster.Attrs, opts *cluster.Options) (*cluster.Result, error) {
	pos, err := cluster.VisitOrder(n, attrs, opts)
	if err != nil {
		return nil, err
	}
	s := extsort.NewRecords(r.tmp, "star", int(r.opts.Memory/16/extsort.RecordBytes))
	defer s.Close()
	for e := range edges {
		p, q := pos[e.A], pos[e.B]
		rec := extsort.Record{Key: [2]uint64{uint64(min(p, q))<<32 | uint64(max(p, q)), uint64(e.A)<<32 | uint64(e.B)}, Val: [2]uint64{math.Float64bits(e.Sim)}}
		if err := s.Add(rec); err != nil {
			return nil, err
		}
	}
	pos = nil
	r.rep.Spill.EdgeBytes += s.SpilledBytes()
	it, err := s.Iter()
	if err != nil {
		return nil, err
	}
	defer it.Close()
	res, err := cluster.StarSeq(n, func(yield func(cluster.Edge) bool) {
		for rec, ok := it.Next(); ok; rec, ok = it.Next() {
			if !yield(cluster.Edge{A: uint32(rec.Key[1] >> 32), B: uint32(rec.Key[1]), Sim: math.Float64frombits(rec.Val[0])}) {
				return
			}
		}
	}, attrs, opts)
	if err == nil {
		err = it.Err()
	}
	return res, err
}

// write writes pairs.tsv, clusters.jsonl and kept.jsonl under temporary
// names (r.out commits them with the reports): kept.jsonl, a copy of most
// of the input, on a goroutine of its own (and through O_DIRECT, see
// direct.go) while pairs.tsv and then clusters.jsonl are written, and the
// HTML report's samples taken.
func (r *run) write(ctx context.Context, outDir string) error {
	pairsPath, clustersPath, keptPath := filepath.Join(outDir, PairsFile), filepath.Join(outDir, ClustersFile), filepath.Join(outDir, r.keptName)
	pf, err := r.out.create(pairsPath)
	if err != nil {
		return err
	}
	cf, err := r.out.create(clustersPath)
	if err != nil {
		return err
	}
	kw, dw, err := r.out.createDirect(keptPath)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		err := r.writeKept(gctx, kw)
		if cerr := dw.close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("dedup: write %s: %w", keptPath, err)
		}
		return nil
	})
	side, sctx := errgroup.WithContext(gctx) // what kept.jsonl's copy does not wait for
	side.Go(func() error {
		if err := fill(pairsPath, pf, r.writePairs); err != nil {
			return err
		}
		if err := fill(clustersPath, cf, r.writeClusters); err != nil {
			return err
		}
		// Flushed to the disk now, beside kept.jsonl, rather than by the
		// commit after the stage (30 ms of fsync for the 55 MB at 5M
		// short documents); the commit's fsync then finds them clean.
		return r.out.sync(pairsPath, clustersPath)
	})
	// The HTML report's samples (a pass over the pairs, and the texts of
	// a few documents read again) need only the clusters: taken here,
	// beside the outputs, rather than alone after the stage.
	side.Go(func() (err error) {
		r.samples, err = r.sampleClusters(sctx)
		r.sampled = err == nil
		return err
	})
	// The report's counts by document, passes over every document that
	// finish would make alone after the stage.
	side.Go(func() error {
		r.countDocuments()
		return nil
	})
	g.Go(func() error {
		if err := side.Wait(); err != nil {
			return err
		}
		// The run's memory is garbage once the outputs are written, but
		// for the documents' table and the clusters: returned to the
		// system here, on the core kept.jsonl's copy leaves idle, it is
		// not torn down by the process's exit after the run (0.13-0.16 s
		// of wall at 5M short documents, 0.02 s after this).
		freeOSMemory()
		return nil
	})
	return g.Wait()
}

// freeOSMemory is debug.FreeOSMemory; tests replace it.
var freeOSMemory = debug.FreeOSMemory

// writePairs writes one verified pair a line, sorted (jobspec.PairRow):
// by ids (the lower first), then documents. The documents in pairs are
// ranked by id (equal ids equal ranks), and the pairs sorted by (lower
// rank, higher rank, a, b) externally, within a sixteenth of the budget: the order of
// jobspec.ComparePairRows.
func (r *run) writePairs(w *bufio.Writer) error {
	var docs []uint32
	for d := range r.docs.len() {
		if r.tally.inPair(d) {
			docs = append(docs, uint32(d))
		}
	}
	rank := rankByID(docs, r.docs.len(), r.docs.id)
	docs = nil
	s := extsort.NewRecords(r.tmp, "pairs", int(r.opts.Memory/16/extsort.RecordBytes))
	defer s.Close()
	if err := r.eachEdge(func(e edge) error {
		rec := edgeRecord(e)
		p, q := rank[e.a], rank[e.b] // the row's ids are ordered (jobspec.NewPairRow)
		rec.Key = [2]uint64{uint64(min(p, q))<<32 | uint64(max(p, q)), rec.Key[0]}
		return s.Add(rec)
	}); err != nil {
		return err
	}
	rank = nil
	r.rep.Spill.EdgeBytes += s.SpilledBytes()
	it, err := s.Iter()
	if err != nil {
		return err
	}
	defer it.Close()
	var line []byte
	for rec, ok := it.Next(); ok; rec, ok = it.Next() {
		a, b := uint32(rec.Key[1]>>32), uint32(rec.Key[1])
		row := jobspec.NewPairRow(r.docs.id(a), r.docs.id(b), uint64(a), uint64(b), verdictOf(rec))
		line = row.AppendLine(line[:0])
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return it.Err()
}

// rankByID returns, for each document of docs (ascending; n documents in
// all, of which the others get rank 0), its rank by id: the index of its
// first document with that id in the order of a stable sort by id, so that
// equal ids have equal ranks. Inputs whose ids follow the documents' order
// (as generated and exported corpora's usually do) are ranked in one pass
// that checks the order as it goes, one id and one comparison a document;
// else docs is sorted (in place) by id and document, a total order in
// which an unstable sort gives what a stable sort by id gives (whose merges
// cost the 5M short documents' 0.93M documents in pairs a few times the
// comparisons), and ranked in a second pass.
func rankByID(docs []uint32, n int, id func(uint32) []byte) []uint32 {
	rank := make([]uint32, n)
	pass := func() bool {
		var prev []byte
		for i, d := range docs {
			cur := id(d)
			rank[d] = uint32(i)
			if i > 0 {
				switch c := bytes.Compare(prev, cur); {
				case c == 0:
					rank[d] = rank[docs[i-1]]
				case c > 0:
					return false
				}
			}
			prev = cur
		}
		return true
	}
	if pass() {
		return rank
	}
	slices.SortFunc(docs, func(x, y uint32) int {
		if c := bytes.Compare(id(x), id(y)); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	pass()
	return rank
}

// writeClusters writes one cluster a line (jobspec.AppendClusterLine).
func (r *run) writeClusters(w *bufio.Writer) error {
	var line []byte
	var members [][]byte
	for i, c := range r.result.Clusters {
		members = members[:0]
		ref := 0 // reference members come first
		for _, m := range c.Members {
			members = append(members, r.docs.id(m))
			if int(m) < r.ref.m {
				ref++
			}
		}
		line = jobspec.AppendClusterLineRef(line[:0], i, r.docs.id(c.Kept), members, ref)
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
}

// writeKept copies the input records of the kept documents, untouched, to
// w.
func (r *run) writeKept(ctx context.Context, w io.Writer) error {
	m := r.ref.m // reference documents, placed first, are never written
	keep := corpus.NewBitset(int64(r.docs.len() - m))
	var kept int64
	for d, st := range r.docs.status[m:] {
		if st != docBad && r.result.IsKept(uint32(m+d)) {
			keep.Set(int64(d))
			kept++
		}
	}
	r.bar.CountStage("write", "docs", kept)
	defer r.bar.Finish()
	r.rep.Counts.Kept = kept
	n, err := corpus.CopyKept(ctx, w, r.inputs, &r.opts.Corpus, keep)
	r.bar.Add(n, 0)
	return err
}
