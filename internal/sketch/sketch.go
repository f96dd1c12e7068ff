// Package sketch is how neardup turns a document into what finds its near
// duplicates: a fixed-size signature, the bucket keys under which it meets
// its candidates, and the similarity estimate of two signatures. Every
// driver (dedup, neardup-beam, the online index) signs, bands and estimates
// through it, so that they find the same candidates; it is also the one
// place that says how wide a bucket key is. It is not the deduplication job
// (internal/jobspec holds that), and it reads no corpus.
//
// # The sketch seam
//
// Drivers use only Sketch, Sketcher and Grouper, made by Config.New, the one
// switch between sketches. There are two:
//
//   - MinHash (the default): shingle features, minhash signatures, lsh band
//     keys; every pair of documents sharing a bucket is a candidate
//     (lsh.Grouper).
//   - SimHash: one 64-bit fingerprint of the weighted features
//     (simhash.Hasher, TF or TF-IDF); one bucket key per block-permutation
//     table, the fingerprint's permuted block prefix after the table number
//     (simhash.Layout's entries with EntryDocBits document bits); a pair
//     sharing a bucket is a candidate only within Hamming distance K, and
//     only in the first table it shares (simhash.Grouper, which reads the
//     fingerprints: GroupsBySignature). Its Similarity is the unit-weight
//     model's Jaccard at the distance (simhash.ModelJaccard), a number for
//     reports. The number of blocks may wait for the corpus size
//     (Config.Resolve): the drivers then sign first and make the bucket
//     keys from the stored fingerprints.
//
// A third sketch implements Sketch, Sketcher and Grouper, adds its Kind and
// parameters to Config and a case to New and Config.AppendBucketKeys; the
// job adds its flag (internal/jobflags) and its lines in report.json
// (jobspec.NewReport). The drivers do not change: they store Words() words a
// document (in memory, by document, when GroupsBySignature), group sorted
// entries with NewGrouper, and verify through the Sketch.
//
// Everything here is deterministic; Sketch and Config values are safe to
// share, a Sketcher belongs to one goroutine.
package sketch

import (
	"errors"
	"fmt"
	"slices"

	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
)

// ErrInvalidConfig reports a Config that cannot make a sketch; check with
// errors.Is (the failing package's sentinel, shingle's, minhash's or lsh's,
// is wrapped instead when it has one).
var ErrInvalidConfig = errors.New("sketch: invalid config")

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

// Key widths. A batch driver (dedup, neardup-beam) groups by a bucket key of
// Sketch.KeyBits bits, the band key's high bits in place (low bits zero):
// 64 by default for MinHash, where 32 would let unequal bands share a key
// with probability 2^−32 and, at N documents of B keys each, add about
// B²·N²/2^33 accidental candidate pairs (7·10^5 at 5M documents and B = 16,
// 3·10^9 at 300M; docs/architecture.md, "Bucket key width"). SimHash's keys
// stay BucketKeyBits wide: its Hamming test, not the key, decides a pair.
const (
	// DefaultKeyBits is the default Config.KeyBits of MinHash: the whole
	// 64-bit band key.
	DefaultKeyBits = 64
	// MinKeyBits is the narrowest Config.KeyBits accepted: narrow keys
	// force accidental buckets, for tests of what verification removes.
	MinKeyBits = 8
)

// WideKeys reports whether keys of keyBits bits take wide entries (two words,
// AppendKeyEntries) rather than one word of key | document.
func WideKeys(keyBits int) bool { return keyBits > BucketKeyBits }

// KeyMask returns the mask of a key of keyBits bits in place: its high
// keyBits bits.
func KeyMask(keyBits int) uint64 { return ^uint64(0) << (64 - keyBits) }

// AppendKeyEntries appends the band-key entries of keys (in place, as
// Sketch.AppendKeys makes them, keyBits wide) and document doc to dst and
// returns the extended slice: for keys of at most BucketKeyBits bits one
// word each, key | doc (PackEntry of the key's high bits: the entries of
// AppendEntries); for wider keys two words each, the key and then the
// document, which extsort.WideSorter takes.
func AppendKeyEntries(dst, keys []uint64, doc uint32, keyBits int) []uint64 {
	if !WideKeys(keyBits) {
		for _, k := range keys {
			dst = append(dst, k|uint64(doc))
		}
		return dst
	}
	for _, k := range keys {
		dst = append(dst, k, uint64(doc))
	}
	return dst
}

