package jobspec

import (
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/neardup/neardup/cluster"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
	"github.com/neardup/neardup/simhash"
)

// Errors; check with errors.Is.
var (
	// ErrInvalidOptions reports Options (or flag values) that break a rule;
	// the message names the value and the valid range.
	ErrInvalidOptions = errors.New("jobspec: invalid options")
	// ErrSignatureMismatch reports stored signatures (of reference
	// documents, or of the inputs) made under another shingle spec or other
	// params than the job's (Job.CheckSignatures).
	ErrSignatureMismatch = errors.New("jobspec: signatures made under another spec or params")
	// ErrStoredSignatures reports stored signatures of the inputs
	// (Options.Signatures) that are not those of the inputs: another id at
	// some record, or another number of records.
	ErrStoredSignatures = errors.New("jobspec: stored signatures do not match the inputs")
)

// Verify is how candidate pairs are checked before they count.
type Verify uint8

// Verification modes.
const (
	// VerifyExact computes the exact Jaccard similarity of the two feature
	// sets and keeps pairs at or above the threshold: precision 1.
	VerifyExact Verify = iota
	// VerifyEstimate keeps pairs whose signature estimate reaches the
	// threshold.
	VerifyEstimate
	// VerifyNone keeps every LSH candidate.
	VerifyNone
)

// String returns "exact", "estimate" or "none".
func (v Verify) String() string {
	switch v {
	case VerifyExact:
		return "exact"
	case VerifyEstimate:
		return "estimate"
	case VerifyNone:
		return "none"
	}
	return fmt.Sprintf("verify(%d)", v)
}

// ParseVerify reads "exact", "estimate" or "none".
func ParseVerify(s string) (Verify, error) {
	for _, v := range []Verify{VerifyExact, VerifyEstimate, VerifyNone} {
		if s == v.String() {
			return v, nil
		}
	}
	return 0, fmt.Errorf("%w: verify %q, want exact, estimate or none", ErrInvalidOptions, s)
}

// ClusterMode is how verified pairs become clusters.
type ClusterMode uint8

// Clustering modes.
const (
	// Components takes connected components (union-find): transitive, so a
	// chain of near duplicates joins documents whose ends differ.
	Components ClusterMode = iota
	// Star makes greedy stars around kept documents: every removed document
	// is itself at least the threshold similar to the document kept for it.
	Star
)

// String returns "components" or "star".
func (c ClusterMode) String() string {
	if c == Star {
		return "star"
	}
	return "components"
}

// ParseClusterMode reads "components" or "star".
func ParseClusterMode(s string) (ClusterMode, error) {
	switch s {
	case "components":
		return Components, nil
	case "star":
		return Star, nil
	}
	return 0, fmt.Errorf("%w: cluster %q, want components or star", ErrInvalidOptions, s)
}

// Defaults and limits of Options.
const (
	// DefaultThreshold is the default Options.Threshold.
	DefaultThreshold = 0.8
	// DefaultRecall is the default Options.Recall.
	DefaultRecall = 0.99
	// DefaultMemory is the default Options.Memory: 4 GiB.
	DefaultMemory = 4 << 30
	// MinMemory is the least Options.Memory: 16 MiB. The budget is split
	// into stores that keep at least two chunks each in memory; below it
	// the working buffers, which come on top, dominate anyway.
	MinMemory = 16 << 20
	// MaxWorkers is the most Options.Workers: each worker holds about 2 MiB
	// of batches in flight and three times the largest document in
	// buffers, outside the memory budget, so more workers than this cost
	// gigabytes and gain nothing on any machine neardup runs on.
	MaxWorkers = 1024
)

