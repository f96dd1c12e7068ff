package minhash

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Magic opens every encoded signature.
const Magic = "NDMH"

// HeaderSize is the size of the fixed header of an encoded signature.
const HeaderSize = 28

// MaxIDLen is the longest document id an encoded signature may carry.
const MaxIDLen = 1 << 16

const flagID = 1

// Header is the self-description at the start of every encoded signature.
type Header struct {
	// Version is the format version (FormatVersion).
	Version uint8
	// Scheme, Bits and K are the signature's Params fields, so a reader
	// knows the size without knowing the Params.
	Scheme Scheme
	Bits   int // bits kept per slot: 1, 2, 4, 8, 16, 32 or 64
	K      int // number of slots
	// HasID says whether a document id follows the header.
	HasID bool
	// SpecFingerprint is the shingle.Spec fingerprint of the features.
	SpecFingerprint uint64
	// ParamsFingerprint is Params.Fingerprint (which includes the seed).
	ParamsFingerprint uint64
}

// AppendBinary appends the wire encoding of sig to dst:
//
//	offset size
//	0      4    magic "NDMH"
//	4      1    format version (1)
//	5      1    scheme (1 = oph, 2 = khash)
//	6      1    bits per slot (1, 2, 4, 8, 16, 32 or 64)
//	7      1    flags (bit 0: a document id follows)
//	8      4    k, uint32 little-endian
//	12     8    shingle spec fingerprint, uint64 little-endian
//	20     8    params fingerprint, uint64 little-endian
//	28     …    if flag 0: uvarint id length (< 65536), then the id bytes
//	…      …    the slots: Params.Bytes() bytes, the packed words little-endian
//
// id may be nil for no id.
func AppendBinary(dst []byte, p Params, specFingerprint uint64, id []byte, sig Signature) []byte {
	p.EnsureDefaults()
	flags := byte(0)
	if id != nil {
		flags |= flagID
	}
	dst = append(dst, Magic...)
	dst = append(dst, FormatVersion, byte(p.Scheme), byte(p.Bits), flags)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(p.K))
	dst = binary.LittleEndian.AppendUint64(dst, specFingerprint)
	dst = binary.LittleEndian.AppendUint64(dst, p.Fingerprint())
	if id != nil {
		if len(id) >= MaxIDLen {
			panic(fmt.Sprintf("minhash: id of %d bytes, the limit is %d", len(id), MaxIDLen-1))
		}
		dst = binary.AppendUvarint(dst, uint64(len(id)))
		dst = append(dst, id...)
	}
	n := p.Bytes()
	for _, w := range sig[:p.Words()] {
		k := min(n, 8)
		for j := 0; j < k; j++ {
			dst = append(dst, byte(w>>(8*j)))
		}
		n -= k
	}
	return dst
}

