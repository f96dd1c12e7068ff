package shingle

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/dchest/siphash"
	"github.com/zeebo/xxh3"
	"golang.org/x/text/cases"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// slack is the number of bytes kept after the normalised text so that the hot
// loops may load 8 bytes at any position of the text without a bounds branch.
const slack = 8

// Shingler turns texts into features under one Spec. It owns scratch buffers
// that it reuses, so after a warm-up it does not allocate.
//
// The zero Shingler is not usable; call New. A Shingler is not safe for
// concurrent use: give each goroutine its own (they are cheap). Its output is
// deterministic: the same Spec and text always give the same features.
type Shingler struct {
	spec     Spec
	seed     uint64
	k48      uint64 // xxh3 4..8-byte path key for seed
	k0, k1   uint64 // SipHash key halves when keyed
	keyed    bool
	collapse bool // separators collapse to one and are trimmed at the ends

	// ASCII fast path: out[b] is the normalised byte for input byte b < 0x80
	// and sep[b] is 1 when that byte is a collapsing separator.
	out [256]byte
	sep [256]uint8
	// foldTab holds the tables of the vector path of foldASCII, or is nil
	// when the CPU or the spec does not allow it (simd_amd64.go).
	foldTab *foldTables
	// charK holds the constants of the vector character n-gram kernels, or
	// is nil when the CPU, N or a key does not allow them.
	charK *charConsts

	powN uint64 // polyP^(N-1), to drop the oldest unit from the window
	// unitHash holds a block of unit hashes for units, after the last N−1
	// of the block before.
	unitHash [unitBlock + MaxN - 1]uint64
	unitK    *unitConsts // constants of the vector unit hashing, or nil
	spans    *unitSpans  // its scratch, or nil

	norm  []byte  // normalised text, followed by slack spaces
	lines []byte  // the normalised kept lines being joined (normaliseLines)
	memo  memo    // what TextHash left in norm
	valid []byte  // text or segment with invalid UTF-8 replaced
	nfkc  []byte  // NFKC output (non-ASCII texts only)
	fold  []byte  // case-folding output (non-ASCII texts only)
	offs  []int32 // code point offsets into norm (non-ASCII char units only)
	caser cases.Caser
	iter  norm.Iter
	iso   map[rune]string // transformations of classIsolated code points seen

	sink func([]uint64) // when set, full chunks are passed to it (Stream)

	// addBins's state (bins.go): the bins, and for the paths that are not
	// fused, binSink (s.addChunk bound once, so setting sink does not
	// allocate) and a chunk buffer.
	bins    binState
	binSink func([]uint64)
	scratch [256]uint64
}

// New returns a Shingler for the spec, or an error wrapping ErrInvalidSpec.
func New(spec Spec) (*Shingler, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	s := &Shingler{
		spec:     spec,
		seed:     spec.Seed,
		k48:      seed48(spec.Seed),
		collapse: spec.Unit != Char || spec.FoldSpace,
		caser:    cases.Fold(),
	}
	s.binSink = s.addChunk
	if spec.Key != nil {
		s.keyed = true
		s.k0, s.k1 = spec.Key.halves()
	} else if spec.Unit == Char {
		s.charK = newCharConsts(spec.N, s.k48)
	} else if s.unitK = newUnitConsts(spec.Seed); s.unitK != nil {
		s.spans = &unitSpans{}
	}
	s.powN = 1
	for i := 1; i < spec.N; i++ {
		s.powN *= polyP
	}
	for b := 0; b < utf8.RuneSelf; b++ {
		r := rune(b)
		if spec.CaseFold {
			r = unicode.ToLower(r) // ASCII full case folding is lower-casing
		}
		o, sep := s.classify(r)
		s.out[b] = byte(o)
		if sep {
			s.sep[b] = 1
		}
	}
	s.foldTab = newFoldTables(&s.out, &s.sep)
	return s, nil
}

// MustNew is like New but panics on an invalid spec; for presets and tests.
func MustNew(spec Spec) *Shingler {
	s, err := New(spec)
	if err != nil {
		panic("shingle: " + err.Error())
	}
	return s
}

// Spec returns the spec the Shingler was made with.
func (s *Shingler) Spec() Spec { return s.spec }

