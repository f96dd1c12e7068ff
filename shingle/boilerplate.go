package shingle

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"unsafe"

	"github.com/dchest/siphash"
	"github.com/zeebo/xxh3"
)

// BoilerplateVersion is the version of the definition of boilerplate lines:
// what a line is, how it is normalised and hashed, and how dropping lines
// changes the text (doc.go, "Boilerplate lines"). It is part of the canonical
// form of every Spec that drops lines, and so of its fingerprint.
const BoilerplateVersion = 1

// Boilerplate is a set of lines that a Spec drops before shingling: the
// navigation, banners and footers that the pages of a site share. A line is
// named by its line hash (Shingler.AppendLines): the spec's base hash of the
// line's normalised form, so lines that differ only in what the spec folds
// (case, punctuation, spacing) are the same line, and a set belongs to the
// spec (normalisation, seed or key) it was counted under.
//
// Make one with NewBoilerplate; a nil *Boilerplate, like an empty one, drops
// nothing. A Boilerplate is immutable and safe for concurrent use; specs
// share it by pointer. It marshals to JSON (lines as base64 of little-endian
// words) and back, so a job that carries a Spec can ship it.
type Boilerplate struct {
	lines   []uint64 // sorted, distinct
	table   []uint64 // open addressing on the hash itself; 0 is empty
	hasZero bool     // the line hash 0 is in the set
	sum     uint64
}

// NewBoilerplate returns the set of the given line hashes (repeats are
// ignored; lines is not retained), or nil when lines is empty: a spec with an
// empty set is the spec without one.
func NewBoilerplate(lines []uint64) *Boilerplate {
	if len(lines) == 0 {
		return nil
	}
	s := slices.Clone(lines)
	slices.Sort(s)
	s = slices.Compact(s)
	b := &Boilerplate{lines: slices.Clip(s)}
	size := 1 << bits.Len(uint(2*len(s)-1)) // at most half full
	b.table = make([]uint64, size)
	mask := uint64(size - 1)
	for _, h := range s {
		if h == 0 {
			b.hasZero = true
			continue
		}
		i := h & mask
		for b.table[i] != 0 {
			i = (i + 1) & mask
		}
		b.table[i] = h
	}
	buf := make([]byte, 0, 8*len(s))
	for _, h := range s {
		buf = binary.LittleEndian.AppendUint64(buf, h)
	}
	b.sum = xxh3.Hash(buf)
	return b
}

// Len returns the number of lines in the set (0 for nil).
func (b *Boilerplate) Len() int {
	if b == nil {
		return 0
	}
	return len(b.lines)
}

// Lines returns the line hashes in ascending order. The slice is the set's
// own memory: do not modify it.
func (b *Boilerplate) Lines() []uint64 {
	if b == nil {
		return nil
	}
	return b.lines
}

// Contains reports whether the line hash h is in the set.
func (b *Boilerplate) Contains(h uint64) bool {
	if b == nil {
		return false
	}
	if h == 0 {
		return b.hasZero
	}
	mask := uint64(len(b.table) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch b.table[i] {
		case h:
			return true
		case 0:
			return false
		}
	}
}

// Fingerprint returns a 64-bit fingerprint of the set: the xxh3-64 of its
// line hashes in ascending order, each 8 bytes little-endian. Specs whose
// sets differ have different fingerprints (but for a 2^-64 chance).
func (b *Boilerplate) Fingerprint() uint64 {
	if b == nil {
		return 0
	}
	return b.sum
}

// canonical returns the canonical form's segment for the set:
// "boilerplate:<version>:<lines>:<fingerprint in hex>".
func (b *Boilerplate) canonical() string {
	return "boilerplate:" + strconv.Itoa(BoilerplateVersion) + ":" + strconv.Itoa(len(b.lines)) + ":" + fmt.Sprintf("%016x", b.sum)
}

// boilerplateJSON is the JSON form of a Boilerplate.
type boilerplateJSON struct {
	Lines string `json:"lines"` // base64 of the hashes, 8 bytes each, little-endian, ascending
}

// MarshalJSON encodes the set as {"lines":"<base64>"}.
func (b *Boilerplate) MarshalJSON() ([]byte, error) {
	buf := make([]byte, 0, 8*b.Len())
	for _, h := range b.Lines() {
		buf = binary.LittleEndian.AppendUint64(buf, h)
	}
	return json.Marshal(boilerplateJSON{Lines: base64.StdEncoding.EncodeToString(buf)})
}

// UnmarshalJSON decodes what MarshalJSON encodes.
func (b *Boilerplate) UnmarshalJSON(data []byte) error {
	var j boilerplateJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return fmt.Errorf("%w: boilerplate: %w", ErrInvalidSpec, err)
	}
	raw, err := base64.StdEncoding.DecodeString(j.Lines)
	if err != nil || len(raw)%8 != 0 {
		return fmt.Errorf("%w: boilerplate lines are not base64 of 8-byte words", ErrInvalidSpec)
	}
	lines := make([]uint64, len(raw)/8)
	for i := range lines {
		lines[i] = binary.LittleEndian.Uint64(raw[8*i:])
	}
	if nb := NewBoilerplate(lines); nb != nil {
		*b = *nb
	} else {
		*b = Boilerplate{}
	}
	return nil
}

// Line is one line of a text as Shingler.AppendLines lists it: its line
// hash and where it is in the text.
type Line struct {
	// Hash is the line hash: the spec's base hash (xxh3-64 with the seed, or
	// SipHash-2-4 under the key) of the line's normalised form.
	Hash uint64
	// Start and End delimit the line in the text, without its "\n".
	Start, End int
}