// EntryWords is the number of uint64 words of one entry of AppendKeyEntries
// with keys of keyBits bits: 1, or 2 for wide keys.
func EntryWords(keyBits int) int {
	if WideKeys(keyBits) {
		return 2
	}
	return 1
}

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
// concurrent use; its results are deterministic. A second sketch implements
// it and Sketcher (see the package doc).
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
	// KeyBits is the width of the keys of AppendKeys: Config.KeyBits for
	// MinHash (default DefaultKeyBits), BucketKeyBits for SimHash.
	KeyBits() int
	// AppendKeys appends the bucket keys of sig to dst, each KeyBits() wide
	// and in place (the high bits of a uint64, the low bits zero: for
	// MinHash the band keys masked with KeyMask), and returns it with
	// scratch as AppendBucketKeys does. Two documents are candidates when
	// they share one (and, for SimHash, pass its test). Batch drivers make
	// their entries from them (AppendKeyEntries).
	AppendKeys(dst, scratch, sig []uint64) (keys, scratchOut []uint64)
	// Similarity estimates the Jaccard similarity of the documents whose
	// signatures are a and b.
	Similarity(a, b []uint64) float64
	// Empty reports whether sig, a stored signature of this sketch, is the
	// signature of a text without features (what Sketcher.Sign returns with
	// empty true), which must not be banded. A driver that reads
	// signatures without their texts (a signature file, an index) can tell
	// such documents only this way; a document with features has that
	// signature too with a small probability (for MinHash 2^−(K·Bits), at
	// most once in 2^16 documents only for K·Bits ≤ 16), and is then
	// taken for one without. A driver that has the text decides by the
	// text instead.
	Empty(sig []uint64) bool
	// GroupsBySignature reports whether NewGrouper reads the documents'
	// signatures (SimHash: the Hamming test), which the driver then keeps
	// in memory by document number.
	GroupsBySignature() bool
	// NewGrouper returns the step from sorted band-key entries (PackEntry,
	// with document numbers) to candidate pairs, for one stream of entries:
	// buckets of more than bucketCap documents link their members to the
	// first instead of pairing them all. sigs holds the signature of every
	// document by number, Words() words each, when GroupsBySignature (nil
	// otherwise); it is read, never written, and must not change while the
	// Grouper is in use. Documents numbered below reference are
	// reference documents, never paired with each other
	// (lsh.CandidateOptions.Reference; MinHash only: SimHash refuses
	// reference > 0).
	NewGrouper(sigs []uint64, bucketCap int, reference uint32) (Grouper, error)
}

// Grouper turns sorted band-key entries into candidate pairs, packed
// uint64(a)<<32 | b with a < b: lsh.Grouper's contract (Append, Flush,
// Metrics), with the sketch's candidate test. A pair may come out more than
// once (MinHash: once per bucket it shares); drivers deduplicate. Not safe
// for concurrent use; deterministic.
type Grouper interface {
	// Append consumes entries continuing the ascending order of those
	// before, appends the pairs of the buckets they close to dst and
	// returns it; an entry out of order is an error.
	Append(dst, entries []uint64) ([]uint64, error)
	// Flush closes the last bucket and appends its pairs.
	Flush(dst []uint64) []uint64
	// Metrics returns the counts so far: entries, buckets, pairs emitted,
	// capped buckets and the largest of them.
	Metrics() lsh.CandidateMetrics
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
	// AppendKeys is Sketch.AppendKeys with the Sketcher's own scratch.
	AppendKeys(dst, sig []uint64) []uint64
	// Metrics returns the counts of everything signed so far.
	Metrics() minhash.Metrics
}

// TextHasher is implemented by the Sketchers whose signature depends only on
// a text's normalised text (MinHash's: features are made from it): TextHash
// returns a 128-bit hash of that normalised text and whether it has no
// features, as shingle.Shingler.TextHash does, so that a driver can find
// exact duplicates before it signs. Sign called next with the same text
// reuses the normalisation TextHash made. Documents with the same hash have
// the same signature; a driver that finds one need not sign the other.
type TextHasher interface {
	TextHash(text []byte) (hi, lo uint64, empty bool)
	// TextHashHeld is TextHash for a caller that holds text's bytes
	// unchanged until it calls Sign with the same slice, as
	// shingle.Shingler.TextHashHeld: Sign then reuses the normalisation
	// without hashing the text again to check it is unchanged.
	TextHashHeld(text []byte) (hi, lo uint64, empty bool)
}

