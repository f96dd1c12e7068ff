package jobspec

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/internal/boilerplate"
	"github.com/neardup/neardup/internal/drift"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
)

// Report is what report.json holds: what was read, how it was configured,
// what was found and what it cost. Counts, pairs and clusters are
// deterministic; timings, memory and spill sizes are not. Make one with
// NewReport, fill in what the run found, and encode it with EncodeReport.
type Report struct {
	// Tool names the program that wrote the report: "neardup dedup" or
	// "neardup-beam".
	Tool string `json:"tool"`
	// Version is the neardup release, Version.
	Version string `json:"version"`
	// Inputs are the inputs as the tool was given them (paths, patterns,
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
	// Timings are the stages' wall times in the order they ran (dedup's:
	// sign, candidates, verify, cluster, write; neardup-beam's: its
	// pipelines).
	Timings []Timing `json:"timings"`
	// Spill says what went to disk past the memory budget.
	Spill SpillReport `json:"spill"`
	// Boilerplate is what the first pass found when the job drops
	// boilerplate lines (Options.Boilerplate, BoilerplateLines): the N
	// used and why, the histogram of line counts, the top lines; omitted
	// otherwise.
	Boilerplate *boilerplate.Result `json:"boilerplate,omitempty"`
	// Golden is the run's score against Options.Golden, when set.
	Golden *eval.Score `json:"golden,omitempty"`
	// Reference describes the reference documents (Options.Against), when
	// there are reference sources.
	Reference *ReferenceReport `json:"reference,omitempty"`
	// Drift are the distributions that show a shift in the input from run
	// to run (`neardup report diff`): every document's text length and
	// features (bad records and the exact copies the exact pass leaves
	// unsigned left out, empty ones counted with 0 features),
	// and each document's best verified match's estimated similarity, in
	// the bins the service's histograms use (internal/drift).
	Drift drift.Distributions `json:"drift"`
	// PeakRSSBytes is the process's peak resident memory (0 where unknown).
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// WallSeconds is the run's wall time in seconds, from its start until
	// the report was filled in (after the last stage).
	WallSeconds float64 `json:"wall_seconds"`
	// Warnings are what the run noticed that the caller likely did not
	// mean, one sentence each (a keep field that no record holds); omitted
	// from report.json when there is none.
	Warnings []string `json:"warnings,omitempty"`
}

// Config is the configuration a run used, fingerprints included.
type Config struct {
	// Sketch is "simhash" for a SimHash run; absent for MinHash (so that
	// MinHash reports stay as they were).
	Sketch            string  `json:"sketch,omitempty"`
	Spec              string  `json:"spec"`               // shingle spec, as shingle.Spec.String
	SpecFingerprint   string  `json:"spec_fingerprint"`   // the spec's Fingerprint, 16 hex digits
	Params            string  `json:"params"`             // minhash params, as minhash.Params.String; SimHash's as signature files name them (sigfile.SimHashParams)
	ParamsFingerprint string  `json:"params_fingerprint"` // the params' Fingerprint (seed included), 16 hex digits
	Threshold         float64 `json:"threshold"`          // Options.Threshold, the Jaccard similarity of a near duplicate
	RecallTarget      float64 `json:"recall_target"`      // Options.Recall, recorded even when Options.Bands fixed the banding
	Bands             int     `json:"bands"`              // LSH bands used; 0 for SimHash
	Rows              int     `json:"rows"`               // rows (slots) per band; 0 for SimHash
	Probe             int     `json:"probe"`              // multi-probe rows per band; 0 for none
	KeyBits           int     `json:"key_bits"`           // bucket key width, sketch.Config.Keys: 64 by default, 32 before issue 12 and for SimHash
	// SimHash holds a SimHash run's weighting, distance and tables; absent
	// for MinHash.
	SimHash     *SimHashConfig `json:"simhash,omitempty"`
	BucketCap   int            `json:"bucket_cap"`   // Options.BucketCap, in documents
	Verify      string         `json:"verify"`       // "exact", "estimate" or "none"
	Cluster     string         `json:"cluster"`      // "components" or "star"
	Keep        string         `json:"keep"`         // keep policy: "first", "longest" or "field:NAME"
	Workers     int            `json:"workers"`      // worker goroutines; results do not depend on it
	MemoryBytes int64          `json:"memory_bytes"` // Options.Memory, the memory budget in bytes
	ExactPass   bool           `json:"exact_pass"`   // whether the exact-duplicate pass ran (not Options.SkipExactPass)
}

