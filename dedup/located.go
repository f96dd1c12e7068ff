package dedup

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/docstore"
)

// The texts of exact verification.
//
// Exact verification needs the texts of the documents in candidate pairs,
// which are known only once every document is signed. A document read from
// an input that stores its record as is (corpus.Record.Source: a JSON Lines,
// text or dir file that is not compressed, or the spool of standard input)
// is kept as its location, about 9 bytes, and its record is read back and parsed
// again when its feature set is made (textReader); only the texts of the
// others (compressed inputs, Parquet, WARC, reference documents) are kept
// whole. At 5M short documents the locations are about 45 MB, held in
// memory within the texts' share of the budget, where the texts were 1.1
// GB, 0.89 GB of it spilled. Re-reading takes a third of the input (the
// documents in candidate pairs), in input order, in spans of neighbouring
// records.

// Text records in the text store: empty (the document has no text), or a tag
// byte followed by the text or by the record's location.
const (
	textInline byte = iota // the text follows
	textAt                 // file, offset and length follow, uvarints (binary.AppendUvarint)
	// textRaw is as textAt, but the location is of the text itself within
	// the record: a JSON string without escapes, or a record that is its
	// own text, whose bytes are the text, so that it is read back without
	// parsing the record again.
	textRaw
)

// maxSpan is the most bytes one read of neighbouring records spans.
const maxSpan = 1 << 20

// maxOpenSources is the most input files held open while texts are read
// back; the others are opened for each read.
const maxOpenSources = 64

// recordLoc is where a document's record is stored (corpus.Record.Source):
// src is empty when it is not.
type recordLoc struct {
	src    string
	file   string // Record.File, for errors
	name   string // Record.Name (FormatDir's document id)
	format corpus.Format
	off    int64
	n      int
	text   bool // off and n are those of the text within the record (textRaw)
}

// locOf returns the location of rec.
func locOf(rec *corpus.Record) recordLoc {
	if rec.Source == "" {
		return recordLoc{}
	}
	return recordLoc{src: rec.Source, file: rec.File, name: rec.Name, format: rec.Format, off: rec.SourceOffset, n: len(rec.Raw)}
}

// setTextLoc sets *l, which is zero, to the location of doc's text, parsed
// from rec, when the text is bytes of rec.Raw as they are (no escapes
// decoded, no markup taken out: the parser gave a piece of the record), and
// else to that of rec (locOf). A text read back by its own location needs
// no parsing: at 5M short documents, parsing the records again was a sixth
// of the feature sets' CPU.
func setTextLoc(l *recordLoc, rec *corpus.Record, doc *corpus.Document) {
	if *l = locOf(rec); l.src == "" {
		return
	}
	l.off, l.n, l.text = textLocIn(rec, doc)
}

// textLocIn returns where, in rec's source, doc's text is when it is bytes
// of rec.Raw as they are (text true), else where rec is (see setTextLoc).
// The workers keep it in their batch's docRes, beside the record's source.
func textLocIn(rec *corpus.Record, doc *corpus.Document) (off int64, n int, text bool) {
	if inRecord(rec, doc.Text) {
		return rec.SourceOffset + int64(uintptr(unsafe.Pointer(unsafe.SliceData(doc.Text)))-uintptr(unsafe.Pointer(unsafe.SliceData(rec.Raw)))), len(doc.Text), true
	}
	return rec.SourceOffset, len(rec.Raw), false
}

// inRecord reports whether text, not empty, is bytes of rec.Raw as they
// are (a piece the parser gave of the record), not of the parser's buffer.
func inRecord(rec *corpus.Record, text []byte) bool {
	if len(text) == 0 || len(text) > len(rec.Raw) {
		return false
	}
	raw := uintptr(unsafe.Pointer(unsafe.SliceData(rec.Raw)))
	t := uintptr(unsafe.Pointer(unsafe.SliceData(text)))
	return t >= raw && t-raw <= uintptr(len(rec.Raw)-len(text))
}

// sourceFile is an input file texts are read back from.
type sourceFile struct {
	path, file, name string
	format           corpus.Format
	size             int64
	mod              time.Time
	f                *os.File // open, or nil
	checked          bool     // f's size and time were compared
	// ready is f once open and checked: read without taking the store's
	// lock (most reads are of a few hundred bytes, and a lock taken for
	// each cost futex calls between the workers).
	ready atomic.Pointer[os.File]
}

// textStore keeps the texts (or the records' locations) of documents, by
// document, for exact verification. Appends are not safe for concurrent
// use; once they are done, any number of textReaders may read at once.
type textStore struct {
	st    *docstore.Store
	index map[string]uint32 // by path
	files []*sourceFile
	rec   []byte

	mu   sync.Mutex // files' f and checked, while reading
	open int
}

