package sigfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/zeebo/xxh3"

	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
)

// legacyMagic opens the old format: the concatenated per-signature
// encodings of minhash.AppendBinary.
const legacyMagic = minhash.Magic

// ReadOptions configure a Reader. A nil *ReadOptions means the defaults.
type ReadOptions struct {
	// Legacy, when set, lets a Reader read a file of the old format (the
	// per-signature encodings of minhash.AppendBinary concatenated, as
	// neardup sign wrote before signature files had a header), whose
	// signatures are then checked against these spec and params. Default
	// nil: such a file is refused with ErrLegacy.
	Legacy *Legacy
}

// Legacy are the spec and params an old-format file must have been made
// under. That format records in every signature the spec and params
// fingerprints, K, the scheme and the slot width, but neither the spec nor
// the seed, so the caller supplies them and every record is checked against
// them; it has no record count and no checksum, so a file cut between two
// records, or a changed slot, cannot be detected.
type Legacy struct {
	// Spec is the shingle spec the signatures were made under. Required.
	Spec shingle.Spec
	// Params are the minhash params, seed included (defaults filled in).
	Params minhash.Params
}

// Record is one document's signature as a Reader returns it. Next copies
// into the record's slices, growing them when needed, so a Record reused
// across calls costs no allocation once its slices are large enough. The
// caller owns both slices.
type Record struct {
	// ID is the document's id, fewer than MaxIDLen bytes (possibly empty).
	ID []byte
	// Sig is the signature, Header.Words() words: a packed
	// minhash.Signature, or for SimHash the fingerprint in Sig[0].
	Sig []uint64
}

// stream reads one file.
type stream struct {
	r    io.Reader
	name string
	h    Header

	legacy *minhash.Reader

	sigBytes  int
	words     int
	padMask   byte // bits of a signature's last byte that must be zero
	maxRecord int

	off      int64 // offset of the next unread byte
	buf      []byte
	pos, end int
	left     int    // records left in the current block
	block    uint64 // blocks read
	blockOff int64  // offset of the current block
	first    int64  // record number of the current block's first record
	rec      int64  // records returned
	chain    uint64
	next     [blockHeaderSize]byte // the next block's header, read ahead
	nextLen  int                   // bytes of it present
	closer   io.Closer             // the file, when the stream owns it
}

// read reads len(b) bytes unless the input ends first; EOF and
// io.ErrUnexpectedEOF come back as they are, other errors wrapped with the
// name.
func (s *stream) read(b []byte) (int, error) {
	n, err := io.ReadFull(s.r, b)
	s.off += int64(n)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		err = fmt.Errorf("%s: %w", s.name, err)
	}
	return n, err
}

func isEOF(err error) bool { return err == io.EOF || err == io.ErrUnexpectedEOF }

