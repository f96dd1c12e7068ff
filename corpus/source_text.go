package corpus

import (
	"bytes"
	"io"
	"slices"
	"strconv"
)

var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// lineSource reads a JSON Lines or text input one line a record.
//
// It reads straight into the batch's buffer and cuts lines in place, so the
// bytes are copied once (by the read itself); only the partial line at the
// end of a full batch is carried over to the next one.
type lineSource struct {
	r       *Reader
	in      *input
	st      *stream
	line    int64  // lines seen so far in this input
	carry   []byte // start of a line cut by the end of the previous batch
	discard bool   // skipping the rest of a too-large line (SkipBad)
	off     int64  // byte offset in the input of the current line's start (buf[start] in fill)
}

func (r *Reader) openLines(in *input) (source, error) {
	st, err := openStream(in, r.opts.Stdin, &r.read)
	if err != nil {
		return nil, err
	}
	return &lineSource{r: r, in: in, st: st}, nil
}

func (s *lineSource) close() error { return s.st.Close() }

func (s *lineSource) fill(b *Batch) error {
	r := s.r
	limit := r.opts.MaxRecordBytes
	start := len(b.buf) // start of the current line
	buf := append(b.buf, s.carry...)
	s.carry = s.carry[:0]
	scan := len(buf) // carried bytes hold no '\n'
	for {
		if len(buf) == cap(buf) {
			if len(b.Records) > 0 {
				// Full: hand the batch over, keep the partial line.
				s.carry = append(s.carry, buf[start:]...)
				b.buf = buf[:start]
				return nil
			}
			if start > 0 {
				// Nothing in the batch is referenced: compact.
				n := copy(buf, buf[start:])
				buf, scan, start = buf[:n], scan-start, 0
			} else {
				// One line fills the buffer: grow it (bounded by the
				// too-large check below to about 2*MaxRecordBytes).
				nb := make([]byte, len(buf), 2*cap(buf))
				copy(nb, buf)
				buf = nb
			}
		}
		n, rerr := s.st.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		r.stats.Bytes += int64(n)
		if s.discard {
			if j := bytes.IndexByte(buf[start:], '\n'); j >= 0 {
				s.discard = false
				start += j + 1
				s.off += int64(j + 1)
				scan = start
			} else {
				s.off += int64(len(buf) - start)
				buf, scan = buf[:start], start
			}
		}
		if !s.discard {
			for {
				j := bytes.IndexByte(buf[scan:], '\n')
				if j < 0 {
					scan = len(buf)
					break
				}
				end := scan + j
				if err := s.emit(b, buf[start:end]); err != nil {
					b.buf = buf[:end]
					return err
				}
				s.off += int64(end + 1 - start)
				start, scan = end+1, end+1
			}
			// A partial line longer than the limit plus a possible '\r'
			// cannot end well: fail or skip it now rather than buffer it.
			if len(buf)-start > limit+1 {
				s.line++
				if err := r.tooLarge(b, s.in, s.line, "more than "+strconv.Itoa(limit)); err != nil {
					b.buf = buf[:start]
					return err
				}
				s.discard = true
				s.off += int64(len(buf) - start)
				buf, scan = buf[:start], start
			}
		}
		if rerr == io.EOF {
			if start < len(buf) && !s.discard {
				if err := s.emit(b, buf[start:]); err != nil {
					b.buf = buf[:start]
					return err
				}
			}
			b.buf = buf
			return io.EOF
		}
		if rerr != nil {
			b.buf = buf[:start]
			return &RecordError{File: s.in.name, Line: s.line + 1, Index: r.index, Err: rerr}
		}
	}
}

// emit turns one line (without its '\n'), which starts at s.off in the
// input, into a record unless it is blank.
func (s *lineSource) emit(b *Batch, raw []byte) error {
	s.line++
	if n := len(raw); n > 0 && raw[n-1] == '\r' {
		raw = raw[:n-1]
	}
	at := s.off
	if s.line == 1 && bytes.HasPrefix(raw, utf8BOM) {
		raw, at = raw[len(utf8BOM):], at+int64(len(utf8BOM))
	}
	if len(raw) > s.r.opts.MaxRecordBytes {
		return s.r.tooLarge(b, s.in, s.line, strconv.Itoa(len(raw)))
	}
	if isBlank(raw) {
		return nil
	}
	if !s.st.plain {
		at = -1
	}
	s.r.emit(b, s.in, raw, s.line, at)
	return nil
}

// isBlank reports whether a line holds only spaces, tabs and '\r'.
func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// wholeSource reads one file as one record (FormatDir).
type wholeSource struct {
	r  *Reader
	in *input
}

func (r *Reader) openWhole(in *input) (source, error) { return &wholeSource{r, in}, nil }

func (s *wholeSource) close() error { return nil }

func (s *wholeSource) fill(b *Batch) error {
	r := s.r
	st, err := openStream(s.in, r.opts.Stdin, &r.read)
	if err != nil {
		return err
	}
	defer st.Close()
	limit := r.opts.MaxRecordBytes
	start := len(b.buf)
	buf := b.buf
	if s.in.size >= 0 && len(s.in.layers) == 0 {
		buf = slices.Grow(buf, int(min(s.in.size, int64(limit)))+1)
	}
	lr := io.LimitReader(st, int64(limit)+1)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, max(4096, cap(buf)-start))
		}
		n, rerr := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		r.stats.Bytes += int64(n)
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			b.buf = buf[:start]
			return &RecordError{File: s.in.name, Index: r.index, Err: rerr}
		}
	}
	if len(buf)-start > limit {
		b.buf = buf[:start]
		if err := r.tooLarge(b, s.in, 1, "more than "+strconv.Itoa(limit)); err != nil {
			return err
		}
		return io.EOF
	}
	at := int64(-1)
	if st.plain {
		at = 0
	}
	r.emit(b, s.in, buf[start:], 1, at)
	b.buf = buf
	return io.EOF
}