func newTextStore(dir string, budget int64) *textStore {
	return &textStore{st: docstore.New(dir, "texts", budget), index: map[string]uint32{}}
}

// appendText adds a document's text (nil: none).
func (t *textStore) appendText(text []byte) error {
	if len(text) == 0 {
		_, err := t.st.Append(nil)
		return err
	}
	t.rec = append(append(t.rec[:0], textInline), text...)
	_, err := t.st.Append(t.rec)
	return err
}

// appendAt adds a document whose record is stored at l.
func (t *textStore) appendAt(l *recordLoc) error {
	i, err := t.source(&recordSrc{src: l.src, file: l.file, name: l.name, format: l.format})
	if err != nil {
		return err
	}
	return t.appendLoc(textLoc{file: i, off: l.off, n: l.n, raw: l.text})
}

// source returns the number of the source file rs names, added (and its
// size and time taken) if it is new. The collector asks once a batch for
// each of the batch's sources (signed.srcs), not once a document.
func (t *textStore) source(rs *recordSrc) (uint32, error) {
	i, ok := t.index[rs.src]
	if !ok {
		fi, err := os.Stat(rs.src)
		if err != nil {
			return 0, fmt.Errorf("dedup: %w", err)
		}
		i = uint32(len(t.files))
		t.index[rs.src] = i
		t.files = append(t.files, &sourceFile{path: rs.src, file: rs.file, name: rs.name, format: rs.format, size: fi.Size(), mod: fi.ModTime()})
	}
	return i, nil
}

// appendLoc adds a document whose text (or record) is at l, of a file
// numbered by source.
func (t *textStore) appendLoc(l textLoc) error {
	t.rec = appendTextLoc(t.rec[:0], l)
	_, err := t.st.Append(t.rec)
	return err
}

// textLoc is a text's location as the store keeps it: a source file's
// number, the offset and length of the record (or, raw, of the text
// within it).
type textLoc struct {
	file uint32
	off  int64
	n    int
	raw  bool // the bytes are the text (textRaw), else its record's
}

// appendTextLoc appends l's text record to b: its tag and three uvarints,
// 9 bytes for a short document of a file under 32 GiB (17 in fixed widths,
// as it was: the store held and faulted in twice the bytes).
func appendTextLoc(b []byte, l textLoc) []byte {
	tag := textAt
	if l.raw {
		tag = textRaw
	}
	b = append(b, tag)
	b = binary.AppendUvarint(b, uint64(l.file))
	b = binary.AppendUvarint(b, uint64(l.off))
	return binary.AppendUvarint(b, uint64(l.n))
}

// parseTextLoc reads a text record made by appendTextLoc; it returns false
// for any other record (a text kept whole, none, or a malformed one).
func parseTextLoc(b []byte) (textLoc, bool) {
	if len(b) == 0 || (b[0] != textAt && b[0] != textRaw) {
		return textLoc{}, false
	}
	var v [3]uint64
	rest := b[1:]
	for k := range v {
		var n int
		if v[k], n = binary.Uvarint(rest); n <= 0 {
			return textLoc{}, false
		}
		rest = rest[n:]
	}
	if len(rest) != 0 || v[0] > math.MaxUint32 || v[1] > math.MaxInt64 || v[2] > math.MaxInt32 {
		return textLoc{}, false
	}
	return textLoc{file: uint32(v[0]), off: int64(v[1]), n: int(v[2]), raw: b[0] == textRaw}, true
}

// SpilledBytes is the size of the store's spill file.
func (t *textStore) SpilledBytes() int64 { return t.st.SpilledBytes() }

// Close releases the spill file and the input files.
func (t *textStore) Close() error {
	err := t.st.Close()
	for _, f := range t.files {
		if f.f != nil {
			f.ready.Store(nil)
			f.f.Close()
			f.f = nil
		}
	}
	return err
}

