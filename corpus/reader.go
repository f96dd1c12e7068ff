package corpus

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
)

// StdinName is the File of records read from standard input (the input "-")
// or from a file made by Spool.
const StdinName = "<stdin>"

// Record is one raw record as read, before parsing. It is plain data: the
// zero value is an empty JSON Lines record, and any number of goroutines may
// read a Record at once.
//
// Raw aliases the memory of the Batch that holds the Record: it is valid until
// that Batch is passed to Reader.Next again. Its line terminator ("\n" or
// "\r\n") is removed.
type Record struct {
	// Raw is the record's bytes: a JSON Lines line, a text line, a whole file
	// (FormatDir), or a Parquet row encoded as a JSON object.
	Raw []byte
	// File is the input file as named to the Reader (for directories, joined
	// with the file's relative path); StdinName for standard input.
	File string
	// Name is, for FormatDir, the file's path relative to the directory with
	// '/' separators (the document id); "" otherwise.
	Name string
	// Line is the 1-based line number in File (blank lines count), the
	// 1-based row number for Parquet, 1 for FormatDir, and for WARC and WET
	// the 1-based number of the record among all records of File (those
	// skipped as not documents count).
	Line int64
	// Offset is, for WARC and WET, the byte offset in File at which the
	// record starts as stored: the start of its gzip member in a .warc.gz.
	// It is 0 for other formats.
	Offset int64
	// Source, when not empty, names a file that holds Raw byte for byte at
	// byte offset SourceOffset, so that Raw can be read back later (with
	// os.File.ReadAt) instead of being kept: the input file itself, or the
	// file Spool made of standard input. It is set for JSON Lines and text
	// lines and for FormatDir files read from a file that is not
	// compressed; it is empty for compressed inputs, standard input read
	// directly, Parquet, WARC and WET, whose Raw is not stored as such.
	Source string
	// SourceOffset is the byte offset of Raw in Source (after a byte-order
	// mark, which Raw does not hold); 0 when Source is empty.
	SourceOffset int64
	// Index is the record's 0-based position among all records of all inputs,
	// in input order. Records the Reader skips under SkipBad keep their index,
	// so the sequence can have gaps.
	Index int64
	// Format is the format the record was read in: FormatJSONL, FormatParquet,
	// FormatLines, FormatDir, FormatWARC or FormatWET.
	Format Format

	// stored is, when CopyKept asked for it, the record's gzip member as
	// stored (WARC and WET); it aliases the batch like Raw.
	stored []byte
}

// Batch is a reusable set of records filled by Reader.Next.
//
// The zero value is an empty batch ready for use. A Batch is not safe for
// concurrent use while Next fills it; once filled, any number of goroutines
// may read its records (for example, each parsing a share). Reusing it in
// Next invalidates the Raw of its records.
type Batch struct {
	// Records are the records read, in index order.
	Records []Record
	// Skipped are the records the Reader skipped as bad (over
	// MaxRecordBytes, under SkipBad) while filling the batch, in index
	// order; their indices are the gaps in Records'. Each error wraps
	// ErrTooLarge. The errors are plain data: they may be kept after the
	// batch is reused.
	Skipped []RecordError

	buf []byte // backing memory of the records' Raw
}

// Bytes returns the number of raw bytes the batch holds.
func (b *Batch) Bytes() int { return len(b.buf) }

// reset empties the batch for reuse, dropping an oversized buffer left by a
// huge record so that memory per batch returns to about target bytes.
func (b *Batch) reset(target int) {
	clear(b.Records) // drop references to file names and old buffers
	b.Records = b.Records[:0]
	clear(b.Skipped)
	b.Skipped = b.Skipped[:0]
	if cap(b.buf) < target || cap(b.buf) > 2*target {
		b.buf = make([]byte, 0, target)
	}
	b.buf = b.buf[:0]
}

// Progress reports how far a Reader is through its inputs, in bytes as stored
// on disk (compressed bytes for compressed inputs), for progress bars. It is
// a plain value; the zero value means nothing read of nothing.
type Progress struct {
	// Read is the number of input bytes consumed so far.
	Read int64
	// Total is the total size of all inputs, or -1 when unknown (standard input).
	Total int64
}

