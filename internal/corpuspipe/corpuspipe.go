// Package corpuspipe runs a corpus through parallel workers in input order:
// one goroutine reads batches of records, worker goroutines parse them and
// hand each document to the caller's code (shingling, signing), and the
// caller gets each batch's result back in the order the batches were read,
// so what it makes does not depend on the number of workers or on
// scheduling. It is the read, parse and sign stage of dedup, of index builds
// from a corpus, of neardup sign and of neardup eval truth; what is done to
// a document is up to them.
package corpuspipe

import (
	"context"
	"errors"
	"io"
	"runtime"
	"sync/atomic"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/ordered"
)

// A Worker is what one worker goroutine does with the records of a batch,
// given the result it fills for that batch. Run asks for one Worker per
// goroutine and calls each from one goroutine at a time, so a Worker may
// keep scratch state (a shingler, a hasher, buffers) without locking.
// Document is required; Begin and Skip may be nil.
type Worker[R any] struct {
	// Begin, if not nil, is called first for each batch, with the batch's
	// records and its result. Results are reused for later batches, so Begin
	// must reset what an earlier batch left in res (keeping its buffers, if
	// it likes). If Begin is nil, Run sets res to R's zero value instead.
	Begin func(res *R, b *corpus.Batch)
	// Document is called for each record that parses, in record order, with
	// the parsed document. doc, and what its fields point to, are valid only
	// until Document returns. An error stops Run, which returns it.
	Document func(res *R, rec *corpus.Record, doc *corpus.Document) error
	// Skip, if not nil, is called instead of Document for a record that does
	// not parse, when the corpus options have SkipBad; err is the parse
	// error (a *corpus.RecordError). Without SkipBad such a record stops Run
	// with that error.
	Skip func(res *R, rec *corpus.Record, err error)
}

// A Batch is one batch of records with the result a worker made of it, as
// Run hands it to consume. Batches, their records and their results are
// reused once consume returns: consume must copy what it keeps.
type Batch[R any] struct {
	// Batch holds the records as the Reader read them, in input order.
	corpus.Batch
	// RawBytes is the total length of the records' Raw.
	RawBytes int64
	// Result is what the Worker's calls made of the records.
	Result R
	// Bad are the batch's records skipped as bad under SkipBad, in input
	// order: those the reader skipped (corpus.Batch.Skipped) and those that
	// did not parse. Write them to a corpus.BadLog to list what a run left
	// out. The errors are plain data and may be kept.
	Bad []corpus.RecordError

	err error // the reader's or the Worker's error, passed on in input order
}