// classify maps one code point of the NFKC-normalised, case-folded text to
// its normalised form and says whether it separates units (and so collapses
// with its neighbours). It is the single definition both the ASCII tables and
// the Unicode path use.
func (s *Shingler) classify(r rune) (rune, bool) {
	var c uint8
	if r >= utf8.RuneSelf && r < 1<<16 {
		c = runeTable()[r]
	} else {
		c = classOf(r) // ASCII, for New's tables, without building runeTable
	}
	sp := s.spec
	if sp.FoldDigits && c&classDigit != 0 {
		r = '0'
	}
	space := c&classSpace != 0
	if !space && sp.FoldPunct && c&classPunct != 0 {
		r, space = ' ', true
	}
	switch sp.Unit {
	case Word:
		if !space && c&classWord != 0 {
			return r, false
		}
		return ' ', true
	case Token:
		if space {
			return ' ', true
		}
		return r, false
	default: // Char
		if space && sp.FoldSpace {
			return ' ', true
		}
		return r, false
	}
}

// The Unicode properties classify needs, as bits. A code point folded to '0'
// keeps its other bits: '0' is a word character and neither space nor
// punctuation, as every decimal digit is.
const (
	classDigit    = 1 << iota // unicode.IsDigit (Nd)
	classSpace                // unicode.IsSpace
	classPunct                // unicode.IsPunct (P)
	classWord                 // isWordRune
	classInert                // see runeTable
	classIsolated             // see runeTable
)

// classOf returns the class bits of r (without classInert).
func classOf(r rune) uint8 {
	var c uint8
	if unicode.IsDigit(r) {
		c |= classDigit
	}
	if unicode.IsSpace(r) {
		c |= classSpace
	}
	if unicode.IsPunct(r) {
		c |= classPunct
	}
	if isWordRune(r) {
		c |= classWord
	}
	return c
}

// isWordRune reports whether r is a word character: the Unicode \w of
// letters, marks, decimal digits and connector punctuation.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || unicode.Is(unicode.Pc, r)
}

// AppendFeatures appends the features of text to dst and returns the extended
// slice: one 64-bit feature per shingle position, in text order, duplicates
// included (a multiset; sort and deduplicate for a set). It does not allocate
// once dst and the Shingler's scratch buffers have grown to the text's size
// and it has met the text's compatibility characters (the Shingler remembers
// how each one normalises: at most a few thousand small strings). The first
// text with non-ASCII bytes in the process builds a shared 64 KiB table of
// Unicode properties (about 7 ms).
//
// Defined behaviour at the edges:
//   - a text with no units after normalisation (empty, or only separators)
//     appends nothing;
//   - a text with m units, 0 < m < N, appends exactly one feature: the n-gram
//     of all m units;
//   - invalid UTF-8 never panics: each byte that is not part of a valid
//     UTF-8 sequence is read as U+FFFD, the replacement character (as Go's
//     range loop decodes it), which is a symbol: a separator for Word units,
//     a character for Char and Token units.
//
// dst may be nil. text is not modified and not retained.
func (s *Shingler) AppendFeatures(dst []uint64, text []byte) []uint64 {
	s.sink = nil
	return s.features(dst, text)
}

// Stream passes the features of text to fn in chunks, in text order, each
// chunk at most cap(buf) long (cap(buf) must be > 0); it is AppendFeatures
// without holding all of a long text's features at once. fn must not retain
// the chunk. Stream returns buf's backing array, emptied, for reuse.
func (s *Shingler) Stream(text []byte, buf []uint64, fn func([]uint64)) []uint64 {
	if cap(buf) == 0 {
		panic("shingle: Stream needs a buffer with capacity")
	}
	s.sink = fn
	buf = s.features(buf[:0], text)
	if len(buf) > 0 {
		fn(buf)
	}
	s.sink = nil
	return buf[:0]
}

// flush is called when dst is full: streaming, it hands dst to the sink and
// returns it emptied; otherwise it grows dst by at least need more features.
// The hot loops check len(dst) == cap(dst) themselves and call it only then,
// because a call per feature costs more than the feature's hash.
func (s *Shingler) flush(dst []uint64, need int) []uint64 {
	if s.sink != nil {
		s.sink(dst)
		return dst[:0]
	}
	return slices.Grow(dst, max(need, 1))
}

func (s *Shingler) features(dst []uint64, text []byte) []uint64 {
	n, ascii := s.normalise(text)
	if n == 0 {
		return dst
	}
	buf := s.norm[:n]
	if s.spec.Unit == Char {
		if ascii {
			return s.charASCII(dst, buf)
		}
		return s.charUnicode(dst, buf)
	}
	return s.units(dst, buf, nil)
}

