package index

import (
	"fmt"
	"log/slog"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
)

// Defaults of Options.
const (
	// DefaultThreshold is the default Options.Threshold.
	DefaultThreshold = 0.8
	// DefaultRecall is the default Options.Recall: 99% of pairs exactly at
	// the threshold share a bucket, as in the batch job.
	DefaultRecall = 0.99
	// DefaultBucketCap is the default Options.BucketCap: the batch job's
	// bucket cap (lsh.DefaultCap). A key shared by more than 1000 documents
	// is almost always boilerplate; a query still finds the 1000 documents
	// already in such a bucket, while its work stays bounded.
	DefaultBucketCap = lsh.DefaultCap
	// DefaultCacheSize is the default Options.CacheSize: 256 MiB of block
	// cache.
	DefaultCacheSize = 256 << 20
	// DefaultMemTableSize is the default Options.MemTableSize: 32 MiB.
	DefaultMemTableSize = 32 << 20
	// DefaultLimit is the default QueryOptions.Limit.
	DefaultLimit = 10
	// MaxLimit is the largest QueryOptions.Limit.
	MaxLimit = 1000
	// MaxIDLen is the longest document id, in bytes.
	MaxIDLen = 1024
	// Unlimited as Options.BucketCap lets buckets grow without bound.
	Unlimited = -1
)

// Options configure Open. The zero value, and nil, ask for the defaults: for
// a new index, prose shingles, 128 one-permutation 32-bit slots, a 0.8
// threshold with bands for 0.99 recall; for an existing one, what it was made
// with.
//
// Spec, Params and Bands define the index and are stored in it. Left zero they
// take the stored values (or, for a new index, the defaults); set, they must
// equal the stored ones or Open fails with ErrSpecMismatch, ErrParamsMismatch
// or ErrBandsMismatch.
type Options struct {
	// Spec turns texts into features. Default: stored, else shingle.Prose.
	// A keyed spec's key is never stored: pass the spec (with its key) on
	// every open.
	Spec shingle.Spec
	// Key opens an index made under a keyed spec without naming the spec:
	// with Spec zero, the stored spec keyed with Key (whose id must be the
	// one the stored spec names, or Open fails with ErrSpecMismatch).
	// Ignored when Spec is set or the stored spec is not keyed; a new index
	// is not keyed by it. Default nil.
	Key *shingle.Key
	// Params define the signatures. Default: stored, else minhash defaults
	// (K 128, one permutation, 32-bit slots, seed 0). Only the zero Params
	// means "default"; a partly set Params takes minhash defaults for its
	// zero fields.
	Params minhash.Params
	// Bands is the LSH banding. Default: stored, else lsh.ForRecall(
	// Threshold, Params.K, Recall).
	Bands lsh.Params
	// Sketch selects the sketch of a new index: sketch.MinHash (Params,
	// Bands) or sketch.SimHash (the SimHash field; Params and Bands must
	// then be zero). Default: stored, else MinHash; set on an existing
	// index, it must be the stored one.
	Sketch sketch.Kind
	// SimHash configures a new SimHash index (see SimHashOptions); its set
	// fields must equal the stored ones of an existing index. Default:
	// stored, else TF weights, Hamming distance 3, 4 blocks.
	SimHash SimHashOptions
	// Threshold is the default query threshold (Jaccard estimate), and for
	// a new index the threshold the bands are chosen for. Default: stored,
	// else 0.8; range (0, 1). Setting it on an existing index changes the
	// default threshold of this open only.
	Threshold float64
	// Recall is the probability that a pair exactly at Threshold shares a
	// bucket, used only to choose the Bands of a new index. Default 0.99;
	// range (0, 1].
	Recall float64
	// BucketCap is the most documents a bucket holds: a posting into a full
	// bucket is dropped and counted (Metrics.DroppedPostings); the document
	// is still stored and found through its other buckets. Default: stored,
	// else 1000; Unlimited (−1) or 1 and up. Setting it on an existing index
	// applies to postings written from then on.
	BucketCap int
	// BucketKeyBytes is the width of the bucket keys of a new index:
	// WideKeyBytes (8, layout version 3) or NarrowKeyBytes (4, the layout
	// that builds before version 3 read). Default 8 for MinHash; 4 for
	// SimHash, whose bucket keys are its tables' block values and already
	// fit in 4 bytes. Ignored for an existing index, which keeps its width
	// (a bulk build too; see Migrate).
	BucketKeyBytes int
	// CacheSize is the Pebble block cache, in bytes: with the memtables the
	// bulk of the index's memory, whatever its size. Default 256 MiB.
	CacheSize int64
	// MemTableSize is the size of each Pebble memtable, in bytes. Default
	// 32 MiB.
	MemTableSize int
	// FilterBytes is the size of the in-memory bucket filter, a bitmap that
	// lets queries skip the seeks of empty buckets (see the package doc);
	// rounded down to a power of two, at most 512 MiB. A bulk-built index
	// has a second one of the same size for its packed postings. They are
	// filled by scanning the postings at open (about a second per 10
	// million postings). Default 32 MiB; −1 turns the filters off.
	FilterBytes int
	// NoSync turns off the WAL sync of each write. Writes then survive a
	// crash of the process only once the operating system has them, and
	// not a crash of the machine. Default false (every acknowledged write
	// is synced); for tests and throwaway indexes only.
	NoSync bool
	// ReadOnly opens an existing index for reading only (as MustExist, an
	// absent index fails with ErrNoIndex). Default false.
	ReadOnly bool
	// MustExist makes Open fail with ErrNoIndex, creating nothing, when the
	// directory holds no index (it is missing, empty, or not an index).
	// Default false: a missing index is created.
	MustExist bool
	// ForBuild opens the index for a bulk build (DB.NewBuilder): a new index
	// is created marked "build in progress" until a Builder finishes, and an
	// index whose build was interrupted opens (to be built again) rather than
	// failing with ErrIncomplete. Default false.
	ForBuild bool
	// Logger receives Pebble's error messages and the index's reports of
	// storage faults (a corruption, a failed write), one line each. Default
	// slog.Default().
	Logger *slog.Logger
	// FS is the filesystem the index is stored on. Default: the operating
	// system's (vfs.Default). Tests pass one that injects faults.
	FS vfs.FS
}