// Options configure a deduplication job, for every driver: neardup dedup
// (package dedup) runs them on one machine, neardup-beam on Apache Beam. The
// zero value (and nil) means every default: prose shingles, 128-slot
// one-permutation signatures, a 0.8 threshold with bands chosen for 0.99
// recall, exact verification, connected components, keep the first
// document. Options are a plain value; Progress and Corpus.Stdin are the
// caller's and not copied deeply.
type Options struct {
	// Corpus says how to read the inputs (format, id/text/keep fields,
	// skipping bad records). Default: corpus defaults (JSONL by extension,
	// fields "id" and "text").
	Corpus corpus.Options
	// Spec turns texts into features. Default shingle.Prose (word 5-grams).
	Spec shingle.Spec
	// Params define the signatures. Default: K 128, one-permutation, 32-bit
	// slots, seed 0.
	Params minhash.Params
	// Threshold is the Jaccard similarity at or above which two documents
	// are near duplicates. Default 0.8; range (0, 1): at 1 the job asks for
	// identical feature sets, which no LSH banding targets (every banding
	// catches J = 1 with probability 1) and an exact hash finds cheaper; at
	// 0 every pair would be a duplicate.
	Threshold float64
	// Recall is the probability with which a pair exactly at Threshold must
	// become a candidate; the bands are the most precise banding that
	// reaches it (lsh.ForRecall). Default 0.99; range (0, 1). Ignored when
	// Bands is set.
	Recall float64
	// Bands, when set (Bands.Bands > 0), fixes the banding instead.
	// Default: chosen from Threshold, Params.K and Recall (see Banding).
	Bands lsh.Params
	// BucketCap is the largest LSH bucket whose members are all paired;
	// larger (boilerplate) buckets link members to one representative.
	// Default lsh.DefaultCap (1,000 documents); range 2 to lsh.MaxCap.
	BucketCap int
	// Verify is how candidates are checked. Default VerifyExact.
	Verify Verify
	// Cluster is how verified pairs are grouped. Default Components.
	Cluster ClusterMode
	// Keep chooses the document each cluster keeps. Default: the first in
	// input order. A field policy reads Corpus.KeepField, which it sets.
	Keep cluster.Policy
	// Workers is the number of goroutines that parse, shingle, sign and
	// verify. Default runtime.GOMAXPROCS(0) (at most MaxWorkers); range 1 to
	// MaxWorkers. Results do not depend on it.
	Workers int
	// Memory is the budget, in bytes, for the data that grows with the
	// corpus (band-key entries, candidate pairs, stored texts and signatures,
	// the check of repeated ids):
	// past it they spill to sorted or chunked temporary files. Per-document
	// bookkeeping (ids, lengths: about 40 bytes a document) and the working
	// buffers of the workers come on top. Default DefaultMemory (4 GiB); at
	// least MinMemory (16 MiB). neardup dedup also keeps the garbage
	// collector within it (see dedup.Run).
	Memory int64
	// TempDir holds spill files (for neardup-beam: the state between its
	// pipelines). Default os.TempDir().
	TempDir string
	// Progress, when not nil, receives a progress line (for a terminal).
	// Default nil.
	Progress io.Writer
	// Golden, when set, is a truth file (eval.ReadPairFile: from `neardup
	// eval truth`, a pairs.tsv, or id pairs) to score the run against; the
	// score goes into Report.Golden. Default "": no scoring.
	Golden string
	// Against are reference sources (see ReferenceKind; the rules are in
	// the doc of reference.go): documents the inputs are deduplicated
	// against, never removed and never written. Each is a corpus (any
	// input, read with Corpus), a signature file (a file, a directory of
	// shards or a glob) or an index directory; the driver tells which.
	// Default none.
	Against []string
	// Signatures, when set, is a signature file (package sigfile; a file,
	// a directory of shards or a glob) holding the signatures of the
	// inputs' documents, in input order with the same ids (bad records,
	// and under Corpus.SkipBad the later records of a repeated id, left
	// out, as neardup sign leaves them), used instead of signing: the
	// outputs are those of signing again. Default "": sign.
	Signatures string
	// SignaturesOut, when set, is where the driver also writes the inputs'
	// signatures, in input order with their ids, bad records (and the
	// later records of a repeated id) left out (what neardup sign writes),
	// an output like the others: a signature file for neardup dedup, a
	// directory of shards (sigfile.ShardName) for neardup-beam. Default
	// "": none.
	SignaturesOut string
	// OpenIndex opens an index directory given in Against for reading its
	// stored signatures. It is a hook so that a driver links the index's
	// storage (Pebble) only when its program sets it: neardup's commands
	// set it (package index, DB.EachDocument). Default nil: an index
	// directory in Against is refused.
	OpenIndex func(path string, spec shingle.Spec) (StoredSignatures, error)
	// Boilerplate, when not BoilerplateOff, has the job drop boilerplate
	// lines: a first pass over the inputs counts in how many documents each
	// normalised line occurs (internal/boilerplate, within Memory), and the
	// lines in at least N documents (N given, or chosen under
	// BoilerplateAuto) go into the spec's Boilerplate set, its canonical
	// form and fingerprint, before anything is signed. Default
	// BoilerplateOff; otherwise BoilerplateAuto or N ≥ 2.
	Boilerplate BoilerplateMode
	// BoilerplateLines, when set, is a lines file (internal/boilerplate's
	// WriteLines: neardup boilerplate, or the boilerplate.tsv of a dedup
	// run) whose set the job drops instead of counting; it must have been
	// counted under Spec. Default "": none.
	BoilerplateLines string
	// SkipExactPass turns off the exact-duplicate pass: by default a
	// 128-bit hash of each document's normalised text (after boilerplate
	// lines are dropped; shingle.Shingler.TextHash) sends documents whose
	// text another earlier document already has straight to that
	// document's cluster, without a signature, band keys or verification.
	// The outputs are the same either way (see dedup.Run). Default false:
	// the pass runs.
	SkipExactPass bool
	// BadOut, when set (with Corpus.SkipBad), is a file to list the records
	// skipped as bad in, corpus.BadLog's format: those skipped while reading
	// (too large, not parsing) in input order, then those whose id repeats an
	// earlier record's, in input order. It is written as the outputs are,
	// under a temporary name renamed on success. Default "": no list.
	// neardup dedup only.
	BadOut string
	// Sketch selects the sketch: sketch.MinHash (Params, Recall, Bands) or
	// sketch.SimHash (the SimHash field). Default sketch.MinHash.
	Sketch sketch.Kind
	// SimHash configures a SimHash job (Sketch = sketch.SimHash); ignored
	// otherwise. Default: TF weighting, k = sketch.DefaultHamming, blocks
	// by the planner's rule at the corpus size.
	SimHash SimHashOptions
}

