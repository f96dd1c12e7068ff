package index

import (
	"fmt"

	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/sigfile"
	"github.com/neardup/neardup/simhash"
)

// SimHash indexes. A SimHash index stores one 64-bit fingerprint a document
// (simhash.Hasher, TF or TF-IDF weights) in the record, where a MinHash
// index stores its slots: the record's signature is the fingerprint in the
// storage form of one 64-bit slot (simHashStorage), 8 bytes. Its postings
// are the block-permutation tables of the batch job (sketch.Config's bucket
// keys: the table number and the fingerprint's permuted block prefix), one
// a table, C(B, k) a document, stored and packed as MinHash's band keys are.
// A stored document matches a query when their fingerprints are within the
// index's Hamming distance k (and the model's Jaccard at that distance,
// simhash.ModelJaccard, reaches the query's threshold): every such document
// shares a table key with the query, so none is missed, bucket caps aside.
// A TF-IDF index keeps its document-frequency table under a key of its own
// (Pebble "f", Redis "df"), written with the meta record, which names it by
// fingerprint; every signer of the index weighs by it.

// Defaults of a new SimHash index.
const (
	// DefaultHamming is the default Hamming distance k of a SimHash index:
	// 3, Manku, Jain and Das Sarma's choice, with B = 4 blocks it makes 4
	// tables of 16-bit keys, so that a document costs 4 postings (16 bytes
	// packed) and a query reads about N/16,384 candidates. A larger k
	// catches more (recall at J ≥ 0.95 measured 0.83–0.89 at k = 3 on the
	// generated corpus and the Go tree, 0.95 and up at k = 6) for more
	// postings: C(B, k), 28 at k = 6 with 8 blocks. BENCHMARKS.md has both.
	DefaultHamming = simhash.DefaultMaxDistance
)

// simHashStorage is the storage form of a fingerprint in a record: one
// 64-bit slot, 8 bytes (minhash.Params.Bytes).
var simHashStorage = minhash.Params{K: 1, Scheme: minhash.OnePermutation, Bits: 64}

// SimHashOptions configure a new SimHash index (Options.Sketch =
// sketch.SimHash). The zero value asks for the defaults; on an existing
// index set fields must equal the stored ones.
type SimHashOptions struct {
	// Weight is sigfile.TF (the default) or sigfile.TFIDF, which needs DF
	// for a new index.
	Weight sigfile.Weighting
	// Hamming is k, the distance within which fingerprints match. 0 means
	// the default, DefaultHamming (3); simhash.ExactMatch (−1) asks for 0.
	// Range −1, 1..simhash.MaxMaxDistance.
	Hamming int
	// Blocks is B: C(B, k) postings a document. 0 means chosen from
	// ExpectedDocs, or k+1 (the fewest postings) without it. Range
	// k+1..simhash.MaxBlocks with C(B, k) ≤ simhash.MaxTables.
	Blocks int
	// ExpectedDocs is how many documents a new index is expected to hold.
	// With Blocks 0, the blocks are chosen for that many by the batch
	// job's rule (sketch.Config.Resolve, as dedup and plan choose): the
	// cheapest layout for random fingerprints, tables against candidates,
	// which keeps buckets small, so that they stay far below BucketCap. With
	// k+1 blocks a table's key is one block, 64/(k+1) bits: at k = 6 a bucket
	// holds n/2^9 documents on average and passes the default cap of 1000
	// near n = 5·10^5, its postings dropped; the rule takes 8 blocks (16-bit
	// keys) from about 1.1·10^5 documents. Ignored when Blocks is set or the
	// index exists. Default 0: k+1 blocks; at least 0.
	ExpectedDocs int64
	// DF is the document-frequency table of a new TF-IDF index, stored
	// with it. Ignored under TF and when the index exists.
	DF *simhash.DFTable
}

// SimHashConfig is the SimHash part of a Config.
type SimHashConfig struct {
	// Params are the fingerprints' params (sigfile's): the weighting and,
	// for TF-IDF, the fingerprint of the stored document-frequency table.
	Params sigfile.SimHashParams
	// K is the Hamming distance of a match, 0..simhash.MaxMaxDistance.
	K int
	// Blocks is B; the index has C(B, K) tables.
	Blocks int
	// IDF are the TF-IDF weights of the stored table; nil under TF.
	IDF *simhash.IDF
}

// validateSimHash checks o's SimHash options (before defaults).
func validateSimHash(kind sketch.Kind, o *SimHashOptions) error {
	switch kind {
	case sketch.MinHash:
		if *o != (SimHashOptions{}) {
			return fmt.Errorf("%w: SimHash options for a MinHash index", ErrInvalidOptions)
		}
		return nil
	case sketch.SimHash:
	default:
		return fmt.Errorf("%w: Sketch = %d; must be minhash or simhash", ErrInvalidOptions, kind)
	}
	if o.Weight != 0 && o.Weight != sigfile.TF && o.Weight != sigfile.TFIDF {
		return fmt.Errorf("%w: SimHash weighting %d; must be tf or tfidf", ErrInvalidOptions, o.Weight)
	}
	if o.Hamming < simhash.ExactMatch || o.Hamming > simhash.MaxMaxDistance {
		return fmt.Errorf("%w: Hamming = %d; must be 1..%d, 0 for the default or %d for 0", ErrInvalidOptions, o.Hamming, simhash.MaxMaxDistance, simhash.ExactMatch)
	}
	if o.Blocks != 0 {
		if err := (&simhash.Options{MaxDistance: o.Hamming, Blocks: o.Blocks}).Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidOptions, err)
		}
	}
	if o.ExpectedDocs < 0 {
		return fmt.Errorf("%w: SimHash ExpectedDocs = %d; must not be negative", ErrInvalidOptions, o.ExpectedDocs)
	}
	return nil
}

