package dedup

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/lsh"
)

// Report is what report.json holds: what was read, how it was configured,
// what was found and what it cost. Counts, pairs and clusters are
// deterministic; timings, memory and spill sizes are not.
type Report struct {
	Tool    string   `json:"tool"`
	Version string   `json:"version"`
	Inputs  []string `json:"inputs"`

	Config Config `json:"config"`
	// ExpectedRecall is the probability that a pair exactly at the threshold
	// becomes a candidate under the bands: the S-curve at the threshold.
	ExpectedRecall float64 `json:"expected_recall"`

	Counts     Counts           `json:"counts"`
	Signatures SignatureReport  `json:"signatures"`
	Buckets    BucketReport     `json:"buckets"`
	PairSim    Histogram        `json:"pair_similarity"`
	Sizes      []ClusterSizeBin `json:"cluster_sizes"`
	Timings    []Timing         `json:"timings"`
	Spill      SpillReport      `json:"spill"`
	// Golden is the run's score against Options.Golden, when set.
	Golden *eval.Score `json:"golden,omitempty"`
	// PeakRSSBytes is the process's peak resident memory (0 where unknown).
	PeakRSSBytes int64   `json:"peak_rss_bytes"`
	WallSeconds  float64 `json:"wall_seconds"`
}

// Config is the configuration a run used, fingerprints included.
type Config struct {
	Spec              string  `json:"spec"`
	SpecFingerprint   string  `json:"spec_fingerprint"`
	Params            string  `json:"params"`
	ParamsFingerprint string  `json:"params_fingerprint"`
	Threshold         float64 `json:"threshold"`
	RecallTarget      float64 `json:"recall_target"`
	Bands             int     `json:"bands"`
	Rows              int     `json:"rows"`
	Probe             int     `json:"probe"`
	BucketCap         int     `json:"bucket_cap"`
	Verify            string  `json:"verify"`
	Cluster           string  `json:"cluster"`
	Keep              string  `json:"keep"`
	Workers           int     `json:"workers"`
	MemoryBytes       int64   `json:"memory_bytes"`
}

// Counts are the numbers of things a run saw and made.
type Counts struct {
	// Documents is the number of records read, bad ones included.
	Documents int64 `json:"documents"`
	// Empty is the number with no features (always kept, never paired).
	Empty int64 `json:"empty"`
	// Bad is the number skipped as bad (--skip-bad), not written.
	Bad int64 `json:"bad"`
	// InputBytes is the number of record bytes read (decompressed).
	InputBytes int64 `json:"input_bytes"`
	// Candidates is the number of distinct candidate pairs from LSH.
	Candidates int64 `json:"candidates"`
	// VerifiedDocs is the number of documents whose feature sets were
	// computed for exact verification.
	VerifiedDocs int64 `json:"verified_docs"`
	// VerifiedPairs is the number of pairs that passed verification.
	VerifiedPairs int64 `json:"verified_pairs"`
	// Clusters is the number of clusters of two or more documents.
	Clusters int64 `json:"clusters"`
	// Removed is the number of documents removed as near duplicates.
	Removed int64 `json:"removed"`
	// Kept is the number of records written to kept.jsonl.
	Kept int64 `json:"kept"`
}

// SignatureReport describes the signing stage.
type SignatureReport struct {
	Features     int64   `json:"features"`
	EmptyBinRate float64 `json:"empty_bin_rate"`
}

// BucketReport describes the LSH buckets.
type BucketReport struct {
	Entries       int64 `json:"entries"`
	Buckets       int64 `json:"buckets"`
	SharedBuckets int64 `json:"shared_buckets"`
	PairsEmitted  int64 `json:"pairs_emitted"`
	CappedBuckets int64 `json:"capped_buckets"`
	CappedMembers int64 `json:"capped_members"`
	// Largest lists the buckets over the cap (at most 10), by size
	// descending, then key.
	Largest []LargeBucket `json:"largest"`
	// Top lists the largest shared buckets whether capped or not (at most
	// 10), in the same order.
	Top []LargeBucket `json:"top"`
}

// LargeBucket is one LSH bucket: its size in documents, the id of its first
// (lowest-index) member, to which a capped bucket's other members were
// linked, and its key.
type LargeBucket struct {
	Size  int    `json:"size"`
	First string `json:"first"`
	Key   string `json:"key"`
}

// Histogram counts pair similarities in 20 bins of width 0.05 (the last bin
// includes 1.0).
type Histogram struct {
	Lower    []float64 `json:"lower"`
	Estimate []int64   `json:"estimate"`
	Exact    []int64   `json:"exact,omitempty"`
}

// ClusterSizeBin is one bar of the cluster-size histogram.
type ClusterSizeBin struct {
	Size  int `json:"size"`
	Count int `json:"count"`
}

// Timing is one stage's wall time.
type Timing struct {
	Stage   string  `json:"stage"`
	Seconds float64 `json:"seconds"`
}

// SpillReport says what went to disk past the memory budget.
type SpillReport struct {
	EntryRuns  int   `json:"entry_runs"`
	EntryBytes int64 `json:"entry_bytes"`
	PairRuns   int   `json:"pair_runs"`
	PairBytes  int64 `json:"pair_bytes"`
	TextBytes  int64 `json:"text_bytes"`
	SigBytes   int64 `json:"signature_bytes"`
}