// SimHashConfig is the SimHash part of a report's Config.
type SimHashConfig struct {
	Weight        string `json:"weight"`                   // "tf" or "tfidf"
	DFFingerprint string `json:"df_fingerprint,omitempty"` // the document-frequency table's fingerprint, 16 hex digits (tfidf)
	DFDocuments   uint64 `json:"df_documents,omitempty"`   // the documents it counted (tfidf)
	Hamming       int    `json:"hamming"`                  // k: fingerprints within k bits are candidates
	Blocks        int    `json:"blocks"`                   // B; 0 if the run stopped before choosing it
	Tables        int    `json:"tables"`                   // C(B, k): bucket keys a document
}

// Counts are the numbers of things a run saw and made.
type Counts struct {
	// Documents is the number of records read, bad ones included.
	Documents int64 `json:"documents"`
	// Empty is the number with no features (always kept, never paired).
	Empty int64 `json:"empty"`
	// Bad is the number skipped as bad (--skip-bad), not written.
	Bad int64 `json:"bad"`
	// Skipped is the number of WARC and WET records read and left out as
	// not documents (warcinfo, requests, metadata, responses that are not
	// HTML, …; corpus.Stats.Skipped); they are not in Documents.
	Skipped int64 `json:"skipped"`
	// ExactDuplicates is the number of documents whose normalised text an
	// earlier document already had: the exact-duplicate pass put them in
	// that document's cluster without signing them (0 when it did not run).
	ExactDuplicates int64 `json:"exact_duplicates"`
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
	// Stored is the signature file the inputs' signatures were read from
	// instead of being computed (Options.Signatures), when set; Features
	// and EmptyBinRate are then 0, nothing having been hashed.
	Stored string `json:"stored,omitempty"`
}

// NewSignatureReport returns the report of the signing metrics m (summed
// over every Sketcher of the run).
func NewSignatureReport(m minhash.Metrics) SignatureReport {
	return SignatureReport{Features: m.Features, EmptyBinRate: m.EmptyBinRate()}
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
	// descending, then key; never null in report.json.
	Largest []LargeBucket `json:"largest"`
	// Top lists the largest shared buckets whether capped or not (at most
	// 10), in the same order; never null in report.json.
	Top []LargeBucket `json:"top"`
}

// SetCounts sets b's counts from the candidate metrics m (summed over every
// grouper of the run); Largest and Top are left to the caller, which names
// their first members.
func (b *BucketReport) SetCounts(m lsh.CandidateMetrics) {
	b.Entries, b.Buckets, b.SharedBuckets, b.PairsEmitted = m.Entries, m.Buckets, m.SharedBuckets, m.Pairs
	b.CappedBuckets, b.CappedMembers = m.CappedBuckets, m.CappedMembers
}

// LargeBucket is one LSH bucket: its size in documents, the id of its first
// (lowest-index) member, to which a capped bucket's other members were
// linked, and its key.
type LargeBucket struct {
	Size  int    `json:"size"`  // distinct documents in the bucket
	First string `json:"first"` // id of the lowest-index member
	Key   string `json:"key"`   // bucket key, as sketch.FormatBucketKey renders it: 16 hex digits
}

// NewLargeBucket returns the report's entry for a bucket of size documents
// keyed bucket (a bucket key, sketch.EntryBucket of an lsh.Bucket.Key) whose first
// member's id is first.
func NewLargeBucket(size int, first []byte, bucket uint64) LargeBucket {
	return LargeBucket{Size: size, First: string(first), Key: sketch.FormatBucketKey(bucket)}
}

// HistogramBins is the number of bins of Report.PairSim, each 1/HistogramBins
// wide.
const HistogramBins = 20

// HistogramBin returns the bin of Report.PairSim that counts similarity x:
// ⌊x·HistogramBins⌋, clamped to 0 … HistogramBins−1 (so 1.0 falls in the last).
func HistogramBin(x float64) int {
	return min(HistogramBins-1, max(0, int(math.Floor(x*HistogramBins))))
}

// Histogram counts pair similarities in 20 bins of width 0.05 (the last bin
// includes 1.0).
type Histogram struct {
	// Lower is each bin's lower bound: 0, 0.05, …, 0.95.
	Lower []float64 `json:"lower"`
	// Estimate counts the verified pairs by estimated similarity.
	Estimate []int64 `json:"estimate"`
	// Exact counts them by exact similarity; nil and omitted unless
	// verification was exact. Pairs with a reference document known only
	// by its signature, verified by the estimate, are not in it.
	Exact []int64 `json:"exact,omitempty"`
}

