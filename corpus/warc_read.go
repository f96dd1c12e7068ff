package corpus

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"

	"github.com/klauspost/compress/gzip"
)

// warcBufSize is the read buffer of a WARC input: room for the largest
// header the Reader accepts and the HTTP header it looks at after it.
const warcBufSize = 512 << 10

// maxTrailer bounds the line breaks after a record's block that are kept in
// its Raw; more are read and dropped.
const maxTrailer = 64

// errNoSeek means a bad record was met on an input that cannot be re-read.
var errNoSeek = errors.New("cannot look for the next record: standard input cannot be re-read (Spool it to a file)")

// warcSource reads the records of one WARC or WET input: one gzip member a
// record (the layout of Common Crawl and of WARC 1.1 annex D), or plain
// uncompressed records one after the other.
//
// It keeps the documents (see classify) as records whose Raw is the whole
// WARC record (header, block and the line breaks after it), counts other
// records in Stats.Skipped, and reports a record it cannot read with the byte
// offset where it starts. Under SkipBad it counts that record as bad and
// resumes at the next record: the next gzip member that decompresses to
// something starting with "WARC/", or the next line starting with a valid
// WARC header. Finding it needs the input to be re-read from just after the
// bad record's start, so standard input cannot be resumed (Spool it).
type warcSource struct {
	r       *Reader
	in      *input
	f       *os.File // nil for standard input
	br      *bufio.Reader
	below   int64 // stored bytes br has read from the input
	ioErr   error // a read error of the input (not a decoding error)
	gz      *gzip.Reader
	gzipped bool
	recNo   int64 // records started in this input (Record.Line)
	counted int64 // stored bytes added to Progress so far
	drain   []byte
}

// posReader counts the bytes read from the input and remembers read errors.
type posReader struct{ s *warcSource }

func (p posReader) Read(b []byte) (int, error) {
	var n int
	var err error
	if p.s.f != nil {
		n, err = p.s.f.Read(b)
	} else {
		n, err = p.s.r.opts.Stdin.Read(b)
	}
	p.s.below += int64(n)
	if err != nil && err != io.EOF {
		p.s.ioErr = err
	}
	return n, err
}

func (r *Reader) openWARC(in *input) (source, error) {
	s := &warcSource{r: r, in: in}
	if in.path != "-" {
		f, err := os.Open(in.path)
		if err != nil {
			return nil, fmt.Errorf("corpus: %w", err)
		}
		s.f = f
	}
	s.br = bufio.NewReaderSize(posReader{s}, warcBufSize)
	head, _ := s.br.Peek(4)
	if s.ioErr != nil {
		s.close()
		return nil, &RecordError{File: in.name, Index: -1, Err: s.ioErr}
	}
	// The content decides, so that a misnamed file is still read; the name
	// decides for a file whose first bytes are damaged.
	switch {
	case bytes.HasPrefix(head, zstdMagic) || slices.Contains(in.layers, compZstd) || len(in.layers) > 1:
		s.close()
		return nil, fmt.Errorf("%w: %s: WARC must be plain or compressed with gzip record by record (not zstd, not stacked)", ErrUnsupported, in.name)
	case bytes.HasPrefix(head, gzipMagic):
		s.gzipped = true
	case bytes.HasPrefix(head, []byte("WARC")):
	default:
		s.gzipped = len(in.layers) == 1
	}
	return s, nil
}

func (s *warcSource) close() error {
	if s.f != nil {
		return s.f.Close()
	}
	return nil
}

// pos returns the stored offset of the next unread byte.
func (s *warcSource) pos() int64 { return s.below - int64(s.br.Buffered()) }

// seek moves to stored offset off.
func (s *warcSource) seek(off int64) error {
	if s.f == nil {
		return errNoSeek
	}
	if _, err := s.f.Seek(off, io.SeekStart); err != nil {
		return err
	}
	s.below = off
	s.br.Reset(posReader{s})
	return nil
}