// openStream reads the header of r.
func openStream(r io.Reader, name string, opts *ReadOptions) (*stream, error) {
	s := &stream{r: r, name: name}
	var fixed [fixedHeaderSize]byte
	n, err := s.read(fixed[:4])
	switch {
	case n == 0 && err == io.EOF:
		return nil, fmt.Errorf("%w: %s: empty file (0 bytes); a signature file holds at least a header and a trailer", ErrTruncated, name)
	case isEOF(err) && (strings.HasPrefix(Magic, string(fixed[:n])) || strings.HasPrefix(legacyMagic, string(fixed[:n]))):
		return nil, fmt.Errorf("%w: %s: %d bytes, cut in the magic", ErrTruncated, name, n)
	case err != nil && !isEOF(err):
		return nil, err
	case string(fixed[:4]) == legacyMagic:
		return s.openLegacy(fixed[:4], opts)
	case string(fixed[:4]) != Magic:
		return nil, fmt.Errorf("%w: %s starts with %q, not %q", ErrNotSignatureFile, name, fixed[:n], Magic)
	}
	if n, err := s.read(fixed[4:]); err != nil {
		if isEOF(err) {
			return nil, fmt.Errorf("%w: %s: cut at offset %d, in the header", ErrTruncated, name, 4+n)
		}
		return nil, err
	}
	if v := fixed[4]; v != Version {
		if v > Version {
			return nil, fmt.Errorf("%w: %s: format version %d, this build reads version %d (written by a newer neardup)", ErrVersion, name, v, Version)
		}
		return nil, fmt.Errorf("%w: %s: format version %d at offset 4", ErrCorrupt, name, v)
	}
	h, slots, bits, specLen, err := decodeFixed(fixed[:])
	if err != nil {
		return nil, fmt.Errorf("%w: %s: header: %v", ErrCorrupt, name, err)
	}
	hb := make([]byte, fixedHeaderSize, fixedHeaderSize+specLen+2+maxCanonical+checksumSize)
	copy(hb, fixed[:])
	hb = hb[:fixedHeaderSize+specLen+2]
	if n, err := s.read(hb[fixedHeaderSize:]); err != nil {
		if isEOF(err) {
			return nil, fmt.Errorf("%w: %s: cut at offset %d, in the header", ErrTruncated, name, fixedHeaderSize+n)
		}
		return nil, err
	}
	paramsLen := int(binary.LittleEndian.Uint16(hb[len(hb)-2:]))
	if paramsLen == 0 || paramsLen > maxCanonical {
		return nil, fmt.Errorf("%w: %s: header: params length %d at offset %d, want 1..%d", ErrCorrupt, name, paramsLen, len(hb)-2, maxCanonical)
	}
	start := len(hb)
	hb = hb[:start+paramsLen+checksumSize]
	if n, err := s.read(hb[start:]); err != nil {
		if isEOF(err) {
			return nil, fmt.Errorf("%w: %s: cut at offset %d, in the header", ErrTruncated, name, start+n)
		}
		return nil, err
	}
	body := hb[:len(hb)-checksumSize]
	sum, stored := xxh3.Hash(body), binary.LittleEndian.Uint64(hb[len(body):])
	if sum != stored {
		return nil, fmt.Errorf("%w: %s: header checksum %016x at offset %d, the header hashes to %016x", ErrCorrupt, name, stored, len(body), sum)
	}
	h.Spec = string(hb[fixedHeaderSize : fixedHeaderSize+specLen])
	if h, err = finishHeader(h, slots, bits, string(hb[start:start+paramsLen])); err != nil {
		return nil, fmt.Errorf("%w: %s: header: %w", ErrCorrupt, name, err)
	}
	s.h, s.chain = h, sum
	s.sigBytes, s.words = h.SignatureBytes(), h.Words()
	if pad := 8*s.sigBytes - h.Slots()*h.SlotBits(); pad > 0 {
		s.padMask = ^byte(0) << (8 - pad)
	}
	s.maxRecord = 3 + MaxIDLen - 1 + s.sigBytes
	s.nextLen, err = s.read(s.next[:])
	if err != nil && !isEOF(err) {
		return nil, err
	}
	return s, nil
}

// openLegacy starts reading an old-format file, whose first four bytes
// have been read.
func (s *stream) openLegacy(magic []byte, opts *ReadOptions) (*stream, error) {
	if opts == nil || opts.Legacy == nil {
		return nil, fmt.Errorf("%w: %s is an old-format signature file (signatures concatenated, as neardup sign wrote "+
			"before signature files had a header): it carries no seed, record count or checksum, so a cut or damaged "+
			"file cannot be detected; re-run neardup sign to rewrite it", ErrLegacy, s.name)
	}
	p := opts.Legacy.Params
	p.EnsureDefaults()
	s.h = MinHashHeader(opts.Legacy.Spec, p)
	s.h.Version = 0
	s.h.BlockBytes = 0
	s.words = p.Words()
	s.legacy = minhash.NewReader(io.MultiReader(strings.NewReader(string(magic)), s.r), p, opts.Legacy.Spec.Fingerprint())
	return s, nil
}

