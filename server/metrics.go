package server

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/neardup/neardup/index"
)

// Routes, the only values of the "route" label.
const (
	routeCheck   = "check"
	routeInsert  = "insert"
	routeBatch   = "batch"
	routeGet     = "get"
	routeDelete  = "delete"
	routeHealth  = "health"
	routeMetrics = "metrics"
	routeOpenAPI = "openapi"
	routeOther   = "other"
)

// metrics are the server's Prometheus collectors.
type metrics struct {
	requests  *prometheus.CounterVec   // by route
	failed    *prometheus.CounterVec   // by route and code
	latency   *prometheus.HistogramVec // by route
	inFlight  prometheus.Gauge
	documents *prometheus.CounterVec // checked documents by status
	docNew    prometheus.Counter
	docDup    prometheus.Counter
	signDur   prometheus.Histogram
	signBytes prometheus.Counter
	bins      prometheus.Counter
	emptyBins prometheus.Counter
	retries   prometheus.Counter
	drift     *driftMetrics // drift.go

	// The periodic repack's (see repack.go), registered only when it runs.
	repacks        prometheus.Counter
	repacksFailed  prometheus.Counter
	repackPostings prometheus.Counter
	repackGroups   prometheus.Counter
	repackDur      prometheus.Histogram
}

// newMetrics registers the server's collectors and the index's on reg, and
// the periodic repack's if repack is set (they are made either way).
// Names follow neardup_<subsystem>_<noun>_<unit>; labels are fixed small
// sets (route, code, status), never ids.
func newMetrics(reg *prometheus.Registry, idx index.Index, repack bool) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "neardup_http_requests_total", Help: "HTTP requests received, by route.",
		}, []string{"route"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "neardup_http_requests_failed_total", Help: "HTTP requests answered with an error, by route and error code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "neardup_http_request_duration_seconds", Help: "Time from request to response, by route.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
		}, []string{"route"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "neardup_http_requests_in_flight", Help: "Requests being served.",
		}),
		documents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "neardup_documents_checked_total", Help: "Documents checked, by outcome (new, duplicate).",
		}, []string{"status"}),
		signDur: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "neardup_sign_duration_seconds", Help: "Time to shingle and sign one document.",
			Buckets: []float64{.000005, .00001, .000025, .00005, .0001, .00025, .0005, .001, .0025, .01, .1},
		}),
		signBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "neardup_sign_text_bytes_total", Help: "Bytes of text signed.",
		}),
		bins: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "neardup_sign_bins_total", Help: "One-permutation bins filled (k per signature).",
		}),
		emptyBins: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "neardup_sign_empty_bins_total", Help: "One-permutation bins that were empty and densified; the empty-bin rate is this over neardup_sign_bins_total.",
		}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "neardup_documents_retried_total", Help: "Check-and-inserts of a document already stored under the same id with the same signature and metadata (a retried request), answered \"new\" as the first was.",
		}),
		repacks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "neardup_index_repacks_total", Help: "Periodic repacks run (--repack-interval), failed or interrupted by shutdown included.",
		}),
		repacksFailed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "neardup_index_repacks_failed_total", Help: "Periodic repacks that failed (not counting those interrupted by shutdown).",
		}),
		repackPostings: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "neardup_index_repack_postings_total", Help: "Postings that periodic repacks moved into packed values.",
		}),
		repackGroups: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "neardup_index_repack_groups_total", Help: "Packed values that periodic repacks wrote (new or rewritten).",
		}),
		repackDur: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "neardup_index_repack_duration_seconds", Help: "Wall time of each periodic repack, its final compaction included.",
			Buckets: []float64{.01, .1, 1, 10, 60, 300, 900, 1800, 3600, 7200},
		}),
	}
	m.docNew, m.docDup = m.documents.WithLabelValues(StatusNew), m.documents.WithLabelValues(StatusDuplicate)
	reg.MustRegister(m.requests, m.failed, m.latency, m.inFlight, m.documents, m.signDur, m.signBytes, m.bins, m.emptyBins, m.retries)
	reg.MustRegister(&indexCollector{idx: idx})
	m.drift = newDriftMetrics(reg)
	if repack {
		reg.MustRegister(m.repacks, m.repacksFailed, m.repackPostings, m.repackGroups, m.repackDur)
	}
	return m
}

// countDoc counts a checked document by its status, and observes its best
// match (dups, best first) in the drift histogram ("error" is not counted
// here: failures are in neardup_http_requests_failed_total).
func (m *metrics) countDoc(status string, dups []Duplicate) {
	switch status {
	case StatusNew:
		m.docNew.Inc()
	case StatusDuplicate:
		m.docDup.Inc()
	default:
		return
	}
	m.drift.checked(dups)
}

// indexCollector exports index.Metrics and index.Stats at scrape time.
// Stats are cached for a second: for Redis they are network round trips.
type indexCollector struct {
	idx index.Index

	mu      sync.Mutex
	stats   index.Stats
	statsAt time.Time
}