// normalise writes the normalised text to s.norm, followed by slack spaces,
// and returns its length and whether it is ASCII: the text's lines in the
// spec's Boilerplate dropped first, if it has one. When TextHash has just
// normalised this same text, s.norm already holds it.
func (s *Shingler) normalise(text []byte) (int, bool) {
	if m := s.memo; m.ok {
		s.memo.ok = false
		if m.len == len(text) && m.ptr == unsafe.SliceData(text) && (m.held || m.sum == xxh3.Hash(text)) {
			return m.n, m.ascii
		}
	}
	if s.spec.Boilerplate.Len() > 0 {
		return s.normaliseLines(text)
	}
	return s.normaliseText(text)
}

// normaliseText is normalise without boilerplate lines and the memo.
func (s *Shingler) normaliseText(text []byte) (int, bool) {
	if n, ok := s.foldASCII(text); ok {
		return n, true
	}
	return s.foldUnicode(text)
}

// grow makes s.norm able to hold n bytes plus slack.
func (s *Shingler) grow(n int) {
	if cap(s.norm) < n+slack {
		s.norm = make([]byte, n+slack, 2*n+slack)
	}
	s.norm = s.norm[:cap(s.norm)]
}

// pad fills the slack after the n normalised bytes with spaces, which end
// words in the SWAR scan and are never read as text.
func (s *Shingler) pad(n int) {
	binary.LittleEndian.PutUint64(s.norm[n:], 0x2020202020202020)
}

// foldUnicode normalises a text with non-ASCII bytes into s.norm: invalid
// sequences become U+FFFD, then NFKC, case folding and the per-code-point
// classification. It returns the length and whether the result is ASCII.
func (s *Shingler) foldUnicode(text []byte) (int, bool) {
	src := text
	if s.spec.NFKC || s.spec.CaseFold {
		src = s.foldRuns(src) // replaces invalid UTF-8 run by run
	} else if !utf8.Valid(src) {
		src = replaceInvalid(s.valid[:0], src)
		s.valid = src
	}
	// Classification never lengthens the text: ASCII maps to ASCII and any
	// other code point to itself or to one ASCII byte.
	s.grow(len(src))
	d := s.norm
	i, j := 0, 0
	prev := uint8(1) // a separator before the text drops leading separators
	ascii := true
	for i < len(src) {
		// A stretch of ASCII, as foldASCII does it: whole 32-byte blocks
		// with vector instructions where the CPU allows, the rest through
		// the tables, up to the next non-ASCII code point.
		if s.foldTab != nil && len(src)-i >= 32 {
			di, dj, p := foldBlocks(d[j:], src[i:], s.foldTab, prev)
			i, j, prev = i+di, j+dj, p
		}
		for ; i < len(src) && src[i] < utf8.RuneSelf; i++ {
			b := src[i]
			sp := s.sep[b]
			d[j] = s.out[b]
			j += int(1 - sp&prev)
			prev = sp
		}
		if i == len(src) {
			break
		}
		r, size := decodeRune(src[i:])
		i += size
		r, sep := s.classify(r)
		if sep && s.collapse {
			if prev == 1 {
				continue
			}
			prev = 1
		} else {
			prev = 0
		}
		if r < utf8.RuneSelf {
			d[j] = byte(r)
			j++
		} else {
			ascii = false
			j += utf8.EncodeRune(d[j:], r)
		}
	}
	if prev == 1 && j > 0 {
		j-- // drop the trailing separator
	}
	s.pad(j)
	return j, ascii
}

// foldRuns applies NFKC and case folding, as the spec asks, to src, each
// byte of it that is not part of a valid UTF-8 sequence read as U+FFFD, and
// returns the result (in s.fold). Only the runs of code points that the two
// transformations may change or join to a neighbour go through them, each
// with the code point before it; ASCII and the inert code points of the
// Basic Multilingual Plane (classInert in runeTable: most CJK ideographs, kana, Hangul
// syllables, curly quotes, dashes) are copied as they are (ASCII is case
// folded later, by the classification's tables). The result is what
// transforming the whole text gives:
//   - NFKC works segment by segment, a segment starting at each code point
//     that is a normalisation boundary — one that cannot combine with
//     anything before it. Every ASCII and every inert code point is one
//     (tested for all of them). The code point before a run is kept with it
//     because a run may start with a combining mark that composes with it
//     ("e" + U+0301, "か" + U+3099).
//   - Full case folding maps each code point on its own (CaseFolding.txt has
//     no context); TestFoldRunsEveryRune checks the library agrees.
//
// Web text with curly quotes in ASCII prose, and CJK text, thus cost little
// more than ASCII text, instead of a transformation of every code point.
func (s *Shingler) foldRuns(src []byte) []byte {
	class := runeTable()
	out := s.fold[:0]
	done := 0  // src[:done] is in out
	prev := -1 // where the code point before i starts, if it is not in out
	for i := 0; i < len(src); {
		if src[i] < utf8.RuneSelf {
			k := i + indexNonASCII(src[i:])
			prev, i = k-1, k
			continue
		}
		r, size := decodeRune(src[i:])
		if size > 1 && r < 1<<16 {
			if c := class[r]; c&classInert != 0 {
				prev, i = i, i+size
				continue
			} else if c&classIsolated != 0 {
				out = append(out, src[done:i]...)
				out = append(out, s.isolated(r, src[i:i+size])...)
				done, prev, i = i+size, -1, i+size
				continue
			}
		}
		// A run to transform: from the code point before it (a boundary,
		// being ASCII or inert) to the next ASCII or inert code point.
		start := i
		if prev >= done {
			start = prev
		}
		out = append(out, src[done:start]...)
		end := i + size
		for end < len(src) && src[end] >= utf8.RuneSelf {
			r, size := decodeRune(src[end:])
			if size > 1 && r < 1<<16 && class[r]&classInert != 0 {
				break
			}
			end += size
		}
		out = s.foldSegment(out, src[start:end])
		done, prev, i = end, -1, end
	}
	out = append(out, src[done:]...)
	s.fold = out
	return out
}

