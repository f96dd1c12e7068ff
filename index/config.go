package index

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
	"github.com/neardup/neardup/simhash"
)

// FormatVersion is the latest version of the stored layout (keys and
// values), part of the meta record. Version 2 added packed postings: an index
// is marked version 2 when a bulk build or a repack writes them, and stays
// version 1 otherwise (a Redis index always), so that older builds, which
// read only version 1, still open it. Version 3 is an index of 8-byte bucket
// keys (Config.BucketKeyBytes), packed or not, which builds before it would
// misread: every index of 8-byte keys is version 3, every index of 4-byte
// keys version 1 or 2. An index of a later version does not open (ErrCorrupt).
const FormatVersion = 3

// Bucket-key widths, Config.BucketKeyBytes.
const (
	// NarrowKeyBytes is the width of the bucket keys of layout versions 1
	// and 2: the batch job's sketch.BucketKeyBits. With n postings in the
	// index a query's bucket meets a foreign key with probability n/2^32
	// (0.4% per bucket at 16 million postings, several foreign candidates
	// per query at 10⁹); verification drops them, at the cost of a read
	// and a comparison each.
	NarrowKeyBytes = 4
	// WideKeyBytes is the width of the bucket keys of layout version 3: the
	// full 64-bit band key (sketch.Config.AppendBandKeys), so that
	// different band values share a bucket with probability n/2^64.
	WideKeyBytes = 8
)

// Config is what defines an index: the shingle spec and minhash params of its
// signatures, the LSH banding of its postings, the default query threshold and
// the bucket cap. It is stored in the index when it is made and checked at
// every open. A plain value, safe to copy.
//
// Signatures given to an index must be made under Spec and Params (use
// Config.NewSigner); the index cannot tell otherwise.
type Config struct {
	// Spec is the shingle spec the signatures' features are made under.
	Spec shingle.Spec
	// Sketch is the kind of signature: sketch.MinHash (the zero value) or
	// sketch.SimHash.
	Sketch sketch.Kind
	// Params are the minhash params of the signatures (k, scheme, bits,
	// seed); for SimHash the storage form of a fingerprint, one 64-bit
	// slot.
	Params minhash.Params
	// Bands is the LSH banding of the postings (MinHash; zero for SimHash).
	Bands lsh.Params
	// SimHash holds a SimHash index's weighting, distance and blocks.
	SimHash SimHashConfig
	// Threshold is the default query threshold: the least estimated
	// similarity of a match when QueryOptions.Threshold is 0; in (0, 1].
	Threshold float64
	// BucketCap is the most documents a bucket holds, or Unlimited (−1);
	// postings into a full bucket are dropped.
	BucketCap int
	// BucketKeyBytes is the width of the stored bucket keys: WideKeyBytes
	// (layout version 3, a new MinHash index made by Open, NewMemory or
	// OpenRedis, bulk-built or not) or NarrowKeyBytes (a SimHash index, an
	// index made before version 3, or one made with Options.BucketKeyBytes
	// 4). Queries band with the width of the index;
	// Migrate widens the keys of a Pebble index.
	BucketKeyBytes int
}

// String renders the configuration on one line.
func (c Config) String() string {
	if c.Sketch == sketch.SimHash {
		return fmt.Sprintf("simhash, spec %s, params %s, Hamming distance %d, %d blocks (%d tables), threshold %g, bucket cap %d",
			c.Spec, c.SimHash.Params, c.SimHash.K, c.SimHash.Blocks, c.Tables(), c.Threshold, c.BucketCap)
	}
	return fmt.Sprintf("spec %s, params %s, bands %s, threshold %g, bucket cap %d, %d-byte bucket keys", c.Spec, c.Params, c.Bands, c.Threshold, c.BucketCap, c.BucketKeyBytes)
}

