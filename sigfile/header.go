package sigfile

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/zeebo/xxh3"

	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
)

// Format constants; docs/signature-format.md §6 defines the layout they name.
const (
	// Magic opens every signature file.
	Magic = "NDSF"
	// TrailerMagic follows the four zero bytes that open the trailer.
	TrailerMagic = "NDSE"
	// Version is the file format version this package writes and reads.
	Version = 1

	// MaxIDLen bounds document ids: an id has fewer than MaxIDLen bytes, so
	// its length takes at most three bytes of uvarint.
	MaxIDLen = 1 << 16

	// DefaultBlockBytes is the default target size of a block's records:
	// 64 KiB, large enough that a block's 16 bytes of framing and checksum
	// cost 0.02 % and small enough to stay in cache while it is checked.
	DefaultBlockBytes = 64 << 10
	// MinBlockBytes and MaxBlockBytes bound Header.BlockBytes. A reader
	// holds one block in memory, so the bound is also its buffer's.
	MinBlockBytes = 64
	MaxBlockBytes = 16 << 20

	// MaxShards is the largest shard count a header may carry.
	MaxShards = 1 << 24

	// maxCanonical bounds the length of each canonical form in the header.
	maxCanonical = 1024

	fixedHeaderSize = 30 // up to and including the spec length
	blockHeaderSize = 8  // record count, byte length
	checksumSize    = 8
	trailerSize     = 24
)

// Sketch is the kind of signature a file holds.
type Sketch uint8

// The sketches.
const (
	// MinHash signatures: Params.K slots of Params.Bits bits (package
	// minhash), made from the set of a text's features.
	MinHash Sketch = 1
	// SimHash fingerprints: one 64-bit fingerprint (package simhash) of the
	// weighted multiset of a text's features.
	SimHash Sketch = 2
)

// String returns "minhash" or "simhash".
func (s Sketch) String() string {
	switch s {
	case MinHash:
		return "minhash"
	case SimHash:
		return "simhash"
	}
	return "sketch(" + strconv.Itoa(int(s)) + ")"
}

// ParseSketch reads "minhash" or "simhash".
func ParseSketch(s string) (Sketch, error) {
	switch s {
	case "minhash":
		return MinHash, nil
	case "simhash":
		return SimHash, nil
	}
	return 0, fmt.Errorf("%w: sketch %q, want minhash or simhash", ErrInvalidHeader, s)
}

// Weighting is how a SimHash fingerprint weighs a text's features.
type Weighting uint8

// The weightings.
const (
	// TF weighs each feature by its number of occurrences in the text
	// (simhash.Fingerprint of the text's features, repeats included).
	TF Weighting = 1
	// TFIDF weighs each feature by its occurrences times its inverse
	// document frequency, from a document-frequency table identified by
	// SimHashParams.DFFingerprint.
	TFIDF Weighting = 2
)

// String returns "tf" or "tfidf".
func (w Weighting) String() string {
	switch w {
	case TF:
		return "tf"
	case TFIDF:
		return "tfidf"
	}
	return "weighting(" + strconv.Itoa(int(w)) + ")"
}

// SimHashBits is the width of a SimHash fingerprint.
const SimHashBits = 64

// SimHashParams define SimHash fingerprints beyond the shingle spec: the
// weighting, and for TF-IDF the document-frequency table. Two fingerprints
// are comparable only when made under equal SimHashParams (equal
// Fingerprint) from features of the same shingle spec.
//
// The zero value means TF weighting. A plain value, safe to copy and share.
type SimHashParams struct {
	// Weighting is how features are weighed. Default TF.
	Weighting Weighting
	// DFFingerprint identifies the document-frequency table of TFIDF
	// weighting (its own 64-bit fingerprint, defined with the table); it
	// must be non-zero with TFIDF and zero with TF. No default.
	DFFingerprint uint64
}