// EnsureDefaults fills the fields that do not depend on a stored index with
// their defaults and returns o; a nil o yields new Options with every default.
// Spec, Params, Bands, Threshold and BucketCap stay zero here: Open resolves
// them against the stored configuration.
func (o *Options) EnsureDefaults() *Options {
	if o == nil {
		o = &Options{}
	}
	if o.Recall == 0 {
		o.Recall = DefaultRecall
	}
	if o.CacheSize == 0 {
		o.CacheSize = DefaultCacheSize
	}
	if o.MemTableSize == 0 {
		o.MemTableSize = DefaultMemTableSize
	}
	if o.FilterBytes == 0 {
		o.FilterBytes = DefaultFilterBytes
	}
	return o
}

// resolved returns a copy of opts (the zero value if opts is nil) with its
// defaults filled in, and the error of its Validate: the first step of
// every constructor of the package (Open, NewMemory, OpenRedis,
// DB.NewBuilder).
func resolved[T any, P interface {
	*T
	EnsureDefaults() *T
	Validate() error
}](opts P) (T, error) {
	var o T
	if opts != nil {
		o = *opts
	}
	P(&o).EnsureDefaults()
	return o, P(&o).Validate()
}

// Validate reports whether o (after defaults) is usable; errors wrap
// ErrInvalidOptions and name the field and the rule. It is nil-safe.
func (o *Options) Validate() error {
	var c Options
	if o != nil {
		c = *o
	}
	c.EnsureDefaults()
	if err := validateSketch(c.Spec, c.Params, c.Bands, c.Threshold, c.Recall, c.BucketCap); err != nil {
		return err
	}
	if err := validateSimHash(c.Sketch, &c.SimHash); err != nil {
		return err
	}
	if k := c.BucketKeyBytes; k != 0 && k != NarrowKeyBytes && k != WideKeyBytes {
		return fmt.Errorf("%w: BucketKeyBytes = %d; must be %d or %d", ErrInvalidOptions, k, NarrowKeyBytes, WideKeyBytes)
	}
	if c.Sketch == sketch.SimHash && c.BucketKeyBytes == WideKeyBytes {
		return fmt.Errorf("%w: BucketKeyBytes = %d for a SimHash index; its bucket keys are %d bytes", ErrInvalidOptions, c.BucketKeyBytes, NarrowKeyBytes)
	}
	if c.CacheSize < 1<<20 {
		return fmt.Errorf("%w: CacheSize = %d; must be at least 1 MiB", ErrInvalidOptions, c.CacheSize)
	}
	if c.FilterBytes < -1 || c.FilterBytes > 512<<20 {
		return fmt.Errorf("%w: FilterBytes = %d; must be -1 (off) or up to 512 MiB", ErrInvalidOptions, c.FilterBytes)
	}
	if c.MemTableSize < 1<<20 || c.MemTableSize > 1<<30 {
		return fmt.Errorf("%w: MemTableSize = %d; must be 1 MiB to 1 GiB", ErrInvalidOptions, c.MemTableSize)
	}
	return nil
}