// nextBlock reads, checks and opens the next block, or reads and checks the
// trailer and returns io.EOF.
func (s *stream) nextBlock() error {
	blockOff := s.off - int64(s.nextLen)
	if s.nextLen < blockHeaderSize {
		if s.nextLen == 0 {
			return fmt.Errorf("%w: %s: ends at offset %d after %d records, between two blocks: the trailer is missing", ErrTruncated, s.name, s.off, s.rec)
		}
		return fmt.Errorf("%w: %s: ends at offset %d, in the block header or trailer at offset %d", ErrTruncated, s.name, s.off, blockOff)
	}
	n := binary.LittleEndian.Uint32(s.next[0:])
	if n == 0 {
		return s.trailer(blockOff)
	}
	size := binary.LittleEndian.Uint32(s.next[4:])
	if int64(size) > int64(s.h.BlockBytes) && (n != 1 || int64(size) > int64(s.maxRecord)) {
		return fmt.Errorf("%w: %s: block %d at offset %d: %d records in %d bytes, the header allows %d (or one record of up to %d)",
			ErrCorrupt, s.name, s.block, blockOff, n, size, s.h.BlockBytes, s.maxRecord)
	}
	if uint64(n)*uint64(1+s.sigBytes) > uint64(size) {
		return fmt.Errorf("%w: %s: block %d at offset %d: %d records cannot fit in %d bytes", ErrCorrupt, s.name, s.block, blockOff, n, size)
	}
	end := blockHeaderSize + int(size)
	need := end + checksumSize + blockHeaderSize
	if cap(s.buf) < need {
		// Room for any block up to the block size at once: blocks differ in
		// size by up to a record, and growing by each would reallocate.
		s.buf = make([]byte, need, max(need, blockHeaderSize+s.h.BlockBytes+checksumSize+blockHeaderSize))
	}
	s.buf = s.buf[:need]
	copy(s.buf, s.next[:])
	got, err := s.read(s.buf[blockHeaderSize:])
	if err != nil && !isEOF(err) {
		return err
	}
	if got < end-blockHeaderSize+checksumSize {
		return fmt.Errorf("%w: %s: ends at offset %d, in block %d (offset %d, %d bytes)", ErrTruncated, s.name, s.off, s.block, blockOff, need-blockHeaderSize)
	}
	sum, stored := xxh3.HashSeed(s.buf[:end], s.block), binary.LittleEndian.Uint64(s.buf[end:])
	if sum != stored {
		return fmt.Errorf("%w: %s: block %d at offset %d (records from %d): checksum %016x, the block hashes to %016x",
			ErrCorrupt, s.name, s.block, blockOff, s.rec, stored, sum)
	}
	s.nextLen = got - (end - blockHeaderSize + checksumSize)
	copy(s.next[:], s.buf[end+checksumSize:])
	if err := s.checkRecords(int(n), end); err != nil {
		return fmt.Errorf("%w: %s: block %d at offset %d: %v", ErrCorrupt, s.name, s.block, blockOff, err)
	}
	s.chain = chain(s.chain, sum)
	s.pos, s.end, s.left = blockHeaderSize, end, int(n)
	s.blockOff, s.first = blockOff, s.rec
	s.block++
	return nil
}

// checkRecords checks that the block in buf[:end] holds exactly n
// well-formed records. The checksum has passed, so this fails only for a
// file written by a faulty writer or crafted on purpose.
func (s *stream) checkRecords(n, end int) error {
	p := blockHeaderSize
	for i := range n {
		l, w := binary.Uvarint(s.buf[p:end])
		if w <= 0 || l >= MaxIDLen || w != uvarintLen(l) {
			return fmt.Errorf("record %d: bad id length", s.rec+int64(i))
		}
		p += w + int(l) + s.sigBytes
		if p > end {
			return fmt.Errorf("record %d overruns the block", s.rec+int64(i))
		}
		if s.buf[p-1]&s.padMask != 0 {
			return fmt.Errorf("record %d: non-zero bits past the last slot", s.rec+int64(i))
		}
	}
	if p != end {
		return fmt.Errorf("%d bytes after its %d records", end-p, n)
	}
	return nil
}

