package jobspec

import (
	"fmt"

	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
)

// Bucket keys and band-key entries. A bucket key is what documents must share
// to become candidates; every driver groups by the same key, so that their
// buckets, capped buckets and report.json agree. This is the one place that
// says how wide it is.
const (
	// BucketKeyBits is the width of a bucket key: the high 32 bits of a
	// 64-bit band key. Two different band values share them with
	// probability 2^-32, which only adds a candidate that verification
	// removes (or, under VerifyNone, a false pair).
	BucketKeyBits = 32
	// EntryDocBits is the width of the document field of a band-key entry,
	// the rest of 64 bits: an entry is bucket<<EntryDocBits | document, so
	// that entries sort by bucket, then document, and a run numbers at most
	// 2^EntryDocBits documents (per partition, for neardup-beam).
	EntryDocBits = 64 - BucketKeyBits
)

// Entries hold 32-bit document numbers (dedup's input positions, lsh's
// Grouper): a bucket key wider than 32 bits needs wider entries, and this
// declaration stops the build until they are.
var _ [EntryDocBits - 32]struct{}

// BucketKey returns the bucket key of a 64-bit band key: its high
// BucketKeyBits bits.
func BucketKey(bandKey uint64) uint64 { return bandKey >> (64 - BucketKeyBits) }

// PackEntry returns the band-key entry of bucket key bucket and document doc
// (an input position, or a number in document order).
func PackEntry(bucket uint64, doc uint32) uint64 { return bucket<<EntryDocBits | uint64(doc) }

// AppendEntries appends PackEntry(k, doc) for each bucket key k of keys to
// dst and returns the extended slice.
func AppendEntries(dst, keys []uint64, doc uint32) []uint64 {
	for _, k := range keys {
		dst = append(dst, k<<EntryDocBits|uint64(doc))
	}
	return dst
}

// EntryBucket returns the bucket key of an entry (or of an lsh.Bucket.Key,
// which is an entry with its document bits cleared).
func EntryBucket(e uint64) uint64 { return e >> EntryDocBits }

// EntryDoc returns the document of an entry.
func EntryDoc(e uint64) uint32 { return uint32(e) }

// FormatBucketKey renders a bucket key as report.json lists it: the band
// key's high bits in place, low bits zero, 16 hex digits.
func FormatBucketKey(bucket uint64) string { return fmt.Sprintf("%016x", bucket<<EntryDocBits) }

// Sketch is the job's sketch: how a text becomes a fixed-size signature, a
// signature bucket keys, and two signatures a similarity estimate. It is the
// seam a second sketch plugs into: the drivers (dedup, neardup-beam, the
// index's signer) sign, band and estimate only through it and Sketcher, and
// never name minhash or lsh for it. A Sketch is immutable and safe for
// concurrent use; its results are deterministic.
//
// A second sketch, SimHash say (one 64-bit fingerprint per document, bucket
// keys from permuted block prefixes, an estimate from the Hamming
// distance), implements these four methods and Sketcher, and gets a case in
// SketchConfig.New; see the package doc.
type Sketch interface {
	// Words is the length of every signature, in uint64 words.
	Words() int
	// NewSketcher returns a Sketcher for one goroutine.
	NewSketcher() (Sketcher, error)
	// AppendBucketKeys appends the bucket keys of sig, a signature of this
	// sketch, to dst (each below 1<<BucketKeyBits; the same key may occur
	// twice) and returns it with scratch, working memory it may grow; pass
	// the returned scratch back to avoid allocating.
	AppendBucketKeys(dst, scratch, sig []uint64) (keys, scratchOut []uint64)
	// Similarity estimates the Jaccard similarity of the documents whose
	// signatures are a and b.
	Similarity(a, b []uint64) float64
}

// Sketcher signs and bands documents for one goroutine: it owns scratch
// buffers and is not safe for concurrent use. Its output is deterministic.
type Sketcher interface {
	// Sign appends the signature of text (Sketch.Words words) to dst and
	// returns it; empty reports a text without features, whose signature
	// (that of the empty set, equal for every such text) must not be
	// banded.
	Sign(dst []uint64, text []byte) (sig []uint64, empty bool)
	// AppendBucketKeys is Sketch.AppendBucketKeys with the Sketcher's own
	// scratch.
	AppendBucketKeys(dst, sig []uint64) []uint64
	// Metrics returns the counts of everything signed so far.
	Metrics() minhash.Metrics
}