// isolated returns the transformation of r, whose UTF-8 encoding is p, a
// code point of classIsolated, remembering it for the next time.
func (s *Shingler) isolated(r rune, p []byte) string {
	if t, ok := s.iso[r]; ok {
		return t
	}
	if s.iso == nil {
		s.iso = make(map[rune]string)
	}
	t := string(s.foldSegment(nil, p))
	s.iso[r] = t
	return t
}

// foldSegment appends seg, normalised and case folded as the spec asks, to
// out. Invalid UTF-8 in seg is replaced first; since segments end at ASCII or
// inert code points, which no valid sequence contains, that is the whole
// text's replacement.
func (s *Shingler) foldSegment(out, seg []byte) []byte {
	if !utf8.Valid(seg) {
		seg = replaceInvalid(s.valid[:0], seg)
		s.valid = seg
	}
	if s.spec.NFKC && norm.NFKC.QuickSpan(seg) < len(seg) {
		// norm.Iter holds its reorder buffer inline, so unlike
		// Form.Append it does not allocate.
		s.nfkc = s.nfkc[:0]
		s.iter.Init(norm.NFKC, seg)
		for !s.iter.Done() {
			s.nfkc = append(s.nfkc, s.iter.Next()...)
		}
		seg = s.nfkc
	}
	if s.spec.CaseFold {
		return appendCaseFold(s.caser, out, seg)
	}
	return append(out, seg...)
}

// runes holds the class bits of every code point below U+10000, so that the
// Unicode path looks them up instead of searching Unicode's range tables.
// classInert marks the code points that NFKC and full case folding leave as
// they are and that nothing before them combines with (an NFKC boundary
// before): they need no transformation and end any run that does.
// classIsolated marks the others whose NFKC form ends in a code point that
// nothing after it combines with (full-width digits and punctuation, many
// compatibility characters): NFKC(x r y) = NFKC(x) NFKC(r) NFKC(y), so they
// are transformed on their own, once per Shingler (Shingler.isolated). Built on
// first use (about 10 ms, 64 KiB), from the same libraries the
// transformations use.
var runes struct {
	once  sync.Once
	class [1 << 16]uint8
}

// endsInert reports whether the last code point of p cannot combine with
// anything after it (an NFKC boundary after).
func endsInert(p []byte) bool {
	r, _ := utf8.DecodeLastRune(p)
	var enc [utf8.UTFMax]byte
	return len(p) > 0 && norm.NFKC.Properties(enc[:utf8.EncodeRune(enc[:], r)]).BoundaryAfter()
}

// runeTable returns the class table, building it once.
func runeTable() *[1 << 16]uint8 {
	runes.once.Do(func() {
		fold := cases.Fold()
		var buf [64]byte
		var enc [utf8.UTFMax]byte
		for r := rune(0); r < 1<<16; r++ {
			if !utf8.ValidRune(r) {
				continue // surrogates: never decoded
			}
			c := classOf(r)
			p := enc[:utf8.EncodeRune(enc[:], r)]
			if props := norm.NFKC.Properties(p); r >= utf8.RuneSelf && props.BoundaryBefore() {
				fold.Reset()
				n, _, err := fold.Transform(buf[:], p, true)
				switch {
				case norm.NFKC.IsNormal(p) && err == nil && string(buf[:n]) == string(p):
					c |= classInert
				case endsInert(norm.NFKC.Bytes(p)):
					c |= classIsolated
				}
			}
			runes.class[r] = c
		}
	})
	return &runes.class
}