// SimHashOptions configure the SimHash sketch of a job. The zero value means
// every default.
type SimHashOptions struct {
	// Weight is how a fingerprint weighs features: sigfile.TF (term
	// frequency) or sigfile.TFIDF (term frequency × inverse document
	// frequency, the document frequencies from DF or else from a first
	// pass over the inputs). Default sigfile.TF, which measured better on
	// near duplicates (BENCHMARKS.md, "SimHash: weighting and k").
	Weight sigfile.Weighting
	// Hamming is k: two fingerprints within k bits are candidates. 0
	// means the default, sketch.DefaultHamming (6); simhash.ExactMatch
	// (−1) asks for k = 0. Range −1, 1 to simhash.MaxMaxDistance (8).
	Hamming int
	// Blocks is B, the blocks of the block-permutation tables (C(B, k)
	// bucket keys a document). 0 means the default: chosen once the number
	// of documents is known, by the planner's rule (simhash.ChooseBlocks).
	// Range k+1 to simhash.MaxBlocks with C(B, k) ≤ simhash.MaxTables.
	Blocks int
	// DF is the document-frequency table of TFIDF weighting; nil means
	// count it from the inputs first. Ignored under TF. Default nil.
	DF *simhash.DFTable
}

// k returns the resolved Hamming distance.
func (s *SimHashOptions) k() int {
	switch s.Hamming {
	case 0:
		return sketch.DefaultHamming
	case simhash.ExactMatch:
		return 0
	}
	return s.Hamming
}

// CheckHamming reports whether k is a valid SimHashOptions.Hamming given on
// a command line, where 0 is k = 0 (not the default): 0 to
// simhash.MaxMaxDistance.
func CheckHamming(k int) error {
	if k < 0 || k > simhash.MaxMaxDistance {
		return fmt.Errorf("%w: Hamming distance %d; want 0 to %d bits (pairs at J 0.8–0.9 are 6–8 bits apart, unrelated texts 32 ± 4)", ErrInvalidOptions, k, simhash.MaxMaxDistance)
	}
	return nil
}

