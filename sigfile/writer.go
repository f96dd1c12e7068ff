package sigfile

import (
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"github.com/zeebo/xxh3"

	"github.com/neardup/neardup/internal/atomicfile"
)

// Writer writes a signature file: the header at once, then records in
// blocks, each written with one Write once full, and the trailer on Close.
// Until Close returns nil the output is not a valid signature file (a
// reader refuses it as truncated), so a failed or killed run never leaves a
// file that reads as complete.
//
// The zero value is not usable; make one with NewWriter or Create. A Writer
// is not safe for concurrent use. Its output is deterministic: the same
// header and records give the same bytes.
type Writer struct {
	w    io.Writer
	f    *atomicfile.File // set by Create
	name string

	blockBytes int
	sigBytes   int
	words      int
	padMask    uint64 // bits of the last word that must be zero

	buf   []byte // block header space, then the block's records
	n     int    // records in buf
	block uint64 // blocks written
	count int64  // records added
	chain uint64 // running file checksum
	err   error  // sticky write error
	done  bool
}

// NewWriter writes the header h (defaults filled in) to w and returns a
// Writer of records after it. Nothing is written if h is invalid (the error
// wraps ErrInvalidHeader). Close writes the trailer but does not close w.
// Writing to standard output or a pipe, nothing makes the output appear
// atomically; the reader's checks (trailer, count, checksums) are then what
// tells a complete file from a cut one.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	return newWriter(w, nil, "", h)
}

// Create starts writing the signature file path under a temporary name in
// its directory (internal/atomicfile); Close renames it to path once the
// trailer is written and synced, Abort removes it. path is left as it was
// until Close succeeds.
func Create(path string, h Header) (*Writer, error) {
	h.ensureDefaults()
	if err := h.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, err
	}
	w, err := newWriter(f, f, path, h)
	if err != nil {
		f.Abort()
		return nil, err
	}
	return w, nil
}

func newWriter(w io.Writer, f *atomicfile.File, name string, h Header) (*Writer, error) {
	h.ensureDefaults()
	if err := h.Validate(); err != nil {
		if name != "" {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return nil, err
	}
	sw := &Writer{w: w, f: f, name: name, blockBytes: h.BlockBytes, sigBytes: h.SignatureBytes(), words: h.Words()}
	if pad := sw.words*64 - h.Slots()*h.SlotBits(); pad > 0 {
		sw.padMask = ^uint64(0) << (64 - pad)
	}
	hdr := appendHeader(nil, h)
	sw.chain = binary.LittleEndian.Uint64(hdr[len(hdr)-checksumSize:])
	sw.write(hdr)
	if sw.err != nil {
		return nil, sw.err
	}
	sw.buf = make([]byte, blockHeaderSize, blockHeaderSize+sw.blockBytes+checksumSize)
	return sw, nil
}

// write writes b to the output, keeping the first error.
func (w *Writer) write(b []byte) {
	if w.err != nil {
		return
	}
	if _, err := w.w.Write(b); err != nil {
		if w.name != "" {
			err = fmt.Errorf("%s: %w", w.name, err)
		}
		w.err = err
	}
}

// Add appends a record: the document's id (fewer than MaxIDLen bytes, may
// be empty) and its signature, Header.Words() words: a packed
// minhash.Signature, or for SimHash the one fingerprint. Bits past the last
// slot must be zero, as minhash packs them. Neither slice is retained. An
// invalid record is not written and wraps ErrInvalidRecord; the Writer stays
// usable. A write error is returned by this and every later call.
func (w *Writer) Add(id []byte, sig []uint64) error {
	if w.done {
		return ErrClosed
	}
	if w.err != nil {
		return w.err
	}
	if len(id) >= MaxIDLen {
		return fmt.Errorf("%w: record %d: id of %d bytes, the limit is %d", ErrInvalidRecord, w.count, len(id), MaxIDLen-1)
	}
	if len(sig) != w.words {
		return fmt.Errorf("%w: record %d: signature of %d words, the header says %d", ErrInvalidRecord, w.count, len(sig), w.words)
	}
	if sig[len(sig)-1]&w.padMask != 0 {
		return fmt.Errorf("%w: record %d: non-zero bits past the last slot", ErrInvalidRecord, w.count)
	}
	size := uvarintLen(uint64(len(id))) + len(id) + w.sigBytes
	if w.n > 0 && len(w.buf)-blockHeaderSize+size > w.blockBytes {
		w.flush()
		if w.err != nil {
			return w.err
		}
	}
	if cap(w.buf)-len(w.buf) < size {
		w.buf = slices.Grow(w.buf, size) // a record larger than a block
	}
	// Fill the record in place: w.buf = w.buf[:k] updates only the length,
	// where appends store the slice's pointer, each a write barrier while
	// the collector runs (a quarter of writing SimHash records).
	p := len(w.buf)
	w.buf = w.buf[:p+size]
	p += binary.PutUvarint(w.buf[p:], uint64(len(id)))
	p += copy(w.buf[p:], id)
	putPacked(w.buf[p:p+w.sigBytes], sig)
	w.n++
	w.count++
	return nil
}

// flush writes the block in buf: its header, its records and its checksum.
func (w *Writer) flush() {
	binary.LittleEndian.PutUint32(w.buf[0:], uint32(w.n))
	binary.LittleEndian.PutUint32(w.buf[4:], uint32(len(w.buf)-blockHeaderSize))
	sum := xxh3.HashSeed(w.buf, w.block)
	w.buf = binary.LittleEndian.AppendUint64(w.buf, sum)
	w.write(w.buf)
	w.chain = chain(w.chain, sum)
	w.block++
	w.n = 0
	w.buf = w.buf[:blockHeaderSize]
}

// chain folds a block checksum into the running file checksum:
// xxh3(LE64(c) ‖ LE64(sum)).
func chain(c, sum uint64) uint64 {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:], c)
	binary.LittleEndian.PutUint64(b[8:], sum)
	return xxh3.Hash(b[:])
}

// Count returns the number of records added.
func (w *Writer) Count() int64 { return w.count }

// Close writes the last block and the trailer; for a Writer from Create it
// then syncs the file and renames it to its path. After an error the output
// is incomplete (from Create: removed). Close does not close the io.Writer
// given to NewWriter. A second Close returns ErrClosed.
func (w *Writer) Close() error {
	if w.done {
		return ErrClosed
	}
	w.done = true
	if w.n > 0 {
		w.flush()
	}
	var t [trailerSize]byte
	copy(t[4:], TrailerMagic)
	binary.LittleEndian.PutUint64(t[8:], uint64(w.count))
	binary.LittleEndian.PutUint64(t[16:], chain(w.chain, uint64(w.count)))
	w.write(t[:])
	if w.f == nil {
		return w.err
	}
	if w.err != nil {
		w.f.Abort()
		return w.err
	}
	return w.f.Commit()
}

// Abort gives up the output: from Create, the temporary file is removed and
// the path left as it was; from NewWriter, nothing more is written (what
// was written reads as truncated). It does nothing after Close or a first
// Abort, so it can be deferred.
func (w *Writer) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	if w.f != nil {
		return w.f.Abort()
	}
	return nil
}

// uvarintLen is the length of the canonical uvarint encoding of n.
func uvarintLen(n uint64) int {
	l := 1
	for n >= 0x80 {
		n >>= 7
		l++
	}
	return l
}
