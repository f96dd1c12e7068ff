package dedup

import (
	"bufio"
	"fmt"
	"time"

	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/lsh"
)

// finish fills in the counts and histograms once every stage has run.
func (r *run) finish() {
	rep := r.rep
	c := &rep.Counts
	r.countDocuments()
	c.InputBytes = r.readStats.Bytes
	c.Skipped = r.readStats.Skipped
	c.Candidates = r.buckets.UniquePairs
	c.VerifiedPairs = r.edges.len()
	m := r.result.Metrics
	c.Clusters, c.Removed = int64(m.Clusters), int64(m.Removed)
	for _, s := range m.Sizes {
		rep.Sizes = append(rep.Sizes, ClusterSizeBin{Size: s.Size, Count: s.Count})
	}
	rep.Signatures = jobspec.NewSignatureReport(r.hashMetrics)
	if r.stored != nil {
		rep.Signatures.Stored = r.stored.path
	}
	rep.Buckets.SetCounts(r.buckets)
	for _, lb := range r.buckets.Largest {
		rep.Buckets.Largest = append(rep.Buckets.Largest, r.largeBucket(lb))
	}
	for _, lb := range r.top.Buckets() {
		rep.Buckets.Top = append(rep.Buckets.Top, r.largeBucket(lb))
	}
	// rep.PairSim was counted beside the clustering (tallyEdge).
	if f := &r.ref; f.rep != nil {
		rep.Reference = f.rep
		f.rep.ReferencePairs.Candidates, f.rep.ReferencePairs.Verified = f.candidates, f.verified
		f.rep.InputPairs.Candidates, f.rep.InputPairs.Verified = c.Candidates-f.candidates, c.VerifiedPairs-f.verified
		for _, cl := range r.result.Clusters {
			ref := 0
			for ref < len(cl.Members) && int(cl.Members[ref]) < f.m {
				ref++
			}
			f.rep.Clustered += int64(ref)
			if ref > 0 {
				f.rep.RemovedByReference += int64(len(cl.Members) - ref)
			}
		}
	}
	if r.sigs != nil { // under exact verification, verify reports its own (and these are the reference documents')
		rep.Spill.SigBytes += r.sigs.SpilledBytes()
	}
	rep.PeakRSSBytes = peakRSS()
	rep.WallSeconds = time.Since(r.t0).Seconds()
}

// countDocuments fills in what the report counts by document: the inputs'
// statuses and their best matches. It is two passes over every document
// (5M at 5M short documents, 10-20 ms), which the write stage runs beside
// kept.jsonl's copy rather than finish alone after it; finish calls it if
// the write stage did not.
func (r *run) countDocuments() {
	if r.counted {
		return
	}
	r.counted = true
	rep := r.rep
	c := &rep.Counts
	c.Documents = int64(r.docs.len() - r.ref.m) // inputs only: reference documents are placed first
	for _, st := range r.docs.status[r.ref.m:] {
		switch st {
		case docEmpty:
			c.Empty++
		case docBad:
			c.Bad++
		case docCopy:
			c.ExactDuplicates++
		}
	}
	// Best matches of the inputs only: a reference document's are no
	// measure of the input's drift. Each input's best estimate was tallied
	// beside the clustering (tallyEdge), one per document as
	// jobspec.AddInputBestMatches counts them, without holding the pairs.
	for d := r.ref.m; d < len(r.tally.best); d++ {
		if s, ok := r.tally.get(d); ok {
			rep.Drift.BestSimilarity.Add(s)
		}
	}
}

// largeBucket is the report's entry for a bucket of the run's entries.
func (r *run) largeBucket(b lsh.Bucket) LargeBucket {
	id, err := r.globalID(b.First)
	if err != nil {
		id = []byte(fmt.Sprintf("(reference document %d: %v)", b.First, err))
	}
	return jobspec.NewLargeBucket(b.Size, id, sketch.EntryBucket(b.Key))
}

// writeReport writes report.json under a temporary name.
func (r *run) writeReport(path string) error {
	data, err := jobspec.EncodeReport(r.rep)
	if err != nil {
		return err
	}
	return r.out.write(path, func(w *bufio.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