// metaRecord is the stored form of a Config, as JSON.
type metaRecord struct {
	Format            int     `json:"format"`
	Spec              string  `json:"spec"`
	SpecFingerprint   string  `json:"spec_fingerprint"`
	Params            string  `json:"params"`
	ParamsFingerprint string  `json:"params_fingerprint"`
	Scheme            string  `json:"scheme"`
	K                 int     `json:"k"`
	Bits              int     `json:"bits"`
	Seed              uint64  `json:"seed"`
	Bands             int     `json:"bands"`
	Rows              int     `json:"rows"`
	Probe             int     `json:"probe"`
	Threshold         float64 `json:"threshold"`
	BucketCap         int     `json:"bucket_cap"`
	BucketKeyBytes    int     `json:"bucket_key_bytes"`
	DocNumBytes       int     `json:"doc_number_bytes"`
	// PackedGroupBits is the number of high bucket-key bits that name a
	// group of packed postings; 0 if there are none (version 2).
	PackedGroupBits int `json:"packed_group_bits"`
	// Building marks an index whose bulk build has started and not
	// finished: written before the build writes anything, cleared (with
	// PackedGroupBits set) in one synced write once it is done. Builds
	// before this field never wrote it.
	Building bool `json:"building,omitempty"`
	// Sketch is "simhash" for a SimHash index, absent for MinHash. Params
	// and ParamsFingerprint are then the SimHash params (sigfile's), and
	// scheme, k, bits and seed the storage form of a fingerprint. Builds
	// before SimHash refuse such an index (its params do not match their
	// fingerprint).
	Sketch  string `json:"sketch,omitempty"`
	Hamming int    `json:"hamming,omitempty"` // SimHash: k
	Blocks  int    `json:"blocks,omitempty"`  // SimHash: B
	// Boilerplate is the set of boilerplate lines the spec drops, which
	// its canonical form names only by size and fingerprint; absent for a
	// spec without (so older indexes and builds read the same record).
	Boilerplate *shingle.Boilerplate `json:"boilerplate,omitempty"`
}

func fp(v uint64) string { return fmt.Sprintf("%016x", v) }

// encodeMeta returns the meta record of a new index: layout version 1 (3 for
// 8-byte bucket keys), no packed postings (withPackedBits marks a bulk-built
// or repacked one).
func encodeMeta(c Config) []byte {
	format := 1
	if c.BucketKeyBytes == WideKeyBytes {
		format = 3
	}
	m := metaRecord{
		Format: format, Spec: c.Spec.String(), SpecFingerprint: fp(c.Spec.Fingerprint()),
		Params: c.Params.String(), ParamsFingerprint: fp(c.Params.Fingerprint()),
		Scheme: c.Params.Scheme.String(), K: c.Params.K, Bits: c.Params.Bits, Seed: c.Params.Seed,
		Bands: c.Bands.Bands, Rows: c.Bands.Rows, Probe: c.Bands.Probe,
		Threshold: c.Threshold, BucketCap: c.BucketCap, BucketKeyBytes: c.BucketKeyBytes, DocNumBytes: docNumBytes,
		Boilerplate: c.Spec.Boilerplate,
	}
	if c.Sketch == sketch.SimHash {
		m.Sketch, m.Hamming, m.Blocks = c.Sketch.String(), c.SimHash.K, c.SimHash.Blocks
		m.Params, m.ParamsFingerprint = c.SimHash.Params.String(), fp(c.SimHash.Params.Fingerprint())
	}
	b, _ := json.Marshal(m)
	return b
}