// NewHistogram returns an empty pair-similarity histogram as Report.PairSim
// holds it, with an Exact column when exact is true.
func NewHistogram(exact bool) Histogram {
	h := Histogram{Lower: make([]float64, HistogramBins), Estimate: make([]int64, HistogramBins)}
	if exact {
		h.Exact = make([]int64, HistogramBins)
	}
	for i := range h.Lower {
		h.Lower[i] = float64(i) / HistogramBins
	}
	return h
}

// Add counts one verified pair; its exact similarity is ignored when h has
// no Exact column or it was not computed (v.Exact < 0).
func (h *Histogram) Add(v Verdict) {
	h.Estimate[HistogramBin(v.Est)]++
	if h.Exact != nil && v.Exact >= 0 {
		h.Exact[HistogramBin(v.Exact)]++
	}
}

// AddBestMatches counts, in rep.Drift.BestSimilarity, the best estimated
// similarity of each document of the verified pairs: pairs gives each pair's
// two documents (any comparable key) and verdict, in any order.
func AddBestMatches[K comparable](rep *Report, n int, pair func(i int) (a, b K, v Verdict)) {
	AddInputBestMatches(rep, n, pair, nil)
}

// AddInputBestMatches is AddBestMatches counting only the documents input
// reports true for (the inputs, not the reference documents of
// Options.Against); nil counts all.
func AddInputBestMatches[K comparable](rep *Report, n int, pair func(i int) (a, b K, v Verdict), input func(K) bool) {
	best := make(map[K]float64, n)
	for i := range n {
		a, b, v := pair(i)
		for _, d := range [2]K{a, b} {
			if input != nil && !input(d) {
				continue
			}
			if s, ok := best[d]; !ok || v.Est > s {
				best[d] = v.Est
			}
		}
	}
	for _, s := range best {
		rep.Drift.BestSimilarity.Add(s)
	}
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
	EntryRuns  int   `json:"entry_runs"`      // band-key entries written to disk: key ranges spilled (64-bit keys), or sorted runs (32-bit keys)
	EntryBytes int64 `json:"entry_bytes"`     // bytes of those ranges or runs
	PairRuns   int   `json:"pair_runs"`       // sorted runs of candidate pairs written to disk
	PairBytes  int64 `json:"pair_bytes"`      // bytes of those runs
	TextBytes  int64 `json:"text_bytes"`      // bytes of texts spilled (kept only for exact verification)
	SigBytes   int64 `json:"signature_bytes"` // bytes of signatures spilled
	EdgeBytes  int64 `json:"edge_bytes"`      // bytes of verified pairs spilled (their sorts' runs and sorted file)
}

// NewReport returns the report of a run of tool over inputs, of job j made
// from o (after EnsureDefaults: the workers and memory budget are reported
// from it): the tool, version, inputs, configuration, expected recall, an
// empty pair histogram and empty (not nil) bucket lists filled in,
// everything else zero. The report keeps inputs.
func NewReport(tool string, inputs []string, o *Options, j *Job) *Report {
	rep := &Report{
		Tool:    tool,
		Version: Version,
		Inputs:  inputs,
		Config: Config{
			Threshold: j.Threshold, RecallTarget: j.Recall, BucketCap: j.BucketCap,
			Verify: j.Verify.String(), Cluster: j.Cluster.String(), Keep: j.Keep.String(),
			Workers: o.Workers, MemoryBytes: o.Memory, ExactPass: !o.SkipExactPass,
		},
		PairSim: NewHistogram(j.Verify == VerifyExact),
		Drift:   drift.NewDistributions(),
		Buckets: BucketReport{Largest: []LargeBucket{}, Top: []LargeBucket{}},
	}
	rep.SetSketch(j)
	return rep
}