// Fraction returns Read/Total in [0, 1], or -1 when Total is unknown.
func (p Progress) Fraction() float64 {
	if p.Total < 0 {
		return -1
	}
	if p.Total == 0 || p.Read >= p.Total {
		return 1
	}
	return float64(p.Read) / float64(p.Total)
}

// Stats counts what a Reader and its Parsers saw. Add the Reader's and every
// Parser's Stats for a report: the sum does not depend on how many Parsers
// there were. It is a plain value; the zero value is all zero counts.
type Stats struct {
	// Files is the number of input files opened.
	Files int64
	// Records is the number of records read, good or bad (not blank lines).
	Records int64
	// Bad is the number of records skipped as bad: too large (Reader) or
	// failing to parse (Parser).
	Bad int64
	// Bytes is the number of bytes read after decompression (for Parquet,
	// the bytes of the JSON records made from its rows).
	Bytes int64
	// Keep is the number of records parsed whose Options.KeepField held a
	// number (Document.HasKeep), counted by the Parser. When KeepField is
	// set and Keep is 0 after good records, the field never appeared: a
	// command should say so, as a misspelt field name looks like this.
	Keep int64
	// Skipped is the number of WARC and WET records read and left out as not
	// documents (warcinfo, request, metadata, revisit, non-HTML responses;
	// in WET, everything but conversions). They are not in Records and have
	// no Index.
	Skipped int64
}

// Add returns the sum of s and o.
func (s Stats) Add(o Stats) Stats {
	return Stats{Files: s.Files + o.Files, Records: s.Records + o.Records, Bad: s.Bad + o.Bad,
		Bytes: s.Bytes + o.Bytes, Keep: s.Keep + o.Keep, Skipped: s.Skipped + o.Skipped}
}

// Good returns the number of records that were not bad.
func (s Stats) Good() int64 { return s.Records - s.Bad }

// BadRatio returns Bad/Records, or 0 when no record was read.
func (s Stats) BadRatio() float64 {
	if s.Records == 0 {
		return 0
	}
	return float64(s.Bad) / float64(s.Records)
}

// String renders the counts as a small table.
func (s Stats) String() string {
	str := fmt.Sprintf("files    %d\nrecords  %d\ngood     %d\nbad      %d (%.2f%%)\nbytes    %d\nkeep     %d\n",
		s.Files, s.Records, s.Good(), s.Bad, 100*s.BadRatio(), s.Bytes, s.Keep)
	if s.Skipped > 0 {
		str += fmt.Sprintf("skipped  %d (WARC records that are not documents)\n", s.Skipped)
	}
	return str
}

// input is one resolved input file.
type input struct {
	path   string        // path to open; "-" for standard input
	name   string        // Record.File
	rel    string        // FormatDir: the document id
	format Format        // never FormatAuto
	layers []compression // compression to undo, outermost first
	sniff  bool          // detect compression by magic bytes (stdin, spooled)
	size   int64         // bytes as stored; -1 if unknown
}

// Reader reads records from one or more inputs in order, one batch at a
// time. Make one with NewReader; its zero value is not usable.
//
// Next is not safe for concurrent use, but Progress and Stats may be called
// from any goroutine at any time. The sequence of records (bytes, files, lines,
// indices) is deterministic for given inputs and options; how records are cut
// into batches is not part of that contract.
type Reader struct {
	opts   Options
	inputs []input
	next   int    // next input to open
	src    source // current source; nil between inputs
	srcIn  *input // input of src
	srcAt  int64  // Progress.Read when src was opened
	index  int64  // next record index
	err    error  // sticky error, returned once the batch before it is out

	stats    Stats        // owned by Next
	read     atomic.Int64 // stored bytes consumed (Progress.Read)
	total    int64        // Progress.Total
	pubStats atomic.Pointer[Stats]

	keepStored Selection // CopyKept: records whose stored gzip member to attach
}

// source produces the records of one input.
type source interface {
	// fill appends records to b. It returns nil when b is full and io.EOF
	// when the input is exhausted; records may be appended in both cases.
	fill(b *Batch) error
	close() error
}

