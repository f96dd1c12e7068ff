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
	// Tool names the program that wrote the report: "neardup dedup" for
	// Run, else the tool given to NewReport.
	Tool string `json:"tool"`
	// Version is the neardup release, Version.
	Version string `json:"version"`
	// Inputs are the inputs as the tool was given them (for Run, paths,
	// "-" for standard input).
	Inputs []string `json:"inputs"`

	// Config is the configuration the run used.
	Config Config `json:"config"`
	// ExpectedRecall is the probability that a pair exactly at the threshold
	// becomes a candidate under the bands: the S-curve at the threshold.
	ExpectedRecall float64 `json:"expected_recall"`

	// Counts are the numbers of things the run saw and made.
	Counts Counts `json:"counts"`
	// Signatures describes the signing stage.
	Signatures SignatureReport `json:"signatures"`
	// Buckets describes the LSH buckets.
	Buckets BucketReport `json:"buckets"`
	// PairSim is the similarity histogram of the verified pairs.
	PairSim Histogram `json:"pair_similarity"`
	// Sizes is the cluster-size histogram, by size ascending; nil (JSON
	// null) when there are no clusters.
	Sizes []ClusterSizeBin `json:"cluster_sizes"`
	// Timings are the stages' wall times in the order they ran (Run's:
	// sign, candidates, verify, cluster, write).
	Timings []Timing `json:"timings"`
	// Spill says what went to disk past the memory budget.
	Spill SpillReport `json:"spill"`
	// Golden is the run's score against Options.Golden, when set.
	Golden *eval.Score `json:"golden,omitempty"`
	// PeakRSSBytes is the process's peak resident memory (0 where unknown).
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// WallSeconds is the run's wall time in seconds, from its start until
	// the report was filled in (after the last stage).
	WallSeconds float64 `json:"wall_seconds"`
}

// Config is the configuration a run used, fingerprints included.
type Config struct {
	Spec              string  `json:"spec"`               // shingle spec, as shingle.Spec.String
	SpecFingerprint   string  `json:"spec_fingerprint"`   // the spec's Fingerprint, 16 hex digits
	Params            string  `json:"params"`             // minhash params, as minhash.Params.String
	ParamsFingerprint string  `json:"params_fingerprint"` // the params' Fingerprint (seed included), 16 hex digits
	Threshold         float64 `json:"threshold"`          // Options.Threshold, the Jaccard similarity of a near duplicate
	RecallTarget      float64 `json:"recall_target"`      // Options.Recall, recorded even when Options.Bands fixed the banding
	Bands             int     `json:"bands"`              // LSH bands used
	Rows              int     `json:"rows"`               // rows (slots) per band
	Probe             int     `json:"probe"`              // multi-probe rows per band; 0 for none
	BucketCap         int     `json:"bucket_cap"`         // Options.BucketCap, in documents
	Verify            string  `json:"verify"`             // "exact", "estimate" or "none"
	Cluster           string  `json:"cluster"`            // "components" or "star"
	Keep              string  `json:"keep"`               // keep policy: "first", "longest" or "field:NAME"
	Workers           int     `json:"workers"`            // worker goroutines; results do not depend on it
	MemoryBytes       int64   `json:"memory_bytes"`       // Options.Memory, the memory budget in bytes
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
	// Features is the number of features hashed into signatures, repeats
	// included, over every document signed.
	Features int64 `json:"features"`
	// EmptyBinRate is the fraction of one-permutation bins that were empty
	// before densification; 0 under k-hash.
	EmptyBinRate float64 `json:"empty_bin_rate"`
}

// BucketReport describes the LSH buckets.
type BucketReport struct {
	Entries       int64 `json:"entries"`        // band-key entries grouped, duplicates included
	Buckets       int64 `json:"buckets"`        // distinct bucket keys
	SharedBuckets int64 `json:"shared_buckets"` // buckets of two or more documents
	PairsEmitted  int64 `json:"pairs_emitted"`  // candidate pairs emitted, before deduplication (Counts.Candidates after)
	CappedBuckets int64 `json:"capped_buckets"` // buckets over Config.BucketCap, linked to their first member instead of paired
	CappedMembers int64 `json:"capped_members"` // documents in capped buckets, summed over those buckets
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
	Size  int    `json:"size"`  // distinct documents in the bucket
	First string `json:"first"` // id of the lowest-index member
	Key   string `json:"key"`   // bucket key (band key, low EntryDocBits bits cleared), 16 hex digits
}

// Histogram counts pair similarities in 20 bins of width 0.05 (the last bin
// includes 1.0).
type Histogram struct {
	// Lower is each bin's lower bound: 0, 0.05, …, 0.95.
	Lower []float64 `json:"lower"`
	// Estimate counts the verified pairs by estimated similarity.
	Estimate []int64 `json:"estimate"`
	// Exact counts them by exact similarity; nil and omitted unless
	// verification was exact.
	Exact []int64 `json:"exact,omitempty"`
}

// ClusterSizeBin is one bar of the cluster-size histogram.
type ClusterSizeBin struct {
	Size  int `json:"size"`  // documents in a cluster
	Count int `json:"count"` // clusters of that size
}

// Timing is one stage's wall time.
type Timing struct {
	Stage   string  `json:"stage"`   // stage name, such as "sign" or "candidates"
	Seconds float64 `json:"seconds"` // wall time, in seconds
}

// SpillReport says what went to disk past the memory budget.
type SpillReport struct {
	EntryRuns  int   `json:"entry_runs"`      // sorted runs of band-key entries written to disk
	EntryBytes int64 `json:"entry_bytes"`     // bytes of those runs
	PairRuns   int   `json:"pair_runs"`       // sorted runs of candidate pairs written to disk
	PairBytes  int64 `json:"pair_bytes"`      // bytes of those runs
	TextBytes  int64 `json:"text_bytes"`      // bytes of texts spilled (kept only for exact verification)
	SigBytes   int64 `json:"signature_bytes"` // bytes of signatures spilled
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
