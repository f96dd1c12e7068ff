package dedup

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"

	"github.com/neardup/neardup/cluster"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
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

// Errors; check with errors.Is.
var (
	// ErrInvalidOptions reports Options that break a rule.
	ErrInvalidOptions = errors.New("dedup: invalid options")
)

// Options configure a batch deduplication. The zero value (and nil) means
// every default: prose shingles, 128-slot one-permutation signatures, a 0.8
// threshold with bands chosen for 0.99 recall, exact verification, connected
// components, keep the first document.
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
	// are near duplicates. Default 0.8; range (0, 1].
	Threshold float64
	// Recall is the probability with which a pair exactly at Threshold must
	// become a candidate; the bands are the most precise banding that
	// reaches it (lsh.ForRecall). Default 0.99. Ignored when Bands is set.
	Recall float64
	// Bands, when set (Bands.Bands > 0), fixes the banding instead.
	// Default: chosen from Threshold, Params.K and Recall.
	Bands lsh.Params
	// BucketCap is the largest LSH bucket whose members are all paired;
	// larger (boilerplate) buckets link members to one representative.
	// Default lsh.DefaultCap (1,000 documents).
	BucketCap int
	// Verify is how candidates are checked. Default VerifyExact.
	Verify Verify
	// Cluster is how verified pairs are grouped. Default Components.
	Cluster ClusterMode
	// Keep chooses the document each cluster keeps. Default: the first in
	// input order. A field policy reads Corpus.KeepField, which it sets.
	Keep cluster.Policy
	// Workers is the number of goroutines that parse, shingle, sign and
	// verify. Default runtime.GOMAXPROCS(0). Results do not depend on it.
	Workers int
	// Memory is the budget, in bytes, for the data that grows with the
	// corpus (band-key entries, candidate pairs, stored texts and signatures):
	// past it they spill to sorted or chunked temporary files. Per-document
	// bookkeeping (ids, lengths: about 40 bytes a document) and the working
	// buffers of the workers come on top. Default 4 GiB.
	Memory int64
	// TempDir holds spill files. Default os.TempDir().
	TempDir string
	// Progress, when not nil, receives a progress line (for a terminal).
	// Default nil.
	Progress io.Writer
	// Golden, when set, is a truth file (eval.ReadPairFile: from `neardup
	// eval truth`, a pairs.tsv, or id pairs) to score the run against; the
	// score goes into Report.Golden. Default "": no scoring.
	Golden string
}

// DefaultMemory is the default Options.Memory.
const DefaultMemory = 4 << 30

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
		o.Threshold = 0.8
	}
	if o.Recall == 0 {
		o.Recall = 0.99
	}
	if o.BucketCap == 0 {
		o.BucketCap = lsh.DefaultCap
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
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
// ErrInvalidOptions or the failing package's sentinel.
func (o *Options) Validate() error {
	if err := o.Spec.Validate(); err != nil {
		return err
	}
	if err := o.Params.Validate(); err != nil {
		return err
	}
	if !(o.Threshold > 0 && o.Threshold <= 1) {
		return fmt.Errorf("%w: threshold %v, want (0, 1]", ErrInvalidOptions, o.Threshold)
	}
	if !(o.Recall > 0 && o.Recall < 1) {
		return fmt.Errorf("%w: recall %v, want (0, 1)", ErrInvalidOptions, o.Recall)
	}
	if o.Bands.Bands > 0 {
		if err := o.Bands.Validate(); err != nil {
			return err
		}
		if o.Bands.Slots() > o.Params.K {
			return fmt.Errorf("%w: bands %s need %d slots, signatures have %d", ErrInvalidOptions, o.Bands, o.Bands.Slots(), o.Params.K)
		}
	}
	if o.Verify > VerifyNone {
		return fmt.Errorf("%w: verify %d", ErrInvalidOptions, o.Verify)
	}
	if o.Cluster > Star {
		return fmt.Errorf("%w: cluster %d", ErrInvalidOptions, o.Cluster)
	}
	if err := o.Keep.Validate(); err != nil {
		return err
	}
	if o.Memory < 16<<20 {
		return fmt.Errorf("%w: memory %d bytes, want at least 16 MiB", ErrInvalidOptions, o.Memory)
	}
	return o.Corpus.Validate()
}

// bands returns the banding to use.
func (o *Options) bands() (lsh.Params, error) {
	if o.Bands.Bands > 0 {
		return o.Bands, nil
	}
	return lsh.ForRecall(o.Threshold, o.Params.K, o.Recall)
}

// ParseBytes reads a size such as "4GiB", "256MiB", "64MB", "1e9" or "512k".
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}}
	mult := 1.0
	for _, u := range units {
		if strings.HasSuffix(strings.ToUpper(t), strings.ToUpper(u.suffix)) {
			mult = u.mult
			t = strings.TrimSpace(t[:len(t)-len(u.suffix)])
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%w: size %q, want e.g. 4GiB, 256MiB", ErrInvalidOptions, s)
	}
	return int64(v * mult), nil
}