func validateSketch(spec shingle.Spec, p minhash.Params, bands lsh.Params, threshold, recall float64, bucketCap int) error {
	if spec != (shingle.Spec{}) {
		if err := spec.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidOptions, err)
		}
	}
	if p != (minhash.Params{}) {
		p.EnsureDefaults()
		if err := p.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidOptions, err)
		}
	}
	if bands != (lsh.Params{}) {
		if err := bands.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidOptions, err)
		}
		if p != (minhash.Params{}) && bands.Slots() > p.K {
			return fmt.Errorf("%w: bands read %d slots, the signatures have %d", ErrInvalidOptions, bands.Slots(), p.K)
		}
	}
	if threshold != 0 && !(threshold > 0 && threshold < 1) {
		return fmt.Errorf("%w: Threshold = %v; must be in (0, 1)", ErrInvalidOptions, threshold)
	}
	if !(recall > 0 && recall <= 1) {
		return fmt.Errorf("%w: Recall = %v; must be in (0, 1]", ErrInvalidOptions, recall)
	}
	if bucketCap < 1 && bucketCap != 0 && bucketCap != Unlimited {
		return fmt.Errorf("%w: BucketCap = %d; must be at least 1 or Unlimited (%d)", ErrInvalidOptions, bucketCap, Unlimited)
	}
	return nil
}

// QueryOptions tune one query. The zero value, and nil, ask for the index's
// default threshold and DefaultLimit matches.
type QueryOptions struct {
	// Threshold is the least estimated similarity of a match. Default (0):
	// the index's Config.Threshold; range (0, 1].
	Threshold float64
	// Limit is the most matches returned, best first. Default 10
	// (DefaultLimit); range 1..MaxLimit.
	Limit int
	// Exclude, if not empty, is an id never returned as a match (a
	// document checked against an index that already holds it).
	Exclude string
}

// resolve returns the effective query options given the index defaults.
func (q *QueryOptions) resolve(c *Config) (QueryOptions, error) {
	var r QueryOptions
	if q != nil {
		r = *q
	}
	if r.Threshold == 0 {
		r.Threshold = c.Threshold
	}
	if r.Limit == 0 {
		r.Limit = DefaultLimit
	}
	if !(r.Threshold > 0 && r.Threshold <= 1) {
		return r, fmt.Errorf("%w: query threshold %v; must be in (0, 1]", ErrInvalidOptions, r.Threshold)
	}
	if r.Limit < 1 || r.Limit > MaxLimit {
		return r, fmt.Errorf("%w: query limit %d; must be in 1..%d", ErrInvalidOptions, r.Limit, MaxLimit)
	}
	return r, nil
}