// AppendLines appends to dst the lines of text whose normalised form is not
// empty, in text order, and returns the extended slice: what a count of
// boilerplate lines counts (doc.go, "Boilerplate lines"). A line ends at
// "\n" (a "\r" before it is part of the line, and whitespace to every unit
// but Char without FoldSpace). It lists every such line whether or not the
// spec's Boilerplate holds it. text is not retained.
func (s *Shingler) AppendLines(dst []Line, text []byte) []Line {
	for start := 0; start <= len(text); {
		end := start + indexNewline(text[start:])
		if n, _ := s.normaliseText(text[start:end]); n > 0 {
			dst = append(dst, Line{Hash: s.hash(s.norm[:n]), Start: start, End: end})
		}
		start = end + 1
	}
	return dst
}

// indexNewline returns the index of the first '\n' of p, or len(p).
func indexNewline(p []byte) int {
	for i, c := range p {
		if c == '\n' {
			return i
		}
	}
	return len(p)
}

// normaliseLines is normalise for a spec with a Boilerplate: each line is
// normalised on its own and hashed, the lines in the set are dropped, and
// the normalised kept lines are joined as normalising the text without the
// dropped lines would join them: by one space where separators collapse
// (empty lines give nothing), else by the "\n" that ended each line. When
// every line with a normalised form is dropped, the whole text is
// normalised instead. The result goes to s.norm; it returns its length and
// whether it is ASCII.
func (s *Shingler) normaliseLines(text []byte) (int, bool) {
	bp := s.spec.Boilerplate
	out := s.lines[:0]
	ascii := true
	kept, dropped := 0, 0 // lines with a normalised form
	for start := 0; start <= len(text); {
		end := start + indexNewline(text[start:])
		n, a := s.normaliseText(text[start:end])
		term := end < len(text)
		start = end + 1
		if n > 0 && bp.Contains(s.hash(s.norm[:n])) {
			dropped++
			continue
		}
		if n > 0 {
			kept++
		}
		if s.collapse {
			if n == 0 {
				continue
			}
			if len(out) > 0 {
				out = append(out, ' ')
			}
		}
		out = append(out, s.norm[:n]...)
		if !s.collapse && term {
			out = append(out, '\n')
		}
		ascii = ascii && a
	}
	if kept == 0 && dropped > 0 {
		// Every line is boilerplate: the text is kept whole.
		s.lines = out[:0]
		return s.normaliseText(text)
	}
	out = slices.Grow(out, slack)
	// The joined text becomes s.norm (with its slack); the old s.norm is
	// the next call's buffer of lines.
	s.lines, s.norm = s.norm[:0], out[:cap(out)]
	s.pad(len(out))
	return len(out), ascii
}

// TextHash returns a 128-bit hash of the normalised text of text (the
// definition's step 5, boilerplate lines dropped first when the spec has a
// Boilerplate), and whether that normalised text is empty (then the text
// has no features). Texts with the same hash have, but for a 2^-128 chance,
// the same normalised text and so the same features: exact duplicates to
// the spec. The hash is xxh3-128 with the spec's seed, or SipHash-2-4-128
// under the spec's key, so that under a keyed spec nobody without the key
// can make two texts collide.
//
// The Shingler keeps the normalised text: the next AppendFeatures, Stream
// or AddBins call given this same text (the same slice with the same bytes,
// checked by a 64-bit hash of them) uses it instead of normalising again, so
// that hashing before signing costs only the hashes. Any other call forgets
// it.
func (s *Shingler) TextHash(text []byte) (hi, lo uint64, empty bool) {
	s.memo.ok = false
	n, ascii := s.normalise(text)
	s.memo = memo{ptr: unsafe.SliceData(text), len: len(text), sum: xxh3.Hash(text), n: n, ascii: ascii, ok: true}
	return s.textHash(n)
}

// TextHashHeld is TextHash for a caller that holds text unchanged until its
// next call of the Shingler: the next AppendFeatures, Stream or AddBins call
// given this same slice uses the normalised text without hashing the text
// to check that its bytes are the same (TextHash hashes the text twice for
// that: once to remember it, once to compare). A caller that changes
// text's bytes in between gets the features of the old text. The hash is
// TextHash's.
func (s *Shingler) TextHashHeld(text []byte) (hi, lo uint64, empty bool) {
	s.memo.ok = false
	n, ascii := s.normalise(text)
	s.memo = memo{ptr: unsafe.SliceData(text), len: len(text), n: n, ascii: ascii, ok: true, held: true}
	return s.textHash(n)
}

// textHash is TextHash's hash of the normalised text s.norm[:n].
func (s *Shingler) textHash(n int) (hi, lo uint64, empty bool) {
	if s.keyed {
		hi, lo = siphash.Hash128(s.k0, s.k1, s.norm[:n])
	} else {
		h := xxh3.Hash128Seed(s.norm[:n], s.seed)
		hi, lo = h.Hi, h.Lo
	}
	return hi, lo, n == 0
}

// memo is the normalised text TextHash left in s.norm, for the next call
// with the same text: the same slice, whose bytes still hash to sum (a
// caller's buffer reused for another text of the same length is not the
// same text), or, held (TextHashHeld), whose bytes the caller holds
// unchanged.
type memo struct {
	ptr   *byte
	len   int
	sum   uint64
	n     int
	ascii bool
	ok    bool
	held  bool // sum is not set: the caller holds the text (TextHashHeld)
}