// decodeRune is utf8.DecodeRune with the two- and three-byte sequences of
// the Basic Multilingual Plane (Latin, Greek, Cyrillic, CJK) decoded inline.
func decodeRune(p []byte) (rune, int) {
	if len(p) >= 3 && p[0]&0xf0 == 0xe0 && p[1]&0xc0 == 0x80 && p[2]&0xc0 == 0x80 {
		r := rune(p[0]&0x0f)<<12 | rune(p[1]&0x3f)<<6 | rune(p[2]&0x3f)
		if r >= 0x800 && (r < 0xd800 || r > 0xdfff) {
			return r, 3
		}
	} else if len(p) >= 2 && p[0]&0xe0 == 0xc0 && p[1]&0xc0 == 0x80 && p[0] >= 0xc2 {
		return rune(p[0]&0x1f)<<6 | rune(p[1]&0x3f), 2
	}
	return utf8.DecodeRune(p)
}

// b2i is 1 for true and 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// replaceInvalid appends src to dst with each byte that is not part of a
// valid UTF-8 sequence replaced by U+FFFD, and returns the result.
func replaceInvalid(dst, src []byte) []byte {
	for len(src) > 0 {
		r, size := utf8.DecodeRune(src)
		dst = utf8.AppendRune(dst, r) // RuneError for each invalid byte
		src = src[size:]
	}
	return dst
}

// indexNonASCII returns the index of the first byte of p that is not ASCII,
// or len(p): 32 bytes at a time, then eight, then byte by byte.
func indexNonASCII(p []byte) int {
	i := 0
	for ; i+32 <= len(p); i += 32 {
		q := p[i : i+32]
		if (binary.LittleEndian.Uint64(q)|binary.LittleEndian.Uint64(q[8:])|
			binary.LittleEndian.Uint64(q[16:])|binary.LittleEndian.Uint64(q[24:]))&msb != 0 {
			break
		}
	}
	for ; i+8 <= len(p); i += 8 {
		if w := binary.LittleEndian.Uint64(p[i:]) & msb; w != 0 {
			return i + bits.TrailingZeros64(w)>>3
		}
	}
	for ; i < len(p); i++ {
		if p[i] >= utf8.RuneSelf {
			return i
		}
	}
	return i
}

// appendCaseFold appends the full Unicode case folding of src (valid UTF-8)
// to dst, growing it as needed.
func appendCaseFold(c cases.Caser, dst, src []byte) []byte {
	for {
		if cap(dst)-len(dst) < len(src)+16 {
			dst = slices.Grow(dst, 2*len(src)+16)
		}
		c.Reset()
		n, _, err := c.Transform(dst[len(dst):cap(dst)], src, true)
		if err == transform.ErrShortDst {
			dst = slices.Grow(dst, 2*(cap(dst)-len(dst)))
			continue
		}
		// Folding valid UTF-8 with atEOF set has no other error.
		return dst[:len(dst)+n]
	}
}

// hash is the base hash of one unit or n-gram's bytes.
func (s *Shingler) hash(p []byte) uint64 {
	if s.keyed {
		return siphash.Hash(s.k0, s.k1, p)
	}
	return xxh3Seed(p, s.seed, s.k48)
}

// one appends a single feature.
func (s *Shingler) one(dst []uint64, f uint64) []uint64 {
	if len(dst) == cap(dst) {
		dst = s.flush(dst, 1)
	}
	return append(dst, f)
}

// charUnicode emits the character n-grams of a non-ASCII buf: the base hash
// of the UTF-8 bytes of each window of n code points.
func (s *Shingler) charUnicode(dst []uint64, buf []byte) []uint64 {
	n := s.spec.N
	s.offs = s.offs[:0]
	for i := 0; i < len(buf); {
		s.offs = append(s.offs, int32(i))
		// buf is valid UTF-8 (the classification encoded every code
		// point), so a sequence's length follows from its first byte.
		if b := buf[i]; b < utf8.RuneSelf {
			i++ // a predicted branch: i does not wait for the load
		} else {
			i += 2 + b2i(b >= 0xe0) + b2i(b >= 0xf0)
		}
	}
	runes := len(s.offs)
	s.offs = append(s.offs, int32(len(buf)))
	if runes <= n {
		return s.one(dst, s.hash(buf))
	}
	for i := 0; i+n <= runes; i++ {
		if len(dst) == cap(dst) {
			dst = s.flush(dst, runes-n+1-i)
		}
		dst = append(dst, s.hash(buf[s.offs[i]:s.offs[i+n]]))
	}
	return dst
}