// EnsureDefaults fills zero fields with their defaults and returns p; a nil
// p yields a new SimHashParams with every default.
func (p *SimHashParams) EnsureDefaults() *SimHashParams {
	if p == nil {
		p = &SimHashParams{}
	}
	if p.Weighting == 0 {
		p.Weighting = TF
	}
	return p
}

// Validate reports whether p (after defaults) is usable; the error wraps
// ErrInvalidHeader and names the field and the rule.
func (p SimHashParams) Validate() error {
	switch {
	case p.Weighting != TF && p.Weighting != TFIDF:
		return fmt.Errorf("%w: simhash weighting %d, want tf or tfidf", ErrInvalidHeader, p.Weighting)
	case p.Weighting == TFIDF && p.DFFingerprint == 0:
		return fmt.Errorf("%w: simhash tfidf weighting without a document-frequency table fingerprint", ErrInvalidHeader)
	case p.Weighting == TF && p.DFFingerprint != 0:
		return fmt.Errorf("%w: simhash tf weighting with a document-frequency table fingerprint %016x", ErrInvalidHeader, p.DFFingerprint)
	}
	return nil
}

// String returns the canonical form, "v1/simhash/bits=64/weight=tf" or
// "v1/simhash/bits=64/weight=tfidf/df=<fingerprint in 16 hex digits>".
func (p SimHashParams) String() string {
	s := "v1/simhash/bits=" + strconv.Itoa(SimHashBits) + "/weight=" + p.Weighting.String()
	if p.Weighting == TFIDF {
		s += fmt.Sprintf("/df=%016x", p.DFFingerprint)
	}
	return s
}

// Fingerprint is the xxh3-64 (seed 0) of String().
func (p SimHashParams) Fingerprint() uint64 { return xxh3.HashString(p.String()) }

// ParseSimHashParams reads the canonical form String returns.
func ParseSimHashParams(s string) (SimHashParams, error) {
	var p SimHashParams
	rest, ok := strings.CutPrefix(s, "v1/simhash/bits=64/weight=")
	if !ok {
		return p, fmt.Errorf("%w: simhash params %q, want v1/simhash/bits=64/weight=…", ErrInvalidHeader, s)
	}
	switch {
	case rest == "tf":
		p.Weighting = TF
	case strings.HasPrefix(rest, "tfidf/df=") && len(rest) == len("tfidf/df=")+16:
		p.Weighting = TFIDF
		v, err := strconv.ParseUint(rest[len("tfidf/df="):], 16, 64)
		if err != nil {
			return p, fmt.Errorf("%w: simhash params %q: df fingerprint is not 16 hex digits", ErrInvalidHeader, s)
		}
		p.DFFingerprint = v
	default:
		return p, fmt.Errorf("%w: simhash params %q: weighting must be tf or tfidf/df=<16 hex digits>", ErrInvalidHeader, s)
	}
	if err := p.Validate(); err != nil {
		return p, err
	}
	if p.String() != s {
		return p, fmt.Errorf("%w: simhash params %q are not in canonical form (%q)", ErrInvalidHeader, s, p.String())
	}
	return p, nil
}