// SetSketch fills in the sketch's part of the report from j: spec, params,
// bands or SimHash's settings, and the expected recall at the threshold
// (MinHash: the S-curve of the bands; SimHash: the unit-weight model,
// sketch.Config.CandidateProbability). A driver calls it again once it has
// chosen what waited for the corpus (SimHash's document frequencies and
// blocks).
func (rep *Report) SetSketch(j *Job) {
	s := &j.Sketch
	c := &rep.Config
	params, fp := s.ParamsString()
	c.Spec, c.SpecFingerprint = s.Spec.String(), fmt.Sprintf("%016x", s.Spec.Fingerprint())
	c.Params, c.ParamsFingerprint = params, fmt.Sprintf("%016x", fp)
	c.Bands, c.Rows, c.Probe, c.KeyBits = s.Bands.Bands, s.Bands.Rows, s.Bands.Probe, s.Keys()
	c.Sketch, c.SimHash = "", nil
	if s.Kind == sketch.SimHash {
		c.Sketch = s.Kind.String()
		sh := &SimHashConfig{Weight: s.SimHash.Params.Weighting.String(), Hamming: s.SimHash.K, Blocks: s.SimHash.Blocks, Tables: s.Tables()}
		if s.SimHash.IDF != nil {
			sh.DFFingerprint = fmt.Sprintf("%016x", s.SimHash.IDF.Fingerprint())
			sh.DFDocuments = s.SimHash.IDF.Docs()
		}
		c.SimHash = sh
	}
	rep.ExpectedRecall = s.CandidateProbability(j.Threshold)
}

// EncodeReport returns report.json's bytes for rep: indented JSON and a
// final newline.
func EncodeReport(rep *Report) ([]byte, error) {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("jobspec: report: %w", err)
	}
	return append(data, '\n'), nil
}

// TopBuckets keeps the lsh.DefaultLargest largest shared buckets of sorted
// band-key entries, capped or not, for BucketReport.Top (lsh.Grouper lists
// only those over its cap). Feed it the entries in order, in chunks of any
// size (the chunks an lsh.Grouper is fed); an entry equal to its predecessor
// is not counted again, as there. The buckets' First is the entry's document
// field. The zero value is ready; not safe for concurrent use.
type TopBuckets struct {
	started bool
	last    uint64
	cur     lsh.Bucket
	top     []lsh.Bucket // by size descending, then key ascending
}

// Add adds the next sorted entries.
func (t *TopBuckets) Add(entries []uint64) {
	const keyMask = ^uint64(1<<sketch.EntryDocBits - 1)
	for _, e := range entries {
		switch {
		case t.started && e == t.last:
		case t.started && e&keyMask == t.cur.Key:
			t.cur.Size++
		default:
			if t.cur.Size > 1 { // most buckets hold one document
				t.close()
			}
			t.cur, t.started = lsh.Bucket{Key: e & keyMask, Size: 1, First: sketch.EntryDoc(e)}, true
		}
		t.last = e
	}
}

// Close closes the open bucket: the next entry opens a new one, whatever
// its key (a driver whose keys are wider than an entry's says so between
// two keys equal in the entry's bits).
func (t *TopBuckets) Close() {
	t.close()
	t.started = false
}

// Merge adds to t the buckets o counted, as if o's entries had been added
// to t after t's: o's keys must all sort after t's, in another bucket (a
// driver reading key ranges side by side counts each with its own
// TopBuckets and merges them in key order). Both are closed first.
func (t *TopBuckets) Merge(o *TopBuckets) {
	t.close()
	o.close()
	t.started = false
	// Keys of t and o differ, so a stable sort keeps each one's order of
	// equal buckets.
	t.top = append(t.top, o.top...)
	slices.SortStableFunc(t.top, CompareBuckets)
	t.top = t.top[:min(len(t.top), lsh.DefaultLargest)]
}

// Buckets closes the last bucket and returns the largest shared buckets, by
// size descending, then key ascending (lsh.Bucket.Key is the entry key: the
// bucket key in place, sketch.EntryBucket gives it). The slice is t's.
func (t *TopBuckets) Buckets() []lsh.Bucket {
	t.close()
	return t.top
}

// close records the open bucket if it is shared and among the largest.
func (t *TopBuckets) close() {
	n := lsh.DefaultLargest
	b := t.cur
	t.cur.Size = 0
	if b.Size < 2 || len(t.top) == n && b.Size <= t.top[n-1].Size {
		return // keys ascend, so an equal size loses the tie
	}
	i, _ := slices.BinarySearchFunc(t.top, b, CompareBuckets)
	t.top = slices.Insert(t.top, i, b)[:min(len(t.top)+1, n)]
}

// CompareBuckets orders buckets as the report lists them: by size
// descending, then key ascending. It returns -1, 0 or +1.
func CompareBuckets(x, y lsh.Bucket) int {
	if x.Size != y.Size {
		return cmp.Compare(y.Size, x.Size)
	}
	return cmp.Compare(x.Key, y.Key)
}