// newSimHashConfig returns the SimHash part of a new index's Config.
func newSimHashConfig(o *SimHashOptions) (SimHashConfig, error) {
	so := simhash.Options{MaxDistance: o.Hamming, Blocks: o.Blocks}
	if so.MaxDistance == 0 {
		so.MaxDistance = DefaultHamming
	}
	k := so.MaxDistance
	if k == simhash.ExactMatch {
		k = 0
	}
	if so.Blocks == 0 && o.ExpectedDocs > 0 { // the batch job's rule
		r, err := sketch.Config{Kind: sketch.SimHash, SimHash: sketch.SimHashConfig{K: k}}.Resolve(o.ExpectedDocs)
		if err != nil {
			return SimHashConfig{}, fmt.Errorf("%w: blocks for %d expected documents: %w", ErrInvalidOptions, o.ExpectedDocs, err)
		}
		so.Blocks = r.SimHash.Blocks
	}
	so.EnsureDefaults()
	c := SimHashConfig{Params: sigfile.SimHashParams{Weighting: sigfile.TF}, K: k, Blocks: so.Blocks}
	if o.Weight == sigfile.TFIDF {
		if o.DF == nil {
			return c, fmt.Errorf("%w: a new TF-IDF SimHash index needs its document-frequency table (SimHashOptions.DF)", ErrInvalidOptions)
		}
		c.setDF(o.DF)
	}
	return c, nil
}

// setDF weighs by table t.
func (s *SimHashConfig) setDF(t *simhash.DFTable) {
	s.IDF = t.IDF()
	s.Params = sigfile.SimHashParams{Weighting: sigfile.TFIDF, DFFingerprint: s.IDF.Fingerprint()}
}

// checkSimHash checks the SimHash options of an open against the stored
// configuration c.
func checkSimHash(c *Config, kind sketch.Kind, o *SimHashOptions) error {
	if kind != sketch.MinHash && kind != c.Sketch {
		return fmt.Errorf("%w: the index holds %s signatures; asked for %s", ErrParamsMismatch, c.Sketch, kind)
	}
	if kind != sketch.SimHash {
		return nil
	}
	s := &c.SimHash
	k := o.Hamming
	if k == simhash.ExactMatch {
		k = 0
	}
	switch {
	case o.Weight != 0 && o.Weight != s.Params.Weighting:
		return fmt.Errorf("%w: the SimHash index weighs by %s; asked for %s", ErrParamsMismatch, s.Params.Weighting, o.Weight)
	case o.Hamming != 0 && k != s.K:
		return fmt.Errorf("%w: the SimHash index matches within %d bits (Hamming distance); asked for %d", ErrParamsMismatch, s.K, k)
	case o.Blocks != 0 && o.Blocks != s.Blocks:
		return fmt.Errorf("%w: the SimHash index has %d blocks; asked for %d", ErrBandsMismatch, s.Blocks, o.Blocks)
	}
	return nil
}

// decodeDF reads a stored document-frequency table and checks it is the
// one the meta record names.
func (s *SimHashConfig) decodeDF(data []byte) error {
	var t simhash.DFTable
	if err := t.UnmarshalBinary(data); err != nil {
		return fmt.Errorf("%w: document-frequency table: %w", ErrCorrupt, err)
	}
	if fp := t.Fingerprint(); fp != s.Params.DFFingerprint {
		return fmt.Errorf("%w: the stored document-frequency table is %016x; the meta record names %016x", ErrCorrupt, fp, s.Params.DFFingerprint)
	}
	s.IDF = t.IDF()
	return nil
}

// needsDF reports whether the configuration weighs by a document-frequency
// table, stored with the index.
func (c *Config) needsDF() bool {
	return c.Sketch == sketch.SimHash && c.SimHash.Params.Weighting == sigfile.TFIDF
}

// similarity returns the estimated similarity of two signatures: MinHash's
// estimate, or for SimHash the model's Jaccard at the fingerprints'
// distance, −1 (below every threshold) beyond the index's distance.
func (c *Config) similarity(a, b minhash.Signature) float64 {
	if c.Sketch == sketch.SimHash {
		d := simhash.Distance(a[0], b[0])
		if d > c.SimHash.K {
			return -1
		}
		return simhash.ModelJaccard(d)
	}
	return c.Params.Similarity(a, b)
}

// Tables returns the postings a document has: the bands of a MinHash
// index, the tables C(B, k) of a SimHash one.
func (c *Config) Tables() int {
	sc := c.sketchConfig()
	return sc.Tables()
}