// parseMinHashParams reads minhash.Params.String's canonical form, which
// carries the seed: "v2/oph/k=128/bits=32/seed=0".
func parseMinHashParams(s string) (minhash.Params, error) {
	var p minhash.Params
	parts := strings.Split(s, "/")
	want := "v" + strconv.Itoa(minhash.FormatVersion)
	if len(parts) != 5 || !strings.HasPrefix(parts[0], "v") {
		return p, fmt.Errorf("%w: minhash params %q, want the form %s/oph/k=128/bits=32/seed=0", ErrInvalidHeader, s, want)
	}
	if parts[0] != want {
		return p, fmt.Errorf("%w: minhash params %q of signature version %s; this build makes and compares %s", ErrInvalidHeader, s, parts[0], want)
	}
	scheme, err := minhash.ParseScheme(parts[1])
	if err != nil {
		return p, fmt.Errorf("%w: minhash params %q: %v", ErrInvalidHeader, s, err)
	}
	p.Scheme = scheme
	for i, f := range []struct {
		name string
		dst  *int
	}{{"k=", &p.K}, {"bits=", &p.Bits}} {
		v, ok := strings.CutPrefix(parts[2+i], f.name)
		n, err := strconv.Atoi(v)
		if !ok || err != nil {
			return p, fmt.Errorf("%w: minhash params %q: field %q, want %s<number>", ErrInvalidHeader, s, parts[2+i], f.name)
		}
		*f.dst = n
	}
	v, ok := strings.CutPrefix(parts[4], "seed=")
	if p.Seed, err = strconv.ParseUint(v, 10, 64); !ok || err != nil {
		return p, fmt.Errorf("%w: minhash params %q: field %q, want seed=<number>", ErrInvalidHeader, s, parts[4])
	}
	if err := p.Validate(); err != nil {
		return p, fmt.Errorf("%w: minhash params %q: %v", ErrInvalidHeader, s, err)
	}
	if p.String() != s {
		return p, fmt.Errorf("%w: minhash params %q are not in canonical form (%q)", ErrInvalidHeader, s, p.String())
	}
	return p, nil
}

// Header is what a signature file says about its signatures: everything a
// reader needs to use them without being told how they were made. A plain
// value, safe to copy.
//
// Build one with MinHashHeader or SimHashHeader; a Writer fills zero fields
// with defaults and checks it with Validate.
type Header struct {
	// Version is the format version of the file read: Version, or 0 for an
	// old-format file read under ReadOptions.Legacy. A Writer ignores it.
	Version int
	// Sketch is the kind of signature. Required.
	Sketch Sketch
	// Spec is the canonical form of the shingle spec (shingle.Spec.String):
	// for a keyed spec it shows the key's fingerprint, never the key.
	// Required.
	Spec string
	// MinHash are the params of MinHash signatures, seed included; zero for
	// SimHash.
	MinHash minhash.Params
	// SimHash are the params of SimHash fingerprints; zero for MinHash.
	SimHash SimHashParams
	// Shard and Shards place the file in a sharded output: shard Shard
	// (0-based) of Shards. Default 0 and 0: not sharded.
	Shard, Shards int
	// BlockBytes is the target size in bytes of a block's records: a block
	// holds records up to this size, or a single larger record. Default
	// DefaultBlockBytes; range MinBlockBytes..MaxBlockBytes.
	BlockBytes int
}

// MinHashHeader returns the header of MinHash signatures made under spec and
// p (defaults filled in).
func MinHashHeader(spec shingle.Spec, p minhash.Params) Header {
	p.EnsureDefaults()
	return Header{Version: Version, Sketch: MinHash, Spec: spec.String(), MinHash: p}
}

// SimHashHeader returns the header of SimHash fingerprints made under spec
// and p (defaults filled in).
func SimHashHeader(spec shingle.Spec, p SimHashParams) Header {
	p.EnsureDefaults()
	return Header{Version: Version, Sketch: SimHash, Spec: spec.String(), SimHash: p}
}

// ensureDefaults fills the defaults a Writer applies.
func (h *Header) ensureDefaults() {
	h.Version = Version
	switch h.Sketch {
	case MinHash:
		h.MinHash.EnsureDefaults()
	case SimHash:
		h.SimHash.EnsureDefaults()
	}
	if h.BlockBytes == 0 {
		h.BlockBytes = DefaultBlockBytes
	}
}

