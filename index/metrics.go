package index

import (
	"fmt"
	"math"
	"strings"
	"sync/atomic"
)

// Metrics counts what an index has done since it was opened. A plain value:
// read it with Index.Metrics; ratios are methods. The server exports it to
// Prometheus.
type Metrics struct {
	// Queries counts bucket lookups of a document (Query, and the check of
	// CheckAndInsert).
	Queries uint64
	// Candidates counts the distinct stored documents those queries met in
	// their buckets and verified; CandidatesDropped those whose estimated
	// similarity was below the threshold.
	Candidates, CandidatesDropped uint64
	// Matches counts the matches returned.
	Matches uint64
	// BucketsRead counts buckets scanned; FullBuckets those found at the
	// bucket cap (hot buckets: boilerplate shared by many documents).
	BucketsRead, FullBuckets uint64
	// Inserts counts documents stored, Duplicates check-and-inserts
	// answered "duplicate", Deletes documents removed.
	Inserts, Duplicates, Deletes uint64
	// DroppedPostings counts postings not written because their bucket was
	// full.
	DroppedPostings uint64
	// Commits counts write batches made durable.
	Commits uint64
	// SyncBarriers counts the WAL syncs answers waited for because they
	// named a document whose write may not have been durable yet (Pebble
	// only; see "Durability" in the package doc).
	SyncBarriers uint64
	// Corruptions counts the damaged blocks met on disk (Pebble's
	// corruption reports; Pebble only): each failed the read that met it.
	Corruptions uint64
	// StorageFaults counts the disk errors met (a write, sync or file
	// creation that failed: full, read-only, I/O error) and Pebble's fatal
	// errors (Pebble only). After the first, the index refuses writes.
	StorageFaults uint64
	// CandidatesPerQuery is the distribution of candidates per query.
	CandidatesPerQuery Histogram
	// BucketSize is the distribution of the sizes of the buckets read
	// (capped at the bucket cap).
	BucketSize Histogram
}

// VerifyDropRate is the fraction of candidates dropped by verification:
// high means the banding lets through many dissimilar pairs.
func (m Metrics) VerifyDropRate() float64 {
	if m.Candidates == 0 {
		return 0
	}
	return float64(m.CandidatesDropped) / float64(m.Candidates)
}

// String renders the metrics as a small table.
func (m Metrics) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "queries             %d\n", m.Queries)
	fmt.Fprintf(&b, "candidates          %d (dropped by verification %.2f%%; p99 per query %g)\n", m.Candidates, 100*m.VerifyDropRate(), m.CandidatesPerQuery.Quantile(0.99))
	fmt.Fprintf(&b, "matches             %d\n", m.Matches)
	fmt.Fprintf(&b, "buckets read        %d (full %d; p99 size %g)\n", m.BucketsRead, m.FullBuckets, m.BucketSize.Quantile(0.99))
	fmt.Fprintf(&b, "inserts             %d (duplicates answered %d, deletes %d)\n", m.Inserts, m.Duplicates, m.Deletes)
	fmt.Fprintf(&b, "dropped postings    %d\n", m.DroppedPostings)
	fmt.Fprintf(&b, "commits             %d (sync barriers %d)\n", m.Commits, m.SyncBarriers)
	fmt.Fprintf(&b, "storage faults      %d (corruptions %d)\n", m.StorageFaults, m.Corruptions)
	return b.String()
}

// Histogram is a distribution of counts over fixed buckets: Counts[i] counts
// observations v ≤ Bounds[i] (and above Bounds[i−1]); the last element of
// Counts, one past Bounds, counts the rest.
type Histogram struct {
	// Bounds are the buckets' inclusive upper bounds, ascending. The slice
	// is shared by every Histogram the package returns; do not modify it.
	Bounds []float64
	// Counts are the observations per bucket, one more than Bounds.
	Counts []uint64
	// Sum is the sum of all observations.
	Sum float64
	// Count is the number of all observations.
	Count uint64
}

// Quantile returns the upper bound of the bucket holding quantile q (in
// [0, 1]), +Inf if it is the overflow bucket, 0 if there are no observations.
func (h Histogram) Quantile(q float64) float64 {
	if h.Count == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.Count)))
	var seen uint64
	for i, c := range h.Counts {
		seen += c
		if seen >= rank && c > 0 {
			if i < len(h.Bounds) {
				return h.Bounds[i]
			}
			return math.Inf(1)
		}
	}
	return math.Inf(1)
}

// sizeBounds are the histogram bounds for counts of documents: 0, 1, 2, 4,
// … 4096.
var sizeBounds = func() []float64 {
	b := []float64{0}
	for v := 1; v <= 4096; v *= 2 {
		b = append(b, float64(v))
	}
	return b
}()

// counter is a histogram of small non-negative integers over sizeBounds,
// updated atomically.
type counter struct {
	counts [15]atomic.Uint64 // len(sizeBounds)+1
	sum    atomic.Uint64
}

func (c *counter) observe(v int) {
	i := 0
	if v > 0 {
		i = 1
		for b := 1; b < v && i < len(sizeBounds); b *= 2 {
			i++
		}
	}
	c.counts[i].Add(1)
	c.sum.Add(uint64(v))
}

func (c *counter) snapshot() Histogram {
	h := Histogram{Bounds: sizeBounds, Counts: make([]uint64, len(c.counts))}
	for i := range c.counts {
		h.Counts[i] = c.counts[i].Load()
		h.Count += h.Counts[i]
	}
	h.Sum = float64(c.sum.Load())
	return h
}

// metrics is the atomic state behind Metrics.
type metrics struct {
	queries, candidates, dropped, matches     atomic.Uint64
	bucketsRead, fullBuckets                  atomic.Uint64
	inserts, duplicates, deletes, droppedPost atomic.Uint64
	commits, barriers                         atomic.Uint64
	candidatesPerQuery, bucketSize            counter
}

func (m *metrics) snapshot() Metrics {
	return Metrics{
		Queries: m.queries.Load(), Candidates: m.candidates.Load(), CandidatesDropped: m.dropped.Load(),
		Matches: m.matches.Load(), BucketsRead: m.bucketsRead.Load(), FullBuckets: m.fullBuckets.Load(),
		Inserts: m.inserts.Load(), Duplicates: m.duplicates.Load(), Deletes: m.deletes.Load(),
		DroppedPostings: m.droppedPost.Load(), Commits: m.commits.Load(), SyncBarriers: m.barriers.Load(),
		CandidatesPerQuery: m.candidatesPerQuery.snapshot(), BucketSize: m.bucketSize.snapshot(),
	}
}