// NewReader resolves inputs (paths, directories or "-" for standard input)
// and returns a Reader over them. It stats every input and lists every
// directory up front, so a missing file or unknown format fails here rather
// than hours into a run; files themselves are opened one at a time by Next.
// opts may be nil for defaults.
func NewReader(inputs []string, opts *Options) (*Reader, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if len(inputs) == 0 {
		return nil, ErrNoInput
	}
	r := &Reader{opts: opts.withDefaults()}
	stdin := false
	for _, p := range inputs {
		if p == "-" {
			if stdin {
				return nil, fmt.Errorf("%w: standard input (-) given twice", ErrUnsupported)
			}
			stdin = true
		}
		if err := r.resolve(p); err != nil {
			return nil, err
		}
	}
	if err := r.checkWARCOptions(); err != nil {
		return nil, err
	}
	for _, in := range r.inputs {
		if in.size < 0 {
			r.total = -1
			break
		}
		r.total += in.size
	}
	r.pubStats.Store(&Stats{})
	return r, nil
}

// resolve appends the inputs named by p.
func (r *Reader) resolve(p string) error {
	f := r.opts.Format
	if p == "-" || isSpooled(p) {
		if f == FormatAuto {
			f = FormatJSONL
		}
		if f == FormatDir {
			return fmt.Errorf("%w: %s: standard input cannot be a directory (dir format)", ErrUnsupported, p)
		}
		if p == "-" && f == FormatParquet {
			return fmt.Errorf("%w: Parquet from standard input: Spool it to a file first", ErrUnsupported)
		}
		in := input{path: p, name: StdinName, format: f, sniff: true, size: -1}
		if p != "-" {
			fi, err := os.Stat(p)
			if err != nil {
				return fmt.Errorf("corpus: %w", err)
			}
			in.size = fi.Size()
		}
		r.inputs = append(r.inputs, in)
		return nil
	}
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	if !fi.IsDir() {
		in, err := fileInput(p, f, fi.Size())
		if err != nil {
			return err
		}
		in.rel = filepath.Base(p)
		r.inputs = append(r.inputs, in)
		return nil
	}
	if f == FormatAuto {
		f = FormatDir
	}
	files, err := walkDir(p, f != FormatDir)
	if err != nil {
		return err
	}
	for _, fl := range files {
		in, err := fileInput(filepath.Join(p, filepath.FromSlash(fl.rel)), f, fl.size)
		if err != nil {
			return err
		}
		in.rel = fl.rel
		r.inputs = append(r.inputs, in)
	}
	return nil
}

// fileInput resolves a regular file read in format f (FormatAuto: by name).
func fileInput(path string, f Format, size int64) (input, error) {
	base, layers := peelCompression(path)
	if f == FormatAuto {
		if f = formatByName(base); f == "" {
			return input{}, fmt.Errorf("%w: %s: cannot tell the format from the name (want .jsonl, .ndjson, .json, .parquet, .txt, .warc or .wet, optionally with .gz or .zst, or set the format)", ErrUnknownFormat, path)
		}
	}
	if f == FormatParquet && len(layers) > 0 {
		return input{}, fmt.Errorf("%w: %s: Parquet must not be wrapped in gzip or zstd (it compresses its pages itself)", ErrUnsupported, path)
	}
	return input{path: path, name: path, format: f, layers: layers, size: size}, nil
}

type dirFile struct {
	rel  string
	size int64
}