// Validate reports whether h can be written; errors wrap ErrInvalidHeader
// and name the field and the rule.
func (h Header) Validate() error {
	switch h.Sketch {
	case MinHash:
		if h.SimHash != (SimHashParams{}) {
			return fmt.Errorf("%w: minhash header with simhash params %s", ErrInvalidHeader, h.SimHash)
		}
		if err := h.MinHash.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidHeader, err)
		}
	case SimHash:
		if h.MinHash != (minhash.Params{}) {
			return fmt.Errorf("%w: simhash header with minhash params %s", ErrInvalidHeader, h.MinHash)
		}
		if err := h.SimHash.Validate(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: sketch %d, want minhash (1) or simhash (2)", ErrInvalidHeader, h.Sketch)
	}
	if err := checkSpecForm(h.Spec); err != nil {
		return err
	}
	switch {
	case h.Shards < 0 || h.Shards > MaxShards:
		return fmt.Errorf("%w: %d shards, want 0..%d", ErrInvalidHeader, h.Shards, MaxShards)
	case h.Shards == 0 && h.Shard != 0:
		return fmt.Errorf("%w: shard %d of an unsharded output (shards = 0)", ErrInvalidHeader, h.Shard)
	case h.Shards > 0 && (h.Shard < 0 || h.Shard >= h.Shards):
		return fmt.Errorf("%w: shard %d of %d, want 0..%d", ErrInvalidHeader, h.Shard, h.Shards, h.Shards-1)
	case h.BlockBytes < MinBlockBytes || h.BlockBytes > MaxBlockBytes:
		return fmt.Errorf("%w: block bytes %d, want %d..%d", ErrInvalidHeader, h.BlockBytes, MinBlockBytes, MaxBlockBytes)
	}
	return nil
}

// checkSpecForm checks the outline of a shingle spec's canonical form
// (v<version>/<unit>:<n>/<flags>/<hash>/unicode:<version>, and
// /boilerplate:… for a spec that drops boilerplate lines), not its values:
// a file made with other Unicode tables is still readable, and ShingleSpec
// says why its spec cannot be rebuilt.
func checkSpecForm(s string) error {
	slashes := strings.Count(s, "/")
	if len(s) == 0 || len(s) > maxCanonical || !utf8.ValidString(s) || s[0] != 'v' ||
		!(slashes == 4 || slashes == 5 && hasBoilerplate(s)) {
		return fmt.Errorf("%w: shingle spec %q is not a canonical form (v1/<unit>:<n>/<flags>/<hash>/unicode:<version>[/boilerplate:…], at most %d bytes)",
			ErrInvalidHeader, s, maxCanonical)
	}
	return nil
}

// hasBoilerplate reports whether the canonical form s names a boilerplate
// set (its last part begins "boilerplate:").
func hasBoilerplate(s string) bool {
	return strings.HasPrefix(s[strings.LastIndexByte(s, '/')+1:], "boilerplate:")
}

// Params returns the canonical form of the sketch params: MinHash.String()
// or SimHash.String().
func (h Header) Params() string {
	if h.Sketch == SimHash {
		return h.SimHash.String()
	}
	return h.MinHash.String()
}

// SpecFingerprint returns the fingerprint of the shingle spec: xxh3-64 of
// Spec, equal to shingle.Spec.Fingerprint of the spec it names.
func (h Header) SpecFingerprint() uint64 { return xxh3.HashString(h.Spec) }

// ParamsFingerprint returns the fingerprint of the sketch params: xxh3-64
// of Params(), equal to minhash.Params.Fingerprint for MinHash.
func (h Header) ParamsFingerprint() uint64 { return xxh3.HashString(h.Params()) }

// Slots returns the number of slots of a signature: MinHash.K, or 1 for a
// SimHash fingerprint.
func (h Header) Slots() int {
	if h.Sketch == SimHash {
		return 1
	}
	return h.MinHash.K
}

// SlotBits returns the width of a slot: MinHash.Bits, or 64.
func (h Header) SlotBits() int {
	if h.Sketch == SimHash {
		return SimHashBits
	}
	return h.MinHash.Bits
}

// Words returns the length in uint64 words of a record's signature:
// MinHash.Words(), or 1.
func (h Header) Words() int { return (h.Slots()*h.SlotBits() + 63) / 64 }

// SignatureBytes returns the size of a record's signature in the file:
// ⌈Slots·SlotBits/8⌉.
func (h Header) SignatureBytes() int { return (h.Slots()*h.SlotBits() + 7) / 8 }

