package corpus

import (
	"context"
	"fmt"
	"io"
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