// validate reports whether s (as Options.Validate sees it) is usable.
func (s *SimHashOptions) validate() error {
	if s.Hamming != simhash.ExactMatch && s.Hamming != 0 {
		if err := CheckHamming(s.Hamming); err != nil {
			return err
		}
	}
	if s.Weight != 0 && s.Weight != sigfile.TF && s.Weight != sigfile.TFIDF {
		return fmt.Errorf("%w: SimHash weighting %d; want tf or tfidf", ErrInvalidOptions, s.Weight)
	}
	if s.Blocks != 0 {
		return CheckBlocks(s.Blocks, s.k())
	}
	return nil
}

// CheckBlocks reports whether b is a valid SimHashOptions.Blocks for
// Hamming distance k (0..simhash.MaxMaxDistance): k+1 to
// simhash.MaxBlocks, with C(b, k) ≤ simhash.MaxTables.
func CheckBlocks(b, k int) error {
	mk := k
	if k == 0 {
		mk = simhash.ExactMatch
	}
	if err := (&simhash.Options{MaxDistance: mk, Blocks: b}).Validate(); err != nil {
		return fmt.Errorf("%w: %d blocks for Hamming distance %d; want %d to %d, at most %d tables: %w", ErrInvalidOptions, b, k, k+1, simhash.MaxBlocks, simhash.MaxTables, err)
	}
	return nil
}

// CheckVerify reports whether v can verify the candidates of sketch kind:
// SimHash refuses VerifyEstimate (see Options.Validate).
func CheckVerify(kind sketch.Kind, v Verify) error {
	if kind == sketch.SimHash && v == VerifyEstimate {
		return fmt.Errorf("%w: verify estimate with SimHash: a fingerprint pair's only estimate is a function of its Hamming distance, so thresholding it is the candidate test with another k (and one pair's distance spreads over ±2 bits at J = 0.9); use verify exact, or verify none with the Hamming distance you want", ErrInvalidOptions)
	}
	return nil
}

// EnsureDefaults fills zero fields with defaults and returns o; a nil o yields
// new Options with every default.
func (o *Options) EnsureDefaults() *Options {
	if o == nil {
		o = &Options{}
	}
	if o.Spec.Unit == 0 {
		o.Spec = shingle.Prose
	}
	o.Params.EnsureDefaults()
	if o.Threshold == 0 {
		o.Threshold = DefaultThreshold
	}
	if o.Recall == 0 {
		o.Recall = DefaultRecall
	}
	if o.BucketCap == 0 {
		o.BucketCap = lsh.DefaultCap
	}
	if o.Workers <= 0 {
		o.Workers = min(runtime.GOMAXPROCS(0), MaxWorkers)
	}
	if o.Memory <= 0 {
		o.Memory = DefaultMemory
	}
	if o.Keep.Kind == cluster.KeepField && o.Corpus.KeepField == "" {
		o.Corpus.KeepField = o.Keep.Field
	}
	return o
}

// Validate reports whether o (after defaults) is usable; errors wrap
// ErrInvalidOptions or the failing package's sentinel and name the value and
// its range.
func (o *Options) Validate() error {
	if err := o.Spec.Validate(); err != nil {
		return err
	}
	if err := o.Params.Validate(); err != nil {
		return err
	}
	for _, err := range []error{CheckThreshold(o.Threshold), CheckRecall(o.Recall), CheckBucketCap(o.BucketCap),
		CheckWorkers(o.Workers), CheckMemory(o.Memory)} {
		if err != nil {
			return err
		}
	}
	if o.Bands.Bands > 0 {
		if err := checkBanding(o.Bands, o.Params.K); err != nil {
			return err
		}
	}
	if o.Verify > VerifyNone {
		return fmt.Errorf("%w: verify %d", ErrInvalidOptions, o.Verify)
	}
	switch o.Sketch {
	case sketch.MinHash:
	case sketch.SimHash:
		if err := o.SimHash.validate(); err != nil {
			return err
		}
		if o.Bands.Bands > 0 || o.Bands.Probe > 0 {
			return fmt.Errorf("%w: bands %s are MinHash's; SimHash's candidates are the pairs within the Hamming distance, from its block-permutation tables", ErrInvalidOptions, o.Bands)
		}
		if err := CheckVerify(o.Sketch, o.Verify); err != nil {
			return err
		}
		if len(o.Against) > 0 || o.Signatures != "" {
			// Not yet: reference and stored fingerprints would need the
			// blocks chosen from inputs and references together, and the
			// TF-IDF weights of both.
			return fmt.Errorf("%w: reference documents (--against) and stored signatures (--signatures) need --sketch minhash for now: a SimHash run chooses its blocks from the documents it signs", ErrInvalidOptions)
		}
	default:
		return fmt.Errorf("%w: sketch %d; want minhash or simhash", ErrInvalidOptions, o.Sketch)
	}
	if o.Cluster > Star {
		return fmt.Errorf("%w: cluster %d", ErrInvalidOptions, o.Cluster)
	}
	if err := o.Keep.Validate(); err != nil {
		return err
	}
	for _, a := range o.Against {
		if a == "" || a == "-" {
			return fmt.Errorf("%w: reference source %q; want a path (standard input is for the inputs)", ErrInvalidOptions, a)
		}
	}
	if o.Signatures == "-" {
		return fmt.Errorf("%w: signatures %q; want a path (standard input is for the inputs)", ErrInvalidOptions, o.Signatures)
	}
	if err := o.checkBoilerplate(); err != nil {
		return err
	}
	if o.BadOut != "" && !o.Corpus.SkipBad {
		return fmt.Errorf("%w: bad-record list %s without SkipBad: no record is skipped", ErrInvalidOptions, o.BadOut)
	}
	return o.Corpus.Validate()
}