// String renders the header on one line.
func (h Header) String() string {
	s := fmt.Sprintf("%s signatures, spec %s, params %s", h.Sketch, h.Spec, h.Params())
	if h.Shards > 0 {
		s += fmt.Sprintf(", shard %d of %d", h.Shard, h.Shards)
	}
	return s
}

// ShingleSpec rebuilds the shingle spec from its canonical form. A keyed
// spec needs its key, whose fingerprint must match the one in the file
// (key is ignored for an unkeyed spec). Errors wrap ErrSpecMismatch.
func (h Header) ShingleSpec(key *shingle.Key) (shingle.Spec, error) {
	if hasBoilerplate(h.Spec) {
		return shingle.Spec{}, fmt.Errorf("%w: the signatures are made under %s, which drops boilerplate lines; pass their set (ShingleSpecLines)", ErrSpecMismatch, h.Spec)
	}
	canon := h.Spec
	parts := strings.Split(canon, "/")
	keyed := len(parts) == 5 && strings.HasPrefix(parts[3], "siphash:")
	if keyed {
		if key == nil {
			return shingle.Spec{}, fmt.Errorf("%w: the signatures are made under the keyed spec %s; pass its key", ErrSpecMismatch, h.Spec)
		}
		parts[3] = "xxh3:0"
		canon = strings.Join(parts, "/")
	}
	spec, err := shingle.Parse(canon)
	if err != nil {
		return shingle.Spec{}, fmt.Errorf("%w: the spec %s cannot be rebuilt: %w", ErrSpecMismatch, h.Spec, err)
	}
	if keyed {
		spec.Seed, spec.Key = 0, key
	}
	if got := spec.String(); got != h.Spec {
		if keyed {
			return shingle.Spec{}, fmt.Errorf("%w: the signatures are made under %s; the key given has fingerprint %016x", ErrSpecMismatch, h.Spec, key.Fingerprint())
		}
		return shingle.Spec{}, fmt.Errorf("%w: the spec %s is not in canonical form (%s)", ErrSpecMismatch, h.Spec, got)
	}
	return spec, nil
}

// ShingleSpecLines is ShingleSpec for any spec, one that drops boilerplate
// lines included: given the key of a keyed spec and the boilerplate set of
// one that drops lines (each may be nil when the spec has none), it
// rebuilds the spec and checks that the key and set are those the header
// names (shingle.ParseCanonical). Errors wrap ErrSpecMismatch.
func (h Header) ShingleSpecLines(key *shingle.Key, bp *shingle.Boilerplate) (shingle.Spec, error) {
	spec, err := shingle.ParseCanonical(h.Spec, key, bp)
	if err != nil {
		return shingle.Spec{}, fmt.Errorf("%w: the spec %s cannot be rebuilt: %w", ErrSpecMismatch, h.Spec, err)
	}
	return spec, nil
}

// CheckMinHash reports whether the file holds MinHash signatures made
// under spec and p (defaults filled in), that is whether they are
// comparable with signatures made under them. A mismatch wraps
// ErrSketchMismatch, ErrSpecMismatch or ErrParamsMismatch and names both
// canonical forms and fingerprints.
func (h Header) CheckMinHash(spec shingle.Spec, p minhash.Params) error {
	p.EnsureDefaults()
	if h.Sketch != MinHash {
		return fmt.Errorf("%w: the signature file holds %s signatures (%s); asked for minhash (%s)", ErrSketchMismatch, h.Sketch, h.Params(), p)
	}
	if err := h.checkSpec(spec); err != nil {
		return err
	}
	if got := p.Fingerprint(); got != h.ParamsFingerprint() {
		return fmt.Errorf("%w: the signature file has %s (fingerprint %016x); asked for %s (%016x)", ErrParamsMismatch, h.Params(), h.ParamsFingerprint(), p, got)
	}
	return nil
}