// trailer reads and checks the trailer, whose first 8 bytes are in s.next,
// and checks that nothing follows it.
func (s *stream) trailer(off int64) error {
	if string(s.next[4:]) != TrailerMagic {
		return fmt.Errorf("%w: %s: at offset %d a block of 0 records, or a trailer without its magic %q", ErrCorrupt, s.name, off, TrailerMagic)
	}
	var t [trailerSize - blockHeaderSize]byte
	if _, err := s.read(t[:]); err != nil {
		if isEOF(err) {
			return fmt.Errorf("%w: %s: ends at offset %d, in the trailer at offset %d", ErrTruncated, s.name, s.off, off)
		}
		return err
	}
	count, stored := binary.LittleEndian.Uint64(t[0:]), binary.LittleEndian.Uint64(t[8:])
	if count != uint64(s.rec) {
		return fmt.Errorf("%w: %s: the trailer at offset %d counts %d records, the file holds %d", ErrCorrupt, s.name, off, count, s.rec)
	}
	if sum := chain(s.chain, count); sum != stored {
		return fmt.Errorf("%w: %s: the trailer at offset %d has file checksum %016x, the file's blocks give %016x (blocks missing, repeated or out of order)",
			ErrCorrupt, s.name, off, stored, sum)
	}
	var one [1]byte
	if n, err := s.read(one[:]); n > 0 {
		return fmt.Errorf("%w: %s: bytes after the trailer, from offset %d", ErrCorrupt, s.name, s.off-1)
	} else if err != nil && !isEOF(err) {
		return err
	}
	return io.EOF
}

// nextRecord copies the next record into rec.
func (s *stream) nextRecord(rec *Record) error {
	if s.legacy != nil {
		return s.nextLegacy(rec)
	}
	if s.left == 0 {
		if err := s.nextBlock(); err != nil {
			return err
		}
	}
	b, p := s.buf, s.pos
	l, w := uint64(b[p]), 1
	if l >= 0x80 {
		l, w = binary.Uvarint(b[p:s.end]) // checked by checkRecords
	}
	p += w
	// x = x[:n] updates only the length: no pointer store, so no write
	// barrier while the collector runs (18 % of reading SimHash records).
	if cap(rec.ID) >= int(l) {
		rec.ID = rec.ID[:l]
		copy(rec.ID, b[p:])
	} else {
		rec.ID = append(rec.ID[:0], b[p:p+int(l)]...)
	}
	p += int(l)
	if cap(rec.Sig) >= s.words {
		rec.Sig = rec.Sig[:s.words]
		unpackInto(rec.Sig, b[p:p+s.sigBytes])
	} else {
		rec.Sig = unpack(rec.Sig[:0], b[p:p+s.sigBytes], s.words)
	}
	s.pos = p + s.sigBytes
	s.left--
	s.rec++
	return nil
}

func (s *stream) nextLegacy(rec *Record) error {
	id, sig, err := s.legacy.Next()
	switch {
	case err == io.EOF:
		return io.EOF
	case errors.Is(err, minhash.ErrSpecMismatch):
		return fmt.Errorf("%w: %s: record %d: %w", ErrSpecMismatch, s.name, s.rec, err)
	case errors.Is(err, minhash.ErrParamsMismatch):
		return fmt.Errorf("%w: %s: record %d: %w", ErrParamsMismatch, s.name, s.rec, err)
	case errors.Is(err, minhash.ErrCorrupt):
		return fmt.Errorf("%w: %s: record %d: %w", ErrCorrupt, s.name, s.rec, err)
	case err != nil:
		return fmt.Errorf("%s: record %d: %w", s.name, s.rec, err)
	}
	rec.ID = append(rec.ID[:0], id...)
	rec.Sig = append(rec.Sig[:0], sig...)
	s.rec++
	return nil
}