// readAt reads len(p) bytes at off of source file i, checking first that
// the file is the one read while signing.
func (t *textStore) readAt(p []byte, i uint32, off int64) error {
	sf := t.files[i]
	if f := sf.ready.Load(); f != nil {
		if _, err := f.ReadAt(p, off); err != nil {
			return fmt.Errorf("dedup: reading texts back from %s: %w", sf.file, err)
		}
		return nil
	}
	t.mu.Lock()
	f, temp := sf.f, false
	if f == nil {
		var err error
		if f, err = os.Open(sf.path); err != nil {
			t.mu.Unlock()
			return fmt.Errorf("dedup: reading texts back: %w", err)
		}
		if t.open < maxOpenSources {
			sf.f = f
			t.open++
		} else {
			temp = true
		}
	}
	if !sf.checked || temp {
		fi, err := f.Stat()
		if err == nil && (fi.Size() != sf.size || !fi.ModTime().Equal(sf.mod)) {
			err = fmt.Errorf("%w: %s: %d bytes, modified %s; it had %d bytes, modified %s",
				ErrInputChanged, sf.file, fi.Size(), fi.ModTime().Format(time.RFC3339Nano), sf.size, sf.mod.Format(time.RFC3339Nano))
		}
		if err != nil {
			if temp {
				f.Close()
			}
			t.mu.Unlock()
			return err
		}
		sf.checked = true
	}
	if !temp {
		sf.ready.Store(f)
	}
	t.mu.Unlock()
	_, err := f.ReadAt(p, off)
	if temp {
		f.Close()
	}
	if err != nil {
		return fmt.Errorf("dedup: reading texts back from %s: %w", sf.file, err)
	}
	return nil
}

// textReader reads documents' texts from a textStore: one per goroutine.
type textReader struct {
	t      *textStore
	parser *corpus.Parser
	doc    corpus.Document
	recs   []byte // the records of the documents asked for
	ends   []int
	locs   []textLoc // parsed from recs; n < 0: not a location
	span   []byte
	raw    []byte
	rec    corpus.Record
}

func (t *textStore) newReader(opts *corpus.Options) (*textReader, error) {
	p, err := corpus.NewParser(opts)
	if err != nil {
		return nil, err
	}
	return &textReader{t: t, parser: p}, nil
}

// each calls fn with the text of each document of docs (numbered as in the
// store), in order; the text is valid until fn returns. Records stored
// near each other in the same file are read in one go.
func (r *textReader) each(docs []uint32, fn func(i int, text []byte) error) error {
	r.recs, r.ends, r.locs = r.recs[:0], r.ends[:0], r.locs[:0]
	for _, d := range docs {
		var err error
		if r.recs, err = r.t.st.Get(r.recs, int(d)); err != nil {
			return err
		}
		r.ends = append(r.ends, len(r.recs))
	}
	// Each record parsed once (the runs below looked at each twice).
	lo := 0
	for _, hi := range r.ends {
		l, ok := parseTextLoc(r.recs[lo:hi])
		if !ok {
			l.n = -1 // not a location: a text kept whole, or none
		}
		r.locs = append(r.locs, l)
		lo = hi
	}
	for i := 0; i < len(docs); {
		l := r.locs[i]
		if l.n < 0 {
			lo := 0
			if i > 0 {
				lo = r.ends[i-1]
			}
			b := r.recs[lo:r.ends[i]]
			var text []byte
			if len(b) > 0 {
				if b[0] != textInline {
					return fmt.Errorf("dedup: internal error: text record %d has tag %d", docs[i], b[0])
				}
				text = b[1:]
			}
			if err := fn(i, text); err != nil {
				return err
			}
			i++
			continue
		}
		// The run of following documents in the same file within maxSpan.
		j, end := i+1, l.off+int64(l.n)
		for ; j < len(docs); j++ {
			m := r.locs[j]
			if m.n < 0 || m.file != l.file || m.off < l.off || m.off+int64(m.n)-l.off > maxSpan {
				break
			}
			end = max(end, m.off+int64(m.n))
		}
		if cap(r.span) < int(end-l.off) {
			r.span = make([]byte, end-l.off)
		}
		span := r.span[:end-l.off]
		if err := r.t.readAt(span, l.file, l.off); err != nil {
			return err
		}
		for k := i; k < j; k++ {
			m := r.locs[k]
			text := span[m.off-l.off : m.off-l.off+int64(m.n)]
			if !m.raw {
				var err error
				if text, err = r.parse(m.file, text); err != nil {
					return err
				}
			}
			if err := fn(k, text); err != nil {
				return err
			}
		}
		i = j
	}
	return nil
}

// parse parses a record of source file i as it was parsed while signing
// and returns its text.
func (r *textReader) parse(i uint32, raw []byte) ([]byte, error) {
	sf := r.t.files[i]
	r.rec = corpus.Record{Raw: raw, File: sf.file, Name: sf.name, Format: sf.format}
	if err := r.parser.Parse(&r.rec, &r.doc); err != nil {
		return nil, fmt.Errorf("%w: %s: a record read back no longer parses: %w", ErrInputChanged, sf.file, err)
	}
	return r.doc.Text, nil
}