func (s *warcSource) fill(b *Batch) error {
	for len(b.Records) == 0 || len(b.buf) < s.r.opts.BatchBytes {
		start := s.pos()
		var err error
		if s.gzipped {
			err = s.nextMember(b, start)
		} else {
			err = s.nextPlain(b, start)
		}
		if p := s.pos(); p > s.counted {
			s.r.read.Add(p - s.counted)
			s.counted = p
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// recordError builds the error for the record starting at start.
func (s *warcSource) recordError(start int64, err error) *RecordError {
	return &RecordError{File: s.in.name, Line: s.recNo, Index: s.r.index, Offset: start, HasOffset: true, Err: err}
}

// bad reports the record starting at start as bad: an error, or under
// SkipBad a count, and then, if resync, a move to the next record.
func (s *warcSource) bad(start int64, err error, resync bool) error {
	if s.ioErr != nil {
		return s.recordError(start, s.ioErr)
	}
	r := s.r
	if !r.opts.SkipBad {
		return s.recordError(start, err)
	}
	r.stats.Records++
	r.stats.Bad++
	r.index++
	if !resync {
		return nil
	}
	var rerr error
	if s.gzipped {
		rerr = s.resyncGzip(start + 1)
	} else {
		rerr = s.resyncPlain(start + 1)
	}
	if rerr != nil {
		e := s.recordError(start, fmt.Errorf("%w; then: %v", err, rerr))
		e.Index-- // the index of the bad record, already counted
		return e
	}
	return nil
}

// emit appends a document record to b: raw is its WARC record, [start, end)
// its stored bytes.
func (s *warcSource) emit(b *Batch, raw []byte, start, end int64) error {
	r := s.r
	rec := Record{Raw: raw, File: s.in.name, Line: s.recNo, Offset: start, Index: r.index, Format: s.in.format}
	if r.keepStored != nil && s.gzipped && r.keepStored.Contains(r.index) {
		if s.f == nil {
			return s.recordError(start, errNoSeek)
		}
		mark := len(b.buf)
		b.buf = slices.Grow(b.buf, int(end-start))[:mark+int(end-start)]
		if _, err := s.f.ReadAt(b.buf[mark:], start); err != nil {
			b.buf = b.buf[:mark]
			return s.recordError(start, err)
		}
		rec.stored = b.buf[mark:]
	}
	b.Records = append(b.Records, rec)
	r.index++
	r.stats.Records++
	return nil
}

// nextMember reads the gzip member at start, one WARC record.
func (s *warcSource) nextMember(b *Batch, start int64) error {
	if _, err := s.br.Peek(1); err != nil {
		if s.ioErr != nil {
			return s.recordError(start, s.ioErr)
		}
		return io.EOF
	}
	s.recNo++
	limit := s.r.opts.MaxRecordBytes
	mark := len(b.buf)
	total, err := s.inflate(b, limit)
	s.r.stats.Bytes += total
	content := b.buf[mark:]
	b.buf = b.buf[:mark] // kept only for a document, below
	if err != nil {
		return s.bad(start, fmt.Errorf("%w: corrupt gzip member: %v", ErrBadWARC, err), true)
	}
	if total == 0 {
		s.recNo-- // an empty member holds no record
		return nil
	}
	var h warcHeader
	if herr := parseWARCHeader(content, &h); herr != nil {
		switch {
		case herr == errIncomplete && total > int64(limit):
			return s.bad(start, fmt.Errorf("%w: header longer than MaxRecordBytes (%d)", ErrTooLarge, limit), false)
		case herr == errIncomplete:
			herr = errors.New("gzip member ends inside the record header")
		}
		return s.bad(start, fmt.Errorf("%w: %v", ErrBadWARC, herr), false)
	}
	end := int64(h.size) + h.length
	if total < end {
		return s.bad(start, warcLengthError(&h, int(total)-h.size), false)
	}
	if total <= int64(limit) {
		// What follows the block must be line breaks: anything else means a
		// wrong Content-Length or more than one record in the member. (Past
		// the limit it was drained unseen; the member's CRC still held.)
		if i := bytes.IndexFunc(content[end:], notNewline); i >= 0 {
			return s.bad(start, fmt.Errorf("%w: %d bytes after the block of %d bytes (Content-Length) in the gzip member: a wrong Content-Length, or more than one record per member (a .warc.gz must be compressed record by record)",
				ErrBadWARC, len(content)-int(end), h.length), false)
		}
	}
	blockEnd := min(int64(len(content)), end)
	if classify(s.in.format, &h, content[h.size:blockEnd]) == warcSkip {
		s.r.stats.Skipped++
		return nil
	}
	if total > int64(limit) {
		return s.bad(start, fmt.Errorf("%w: %d bytes, over MaxRecordBytes (%d)", ErrTooLarge, total, limit), false)
	}
	b.buf = b.buf[:mark+len(content)]
	return s.emit(b, b.buf[mark:], start, s.pos())
}

func notNewline(r rune) bool { return r != '\r' && r != '\n' }

// inflate decompresses the gzip member at the reader's position, appending
// at most max bytes of it to b.buf and discarding the rest, and returns its
// decompressed size. Reading stops exactly at the end of the member: the
// gzip reader reads a bufio.Reader byte by byte where it must.
func (s *warcSource) inflate(b *Batch, max int) (int64, error) {
	var err error
	if s.gz == nil {
		s.gz, err = gzip.NewReader(s.br)
	} else {
		err = s.gz.Reset(s.br)
	}
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, err
	}
	s.gz.Multistream(false)
	buf := b.buf
	mark := len(buf)
	var total int64
	for {
		var n int
		if room := mark + max - len(buf); room > 0 {
			if len(buf) == cap(buf) {
				buf = slices.Grow(buf, min(room, max2(4096, len(buf)-mark)))
			}
			n, err = s.gz.Read(buf[len(buf):min(cap(buf), mark+max)])
			buf = buf[:len(buf)+n]
		} else {
			if s.drain == nil {
				s.drain = make([]byte, 64<<10)
			}
			n, err = s.gz.Read(s.drain)
		}
		total += int64(n)
		if err != nil {
			b.buf = buf
			if err == io.EOF {
				return total, nil
			}
			return total, err
		}
	}
}

func max2(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// resyncGzip moves to the first gzip member at or after from that
// decompresses without error to something starting with "WARC/", or to the
// end of the input.
func (s *warcSource) resyncGzip(from int64) error {
	var probe Batch
	for {
		if err := s.seek(from); err != nil {
			return err
		}
		// Find the next gzip header: 1f 8b and deflate (08).
		for {
			if _, err := s.br.ReadSlice(0x1f); err == bufio.ErrBufferFull {
				continue
			} else if err != nil {
				return s.ioErr // nil at the end of the input
			}
			if next, _ := s.br.Peek(2); len(next) == 2 && next[0] == 0x8b && next[1] == 0x08 {
				break
			}
		}
		at := s.pos() - 1
		if err := s.seek(at); err != nil {
			return err
		}
		probe.buf = probe.buf[:0]
		if _, err := s.inflate(&probe, 5); err == nil && bytes.HasPrefix(probe.buf, []byte("WARC/")) {
			return s.seek(at)
		}
		if s.ioErr != nil {
			return s.ioErr
		}
		from = at + 1
	}
}

// nextPlain reads the plain WARC record at start.
func (s *warcSource) nextPlain(b *Batch, start int64) error {
	if _, err := s.br.Peek(1); err != nil {
		if s.ioErr != nil {
			return s.recordError(start, s.ioErr)
		}
		return io.EOF
	}
	s.recNo++
	limit := s.r.opts.MaxRecordBytes
	var h warcHeader
	if err := s.peekHeader(&h); err != nil {
		return s.bad(start, fmt.Errorf("%w: %v", ErrBadWARC, err), true)
	}
	end := int64(h.size) + h.length
	head, _ := s.br.Peek(h.size + int(min(h.length, maxHTTPHeader)))
	if int64(len(head)) < min(end, int64(h.size+maxHTTPHeader)) {
		s.r.stats.Bytes += int64(len(head))
		s.br.Discard(len(head))
		return s.bad(start, warcLengthError(&h, len(head)-h.size), true)
	}
	kind := classify(s.in.format, &h, head[h.size:])
	if kind == warcSkip || end > int64(limit) {
		n, _ := s.br.Discard(int(end))
		s.r.stats.Bytes += int64(n)
		if int64(n) < end {
			return s.bad(start, warcLengthError(&h, n-h.size), true)
		}
		if _, err := s.trailer(nil, h.length); err != nil {
			return s.bad(start, err, true)
		}
		if kind == warcSkip {
			s.r.stats.Skipped++
			return nil
		}
		return s.bad(start, fmt.Errorf("%w: %s bytes, over MaxRecordBytes (%d)", ErrTooLarge, strconv.FormatInt(end, 10), limit), false)
	}
	mark := len(b.buf)
	buf := slices.Grow(b.buf, int(end)+maxTrailer)[:mark+int(end)]
	n, _ := io.ReadFull(s.br, buf[mark:])
	s.r.stats.Bytes += int64(n)
	if n < int(end) {
		return s.bad(start, warcLengthError(&h, n-h.size), true)
	}
	buf, err := s.trailer(buf, h.length)
	if err != nil {
		return s.bad(start, err, true)
	}
	b.buf = buf
	return s.emit(b, buf[mark:], start, s.pos())
}

// peekHeader parses the WARC header at the reader's position without
// consuming it, looking at more bytes until it ends.
func (s *warcSource) peekHeader(h *warcHeader) error {
	n := max2(s.br.Buffered(), 4096)
	for {
		n = min(n, maxWARCHeader)
		buf, err := s.br.Peek(n)
		perr := parseWARCHeader(buf, h)
		if perr != errIncomplete {
			return perr
		}
		if err != nil {
			if s.ioErr != nil {
				return s.ioErr
			}
			return errors.New("the input ends inside the record header")
		}
		if n == maxWARCHeader {
			return fmt.Errorf("header does not end within %d bytes", maxWARCHeader)
		}
		n *= 2
	}
}

// trailer reads the line breaks after a record's block, appending up to
// maxTrailer of them to buf. The standard puts two CRLF there; any run of CR
// and LF is accepted, and so is none at the end of the input. A block
// followed at once by anything else is the record's fault: its
// Content-Length is wrong (too small, or too large so that it ate the line
// breaks) or the record is damaged. Bytes after the line breaks that do not
// start a record are reported as the next record.
func (s *warcSource) trailer(buf []byte, length int64) ([]byte, error) {
	n := 0
	for {
		c, err := s.br.ReadByte()
		if err != nil {
			s.r.stats.Bytes += int64(n)
			return buf, s.ioErr // nil at the end of the input
		}
		if c != '\r' && c != '\n' {
			s.br.UnreadByte()
			break
		}
		if n < maxTrailer && buf != nil {
			buf = append(buf, c)
		}
		n++
	}
	s.r.stats.Bytes += int64(n)
	if n == 0 {
		next, _ := s.br.Peek(8)
		return buf, fmt.Errorf("%w: the block (Content-Length %s) is followed by %q, not by a line break: a wrong Content-Length, or a damaged record",
			ErrBadWARC, strconv.FormatInt(length, 10), next)
	}
	return buf, nil
}

// resyncPlain moves to the first line at or after from that starts a valid
// WARC header, or to the end of the input.
func (s *warcSource) resyncPlain(from int64) error {
	if err := s.seek(from); err != nil {
		return err
	}
	var h warcHeader
	for {
		if _, err := s.br.ReadSlice('\n'); err == bufio.ErrBufferFull {
			continue
		} else if err != nil {
			return s.ioErr // nil at the end of the input
		}
		if next, _ := s.br.Peek(7); bytes.Equal(next, []byte("WARC/1.")) && s.peekHeader(&h) == nil {
			return nil
		}
	}
}
