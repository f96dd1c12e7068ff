package simhash

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/neardup/neardup/shingle"
	"github.com/zeebo/xxh3"
)

// Limits and defaults of DFOptions.
const (
	// DefaultDFRows is the default DFOptions.Rows. Two rows cut the chance
	// that a rare feature shares its counter with a common one (and so gets
	// a common feature's weight) from the share of counters holding common
	// features to its square, at the cost of a second memory load per
	// feature when fingerprinting.
	DefaultDFRows = 2
	// MaxDFRows is the largest DFOptions.Rows.
	MaxDFRows = 4
	// DefaultDFLogWidth is the default DFOptions.LogWidth: 2^20 counters a
	// row, 8 MiB of counts and 4 MiB of weights with two rows.
	DefaultDFLogWidth = 20
	// MinDFLogWidth and MaxDFLogWidth bound DFOptions.LogWidth.
	MinDFLogWidth = 4
	MaxDFLogWidth = 28
)

// DFOptions sizes a DFTable. The zero value asks for the defaults.
type DFOptions struct {
	// Rows is the number of count-min rows, each with its own hash of the
	// feature; a feature's document frequency is read as the least of its
	// counters. 0 means the default, DefaultDFRows (2). Range 1..MaxDFRows.
	Rows int
	// LogWidth is the base-2 logarithm of the counters per row; the table
	// holds 4·Rows·2^LogWidth bytes of counts. 0 means the default,
	// DefaultDFLogWidth (20: a million counters a row). Range
	// MinDFLogWidth..MaxDFLogWidth.
	LogWidth int
}

// EnsureDefaults fills zero fields with their defaults and returns o. It is
// nil-safe: a nil o yields a new DFOptions holding the defaults.
func (o *DFOptions) EnsureDefaults() *DFOptions {
	if o == nil {
		o = &DFOptions{}
	}
	if o.Rows == 0 {
		o.Rows = DefaultDFRows
	}
	if o.LogWidth == 0 {
		o.LogWidth = DefaultDFLogWidth
	}
	return o
}

// Validate reports whether o, with defaults filled in, is usable; errors wrap
// ErrInvalidOptions.
func (o *DFOptions) Validate() error {
	var c DFOptions
	if o != nil {
		c = *o
	}
	c.EnsureDefaults()
	if c.Rows < 1 || c.Rows > MaxDFRows {
		return fmt.Errorf("%w: DF Rows %d (want 1..%d)", ErrInvalidOptions, c.Rows, MaxDFRows)
	}
	if c.LogWidth < MinDFLogWidth || c.LogWidth > MaxDFLogWidth {
		return fmt.Errorf("%w: DF LogWidth %d (want %d..%d)", ErrInvalidOptions, c.LogWidth, MinDFLogWidth, MaxDFLogWidth)
	}
	return nil
}

// rowMult holds the odd multipliers of the rows' hashes (the primes of
// xxHash64): row r puts feature f in counter (f·rowMult[r]) >> (64 −
// LogWidth). Multiplying first makes the counter depend on every bit of f,
// so that the weights do not line up with the fingerprint bits that f
// votes on.
var rowMult = [MaxDFRows]uint64{0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x27D4EB2F165667C5}

// DFTable counts document frequencies of features in bounded memory: how
// many documents contain each feature, for TF-IDF weighting (IDF). It is a
// count-min sketch: Rows rows of 2^LogWidth 32-bit counters; a document adds
// 1, once per distinct feature, to one counter per row, and a feature's
// count is the least of its counters. Counts never fall below the truth and
// exceed it only by collisions: with F feature occurrences counted in all,
// a counter holds about F/2^LogWidth of other features' counts, so rare
// features (the bulk of word n-grams) read about that much, while features
// common enough to matter for weighting read close to their truth (see the
// package doc on why the weights tolerate that). Counters saturate at
// 2^32−1.
//
// Tables of equal options merge by adding counters, so workers can count
// parts of a corpus in tables of their own and merge them in any order with
// the same result: the table is a deterministic function of the multiset of
// documents added. Its Fingerprint names it in signature files and indexes.
//
// The zero value is not usable; call NewDFTable. A DFTable is not safe for
// concurrent use.
type DFTable struct {
	rows, logWidth int
	counts         []uint32 // row r holds counts[r<<logWidth : (r+1)<<logWidth]
	docs           uint64

	set      []uint64 // AddDocument's scratch hash set; 0 marks a free slot
	distinct []uint64 // AddDocument's distinct features
	buf      []uint64 // AddText's feature buffer
}