// DecodeHeader reads the fixed header of an encoded signature.
func DecodeHeader(src []byte) (Header, error) {
	if len(src) < HeaderSize {
		return Header{}, fmt.Errorf("%w: %d bytes, a header needs %d", ErrCorrupt, len(src), HeaderSize)
	}
	if string(src[:4]) != Magic {
		return Header{}, fmt.Errorf("%w: magic %q, want %q", ErrCorrupt, src[:4], Magic)
	}
	h := Header{
		Version:           src[4],
		Scheme:            Scheme(src[5]),
		Bits:              int(src[6]),
		HasID:             src[7]&flagID != 0,
		K:                 int(binary.LittleEndian.Uint32(src[8:])),
		SpecFingerprint:   binary.LittleEndian.Uint64(src[12:]),
		ParamsFingerprint: binary.LittleEndian.Uint64(src[20:]),
	}
	if h.Version != FormatVersion {
		return h, fmt.Errorf("%w: format version %d, this build reads %d", ErrCorrupt, h.Version, FormatVersion)
	}
	if src[7]&^flagID != 0 {
		return h, fmt.Errorf("%w: unknown flags %#x", ErrCorrupt, src[7])
	}
	if err := (Params{K: h.K, Scheme: h.Scheme, Bits: h.Bits}).Validate(); err != nil {
		return h, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return h, nil
}

// Decode reads one encoded signature from src, made under p and the shingle
// spec whose fingerprint is specFingerprint, and returns its id (nil when it
// has none; it aliases src), its signature appended to dst, and the unread rest
// of src. A signature made under another spec or other Params is an error
// wrapping ErrSpecMismatch or ErrParamsMismatch; malformed bytes wrap ErrCorrupt.
func Decode(dst Signature, src []byte, p Params, specFingerprint uint64) (id []byte, sig Signature, rest []byte, err error) {
	p.EnsureDefaults()
	h, err := DecodeHeader(src)
	if err != nil {
		return nil, dst, src, err
	}
	if h.SpecFingerprint != specFingerprint {
		return nil, dst, src, fmt.Errorf("%w: spec fingerprint %016x, want %016x", ErrSpecMismatch, h.SpecFingerprint, specFingerprint)
	}
	if h.ParamsFingerprint != p.Fingerprint() || h.K != p.K || h.Bits != p.Bits || h.Scheme != p.Scheme {
		return nil, dst, src, fmt.Errorf("%w: signature has %s/k=%d/bits=%d (fingerprint %016x), want %s (%016x)",
			ErrParamsMismatch, h.Scheme, h.K, h.Bits, h.ParamsFingerprint, p, p.Fingerprint())
	}
	rest = src[HeaderSize:]
	if h.HasID {
		n, w := binary.Uvarint(rest)
		if w <= 0 || n >= MaxIDLen || uint64(len(rest)-w) < n || w != uvarintLen(n) {
			return nil, dst, src, fmt.Errorf("%w: bad id length", ErrCorrupt)
		}
		id = rest[w : w+int(n) : w+int(n)]
		rest = rest[w+int(n):]
	}
	nb := p.Bytes()
	if len(rest) < nb {
		return nil, dst, src, fmt.Errorf("%w: %d slot bytes, want %d", ErrCorrupt, len(rest), nb)
	}
	body := rest[:nb]
	for len(body) > 0 {
		var w uint64
		k := min(len(body), 8)
		for j := 0; j < k; j++ {
			w |= uint64(body[j]) << (8 * j)
		}
		dst = append(dst, w)
		body = body[k:]
	}
	// Bits past K in the last word must be zero, or two encodings of one
	// signature could differ.
	if pad := p.Words()*64 - p.K*p.Bits; pad > 0 && dst[len(dst)-1]>>(64-pad) != 0 {
		return nil, dst[:len(dst)-p.Words()], src, fmt.Errorf("%w: non-zero padding bits", ErrCorrupt)
	}
	return id, dst, rest[nb:], nil
}

// uvarintLen is the length of the canonical uvarint encoding of n; longer
// encodings of the same number are rejected so that encodings are unique.
func uvarintLen(n uint64) int {
	var b [binary.MaxVarintLen64]byte
	return len(binary.AppendUvarint(b[:0], n))
}

// Reader reads a stream of encoded signatures, as `neardup sign` writes them.
// It is not safe for concurrent use.
type Reader struct {
	r      *bufio.Reader
	p      Params
	specFP uint64
	buf    []byte
	sig    Signature
}

// NewReader returns a Reader of signatures made under p and the spec with
// fingerprint specFingerprint.
func NewReader(r io.Reader, p Params, specFingerprint uint64) *Reader {
	p.EnsureDefaults()
	return &Reader{r: bufio.NewReaderSize(r, 1<<16), p: p, specFP: specFingerprint}
}

// Next returns the next signature and its id (nil if none). Both alias the
// Reader's buffers and are valid until the next call. At the end of the
// stream it returns io.EOF.
func (r *Reader) Next() (id []byte, sig Signature, err error) {
	hdr, err := r.r.Peek(HeaderSize)
	if err != nil {
		if err == io.EOF && len(hdr) == 0 {
			return nil, nil, io.EOF
		}
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("%w: truncated header", ErrCorrupt)
		}
		return nil, nil, err
	}
	h, err := DecodeHeader(hdr)
	if err != nil {
		return nil, nil, err
	}
	size := HeaderSize + Params{K: h.K, Bits: h.Bits}.Bytes()
	if h.HasID {
		// The stream may end within these bytes; Uvarint then fails below.
		lenBytes, _ := r.r.Peek(HeaderSize + binary.MaxVarintLen32)
		n, w := binary.Uvarint(lenBytes[HeaderSize:])
		if w <= 0 || n >= MaxIDLen {
			return nil, nil, fmt.Errorf("%w: bad id length", ErrCorrupt)
		}
		size += w + int(n)
	}
	if cap(r.buf) < size {
		r.buf = make([]byte, size)
	}
	r.buf = r.buf[:size]
	if _, err := io.ReadFull(r.r, r.buf); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: truncated signature", ErrCorrupt)
		}
		return nil, nil, err
	}
	id, r.sig, _, err = Decode(r.sig[:0], r.buf, r.p, r.specFP)
	return id, r.sig, err
}
