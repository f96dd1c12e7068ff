package corpus

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
)

// How CopyKept copies JSON Lines records.
//
// Most of a deduplicated corpus is kept (91 % of the bytes of 5M short web
// documents), and the Writer writes a JSON Lines or Parquet record as its
// Raw and a '\n'. Consecutive kept records whose Raws lie one after another
// in the batch's buffer with exactly one '\n' between them (the common case:
// lines of a JSON Lines input, compressed or not, ending in LF) are therefore
// one slice of the buffer, and CopyKept writes such a run with one call
// instead of a call and a newline per record. The check is on the memory
// itself (where the next Raw starts, and that the one byte before it is
// '\n'), so a line ending in CRLF, a blank line, a byte-order mark or a
// record over the size limit between two records simply ends the run: the
// output is the same, byte for byte, as record by record.
//
// And the input is read one batch ahead, on a goroutine of its own, while
// the kept records of the batch before are written.

// keptRun is a run of consecutive kept records lying one after another in a
// batch's buffer, each but the last followed by '\n'.
type keptRun struct {
	b []byte // from the first record's Raw to the end of the last's
	n int64  // records in the run
}

// extend adds raw, the Raw of the next kept record, to the run if the run
// is empty or raw starts right after the run and one '\n'; it reports
// whether it did.
func (k *keptRun) extend(raw []byte) bool {
	if k.n == 0 {
		k.b, k.n = raw, 1
		return true
	}
	end := len(k.b)
	if len(raw) == 0 || end+1+len(raw) > cap(k.b) || k.b[:end+1][end] != '\n' {
		return false
	}
	if next := k.b[end+1 : end+1+len(raw)]; &next[0] != &raw[0] {
		return false
	}
	k.b, k.n = k.b[:end+1+len(raw)], k.n+1
	return true
}

// flush writes the run, if any, and its last newline to w and empties it.
func (k *keptRun) flush(w *Writer) error {
	if k.n == 0 {
		return nil
	}
	err := w.writeRun(k.b, k.n)
	k.b, k.n = nil, 0
	return err
}

// writeRun writes run, n records each ended by '\n' but the last, and the
// last's '\n'.
func (w *Writer) writeRun(run []byte, n int64) error {
	_, err := w.w.Write(run)
	if err == nil {
		err = w.w.WriteByte('\n')
	}
	if err != nil {
		return fmt.Errorf("corpus: write: %w", err)
	}
	w.n += n
	return nil
}

// readAhead reads r's batches on a goroutine of its own, one batch ahead of
// the caller. Call next for each batch in turn (its error is Next's), give
// every batch back with release before the next call but one, and call stop
// once done, before closing r.
type readAhead struct {
	full chan aheadBatch
	free chan *Batch
	quit chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

type aheadBatch struct {
	b   *Batch
	err error
}

func newReadAhead(r *Reader) *readAhead {
	a := &readAhead{full: make(chan aheadBatch, 1), free: make(chan *Batch, 2), quit: make(chan struct{})}
	a.free <- new(Batch)
	a.free <- new(Batch)
	a.wg.Go(func() {
		for {
			var b *Batch
			select {
			case b = <-a.free:
			case <-a.quit:
				return
			}
			err := r.Next(b)
			select {
			case a.full <- aheadBatch{b, err}:
			case <-a.quit:
				return
			}
			if err != nil {
				return // Next returns the same error from now on
			}
		}
	})
	return a
}

// next returns the next batch and Next's error for it.
func (a *readAhead) next() (*Batch, error) {
	x := <-a.full
	return x.b, x.err
}

// release gives b back for reading into.
func (a *readAhead) release(b *Batch) { a.free <- b }

// stop ends the reading goroutine and waits for it.
func (a *readAhead) stop() {
	a.once.Do(func() { close(a.quit) })
	a.wg.Wait()
}

// copyKeptLines is CopyKept for inputs other than WARC: the records of keep
// through w, runs of them with one write each, reading one batch ahead.
func copyKeptLines(ctx context.Context, w *Writer, r *Reader, keep Selection) error {
	last := keep.Last()
	a := newReadAhead(r)
	defer a.stop()
	var run keptRun
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := a.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		for i := range b.Records {
			rec := &b.Records[i]
			if rec.Index > last {
				return run.flush(w)
			}
			if !keep.Contains(rec.Index) {
				continue // the next kept record is not adjacent to the run
			}
			switch rec.Format {
			case FormatJSONL, FormatParquet: // written as Raw and '\n'
				if run.extend(rec.Raw) {
					continue
				}
				if err := run.flush(w); err != nil {
					return err
				}
				run.extend(rec.Raw)
			default:
				if err := run.flush(w); err != nil {
					return err
				}
				if err := w.Write(rec); err != nil {
					return err
				}
			}
		}
		// The batch's buffer is read into again once released.
		if err := run.flush(w); err != nil {
			return err
		}
		a.release(b)
	}
}