// Run reads every batch of r, has workers goroutines (0 or less: GOMAXPROCS)
// parse its records with opts and pass them to their Worker, and calls
// consume with each batch, in the order r read them, from one goroutine.
// opts must be the options r was opened with (nil means defaults).
// newWorker is called workers times, from Run's goroutine, before anything
// is read.
//
// At most 2·workers+2 batches are in flight: the reader waits for consume
// to release one. An error of newWorker, the reader, a Worker or consume, or
// the cancellation of ctx, stops every stage; Run returns the error once all
// goroutines have finished. Errors about records are reported in input
// order, whichever goroutine met one first: the error Run returns is the one
// of the first record at fault (a Worker's or the reader's), and consume has
// seen every batch before it. Parse errors are *corpus.RecordError, naming
// the file and line.
//
// Under SkipBad each batch's Bad lists its records skipped as bad, in input
// order, for a corpus.BadLog. Run returns the Parsers' Stats summed (the
// records that did not parse, as Bad, and the keep values parsed, as Keep);
// add r.Stats() for the corpus's total. Run does not close r.
func Run[R any](ctx context.Context, r *corpus.Reader, opts *corpus.Options, workers int, newWorker func() (Worker[R], error), consume func(*Batch[R]) error) (corpus.Stats, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	skipBad := opts != nil && opts.SkipBad
	ws := make([]*worker[R], workers)
	for i := range ws {
		p, err := corpus.NewParser(opts)
		if err != nil {
			return corpus.Stats{}, err
		}
		w, err := newWorker()
		if err != nil {
			return corpus.Stats{}, err
		}
		if w.Document == nil {
			panic("corpuspipe: Worker.Document is nil")
		}
		ws[i] = &worker[R]{Worker: w, parser: p, skipBad: skipBad}
	}

	// The reader waits for a free batch, so it must see the pipeline stop
	// when a worker or consume fails, which ordered.Pipeline's own context
	// does not tell it: those failures cancel this context, with the error
	// as the cause, so that Run returns the error and not the cancellation
	// other stages saw.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	fail := func(err error) error {
		cancel(err)
		return err
	}

	free := make(chan *Batch[R], 2*workers+2)
	for range cap(free) {
		free <- new(Batch[R])
	}
	var next atomic.Int64
	err := ordered.Pipeline(ctx, workers,
		func(emit func(*Batch[R]) error) error {
			for {
				var b *Batch[R]
				select {
				case b = <-free:
				case <-ctx.Done():
					return context.Cause(ctx)
				}
				b.err = nil
				if err := r.Next(&b.Batch); err != nil {
					if errors.Is(err, io.EOF) {
						return nil
					}
					// In line with the batches before it, so that a bad
					// record they hold is reported first.
					b.err = err
					return emit(b)
				}
				if err := emit(b); err != nil {
					return err
				}
			}
		},
		func() func(*Batch[R]) (*Batch[R], error) {
			w := ws[next.Add(1)-1] // called once per goroutine
			return func(b *Batch[R]) (*Batch[R], error) {
				// A worker's error goes to the consumer with its batch,
				// so that the first bad record in input order is
				// reported, not the first one a worker met in time.
				if b.err == nil {
					b.err = w.process(b)
				}
				return b, nil
			}
		},
		func(b *Batch[R]) error {
			err := b.err
			if err == nil {
				err = consume(b)
			}
			free <- b // never blocks: free holds every batch
			if err != nil {
				return fail(err)
			}
			return nil
		})
	if err != nil {
		if cause := context.Cause(ctx); cause != nil {
			err = cause
		}
	}
	var st corpus.Stats
	for _, w := range ws {
		st = st.Add(w.parser.Stats())
	}
	return st, err
}

// worker is one goroutine's Worker with its Parser.
type worker[R any] struct {
	Worker[R]
	parser  *corpus.Parser
	skipBad bool
	doc     corpus.Document
}

func (w *worker[R]) process(b *Batch[R]) error {
	if w.Begin != nil {
		w.Begin(&b.Result, &b.Batch)
	} else {
		var zero R
		b.Result = zero
	}
	b.RawBytes = 0
	clear(b.Bad)
	b.Bad = b.Bad[:0]
	skipped := b.Skipped // the reader's, in index order, merged into Bad
	for i := range b.Records {
		rec := &b.Records[i]
		b.RawBytes += int64(len(rec.Raw))
		if err := w.parser.Parse(rec, &w.doc); err != nil {
			if !w.skipBad {
				return err
			}
			for len(skipped) > 0 && skipped[0].Index < rec.Index {
				b.Bad = append(b.Bad, skipped[0])
				skipped = skipped[1:]
			}
			var re *corpus.RecordError
			if errors.As(err, &re) {
				b.Bad = append(b.Bad, *re)
			} else {
				b.Bad = append(b.Bad, corpus.RecordError{File: rec.File, Line: rec.Line, Index: rec.Index, Err: err})
			}
			if w.Skip != nil {
				w.Skip(&b.Result, rec, err)
			}
			continue
		}
		if err := w.Document(&b.Result, rec, &w.doc); err != nil {
			return err
		}
	}
	b.Bad = append(b.Bad, skipped...)
	return nil
}