// NewDFTable returns an empty table sized by opts (zero fields take their
// defaults). The error wraps ErrInvalidOptions.
func NewDFTable(opts DFOptions) (*DFTable, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.EnsureDefaults()
	return &DFTable{
		rows:     opts.Rows,
		logWidth: opts.LogWidth,
		counts:   make([]uint32, opts.Rows<<opts.LogWidth),
	}, nil
}

// Options returns the table's options, defaults filled in.
func (t *DFTable) Options() DFOptions { return DFOptions{Rows: t.rows, LogWidth: t.logWidth} }

// Docs returns the number of documents added (merged tables included).
func (t *DFTable) Docs() uint64 { return t.docs }

// cell returns the index in counts of feature f's counter in row r.
func cell(f uint64, r, logWidth int) int {
	return r<<logWidth | int((f*rowMult[r])>>(64-logWidth))
}

func (t *DFTable) count(f uint64) {
	for r := range t.rows {
		c := &t.counts[cell(f, r, t.logWidth)]
		if *c != math.MaxUint32 {
			*c++
		}
	}
}

// Count returns the estimated number of documents containing feature: the
// least of its counters, at least the true count.
func (t *DFTable) Count(feature uint64) uint32 {
	n := uint32(math.MaxUint32)
	for r := range t.rows {
		n = min(n, t.counts[cell(feature, r, t.logWidth)])
	}
	return n
}

// AddDocument counts one document whose features (repeats allowed, in any
// order) are given: each distinct feature once. features is only read. It
// does not allocate once its scratch set has grown to the largest document.
func (t *DFTable) AddDocument(features []uint64) {
	t.docs++
	if len(features) == 0 {
		return
	}
	// A hash set of the features seen, open addressing with linear probing,
	// at most half full; 0 marks a free slot, so feature 0 is tracked apart.
	size := 1 << max(4, bits.Len(uint(2*len(features)-1)))
	if cap(t.set) < size {
		t.set = make([]uint64, size)
	}
	set := t.set[:size]
	clear(set)
	shift := 64 - uint(bits.Len(uint(size-1)))
	mask := size - 1
	distinct := t.distinct[:0]
	zero := false
	for _, f := range features {
		if f == 0 {
			if !zero {
				zero = true
				distinct = append(distinct, 0)
			}
			continue
		}
		i := int((f * 0x9E3779B97F4A7C15) >> shift)
		for {
			switch set[i] {
			case 0:
				set[i] = f
				distinct = append(distinct, f)
			case f:
			default:
				i = (i + 1) & mask
				continue
			}
			break
		}
	}
	// Count in a loop of its own: the counter updates are independent, so
	// the CPU overlaps their cache misses.
	for _, f := range distinct {
		t.count(f)
	}
	t.distinct = distinct
}

// AddText counts one document: the features of text under sh (package
// shingle). It is AddDocument(sh.AppendFeatures(buf, text)) with a buffer the
// table keeps; text is only read.
func (t *DFTable) AddText(sh *shingle.Shingler, text []byte) {
	t.buf = sh.AppendFeatures(t.buf[:0], text)
	t.AddDocument(t.buf)
}

// Merge adds the counts and documents of o to t, saturating. The tables
// must have equal options; otherwise the error wraps ErrDFTable and t is
// unchanged. o is only read.
func (t *DFTable) Merge(o *DFTable) error {
	if t.rows != o.rows || t.logWidth != o.logWidth {
		return fmt.Errorf("%w: merging a table of %d×2^%d counters into one of %d×2^%d (want equal options)",
			ErrDFTable, o.rows, o.logWidth, t.rows, t.logWidth)
	}
	for i, c := range o.counts {
		s, carry := bits.Add32(t.counts[i], c, 0)
		if carry != 0 {
			s = math.MaxUint32
		}
		t.counts[i] = s
	}
	t.docs += o.docs
	return nil
}