// CheckSimHash is CheckMinHash for SimHash fingerprints made under spec and
// p (defaults filled in).
func (h Header) CheckSimHash(spec shingle.Spec, p SimHashParams) error {
	p.EnsureDefaults()
	if h.Sketch != SimHash {
		return fmt.Errorf("%w: the signature file holds %s signatures (%s); asked for simhash (%s)", ErrSketchMismatch, h.Sketch, h.Params(), p)
	}
	if err := h.checkSpec(spec); err != nil {
		return err
	}
	if got := p.Fingerprint(); got != h.ParamsFingerprint() {
		return fmt.Errorf("%w: the signature file has %s (fingerprint %016x); asked for %s (%016x)", ErrParamsMismatch, h.Params(), h.ParamsFingerprint(), p, got)
	}
	return nil
}

func (h Header) checkSpec(spec shingle.Spec) error {
	if got := spec.Fingerprint(); got != h.SpecFingerprint() {
		return fmt.Errorf("%w: the signature file has %s (fingerprint %016x); asked for %s (%016x)", ErrSpecMismatch, h.Spec, h.SpecFingerprint(), spec, got)
	}
	return nil
}

// appendHeader appends the encoding of h (valid, defaults filled) to dst.
func appendHeader(dst []byte, h Header) []byte {
	start := len(dst)
	dst = append(dst, Magic...)
	dst = append(dst, byte(Version), byte(h.Sketch), 0, 0)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.Slots()))
	dst = append(dst, byte(h.SlotBits()), 0, 0, 0)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.BlockBytes))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.Shard))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.Shards))
	for _, s := range []string{h.Spec, h.Params()} {
		dst = binary.LittleEndian.AppendUint16(dst, uint16(len(s)))
		dst = append(dst, s...)
	}
	return binary.LittleEndian.AppendUint64(dst, xxh3.Hash(dst[start:]))
}

// decodeFixed reads the fixed part of a header (fixedHeaderSize bytes, the
// magic and version already checked) and returns the header so far and
// the length of the spec's canonical form.
func decodeFixed(b []byte) (h Header, slots, bits, specLen int, err error) {
	h.Version = int(b[4])
	h.Sketch = Sketch(b[5])
	if b[6] != 0 || b[7] != 0 {
		return h, 0, 0, 0, fmt.Errorf("unknown flags %#04x", binary.LittleEndian.Uint16(b[6:]))
	}
	slots = int(binary.LittleEndian.Uint32(b[8:]))
	bits = int(b[12])
	if b[13] != 0 || b[14] != 0 || b[15] != 0 {
		return h, 0, 0, 0, fmt.Errorf("non-zero reserved bytes")
	}
	h.BlockBytes = int(binary.LittleEndian.Uint32(b[16:]))
	h.Shard = int(binary.LittleEndian.Uint32(b[20:]))
	h.Shards = int(binary.LittleEndian.Uint32(b[24:]))
	specLen = int(binary.LittleEndian.Uint16(b[28:]))
	if specLen == 0 || specLen > maxCanonical {
		return h, 0, 0, 0, fmt.Errorf("spec length %d, want 1..%d", specLen, maxCanonical)
	}
	return h, slots, bits, specLen, nil
}

// finishHeader parses the params' canonical form and checks that the
// header's fields agree with one another.
func finishHeader(h Header, slots, bits int, params string) (Header, error) {
	var err error
	switch h.Sketch {
	case MinHash:
		h.MinHash, err = parseMinHashParams(params)
	case SimHash:
		h.SimHash, err = ParseSimHashParams(params)
	default:
		return h, fmt.Errorf("sketch %d, want minhash (1) or simhash (2)", h.Sketch)
	}
	if err != nil {
		return h, err
	}
	if err := h.Validate(); err != nil {
		return h, err
	}
	if slots != h.Slots() || bits != h.SlotBits() {
		return h, fmt.Errorf("%d slots of %d bits, but the params %s say %d of %d", slots, bits, params, h.Slots(), h.SlotBits())
	}
	return h, nil
}