// FeatureSigner is implemented by the Sketchers whose signature of a text
// depends only on the set of its features (MinHash's: each slot is a minimum
// over the features): SignFeatures appends the signature of the text whose
// features, as shingle.Shingler.AppendFeatures makes them with the sketch's
// Spec, are features (in any order, repeats or not) — what Sign appends for
// that text, bit for bit — and reports whether the set is empty. A driver
// that has made a text's feature set for another use (exact verification)
// need not shingle the text again to sign it. SimHash's Sketcher does not
// implement it: its weights count repeated features.
type FeatureSigner interface {
	SignFeatures(dst, features []uint64) (sig []uint64, empty bool)
}

// KeySigner is implemented by the Sketchers that can sign a text for its
// bucket keys alone, for less than a whole signature (MinHash's: only the
// bins its bands read are densified, minhash.Hasher.DensifyFirst).
// SignForKeys is Sign, but of the signature it appends only what
// AppendKeys and AppendBucketKeys read is defined: the keys are those of
// Sign's signature, the other slots unspecified. A driver that bands a
// signature and never stores, writes or estimates from it (dedup's sign
// stage under exact verification, which signs the documents in pairs again
// for their estimates) calls it instead of Sign.
type KeySigner interface {
	SignForKeys(dst []uint64, text []byte) (sig []uint64, empty bool)
}

// Config chooses and parameterises a sketch, as plain data (it round-trips
// through encoding/json, a keyed Spec's key included, so a distributed
// driver can ship it to its workers; SimHash's TF-IDF weights excepted, see
// SimHashConfig.IDF).
type Config struct {
	Spec shingle.Spec // how texts become features
	// Kind selects the sketch; the zero value is MinHash.
	Kind Kind `json:",omitempty"`
	// MinHash: Params and Bands (zero under SimHash).
	Params minhash.Params // the signatures, defaults filled in
	Bands  lsh.Params     // the LSH banding that makes bucket keys
	// SimHash: its weighting, distance and layout (zero under MinHash).
	SimHash SimHashConfig
	// KeyBits is the width of MinHash's bucket keys in the batch drivers
	// (Sketch.KeyBits, AppendKeys), in bits. Default 0: DefaultKeyBits
	// (64); range MinKeyBits..64; BucketKeyBits (32) is the width before
	// version 0.12 (issue 12). Under SimHash it must be 0 (its keys are
	// BucketKeyBits wide).
	KeyBits int `json:",omitempty"`
}

// Keys returns the width of the sketch's bucket keys in the batch drivers:
// KeyBits, or its default (DefaultKeyBits for MinHash, BucketKeyBits for
// SimHash).
func (c Config) Keys() int {
	switch {
	case c.Kind == SimHash:
		return BucketKeyBits
	case c.KeyBits == 0:
		return DefaultKeyBits
	}
	return c.KeyBits
}

// CheckKeyBits reports whether bits is a usable Config.KeyBits (0, or
// MinKeyBits..64); errors wrap ErrInvalidConfig.
func CheckKeyBits(bits int) error {
	if bits != 0 && (bits < MinKeyBits || bits > 64) {
		return fmt.Errorf("%w: key bits %d; want %d..64 (0: %d)", ErrInvalidConfig, bits, MinKeyBits, DefaultKeyBits)
	}
	return nil
}

// New returns the sketch c describes. It is the one switch between sketches
// (a case per Kind here and in AppendBucketKeys).
func (c Config) New() (Sketch, error) {
	if err := CheckKeyBits(c.KeyBits); err != nil {
		return nil, err
	}
	switch c.Kind {
	case MinHash:
	case SimHash:
		if c.KeyBits != 0 {
			return nil, fmt.Errorf("%w: key bits %d under SimHash; its keys are %d bits (leave 0)", ErrInvalidConfig, c.KeyBits, BucketKeyBits)
		}
		return newSimHash(c)
	default:
		return nil, fmt.Errorf("%w: sketch kind %d", ErrInvalidConfig, c.Kind)
	}
	if err := c.Spec.Validate(); err != nil {
		return nil, err
	}
	if err := c.Params.Validate(); err != nil {
		return nil, err
	}
	if err := CheckBanding(c.Bands, c.Params.K); err != nil {
		return nil, err
	}
	m := &minHash{spec: c.Spec, params: c.Params, bands: c.Bands, keyBits: c.Keys()}
	k, err := m.NewSketcher()
	if err != nil {
		return nil, err
	}
	m.empty, _ = k.Sign(nil, nil)
	return m, nil
}