// The encoding of a DFTable, little-endian throughout:
//
//	offset  size        field
//	0       4           "NDDF"
//	4       1           format version, 1
//	5       1           Rows, 1..MaxDFRows
//	6       1           LogWidth, MinDFLogWidth..MaxDFLogWidth
//	7       1           0
//	8       8           documents counted
//	16      4·Rows·2^W  the counters, row by row, uint32 each
//	16+4·…  8           checksum: xxh3-64 (seed 0) of all the bytes before it
//
// Format version 1 also fixes the weight formula (IDF).
const (
	dfMagic   = "NDDF"
	dfVersion = 1
	dfHeader  = 16
)

func (t *DFTable) header() []byte {
	h := make([]byte, 0, dfHeader)
	h = append(h, dfMagic...)
	h = append(h, dfVersion, byte(t.rows), byte(t.logWidth), 0)
	return binary.LittleEndian.AppendUint64(h, t.docs)
}

// EncodedLen returns the length of the table's encoding in bytes.
func (t *DFTable) EncodedLen() int { return dfHeader + 4*len(t.counts) + 8 }

// AppendBinary appends the table's encoding (format version 1, described in
// the package doc) to dst and returns the extended slice; the error is always
// nil. The encoding is a deterministic function of the table.
func (t *DFTable) AppendBinary(dst []byte) ([]byte, error) {
	start := len(dst)
	dst = append(dst, t.header()...)
	for _, c := range t.counts {
		dst = binary.LittleEndian.AppendUint32(dst, c)
	}
	return binary.LittleEndian.AppendUint64(dst, xxh3.Hash(dst[start:])), nil
}

// MarshalBinary returns the table's encoding; see AppendBinary.
func (t *DFTable) MarshalBinary() ([]byte, error) {
	return t.AppendBinary(make([]byte, 0, t.EncodedLen()))
}

// UnmarshalBinary replaces t with the table data encodes. It refuses, with
// an error wrapping ErrDFTable that names the offset and the rule, an
// encoding that is short or long, of another format version, with options
// out of range, a non-zero reserved byte, or a checksum that does not match;
// t is then unchanged. data is not retained.
func (t *DFTable) UnmarshalBinary(data []byte) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrDFTable}, args...)...)
	}
	if len(data) < dfHeader+8 {
		return bad("%d bytes (want at least %d)", len(data), dfHeader+8)
	}
	if string(data[:4]) != dfMagic {
		return bad("magic %q at offset 0 (want %q)", data[:4], dfMagic)
	}
	if data[4] != dfVersion {
		return bad("format version %d at offset 4 (want %d)", data[4], dfVersion)
	}
	rows, lw := int(data[5]), int(data[6])
	if rows < 1 || rows > MaxDFRows {
		return bad("rows %d at offset 5 (want 1..%d)", rows, MaxDFRows)
	}
	if lw < MinDFLogWidth || lw > MaxDFLogWidth {
		return bad("log width %d at offset 6 (want %d..%d)", lw, MinDFLogWidth, MaxDFLogWidth)
	}
	if data[7] != 0 {
		return bad("reserved byte %d at offset 7 (want 0)", data[7])
	}
	n := rows << lw
	if want := dfHeader + 4*n + 8; len(data) != want {
		return bad("%d bytes for %d×2^%d counters (want %d)", len(data), rows, lw, want)
	}
	body := data[:len(data)-8]
	if got, want := binary.LittleEndian.Uint64(data[len(body):]), xxh3.Hash(body); got != want {
		return bad("checksum %016x at offset %d (the bytes before it give %016x)", got, len(body), want)
	}
	counts := make([]uint32, n)
	for i := range counts {
		counts[i] = binary.LittleEndian.Uint32(data[dfHeader+4*i:])
	}
	*t = DFTable{rows: rows, logWidth: lw, counts: counts, docs: binary.LittleEndian.Uint64(data[8:])}
	return nil
}

// Fingerprint returns the table's 64-bit fingerprint: the checksum of its
// encoding, or 1 in the 2^−64 case that the checksum is 0 (sigfile requires a
// non-zero fingerprint for TF-IDF). Fingerprints made under different
// tables are not comparable. It hashes the encoding without building it.
func (t *DFTable) Fingerprint() uint64 {
	h := xxh3.New()
	h.Write(t.header())
	var chunk [4096]byte
	for rest := t.counts; len(rest) > 0; {
		n := min(len(rest), len(chunk)/4)
		for i, c := range rest[:n] {
			binary.LittleEndian.PutUint32(chunk[4*i:], c)
		}
		h.Write(chunk[:4*n])
		rest = rest[n:]
	}
	return max(h.Sum64(), 1)
}