// The ranges of the numeric options, one function each, so that Validate
// and the flags (which must also refuse the zero values Validate reads as
// "default") state each rule once.

// CheckThreshold reports whether t is a valid Options.Threshold: 0 < t < 1.
func CheckThreshold(t float64) error {
	if !(t > 0 && t < 1) {
		return fmt.Errorf("%w: threshold %v; want 0 < t < 1 (J = 1 is exact duplicates, which no banding targets; J = 0 makes every pair a duplicate)", ErrInvalidOptions, t)
	}
	return nil
}

// CheckRecall reports whether r is a valid Options.Recall: 0 < r < 1.
func CheckRecall(r float64) error {
	if !(r > 0 && r < 1) {
		return fmt.Errorf("%w: recall %v; want 0 < recall < 1 (no banding of finitely many slots catches every pair below J = 1)", ErrInvalidOptions, r)
	}
	return nil
}

// CheckBucketCap reports whether c is a valid Options.BucketCap: 2 to
// lsh.MaxCap documents.
func CheckBucketCap(c int) error {
	if c < 2 || c > lsh.MaxCap {
		return fmt.Errorf("%w: bucket cap %d; want 2 to %d documents", ErrInvalidOptions, c, lsh.MaxCap)
	}
	return nil
}

// CheckWorkers reports whether w is a valid Options.Workers before defaults:
// 0 (all cores) to MaxWorkers.
func CheckWorkers(w int) error {
	if w < 0 || w > MaxWorkers {
		return fmt.Errorf("%w: workers %d; want 0 (all cores) to %d", ErrInvalidOptions, w, MaxWorkers)
	}
	return nil
}

// CheckMemory reports whether m is a valid Options.Memory: at least
// MinMemory bytes.
func CheckMemory(m int64) error {
	if m < MinMemory {
		return fmt.Errorf("%w: memory %d bytes; want at least 16 MiB", ErrInvalidOptions, m)
	}
	return nil
}

// checkBanding reports whether b is a usable banding of k-slot signatures
// (sketch.CheckBanding; errors wrap ErrInvalidOptions too).
func checkBanding(b lsh.Params, k int) error {
	if err := sketch.CheckBanding(b, k); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	return nil
}

// Banding is sketch.Banding, the one rule from bands, rows and probe to a
// banding, with errors that also wrap ErrInvalidOptions.
func Banding(bands, rows, probe int, threshold float64, k int, recall float64) (lsh.Params, error) {
	b, err := sketch.Banding(bands, rows, probe, threshold, k, recall)
	if err != nil {
		return b, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	return b, nil
}

// Banding returns the LSH bands a job with o (after EnsureDefaults) uses:
// o.Bands when set, else the most precise banding reaching o.Recall at
// o.Threshold (see the function Banding).
func (o *Options) Banding() (lsh.Params, error) {
	if o.Bands.Bands > 0 {
		return o.Bands, nil
	}
	return Banding(0, 0, o.Bands.Probe, o.Threshold, o.Params.K, o.Recall)
}