var (
	descQueries       = prometheus.NewDesc("neardup_index_queries_total", "Bucket lookups of a document (checks, queries, check-and-inserts).", nil, nil)
	descCandidates    = prometheus.NewDesc("neardup_index_candidates_total", "Candidates met in buckets and verified.", nil, nil)
	descDropped       = prometheus.NewDesc("neardup_index_candidates_dropped_total", "Candidates dropped by verification (below the threshold); the verify drop rate is this over neardup_index_candidates_total.", nil, nil)
	descMatches       = prometheus.NewDesc("neardup_index_matches_total", "Matches returned.", nil, nil)
	descPerQuery      = prometheus.NewDesc("neardup_index_query_candidates", "Candidates per document checked.", nil, nil)
	descBucketSize    = prometheus.NewDesc("neardup_index_bucket_size_documents", "Size of each bucket read (capped at the bucket cap); watch its p99.", nil, nil)
	descBucketsRead   = prometheus.NewDesc("neardup_index_buckets_read_total", "Buckets read.", nil, nil)
	descFullBuckets   = prometheus.NewDesc("neardup_index_buckets_full_total", "Buckets read that were at the bucket cap (hot buckets).", nil, nil)
	descPostDropped   = prometheus.NewDesc("neardup_index_postings_dropped_total", "Postings not written because their bucket was full.", nil, nil)
	descInserts       = prometheus.NewDesc("neardup_index_inserts_total", "Documents stored.", nil, nil)
	descDuplicates    = prometheus.NewDesc("neardup_index_duplicates_total", "Check-and-inserts answered duplicate.", nil, nil)
	descDeletes       = prometheus.NewDesc("neardup_index_deletes_total", "Documents deleted.", nil, nil)
	descCommits       = prometheus.NewDesc("neardup_index_commits_total", "Write batches made durable.", nil, nil)
	descBarriers      = prometheus.NewDesc("neardup_index_sync_barriers_total", "WAL syncs that answers waited for because they named a document not yet known durable.", nil, nil)
	descDocuments     = prometheus.NewDesc("neardup_index_documents", "Documents in the index.", nil, nil)
	descSize          = prometheus.NewDesc("neardup_index_size_bytes", "Bytes the index takes (on disk for Pebble; the servers' used memory for Redis).", nil, nil)
	descStatsFailures = prometheus.NewDesc("neardup_index_stats_failed", "1 if the last read of the index size failed.", nil, nil)
	descCorruptions   = prometheus.NewDesc("neardup_index_corruptions_total", "Damaged blocks met on disk (Pebble); each failed the read that met it, and /readyz answers 503 from the first.", nil, nil)
	descFaults        = prometheus.NewDesc("neardup_index_storage_faults_total", "Disk errors (full, read-only, I/O) and fatal storage errors met (Pebble); from the first, writes are refused and /readyz answers 503.", nil, nil)
)

// Describe sends the descriptors of every index metric the collector
// reports.
func (c *indexCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descQueries, descCandidates, descDropped, descMatches, descPerQuery, descBucketSize,
		descBucketsRead, descFullBuckets, descPostDropped, descInserts, descDuplicates, descDeletes, descCommits,
		descBarriers, descDocuments, descSize, descStatsFailures, descCorruptions, descFaults} {
		ch <- d
	}
}

func histogram(d *prometheus.Desc, h index.Histogram) prometheus.Metric {
	buckets := make(map[float64]uint64, len(h.Bounds))
	var cum uint64
	for i, b := range h.Bounds {
		cum += h.Counts[i]
		buckets[b] = cum
	}
	return prometheus.MustNewConstHistogram(d, h.Count, h.Sum, buckets)
}

// Collect sends the index's counters and histograms, and its document count
// and size, re-read at most once a second; when a re-read fails it sends the
// last good one and sets neardup_index_stats_failed.
func (c *indexCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.idx.Metrics()
	counter := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v))
	}
	counter(descQueries, m.Queries)
	counter(descCandidates, m.Candidates)
	counter(descDropped, m.CandidatesDropped)
	counter(descMatches, m.Matches)
	counter(descBucketsRead, m.BucketsRead)
	counter(descFullBuckets, m.FullBuckets)
	counter(descPostDropped, m.DroppedPostings)
	counter(descInserts, m.Inserts)
	counter(descDuplicates, m.Duplicates)
	counter(descDeletes, m.Deletes)
	counter(descCommits, m.Commits)
	counter(descBarriers, m.SyncBarriers)
	counter(descCorruptions, m.Corruptions)
	counter(descFaults, m.StorageFaults)
	ch <- histogram(descPerQuery, m.CandidatesPerQuery)
	ch <- histogram(descBucketSize, m.BucketSize)

	c.mu.Lock()
	failed := 0.0
	if time.Since(c.statsAt) > time.Second {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		st, err := c.idx.Stats(ctx)
		cancel()
		if err == nil {
			c.stats, c.statsAt = st, time.Now()
		} else {
			failed = 1
		}
	}
	st := c.stats
	c.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(descDocuments, prometheus.GaugeValue, float64(st.Documents))
	ch <- prometheus.MustNewConstMetric(descSize, prometheus.GaugeValue, float64(st.Bytes))
	ch <- prometheus.MustNewConstMetric(descStatsFailures, prometheus.GaugeValue, failed)
}