// Equal reports whether two tables have equal options, documents and counts.
func (t *DFTable) Equal(o *DFTable) bool {
	if t.rows != o.rows || t.logWidth != o.logWidth || t.docs != o.docs {
		return false
	}
	for i, c := range t.counts {
		if o.counts[i] != c {
			return false
		}
	}
	return true
}

// IDFScale is the number of weight units per unit of idf: a feature's
// weight is round(IDFScale · idf), an integer in 8..363 (see IDF).
const IDFScale = 8

// idfPlanes is the number of bits of the largest weight: round(8·(ln(2^64+1)
// + 1)) = 363 < 2^9.
const idfPlanes = 9

// weightOf returns the weight of a feature counted in df of docs documents.
func weightOf(df uint32, docs uint64) uint16 {
	d := min(float64(df), float64(docs))
	idf := math.Log((float64(docs)+1)/(d+1)) + 1
	return uint16(math.Floor(IDFScale*idf + 0.5))
}

// IDF is the frozen weighting of a DFTable: for every counter, the weight a
// feature reading that count gets, so that weighing a feature costs one
// memory load per row.
//
// The weight of a feature that Rows counters put in df of the table's N
// documents is
//
//	w = round(8 · idf),  idf = ln((N + 1) / (min(df, N) + 1)) + 1,
//
// the smoothed idf of scikit-learn, in units of 1/8. Why this form:
// the +1 inside keeps a feature absent from the table (df = 0, new since the
// table was counted, as in a service) finite, at the rarest weight; the +1
// outside keeps a feature in every document voting with weight 1 rather
// than 0, so that a text of only common features still has a fingerprint
// that depends on its text. Integer weights make the votes exact integer
// sums, so a fingerprint does not depend on feature order or chunking, and
// let the weighted vote be counted with the same bit-parallel counters as
// term frequency, one per bit of the weight (9 bits: w ≤ 363 for N < 2^64);
// a step of 1/8 in idf is well below what moves a fingerprint. Since w falls
// as df grows, the least of a feature's counters gives the greatest of its
// weights, and IDF stores weights per counter and takes the maximum.
//
// The zero value is not usable; get an IDF from DFTable.IDF. An IDF is
// immutable and safe for concurrent use. Fingerprints made with it are
// deterministic functions of the features and the table.
type IDF struct {
	rows, logWidth int
	w              []uint16 // per counter, as DFTable.counts
	docs           uint64
	fp             uint64
}

// IDF freezes the table's current counts into weights. Later changes to t
// do not affect the result. It allocates 2 bytes per counter.
func (t *DFTable) IDF() *IDF {
	x := &IDF{rows: t.rows, logWidth: t.logWidth, w: make([]uint16, len(t.counts)), docs: t.docs, fp: t.Fingerprint()}
	// Most counters hold small counts: compute those weights once.
	var small [256]uint16
	for c := range small {
		small[c] = weightOf(uint32(c), t.docs)
	}
	for i, c := range t.counts {
		if c < uint32(len(small)) {
			x.w[i] = small[c]
		} else {
			x.w[i] = weightOf(c, t.docs)
		}
	}
	return x
}

// Docs returns the number of documents the weights were counted over.
func (x *IDF) Docs() uint64 { return x.docs }

// Fingerprint returns the fingerprint of the DFTable the weights come from:
// the df field of sigfile's TF-IDF params.
func (x *IDF) Fingerprint() uint64 { return x.fp }

// Weight returns feature's weight, in 8..363 (1/8 units of idf).
func (x *IDF) Weight(feature uint64) int { return int(x.weight(feature)) }

func (x *IDF) weight(f uint64) uint16 {
	w := x.w[cell(f, 0, x.logWidth)]
	for r := 1; r < x.rows; r++ {
		w = max(w, x.w[cell(f, r, x.logWidth)])
	}
	return w
}

// String describes the table: its size and documents.
func (t *DFTable) String() string {
	return fmt.Sprintf("df table: %d rows × 2^%d counters (%d bytes), %d documents, fingerprint %016x",
		t.rows, t.logWidth, 4*len(t.counts), t.docs, t.Fingerprint())
}