// Plain JSON Lines files through mapped windows.
//
// When every input is a JSON Lines file stored as it is read (not
// compressed, not standard input), CopyKept does not read the inputs into
// batches: it maps them, a window of mapWindow bytes at a time, cuts the
// lines where they lie and hands runs of kept lines, each with its '\n', to
// dst straight from the mapping. That spares the kernel's copy into the
// batch buffer (read(2) of a file in the page cache: 0.2 CPU-s of the 1.28 GB
// of 5M short documents), the records' bookkeeping, and the Writer's own
// buffer when dst buffers itself (has an AvailableBuffer method, as
// *bufio.Writer has): dedup's O_DIRECT writer copies each run once, from the
// page cache into its aligned buffer. The lines are judged as the Reader
// judges them (lineSource.emit): a '\r' before the '\n' and a byte-order mark
// at the start of a file are not copied, blank lines are no records, lines
// over MaxRecordBytes are skipped records (SkipBad) or an error; such lines
// and a last line without its '\n' are written as the Writer writes them.
//
// A goroutine of its own maps the windows and cuts their lines, one window
// ahead of the caller, which writes a window's runs and unmaps it: at most
// three windows (or longer lines) are mapped at once, and mapped pages count
// in the process's resident set. A file cut short while mapped would raise
// SIGBUS; debug.SetPanicOnFault turns that into an error.

// mapWindow is the size of a mapped window, a multiple of the page size
// (the tests make it one page).
var mapWindow = 4 << 20

// mappable reports whether r's inputs can be copied through mapped windows:
// all JSON Lines in regular files, neither compressed nor standard input.
func (r *Reader) mappable() bool {
	if !canMap || mapWindow%os.Getpagesize() != 0 {
		return false
	}
	for _, in := range r.inputs {
		if in.format != FormatJSONL || in.sniff || len(in.layers) > 0 || in.path == "-" {
			return false
		}
		if fi, err := os.Stat(in.path); err != nil || !fi.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// mappedSpan is bytes of a window to write, and a '\n' after them if nl.
type mappedSpan struct {
	b  []byte
	nl bool
}

// mappedWindow is a window cut into what to write of it; err, if not nil,
// ends the copy once the spans are written.
type mappedWindow struct {
	win   []byte // to unmap once written
	spans []mappedSpan
	err   error
}

// copyKeptMapped copies the records of keep from r's inputs (mappable) to
// dst, through mapped windows; it returns the number written.
func copyKeptMapped(ctx context.Context, dst io.Writer, r *Reader, keep Selection) (int64, error) {
	w := dst
	var bw *bufio.Writer
	if _, ok := dst.(interface{ AvailableBuffer() []byte }); !ok {
		bw = bufio.NewWriterSize(dst, 256<<10)
		w = bw
	}
	c := &mappedCut{keep: keep, last: keep.Last(), limit: r.opts.MaxRecordBytes, skipBad: r.opts.SkipBad,
		out: make(chan mappedWindow, 1), quit: make(chan struct{})}
	var wg sync.WaitGroup
	wg.Go(func() { c.cutAll(ctx, r.inputs) })
	var err error
	for mw := range c.out {
		if err == nil {
			err = writeSpans(w, mw)
			if err != nil {
				close(c.quit) // the cutting goroutine stops at its next window
			}
		}
		unmapWindow(mw.win)
	}
	wg.Wait()
	if err == nil && bw != nil {
		if err = bw.Flush(); err != nil {
			err = fmt.Errorf("corpus: write: %w", err)
		}
	}
	return c.n, err
}

// writeSpans writes the spans of mw to w, then returns mw.err.
func writeSpans(w io.Writer, mw mappedWindow) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = faultError(p, "")
		}
	}()
	for _, s := range mw.spans {
		if _, err := w.Write(s.b); err != nil {
			return fmt.Errorf("corpus: write: %w", err)
		}
		if s.nl {
			if _, err := w.Write(newline); err != nil {
				return fmt.Errorf("corpus: write: %w", err)
			}
		}
	}
	return mw.err
}