// decodeMeta reads a stored Config, with the spec's boilerplate set. A keyed
// spec cannot be rebuilt from its canonical form; it comes back zero and is
// resolved against the caller's spec (which takes the stored set).
func decodeMeta(b []byte) (c Config, m metaRecord, err error) {
	if err := json.Unmarshal(b, &m); err != nil {
		return c, m, fmt.Errorf("%w: meta record: %v", ErrCorrupt, err)
	}
	if m.Format < 1 || m.Format > FormatVersion {
		return c, m, fmt.Errorf("%w: layout version %d, this build reads 1 to %d", ErrCorrupt, m.Format, FormatVersion)
	}
	if m.PackedGroupBits < 0 || m.PackedGroupBits > maxPackedGroupBits || m.Format == 1 && m.PackedGroupBits != 0 {
		return c, m, fmt.Errorf("%w: layout version %d with packed group bits %d", ErrCorrupt, m.Format, m.PackedGroupBits)
	}
	wantKey := NarrowKeyBytes
	if m.Format == 3 {
		wantKey = WideKeyBytes
	}
	if m.BucketKeyBytes != wantKey || m.DocNumBytes != docNumBytes {
		return c, m, fmt.Errorf("%w: key widths %d/%d in layout version %d, which has %d/%d", ErrCorrupt, m.BucketKeyBytes, m.DocNumBytes, m.Format, wantKey, docNumBytes)
	}
	c.BucketKeyBytes = m.BucketKeyBytes
	scheme, err := minhash.ParseScheme(m.Scheme)
	if err != nil {
		return c, m, fmt.Errorf("%w: meta record: %v", ErrCorrupt, err)
	}
	c.Params = minhash.Params{K: m.K, Scheme: scheme, Bits: m.Bits, Seed: m.Seed}
	switch m.Sketch {
	case "":
		if fp(c.Params.Fingerprint()) != m.ParamsFingerprint {
			return c, m, fmt.Errorf("%w: stored params %s do not match their fingerprint %s", ErrCorrupt, m.Params, m.ParamsFingerprint)
		}
	case "simhash":
		p, err := sigfile.ParseSimHashParams(m.Params)
		if err != nil || fp(p.Fingerprint()) != m.ParamsFingerprint || c.Params != simHashStorage {
			return c, m, fmt.Errorf("%w: stored simhash params %s (fingerprint %s, storage %s): %v", ErrCorrupt, m.Params, m.ParamsFingerprint, c.Params, err)
		}
		k := m.Hamming
		if k == 0 {
			k = simhash.ExactMatch
		}
		if err := (&simhash.Options{MaxDistance: k, Blocks: m.Blocks}).Validate(); err != nil || m.Blocks == 0 {
			return c, m, fmt.Errorf("%w: stored simhash layout: Hamming %d, %d blocks: %v", ErrCorrupt, m.Hamming, m.Blocks, err)
		}
		c.Sketch = sketch.SimHash
		c.SimHash = SimHashConfig{Params: p, K: m.Hamming, Blocks: m.Blocks}
	default:
		return c, m, fmt.Errorf("%w: sketch %q, this build reads minhash and simhash", ErrCorrupt, m.Sketch)
	}
	c.Bands = lsh.Params{Bands: m.Bands, Rows: m.Rows, Probe: m.Probe}
	c.Threshold, c.BucketCap = m.Threshold, m.BucketCap
	if !strings.Contains(m.Spec, "/siphash:") {
		if c.Spec, err = shingle.ParseCanonical(m.Spec, nil, m.Boilerplate); err != nil {
			return c, m, fmt.Errorf("%w: stored spec: %v", ErrCorrupt, err)
		}
		if fp(c.Spec.Fingerprint()) != m.SpecFingerprint {
			return c, m, fmt.Errorf("%w: stored spec %s does not match its fingerprint %s", ErrCorrupt, m.Spec, m.SpecFingerprint)
		}
	}
	return c, m, nil
}

// withPackedBits returns the stored meta record marked as holding packed
// postings of g group bits, at the current layout version.
func withPackedBits(stored []byte, g int) ([]byte, error) {
	var m metaRecord
	if err := json.Unmarshal(stored, &m); err != nil {
		return nil, fmt.Errorf("%w: meta record: %v", ErrCorrupt, err)
	}
	if m.Format < 2 {
		m.Format = 2 // version 3 (8-byte keys) has packed postings already
	}
	m.PackedGroupBits = g
	return json.Marshal(m)
}

// withBuilding returns the stored meta record with the "build in progress"
// mark set or cleared.
func withBuilding(stored []byte, building bool) ([]byte, error) {
	var m metaRecord
	if err := json.Unmarshal(stored, &m); err != nil {
		return nil, fmt.Errorf("%w: meta record: %v", ErrCorrupt, err)
	}
	m.Building = building
	return json.Marshal(m)
}