// AppendBucketKeys is the AppendBucketKeys of the sketch c describes, for a
// caller that holds only the configuration (the index bands the signatures
// it is sent): it appends the bucket keys of sig to dst, with scratch as
// working memory, and allocates nothing once scratch is large enough. c must
// be valid (New returns no error).
func (c *Config) AppendBucketKeys(dst, scratch, sig []uint64) (keys, scratchOut []uint64) {
	if c.Kind == SimHash {
		l, err := layoutOf(c.SimHash.layoutOptions())
		if err != nil {
			panic("sketch: AppendBucketKeys of an invalid or unresolved SimHash config: " + err.Error())
		}
		return simHashBucketKeys(l, dst, scratch, sig)
	}
	return minHashBucketKeys(c.Params, c.Bands, dst, scratch, sig)
}

// AppendBandKeys is AppendBucketKeys without the truncation to
// BucketKeyBits: for MinHash, the full 64-bit band keys of sig (lsh.Params'
// keys, of which a bucket key is the high BucketKeyBits bits), two
// different band values sharing one with probability 2^−64; for SimHash,
// its bucket keys as they are (the Hamming test on the fingerprints, not
// the key, decides a pair). The key of a driver that needs more than
// BucketKeyBits bits, such as an index of 10⁸ documents and more.
func (c *Config) AppendBandKeys(dst, scratch, sig []uint64) (keys, scratchOut []uint64) {
	if c.Kind == SimHash {
		return c.AppendBucketKeys(dst, scratch, sig)
	}
	return bandKeys(c.Params, c.Bands, dst, scratch, sig)
}

// NewSketcher returns a Sketcher of the sketch c describes, for one
// goroutine: c.New() and its NewSketcher.
func (c Config) NewSketcher() (Sketcher, error) {
	s, err := c.New()
	if err != nil {
		return nil, err
	}
	return s.NewSketcher()
}

// Banding is the one rule from bands, rows and probe to the banding of
// k-slot signatures, for every command that takes them (neardup dedup,
// neardup-beam, neardup index) and for the defaults of Options and index:
// bands × rows when both are set (> 0), else the most precise banding of k
// slots that reaches recall at threshold (lsh.ForRecall); probe, the rows
// in which a band may differ and still match, is added either way. Bands and
// rows go together; none of the three may be negative. Errors wrap
// ErrInvalidConfig or lsh's sentinels and name the values.
func Banding(bands, rows, probe int, threshold float64, k int, recall float64) (lsh.Params, error) {
	switch {
	case bands < 0 || rows < 0 || probe < 0:
		return lsh.Params{}, fmt.Errorf("%w: bands %d, rows %d, probe %d; none may be negative", ErrInvalidConfig, bands, rows, probe)
	case (bands > 0) != (rows > 0):
		return lsh.Params{}, fmt.Errorf("%w: bands %d and rows %d go together (both 0: chosen from the threshold and recall)", ErrInvalidConfig, bands, rows)
	}
	var b lsh.Params
	if bands > 0 {
		b = lsh.Params{Bands: bands, Rows: rows}
	} else {
		var err error
		if b, err = lsh.ForRecall(threshold, k, recall); err != nil {
			return b, fmt.Errorf("%w: choosing bands: %w", ErrInvalidConfig, err)
		}
	}
	b.Probe = probe
	if err := CheckBanding(b, k); err != nil {
		return lsh.Params{}, err
	}
	return b, nil
}

// CheckBanding reports whether b is a usable banding of k-slot signatures:
// valid for lsh (errors wrap lsh's sentinel) and reading at most k slots
// (errors wrap ErrInvalidConfig).
func CheckBanding(b lsh.Params, k int) error {
	if err := b.Validate(); err != nil {
		return err
	}
	if b.Slots() > k {
		return fmt.Errorf("%w: bands %s need %d slots, signatures have %d", ErrInvalidConfig, b, b.Slots(), k)
	}
	return nil
}

// minHashBucketKeys is MinHash's banding: the lsh band keys of the
// signature's slots, each truncated to a bucket key.
func minHashBucketKeys(params minhash.Params, bands lsh.Params, dst, scratch, sig []uint64) ([]uint64, []uint64) {
	n := len(dst)
	dst, scratch = bandKeys(params, bands, dst, scratch, sig)
	for i := n; i < len(dst); i++ {
		dst[i] = BucketKey(dst[i])
	}
	return dst, scratch
}