var newline = []byte{'\n'}

// faultError is the error for p, recovered after reading a window of the
// input name ("" if not known) faulted; other panics go on.
func faultError(p any, name string) error {
	e, ok := p.(interface{ Addr() uintptr })
	if !ok {
		panic(p)
	}
	if name != "" {
		name = " " + name
	}
	return fmt.Errorf("corpus: an input%s changed while its kept records were copied (fault at %#x)", name, e.Addr())
}

// mappedCut is the state of the goroutine that maps the windows and cuts
// them into what to write.
type mappedCut struct {
	keep    Selection
	last    int64 // keep.Last()
	limit   int   // MaxRecordBytes
	skipBad bool
	index   int64 // the next record's index
	n       int64 // records written (once the windows are)
	out     chan mappedWindow
	quit    chan struct{} // closed when the writing failed

	in    *input
	f     *os.File
	size  int64  // of f
	win   []byte // the mapped window, or nil
	base  int64  // its offset in f
	line  int64  // lines of f seen
	spans []mappedSpan
	// The run of kept lines not yet in spans: win[runStart:runEnd], each
	// line with its '\n'.
	runStart, runEnd int
}

// cutAll cuts the windows of inputs in turn, then closes c.out.
func (c *mappedCut) cutAll(ctx context.Context, inputs []input) {
	defer close(c.out)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	var err error
	defer func() {
		if p := recover(); p != nil {
			name := ""
			if c.in != nil {
				name = c.in.name
			}
			err = faultError(p, name)
			c.spans, c.runStart, c.runEnd = nil, 0, 0 // they may hold what faulted
		}
		if c.win != nil || err != nil {
			c.send(err)
		}
		if c.f != nil {
			c.f.Close()
		}
	}()
	for i := range inputs {
		if c.index > c.last {
			break
		}
		if err = c.cutFile(ctx, &inputs[i]); err != nil {
			return
		}
	}
}

// send hands the window, its spans and err over to be written, unless the
// writing failed; either way the window is no longer c's.
func (c *mappedCut) send(err error) {
	c.endRun()
	mw := mappedWindow{win: c.win, spans: c.spans, err: err}
	c.win, c.spans = nil, nil
	select {
	case c.out <- mw:
	case <-c.quit:
		unmapWindow(mw.win)
	}
}