// resolveConfig turns Options into the Config of a new index (stored == nil)
// or checks them against a stored one. A TF-IDF SimHash index's weights are
// not in the meta record: the caller stores the table of a new one
// (Config.SimHash.IDF comes from Options) and loads that of an existing one
// (SimHashConfig.decodeDF).
func resolveConfig(o *Options, stored []byte) (Config, error) {
	spec, params, bands, threshold, recall, bucketCap := o.Spec, o.Params, o.Bands, o.Threshold, o.Recall, o.BucketCap
	key := o.Key
	if err := validateSketch(spec, params, bands, threshold, recall, bucketCap); err != nil {
		return Config{}, err
	}
	if err := validateSimHash(o.Sketch, &o.SimHash); err != nil {
		return Config{}, err
	}
	if o.Sketch == sketch.SimHash && (params != (minhash.Params{}) || bands != (lsh.Params{})) {
		return Config{}, fmt.Errorf("%w: minhash params or bands for a SimHash index", ErrInvalidOptions)
	}
	if stored == nil && o.Sketch == sketch.SimHash {
		sc, err := newSimHashConfig(&o.SimHash)
		if err != nil {
			return Config{}, err
		}
		c := Config{Spec: spec, Sketch: sketch.SimHash, Params: simHashStorage, SimHash: sc, Threshold: threshold, BucketCap: bucketCap, BucketKeyBytes: NarrowKeyBytes}
		if c.Spec == (shingle.Spec{}) {
			c.Spec = shingle.Prose
		}
		if c.Threshold == 0 {
			c.Threshold = DefaultThreshold
		}
		if c.BucketCap == 0 {
			c.BucketCap = DefaultBucketCap
		}
		return c, nil
	}
	if stored == nil {
		c := Config{Spec: spec, Params: params, Bands: bands, Threshold: threshold, BucketCap: bucketCap, BucketKeyBytes: o.BucketKeyBytes}
		if c.BucketKeyBytes == 0 {
			c.BucketKeyBytes = WideKeyBytes
		}
		if c.Spec == (shingle.Spec{}) {
			c.Spec = shingle.Prose
		}
		c.Params.EnsureDefaults()
		if c.Threshold == 0 {
			c.Threshold = DefaultThreshold
		}
		if c.BucketCap == 0 {
			c.BucketCap = DefaultBucketCap
		}
		if c.Bands == (lsh.Params{}) {
			b, err := sketch.Banding(0, 0, 0, c.Threshold, c.Params.K, recall)
			if err != nil {
				return c, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
			}
			c.Bands = b
		}
		if c.Bands.Slots() > c.Params.K {
			return c, fmt.Errorf("%w: bands %s read %d slots, the signatures have %d", ErrInvalidOptions, c.Bands, c.Bands.Slots(), c.Params.K)
		}
		return c, nil
	}
	c, m, err := decodeMeta(stored)
	if err != nil {
		return c, err
	}
	if err := checkSimHash(&c, o.Sketch, &o.SimHash); err != nil {
		return c, err
	}
	if spec != (shingle.Spec{}) && spec.Boilerplate == nil {
		// The caller's spec without lines takes the stored ones: the
		// service drops the lines the index was built with.
		spec.Boilerplate = m.Boilerplate
	}
	switch {
	case spec != (shingle.Spec{}):
		if got := fp(spec.Fingerprint()); got != m.SpecFingerprint {
			return c, fmt.Errorf("%w: the index has %s (fingerprint %s); asked for %s (%s)", ErrSpecMismatch, m.Spec, m.SpecFingerprint, spec, got)
		}
		c.Spec = spec
	case c.Spec == (shingle.Spec{}) && key != nil:
		ks, err := shingle.ParseCanonical(m.Spec, key, m.Boilerplate)
		if err != nil {
			return c, fmt.Errorf("%w: the index has the keyed spec %s; the key given (id %016x) is not its key: %w", ErrSpecMismatch, m.Spec, key.Fingerprint(), err)
		}
		if got := fp(ks.Fingerprint()); got != m.SpecFingerprint {
			return c, fmt.Errorf("%w: the index has %s (fingerprint %s); its spec with the key given has %s", ErrSpecMismatch, m.Spec, m.SpecFingerprint, got)
		}
		c.Spec = ks
	case c.Spec == (shingle.Spec{}):
		return c, fmt.Errorf("%w: the index has the keyed spec %s; pass the spec with its key", ErrSpecMismatch, m.Spec)
	}
	if c.Sketch == sketch.SimHash { // its Params and Bands are storage forms: name its own
		sh := &c.SimHash
		if params != (minhash.Params{}) {
			params.EnsureDefaults()
			return c, fmt.Errorf("%w: the index is a SimHash index (%s weighting, Hamming distance %d, %d blocks); asked for MinHash params %s",
				ErrParamsMismatch, sh.Params.Weighting, sh.K, sh.Blocks, params)
		}
		if bands != (lsh.Params{}) {
			return c, fmt.Errorf("%w: the index is a SimHash index with %d blocks (%d tables); asked for LSH bands %s", ErrBandsMismatch, sh.Blocks, c.Tables(), bands)
		}
	}
	if params != (minhash.Params{}) {
		params.EnsureDefaults()
		if params.Fingerprint() != c.Params.Fingerprint() {
			return c, fmt.Errorf("%w: the MinHash index has %s; asked for %s", ErrParamsMismatch, c.Params, params)
		}
	}
	if bands != (lsh.Params{}) && bands != c.Bands {
		return c, fmt.Errorf("%w: the MinHash index has %s; asked for %s", ErrBandsMismatch, c.Bands, bands)
	}
	if threshold != 0 {
		c.Threshold = threshold
	}
	if bucketCap != 0 {
		c.BucketCap = bucketCap
	}
	return c, nil
}