// bandKeys appends lsh's 64-bit band keys of signature sig to dst, with
// scratch as working memory: the keys of bands over sig's slots (AppendSlots),
// read in place when they are 32 bits wide (lsh.Params.AppendKeys32, the
// same keys).
func bandKeys(params minhash.Params, bands lsh.Params, dst, scratch, sig []uint64) (keys, scratchOut []uint64) {
	if params.Bits == 32 {
		return bands.AppendKeys32(dst, sig), scratch
	}
	slots := params.AppendSlots(scratch[:0], sig)
	return bands.AppendKeys(dst, slots), slots
}

// minHash is the MinHash + LSH Sketch: features by a shingle.Spec, minhash
// signatures (the fused Hasher.SignText), the band keys of lsh.Params over
// the signature's slots as bucket keys, and minhash.Params.Similarity as the
// estimate.
type minHash struct {
	spec    shingle.Spec
	params  minhash.Params
	bands   lsh.Params
	keyBits int      // Config.Keys
	empty   []uint64 // the signature of a text without features
}

var _ Sketch = (*minHash)(nil)

func (m *minHash) Words() int { return m.params.Words() }

func (m *minHash) Similarity(a, b []uint64) float64 { return m.params.Similarity(a, b) }

func (m *minHash) Empty(sig []uint64) bool { return slices.Equal(sig, m.empty) }

func (m *minHash) AppendBucketKeys(dst, scratch, sig []uint64) ([]uint64, []uint64) {
	return minHashBucketKeys(m.params, m.bands, dst, scratch, sig)
}

func (m *minHash) KeyBits() int { return m.keyBits }

func (m *minHash) AppendKeys(dst, scratch, sig []uint64) ([]uint64, []uint64) {
	n := len(dst)
	dst, scratch = bandKeys(m.params, m.bands, dst, scratch, sig)
	if m.keyBits < 64 {
		mask := KeyMask(m.keyBits)
		for i := n; i < len(dst); i++ {
			dst[i] &= mask
		}
	}
	return dst, scratch
}

func (m *minHash) GroupsBySignature() bool { return false }

func (m *minHash) NewGrouper(_ []uint64, bucketCap int, reference uint32) (Grouper, error) {
	return lsh.NewGrouper(EntryDocBits, &lsh.CandidateOptions{Cap: bucketCap, Reference: reference})
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

var (
	_ Sketcher      = (*minHashSketcher)(nil)
	_ TextHasher    = (*minHashSketcher)(nil)
	_ FeatureSigner = (*minHashSketcher)(nil)
	_ KeySigner     = (*minHashSketcher)(nil)
)

func (k *minHashSketcher) TextHash(text []byte) (hi, lo uint64, empty bool) {
	return k.sh.TextHash(text)
}

func (k *minHashSketcher) TextHashHeld(text []byte) (hi, lo uint64, empty bool) {
	return k.sh.TextHashHeld(text)
}

func (k *minHashSketcher) Sign(dst []uint64, text []byte) ([]uint64, bool) {
	sig := k.h.SignText(dst, k.sh, text)
	return sig, k.h.Empty()
}

// SignForKeys is Sign with only the slots the bands read (the first
// Bands·Rows) densified.
func (k *minHashSketcher) SignForKeys(dst []uint64, text []byte) ([]uint64, bool) {
	k.h.DensifyFirst(k.m.bands.Bands * k.m.bands.Rows)
	sig := k.h.SignText(dst, k.sh, text)
	k.h.DensifyFirst(0)
	return sig, k.h.Empty()
}

// SignFeatures is Sign of the text whose features are features: a slot is
// the minimum over the set (repeats and order change nothing), and
// densification reads the set only.
func (k *minHashSketcher) SignFeatures(dst, features []uint64) ([]uint64, bool) {
	sig := k.h.Sign(dst, features)
	return sig, k.h.Empty()
}

func (k *minHashSketcher) AppendBucketKeys(dst, sig []uint64) []uint64 {
	dst, k.slots = k.m.AppendBucketKeys(dst, k.slots, sig)
	return dst
}

func (k *minHashSketcher) AppendKeys(dst, sig []uint64) []uint64 {
	dst, k.slots = k.m.AppendKeys(dst, k.slots, sig)
	return dst
}

func (k *minHashSketcher) Metrics() minhash.Metrics { return k.h.Metrics() }
