package dedup

import (
	"bufio"
	"time"

	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/lsh"
)

// finish fills in the counts and histograms once every stage has run.
func (r *run) finish() {
	rep := r.rep
	c := &rep.Counts
	c.Documents = int64(r.docs.len())
	for _, st := range r.docs.status {
		switch st {
		case docEmpty:
			c.Empty++
		case docBad:
			c.Bad++
		case docCopy:
			c.ExactDuplicates++
		}
	}
	c.InputBytes = r.readStats.Bytes
	c.Skipped = r.readStats.Skipped
	c.Candidates = r.buckets.UniquePairs
	c.VerifiedPairs = int64(len(r.edges))
	m := r.result.Metrics
	c.Clusters, c.Removed = int64(m.Clusters), int64(m.Removed)
	for _, s := range m.Sizes {
		rep.Sizes = append(rep.Sizes, ClusterSizeBin{Size: s.Size, Count: s.Count})
	}
	rep.Signatures = jobspec.NewSignatureReport(r.hashMetrics)
	rep.Buckets.SetCounts(r.buckets)
	for _, lb := range r.buckets.Largest {
		rep.Buckets.Largest = append(rep.Buckets.Largest, r.largeBucket(lb))
	}
	for _, lb := range r.top.Buckets() {
		rep.Buckets.Top = append(rep.Buckets.Top, r.largeBucket(lb))
	}
	for _, e := range r.edges {
		rep.PairSim.Add(e.Verdict)
	}
	rep.Spill.SigBytes = r.sigs.SpilledBytes()
	rep.PeakRSSBytes = peakRSS()
	rep.WallSeconds = time.Since(r.t0).Seconds()
}

// largeBucket is the report's entry for a bucket of the run's entries.
func (r *run) largeBucket(b lsh.Bucket) LargeBucket {
	return jobspec.NewLargeBucket(b.Size, r.docs.id(b.First), sketch.EntryBucket(b.Key))
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