// Signer turns texts into signatures under a Config: the batch job's
// sign-and-band of one document (internal/sketch's Sketcher: the
// shingle.Shingler and fused minhash.Hasher), nothing more. It does not
// allocate per text once warm. A Signer is not safe for concurrent use; make
// one per goroutine. Its output is deterministic.
type Signer struct {
	sk sketch.Sketcher
}

// sketchConfig returns c's sketch.
func (c *Config) sketchConfig() sketch.Config {
	if c.Sketch == sketch.SimHash {
		s := &c.SimHash
		return sketch.Config{Spec: c.Spec, Kind: sketch.SimHash,
			SimHash: sketch.SimHashConfig{Params: s.Params, K: s.K, Blocks: s.Blocks, IDF: s.IDF}}
	}
	return sketch.Config{Spec: c.Spec, Params: c.Params, Bands: c.Bands}
}

// NewSigner returns a Signer for c.
func (c Config) NewSigner() (*Signer, error) {
	sk, err := c.sketchConfig().NewSketcher()
	if err != nil {
		return nil, err
	}
	return &Signer{sk: sk}, nil
}

// Sign appends the signature of text to dst and reports whether text had no
// features at all (the signature of the empty set, which matches every
// other empty text and so should not be indexed).
func (s *Signer) Sign(dst minhash.Signature, text []byte) (sig minhash.Signature, empty bool) {
	return s.sk.Sign(dst, text)
}

// Metrics returns the counts of the Signer's minhash.Hasher (signatures,
// features, empty bins).
func (s *Signer) Metrics() minhash.Metrics { return s.sk.Metrics() }

// An index of narrow keys stores the job's bucket keys (sketch.BucketKeyBits
// wide), or the index and neardup dedup would bucket differently. Both arrays
// have length 0 only when they agree.
var (
	_ [8*NarrowKeyBytes - sketch.BucketKeyBits]struct{}
	_ [sketch.BucketKeyBits - 8*NarrowKeyBytes]struct{}
)

// testNarrowKeyBits, when not 0, narrows the bucket keys of a 4-byte index
// further, to their high testNarrowKeyBits bits: tests force foreign keys
// to share buckets with it.
var testNarrowKeyBits uint

// keysOf appends the bucket keys of sig under c to dst, left-aligned in 64
// bits whatever the width: a wide key is the full band key
// (sketch.Config.AppendBandKeys); a narrow one the batch job's bucket key
// (sketch.Config.AppendBucketKeys) in the high 32 bits, which for MinHash is
// the band key with its low 32 bits cleared. slots is scratch, returned
// grown.
func (c *Config) keysOf(dst []uint64, slots []uint64, sig minhash.Signature) ([]uint64, []uint64) {
	sk := c.sketchConfig()
	if c.BucketKeyBytes == WideKeyBytes {
		return sk.AppendBandKeys(dst, slots, sig)
	}
	n := len(dst)
	dst, slots = sk.AppendBucketKeys(dst, slots, sig)
	for i := n; i < len(dst); i++ {
		dst[i] <<= 64 - sketch.BucketKeyBits
		if testNarrowKeyBits > 0 {
			dst[i] &^= 1<<(64-testNarrowKeyBits) - 1
		}
	}
	return dst, slots
}