// Version is the neardup release this package belongs to.
const Version = "0.1.0"

func newReport(r *run) *Report {
	o := r.opts
	return &Report{
		Tool:    "neardup dedup",
		Version: Version,
		Inputs:  r.inputs,
		Config: Config{
			Spec: o.Spec.String(), SpecFingerprint: fmt.Sprintf("%016x", o.Spec.Fingerprint()),
			Params: o.Params.String(), ParamsFingerprint: fmt.Sprintf("%016x", o.Params.Fingerprint()),
			Threshold: o.Threshold, RecallTarget: o.Recall,
			Bands: r.bands.Bands, Rows: r.bands.Rows, Probe: r.bands.Probe, BucketCap: o.BucketCap,
			Verify: o.Verify.String(), Cluster: o.Cluster.String(), Keep: o.Keep.String(),
			Workers: o.Workers, MemoryBytes: o.Memory,
		},
		ExpectedRecall: r.bands.Probability(o.Threshold),
	}
}

// finish fills in the counts and histograms once every stage has run.
func (rep *Report) finish(r *run) {
	c := &rep.Counts
	c.Documents = int64(r.docs.len())
	for _, st := range r.docs.status {
		switch st {
		case docEmpty:
			c.Empty++
		case docBad:
			c.Bad++
		}
	}
	c.InputBytes = r.readStats.Bytes
	c.Candidates = r.buckets.UniquePairs
	c.VerifiedPairs = int64(len(r.edges))
	m := r.result.Metrics
	c.Clusters, c.Removed = int64(m.Clusters), int64(m.Removed)
	for _, s := range m.Sizes {
		rep.Sizes = append(rep.Sizes, ClusterSizeBin{s.Size, s.Count})
	}
	rep.Signatures = SignatureReport{Features: r.hashMetrics.Features, EmptyBinRate: r.hashMetrics.EmptyBinRate()}
	b := r.buckets
	rep.Buckets = BucketReport{Entries: b.Entries, Buckets: b.Buckets, SharedBuckets: b.SharedBuckets, PairsEmitted: b.Pairs,
		CappedBuckets: b.CappedBuckets, CappedMembers: b.CappedMembers, Largest: []LargeBucket{}, Top: []LargeBucket{}}
	for _, lb := range b.Largest {
		rep.Buckets.Largest = append(rep.Buckets.Largest, r.largeBucket(lb))
	}
	for _, lb := range r.top.top {
		rep.Buckets.Top = append(rep.Buckets.Top, r.largeBucket(lb))
	}
	const bins = 20
	h := Histogram{Lower: make([]float64, bins), Estimate: make([]int64, bins)}
	exact := r.opts.Verify == VerifyExact
	if exact {
		h.Exact = make([]int64, bins)
	}
	for i := range h.Lower {
		h.Lower[i] = float64(i) / bins
	}
	bin := func(x float64) int { return min(bins-1, max(0, int(math.Floor(x*bins)))) }
	for _, e := range r.edges {
		h.Estimate[bin(e.est)]++
		if exact {
			h.Exact[bin(e.exact)]++
		}
	}
	rep.PairSim = h
	rep.Spill.SigBytes = r.sigs.SpilledBytes()
	rep.PeakRSSBytes = peakRSS()
	rep.WallSeconds = time.Since(r.t0).Seconds()
}

func (rep *Report) write(path string) error {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

func (r *run) largeBucket(b lsh.Bucket) LargeBucket {
	return LargeBucket{Size: b.Size, First: string(r.docs.id(b.First)), Key: fmt.Sprintf("%016x", b.Key)}
}

// topBuckets keeps the n largest shared buckets of the sorted band-key
// entries (key<<docBits | doc), capped or not, for BucketReport.Top:
// lsh.Grouper lists only the buckets over its cap. Fed the same chunks as the
// Grouper; an entry equal to its predecessor is ignored, as there. Its zero
// value keeps lsh.DefaultLargest buckets; not safe for concurrent use.
type topBuckets struct {
	started bool
	last    uint64
	cur     lsh.Bucket
	top     []lsh.Bucket // by size descending, then key ascending
}

func (t *topBuckets) add(entries []uint64) {
	const keyMask = ^uint64(1<<docBits - 1)
	for _, e := range entries {
		switch {
		case t.started && e == t.last:
		case t.started && e&keyMask == t.cur.Key:
			t.cur.Size++
		default:
			if t.cur.Size > 1 { // most buckets hold one document
				t.close()
			}
			t.cur, t.started = lsh.Bucket{Key: e & keyMask, Size: 1, First: uint32(e)}, true
		}
		t.last = e
	}
}

// close records the open bucket if it is shared and among the largest.
func (t *topBuckets) close() {
	n := lsh.DefaultLargest
	b := t.cur
	t.cur.Size = 0
	if b.Size < 2 || len(t.top) == n && b.Size <= t.top[n-1].Size {
		return // keys ascend, so an equal size loses the tie
	}
	i, _ := slices.BinarySearchFunc(t.top, b, func(x, y lsh.Bucket) int {
		if x.Size != y.Size {
			return y.Size - x.Size
		}
		return cmp.Compare(x.Key, y.Key)
	})
	t.top = slices.Insert(t.top, i, b)[:min(len(t.top)+1, n)]
}