// walkDir lists the regular files under root (following symbolic links to
// files but not to directories), sorted by their '/'-separated relative
// paths. It skips files and directories whose names start with '.', and with
// skipUnderscore also those starting with '_' (Hadoop's hidden files, such as
// _SUCCESS beside shards).
func walkDir(root string, skipUnderscore bool) ([]dirFile, error) {
	var files []dirFile
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") || skipUnderscore && strings.HasPrefix(d.Name(), "_") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		fi, err := os.Stat(p) // follows symbolic links
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		files = append(files, dirFile{filepath.ToSlash(rel), fi.Size()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	slices.SortFunc(files, func(a, b dirFile) int { return strings.Compare(a.rel, b.rel) })
	return files, nil
}

// Next empties b and fills it with the next records. It returns io.EOF when
// all inputs are exhausted (and b is then empty). A non-nil error other than
// io.EOF comes after the records read before it: Next first returns those
// (with a nil error), then the error on the following call, and the same
// error on every call after that. A batch may hold no Records but only
// Skipped ones.
//
// Next blocks until the batch holds about Options.BatchBytes of records or
// the inputs end.
func (r *Reader) Next(b *Batch) error {
	b.reset(r.opts.BatchBytes)
	if r.err != nil {
		return r.err
	}
	err := r.fill(b)
	st := r.stats
	r.pubStats.Store(&st)
	if err != nil {
		r.err = err
		r.closeSource()
		if len(b.Records) > 0 || len(b.Skipped) > 0 {
			return nil
		}
	}
	return err
}

func (r *Reader) fill(b *Batch) error {
	for {
		if r.src == nil {
			if r.next == len(r.inputs) {
				return io.EOF
			}
			in := &r.inputs[r.next]
			r.next++
			r.srcAt = r.read.Load()
			src, err := r.open(in)
			if err != nil {
				return err
			}
			r.src, r.srcIn = src, in
			r.stats.Files++
		}
		err := r.src.fill(b)
		if err != io.EOF {
			return err // nil: the batch is full
		}
		if err := r.closeSource(); err != nil {
			return err
		}
		if len(b.buf) >= r.opts.BatchBytes && len(b.Records) > 0 {
			return nil
		}
	}
}

// closeSource closes the current source, if any, and settles Progress.Read
// to the exact size of the finished input.
func (r *Reader) closeSource() error {
	if r.src == nil {
		return nil
	}
	err := r.src.close()
	if r.srcIn.size >= 0 {
		r.read.Store(r.srcAt + r.srcIn.size)
	}
	r.src, r.srcIn = nil, nil
	return err
}

// Progress returns how many stored bytes were consumed and the total. It is
// safe to call concurrently with Next.
func (r *Reader) Progress() Progress {
	read := r.read.Load()
	if r.total >= 0 && read > r.total {
		read = r.total
	}
	return Progress{Read: read, Total: r.total}
}

// Stats returns the counts as of the end of the last Next call. It is safe to
// call concurrently with Next.
func (r *Reader) Stats() Stats { return *r.pubStats.Load() }

// Close releases the open input, if any. Next after Close returns an error.
func (r *Reader) Close() error {
	err := r.closeSource()
	if r.err == nil {
		r.err = errors.New("corpus: Reader is closed")
	}
	return err
}

// open opens the input in for reading.
func (r *Reader) open(in *input) (source, error) {
	switch in.format {
	case FormatParquet:
		return r.openParquet(in)
	case FormatDir:
		return r.openWhole(in)
	case FormatWARC, FormatWET:
		return r.openWARC(in)
	default:
		return r.openLines(in)
	}
}

// tooLarge reports a record over MaxRecordBytes whose size the message gives
// as size; with SkipBad it counts the record as read and bad, consumes its
// index, notes it in b.Skipped and returns nil.
func (r *Reader) tooLarge(b *Batch, in *input, line int64, size string) error {
	err := RecordError{File: in.name, Line: line, Index: r.index,
		Err: fmt.Errorf("%w: %s bytes, over MaxRecordBytes (%d)", ErrTooLarge, size, r.opts.MaxRecordBytes)}
	if in.format == FormatDir {
		err.Line = 0
	}
	if r.opts.SkipBad {
		r.stats.Records++
		r.stats.Bad++
		r.index++
		b.Skipped = append(b.Skipped, err)
		return nil
	}
	return &err
}

// emit appends a record to b; at is the offset of raw in in's file when it
// is stored there as is (Record.Source), else -1.
func (r *Reader) emit(b *Batch, in *input, raw []byte, line, at int64) {
	b.Records = append(b.Records, Record{Raw: raw, File: in.name, Name: in.dirName(), Line: line, Index: r.index, Format: in.format})
	if at >= 0 {
		rec := &b.Records[len(b.Records)-1]
		rec.Source, rec.SourceOffset = in.path, at
	}
	r.index++
	r.stats.Records++
}

func (in *input) dirName() string {
	if in.format == FormatDir {
		return in.rel
	}
	return ""
}

// countingReader counts bytes read from a stored file into Progress.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

// Read reads from the wrapped reader and adds the bytes read to the counter.
func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