// cutFile cuts the windows of one input.
func (c *mappedCut) cutFile(ctx context.Context, in *input) error {
	f, err := os.Open(in.path)
	if err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	c.in, c.f, c.line = in, f, 0
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	c.size = fi.Size()
	page := int64(os.Getpagesize())
	window := mapWindow
	pos := int64(0) // the next line's offset in f
	for pos < c.size && c.index <= c.last {
		if err := ctx.Err(); err != nil {
			return err
		}
		base := pos &^ (page - 1)
		if c.win != nil && base == c.base {
			window *= 2 // a line longer than the window: map more of it
		} else {
			window = mapWindow
		}
		if err := c.mapAt(base, window); err != nil {
			return err
		}
		end := c.base + int64(len(c.win))
		for pos < end && c.index <= c.last {
			rest := c.win[pos-c.base:]
			j := bytes.IndexByte(rest, '\n')
			if j < 0 {
				if end < c.size {
					break // the line ends beyond the window
				}
				j = len(rest) // the last line, without '\n'
			}
			if err := c.cutLine(int(pos-c.base), rest[:j], j < len(rest)); err != nil {
				return err
			}
			pos += int64(j) + 1
		}
		if c.index > c.last {
			break
		}
		// Unless the window ended with a line, the line from pos runs past
		// it: past the limit it is too large however its end is stripped
		// ('\r', a byte-order mark), else the next window maps it whole.
		if pos < end && end-pos > int64(c.limit)+4 {
			c.line++
			if err := c.tooLarge(fmt.Sprintf("more than %d", c.limit)); err != nil {
				return err
			}
			if pos, err = c.skipLine(end); err != nil {
				return err
			}
		}
	}
	if c.win != nil {
		c.send(nil)
	}
	f.Close()
	c.f = nil
	return nil
}

// cutLine takes line, at start in the window (terminated: followed by
// '\n'), into the spans if it is a kept record.
func (c *mappedCut) cutLine(start int, line []byte, terminated bool) error {
	c.line++
	raw, whole := line, terminated // whole: raw and its '\n' are as stored
	if k := len(raw); k > 0 && raw[k-1] == '\r' {
		raw, whole = raw[:k-1], false
	}
	if c.line == 1 && bytes.HasPrefix(raw, utf8BOM) {
		raw, whole = raw[len(utf8BOM):], false
	}
	if len(raw) > c.limit {
		c.endRun()
		return c.tooLarge(strconv.Itoa(len(raw)))
	}
	if isBlank(raw) {
		c.endRun()
		return nil
	}
	i := c.index
	c.index++
	if i > c.last || !c.keep.Contains(i) {
		c.endRun()
		return nil
	}
	c.n++
	if !whole {
		c.endRun()
		c.spans = append(c.spans, mappedSpan{raw, true})
		return nil
	}
	if c.runEnd != start || c.runEnd == c.runStart {
		c.endRun()
		c.runStart = start
	}
	c.runEnd = start + len(line) + 1
	return nil
}

// tooLarge counts a line over the limit as a skipped record (SkipBad) or
// returns the Reader's error for it.
func (c *mappedCut) tooLarge(size string) error {
	if !c.skipBad {
		return &RecordError{File: c.in.name, Line: c.line, Index: c.index,
			Err: fmt.Errorf("%w: %s bytes, over MaxRecordBytes (%d)", ErrTooLarge, size, c.limit)}
	}
	c.index++
	return nil
}

// skipLine returns the offset after the next '\n' from off (a multiple of
// the page size), or the file's size: the rest of a line too large.
func (c *mappedCut) skipLine(off int64) (int64, error) {
	for off < c.size {
		if err := c.mapAt(off, mapWindow); err != nil {
			return 0, err
		}
		if j := bytes.IndexByte(c.win, '\n'); j >= 0 {
			return off + int64(j) + 1, nil
		}
		off += int64(len(c.win))
	}
	return c.size, nil
}

// endRun adds the run, if any, to the spans.
func (c *mappedCut) endRun() {
	if c.runEnd != c.runStart {
		c.spans = append(c.spans, mappedSpan{b: c.win[c.runStart:c.runEnd]})
	}
	c.runStart, c.runEnd = 0, 0
}

// mapAt hands the window over, if any, and maps the one of up to n bytes of
// the file from off.
func (c *mappedCut) mapAt(off int64, n int) error {
	if c.win != nil {
		c.send(nil)
	}
	select {
	case <-c.quit:
		return errWriteFailed
	default:
	}
	n = int(min(int64(n), c.size-off))
	win, err := mapWindowOf(c.f, off, n)
	if err != nil {
		return fmt.Errorf("corpus: %s: map: %w", c.in.name, err)
	}
	c.win, c.base = win, off
	return nil
}

// errWriteFailed stops the cutting goroutine once the writing failed (the
// writing's error is the one returned).
var errWriteFailed = fmt.Errorf("corpus: kept records' writing failed")