// SketchConfig is the part of a job that chooses and parameterises its
// sketch, as plain data (it round-trips through encoding/json, a keyed Spec's
// key included, so a distributed driver can ship it to its workers).
type SketchConfig struct {
	Spec   shingle.Spec   // how texts become features
	Params minhash.Params // the signatures, defaults filled in
	Bands  lsh.Params     // the LSH banding that makes bucket keys
}

// New returns the sketch c describes. It is the one switch between sketches:
// today MinHash (shingle features, minhash signatures, lsh band keys); a
// second sketch adds a field to SketchConfig that selects it and a case
// here (and in AppendBucketKeys).
func (c SketchConfig) New() (Sketch, error) {
	if err := c.Spec.Validate(); err != nil {
		return nil, err
	}
	if err := c.Params.Validate(); err != nil {
		return nil, err
	}
	if err := checkBanding(c.Bands, c.Params.K); err != nil {
		return nil, err
	}
	return &minHash{spec: c.Spec, params: c.Params, bands: c.Bands}, nil
}

// AppendBucketKeys is the AppendBucketKeys of the sketch c describes, for a
// caller that holds only the configuration (the index bands the signatures
// it is sent): it appends the bucket keys of sig to dst, with scratch as
// working memory, and allocates nothing once scratch is large enough. c must
// be valid (New returns no error).
func (c *SketchConfig) AppendBucketKeys(dst, scratch, sig []uint64) (keys, scratchOut []uint64) {
	return minHashBucketKeys(c.Params, c.Bands, dst, scratch, sig)
}

// minHashBucketKeys is MinHash's banding: the lsh band keys of the
// signature's slots, each truncated to a bucket key.
func minHashBucketKeys(params minhash.Params, bands lsh.Params, dst, scratch, sig []uint64) ([]uint64, []uint64) {
	slots := params.AppendSlots(scratch[:0], sig)
	n := len(dst)
	dst = bands.AppendKeys(dst, slots)
	for i := n; i < len(dst); i++ {
		dst[i] = BucketKey(dst[i])
	}
	return dst, slots
}

// minHash is the MinHash + LSH Sketch: features by a shingle.Spec, minhash
// signatures (the fused Hasher.SignText), the band keys of lsh.Params over
// the signature's slots as bucket keys, and minhash.Params.Similarity as the
// estimate.
type minHash struct {
	spec   shingle.Spec
	params minhash.Params
	bands  lsh.Params
}

var _ Sketch = (*minHash)(nil)

func (m *minHash) Words() int { return m.params.Words() }

func (m *minHash) Similarity(a, b []uint64) float64 { return m.params.Similarity(a, b) }

func (m *minHash) AppendBucketKeys(dst, scratch, sig []uint64) ([]uint64, []uint64) {
	return minHashBucketKeys(m.params, m.bands, dst, scratch, sig)
}

func (m *minHash) NewSketcher() (Sketcher, error) {
	sh, err := shingle.New(m.spec)
	if err != nil {
		return nil, err
	}
	h, err := minhash.NewHasher(m.params)
	if err != nil {
		return nil, err
	}
	return &minHashSketcher{m: m, sh: sh, h: h}, nil
}

// minHashSketcher is minHash's Sketcher.
type minHashSketcher struct {
	m     *minHash
	sh    *shingle.Shingler
	h     *minhash.Hasher
	slots []uint64
}

var _ Sketcher = (*minHashSketcher)(nil)

func (k *minHashSketcher) Sign(dst []uint64, text []byte) ([]uint64, bool) {
	sig := k.h.SignText(dst, k.sh, text)
	return sig, k.h.Empty()
}

func (k *minHashSketcher) AppendBucketKeys(dst, sig []uint64) []uint64 {
	dst, k.slots = k.m.AppendBucketKeys(dst, k.slots, sig)
	return dst
}

func (k *minHashSketcher) Metrics() minhash.Metrics { return k.h.Metrics() }
