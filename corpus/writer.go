package corpus

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strconv"
)

// Writer writes records as JSON Lines: the Raw of JSON Lines and Parquet
// records verbatim (Parquet rows are already JSON objects), and text lines
// and files (FormatLines, FormatDir) as {"<IDField>":"<id>","<TextField>":"<text>"}
// with the same id the Parser gives them. Reading its output back as JSON
// Lines with the same Options yields the same texts, and the same ids except
// for JSON Lines records whose id was a line number.
//
// Make one with NewWriter; the zero value is not usable. A Writer is not safe
// for concurrent use. Its output is a deterministic function of the records.
// It buffers: call Flush when done.
type Writer struct {
	w         *bufio.Writer
	idField   []byte // `{"id":`
	textField []byte // `,"text":`
	buf       []byte
	n         int64
}

// NewWriter returns a Writer on w for records read with opts (nil means
// defaults).
func NewWriter(w io.Writer, opts *Options) (*Writer, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o := opts.withDefaults()
	idf := append(appendJSONString([]byte{'{'}, []byte(o.IDField)), ':')
	tf := append(appendJSONString([]byte{','}, []byte(o.TextField)), ':')
	return &Writer{w: bufio.NewWriterSize(w, 256<<10), idField: idf, textField: tf}, nil
}

// Write writes one record as one line.
func (w *Writer) Write(rec *Record) error {
	var err error
	switch rec.Format {
	case FormatLines, FormatDir:
		b := append(w.buf[:0], w.idField...)
		if rec.Format == FormatLines {
			b = append(b, '"')
			b = strconv.AppendInt(b, rec.Line, 10)
			b = append(b, '"')
		} else {
			b = appendJSONString(b, []byte(rec.Name))
		}
		b = append(b, w.textField...)
		b = appendJSONString(b, rec.Raw)
		b = append(b, '}', '\n')
		w.buf = b
		_, err = w.w.Write(b)
	case FormatWARC, FormatWET:
		return fmt.Errorf("%w: %s record %s:%d: WARC records are copied as WARC by CopyKept, not written as JSON Lines", ErrUnsupported, rec.Format, rec.File, rec.Line)
	default:
		if _, err = w.w.Write(rec.Raw); err == nil {
			err = w.w.WriteByte('\n')
		}
	}
	if err != nil {
		return fmt.Errorf("corpus: write: %w", err)
	}
	w.n++
	return nil
}

// Count returns the number of records written.
func (w *Writer) Count() int64 { return w.n }

// Flush writes any buffered data to the underlying writer.
func (w *Writer) Flush() error {
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("corpus: write: %w", err)
	}
	return nil
}

// Selection is a set of global record indices, such as the documents batch
// deduplication keeps. CopyKept calls it from one goroutine only.
type Selection interface {
	// Contains reports whether index is in the set.
	Contains(index int64) bool
	// Last returns the largest index in the set, or -1 if it is empty.
	Last() int64
	// Len returns the number of indices in the set.
	Len() int64
}

// Indices is a Selection held as a slice sorted in increasing order without
// duplicates. Contains is a binary search. The zero value is the empty set;
// like any slice it may be read by many goroutines at once.
type Indices []int64

// Contains reports whether i is in s.
func (s Indices) Contains(i int64) bool { _, ok := slices.BinarySearch(s, i); return ok }

// Last returns the largest index, or -1 if s is empty.
func (s Indices) Last() int64 {
	if len(s) == 0 {
		return -1
	}
	return s[len(s)-1]
}

// Len returns len(s).
func (s Indices) Len() int64 { return int64(len(s)) }

// Bitset is a Selection with one bit per index: index i is bit i%64 of word
// i/64. It costs one bit per record read and answers Contains in constant
// time. The zero value is the empty set; Set grows it as needed. Set must not
// run concurrently with other methods.
type Bitset []uint64

// NewBitset returns an empty Bitset with room for indices below n.
func NewBitset(n int64) Bitset { return make(Bitset, (n+63)/64) }

// Set adds i (i >= 0) to the set, growing it if needed.
func (s *Bitset) Set(i int64) {
	w := int(i >> 6)
	if w >= len(*s) {
		*s = append(*s, make(Bitset, w+1-len(*s))...)
	}
	(*s)[w] |= 1 << (i & 63)
}

// Contains reports whether i is in s.
func (s Bitset) Contains(i int64) bool {
	w := i >> 6
	return i >= 0 && w < int64(len(s)) && s[w]&(1<<(i&63)) != 0
}

// Last returns the largest index in s, or -1 if s is empty.
func (s Bitset) Last() int64 {
	for w := len(s) - 1; w >= 0; w-- {
		if s[w] != 0 {
			return int64(w)*64 + int64(63-bits.LeadingZeros64(s[w]))
		}
	}
	return -1
}

// Len returns the number of indices in s.
func (s Bitset) Len() int64 {
	var n int
	for _, x := range s {
		n += bits.OnesCount64(x)
	}
	return int64(n)
}

// CopyKept re-reads inputs with opts and writes to dst, through a Writer,
// every record whose Index keep contains, in input order; it stops reading
// after keep.Last(). It returns the number of records written. inputs and
// opts must be those of the pass that chose keep, with "-" replaced by a
// Spool file. If fewer records are written than keep holds (the inputs
// changed or were cut short), it returns an error.
//
// CopyKept buffers what it writes to dst, unless dst has an AvailableBuffer
// method (as *bufio.Writer has): such a writer buffers itself, and gets
// the kept records of plain JSON Lines files straight from their mapped
// pages (Linux).
//
// When the inputs are WARC or WET, it writes a WARC file compressed record
// by record instead (name it with KeptExtension): each kept record's gzip
// member byte for byte, or, for a record from a plain WARC file, its bytes
// as a new gzip member. WARC and other inputs cannot be mixed.
func CopyKept(ctx context.Context, dst io.Writer, inputs []string, opts *Options, keep Selection) (int64, error) {
	if ix, ok := keep.(Indices); ok && !slices.IsSorted(ix) {
		return 0, fmt.Errorf("%w: Indices are not sorted", ErrBadOptions)
	}
	w, err := NewWriter(dst, opts)
	if err != nil {
		return 0, err
	}
	want := keep.Len()
	if want == 0 {
		return 0, nil
	}
	r, err := NewReader(inputs, opts)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	if isWARC, err := r.keptWARC(); err != nil {
		return 0, err
	} else if isWARC {
		return copyKeptWARC(ctx, dst, r, keep)
	}
	if r.mappable() {
		n, err := copyKeptMapped(ctx, dst, r, keep)
		if err == nil && n != want {
			err = fmt.Errorf("corpus: wrote %d of %d kept records: the inputs changed since they were first read", n, want)
		}
		return n, err
	}
	if err := copyKeptLines(ctx, w, r, keep); err != nil {
		return w.Count(), err
	}
	if err := w.Flush(); err != nil {
		return w.Count(), err
	}
	if w.Count() != want {
		return w.Count(), fmt.Errorf("corpus: wrote %d of %d kept records: the inputs changed since they were first read", w.Count(), want)
	}
	return w.Count(), nil
}
