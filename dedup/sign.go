package dedup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
)

// Document states.
const (
	docOK    uint8 = iota // signed and banded
	docEmpty              // no features: never a near duplicate, always kept
	docBad                // skipped under SkipBad: not written
)

// docBits is how many low bits of a band-key entry hold the document index:
// 32, so a run takes up to 2^32 documents and the key keeps 32 bits. Two
// different band values share those 32 bits with probability 2^-32, which
// only adds a candidate that verification removes.
const docBits = 32

// signed is what a worker makes of one batch of records, in record order.
type signed struct {
	seq     int
	batch   *corpus.Batch
	index   []int64
	status  []uint8
	ids     []byte
	idEnd   []int
	length  []int64
	keep    []float64
	hasKeep []bool
	texts   []byte
	textEnd []int
	sigs    []uint64 // Words() per OK document
	entries []uint64
	bytes   int64
	err     error
	maxText int // capacity of texts kept across batches
}

func (s *signed) reset() {
	if cap(s.texts) > s.maxText {
		// A huge document grew the buffer: let it go, so that each batch in
		// flight returns to about a batch's worth of text.
		s.texts = nil
	}
	s.index, s.status, s.ids, s.idEnd = s.index[:0], s.status[:0], s.ids[:0], s.idEnd[:0]
	s.length, s.keep, s.hasKeep = s.length[:0], s.keep[:0], s.hasKeep[:0]
	s.texts, s.textEnd, s.sigs, s.entries = s.texts[:0], s.textEnd[:0], s.sigs[:0], s.entries[:0]
	s.bytes, s.err = 0, nil
}

// signer is one worker's state.
type signer struct {
	parser *corpus.Parser
	sh     *shingle.Shingler
	h      *minhash.Hasher
	params minhash.Params
	bands  lsh.Params
	doc    corpus.Document
	sig    minhash.Signature
	slots  []uint64
	keys   []uint64
	keepTx bool // keep texts (exact verification)
	skip   bool
}

func (w *signer) process(b *corpus.Batch, out *signed) {
	if w.keepTx && cap(out.texts) < b.Bytes() {
		// Texts are no longer than their raw records: one allocation of the
		// right size rather than append's doubling, which would leave every
		// batch in flight holding up to twice its text.
		out.texts = make([]byte, 0, b.Bytes())
	}
	for i := range b.Records {
		rec := &b.Records[i]
		out.bytes += int64(len(rec.Raw))
		if err := w.parser.Parse(rec, &w.doc); err != nil {
			if !w.skip {
				out.err = err
				return
			}
			out.index = append(out.index, rec.Index)
			out.status = append(out.status, docBad)
			out.idEnd = append(out.idEnd, len(out.ids))
			out.length = append(out.length, 0)
			out.keep = append(out.keep, 0)
			out.hasKeep = append(out.hasKeep, false)
			out.textEnd = append(out.textEnd, len(out.texts))
			continue
		}
		out.index = append(out.index, rec.Index)
		out.ids = append(out.ids, w.doc.ID...)
		out.idEnd = append(out.idEnd, len(out.ids))
		out.length = append(out.length, int64(len(w.doc.Text)))
		out.keep = append(out.keep, w.doc.Keep)
		out.hasKeep = append(out.hasKeep, w.doc.HasKeep)
		w.sig = w.h.SignText(w.sig[:0], w.sh, w.doc.Text)
		if w.h.Empty() {
			out.status = append(out.status, docEmpty)
			out.textEnd = append(out.textEnd, len(out.texts))
			continue
		}
		out.status = append(out.status, docOK)
		if w.keepTx {
			out.texts = append(out.texts, w.doc.Text...)
		}
		out.textEnd = append(out.textEnd, len(out.texts))
		out.sigs = append(out.sigs, w.sig...)
		w.slots = w.params.AppendSlots(w.slots[:0], w.sig)
		w.keys = w.bands.AppendKeys(w.keys[:0], w.slots)
		out.entries = lsh.AppendEntries(out.entries, w.keys, uint32(rec.Index), docBits)
	}
}

// sign reads every input, signs every document on all workers and hands the
// results, in input order, to r.collect.
func (r *run) sign(ctx context.Context) error {
	reader, err := corpus.NewReader(r.inputs, &r.opts.Corpus)
	if err != nil {
		return err
	}
	defer reader.Close()
	r.bar.Stage("sign", reader.Progress().Total, func() int64 { return reader.Progress().Read })
	defer r.bar.Finish()

	workers := r.opts.Workers
	g, ctx := errgroup.WithContext(ctx)
	todo := make(chan *signed, workers)
	done := make(chan *signed, workers)
	free := make(chan *signed, 2*workers+2)
	batchBytes := r.opts.Corpus.BatchBytes
	if batchBytes <= 0 {
		batchBytes = corpus.DefaultBatchBytes
	}
	for i := 0; i < cap(free); i++ {
		free <- &signed{batch: &corpus.Batch{}, maxText: 4 * batchBytes}
	}

	g.Go(func() error { // reader
		defer close(todo)
		for seq := 0; ; seq++ {
			var s *signed
			select {
			case s = <-free:
			case <-ctx.Done():
				return ctx.Err()
			}
			err := reader.Next(s.batch)
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			s.seq = seq
			select {
			case todo <- s:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	})
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := 0; i < workers; i++ {
		w, err := r.newSigner()
		if err != nil {
			return err
		}
		wg.Add(1)
		g.Go(func() error {
			defer wg.Done()
			for s := range todo {
				s.reset()
				w.process(s.batch, s)
				if s.err != nil {
					return s.err
				}
				select {
				case done <- s:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			mu.Lock()
			r.hashMetrics = r.hashMetrics.Add(w.h.Metrics())
			r.parseStats = r.parseStats.Add(w.parser.Stats())
			mu.Unlock()
			return nil
		})
	}
	go func() { wg.Wait(); close(done) }()

	g.Go(func() error { // collector: applies batches in input order
		pending := map[int]*signed{}
		next := 0
		for s := range done {
			pending[s.seq] = s
			for {
				t, ok := pending[next]
				if !ok {
					break
				}
				delete(pending, next)
				next++
				if err := r.collect(t); err != nil {
					return err
				}
				r.bar.Add(int64(len(t.index)), t.bytes)
				free <- t
			}
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return err
	}
	r.readStats = reader.Stats()
	return nil
}

func (r *run) newSigner() (*signer, error) {
	p, err := corpus.NewParser(&r.opts.Corpus)
	if err != nil {
		return nil, err
	}
	sh, err := shingle.New(r.opts.Spec)
	if err != nil {
		return nil, err
	}
	h, err := minhash.NewHasher(r.opts.Params)
	if err != nil {
		return nil, err
	}
	return &signer{parser: p, sh: sh, h: h, params: h.Params(), bands: r.bands, keepTx: r.opts.Verify == VerifyExact, skip: r.opts.Corpus.SkipBad}, nil
}

// collect appends one batch's documents to the run's tables and stores.
func (r *run) collect(s *signed) error {
	words := r.opts.Params.Words()
	id0, tx0, sg := 0, 0, 0
	for j, idx := range s.index {
		// Records the reader skipped (too large, under SkipBad) leave gaps.
		for int64(r.docs.len()) < idx {
			if err := r.addDoc(docBad, nil, 0, 0, false, nil, nil); err != nil {
				return err
			}
		}
		if int64(r.docs.len()) != idx {
			return fmt.Errorf("dedup: internal error: record %d arrived at position %d", idx, r.docs.len())
		}
		var sig []uint64
		if s.status[j] == docOK {
			sig = s.sigs[sg : sg+words]
			sg += words
		}
		if err := r.addDoc(s.status[j], s.ids[id0:s.idEnd[j]], s.length[j], s.keep[j], s.hasKeep[j], s.texts[tx0:s.textEnd[j]], sig); err != nil {
			return err
		}
		id0, tx0 = s.idEnd[j], s.textEnd[j]
	}
	return r.entries.Add(s.entries...)
}

func (r *run) addDoc(status uint8, id []byte, length int64, keep float64, hasKeep bool, text []byte, sig []uint64) error {
	r.docs.add(status, id, length, keep, hasKeep)
	if r.texts != nil {
		if _, err := r.texts.Append(text); err != nil {
			return err
		}
	}
	_, err := r.sigs.AppendUint64s(sig)
	return err
}

// docTable holds the per-document bookkeeping, by input index.
type docTable struct {
	status  []uint8
	ids     []byte
	idEnd   []int64
	length  []int64
	keep    []float64
	hasKeep []bool
}

func (d *docTable) len() int { return len(d.status) }

func (d *docTable) add(status uint8, id []byte, length int64, keep float64, hasKeep bool) {
	d.status = append(d.status, status)
	d.ids = append(d.ids, id...)
	d.idEnd = append(d.idEnd, int64(len(d.ids)))
	d.length = append(d.length, length)
	d.keep = append(d.keep, keep)
	d.hasKeep = append(d.hasKeep, hasKeep)
}

func (d *docTable) id(i uint32) []byte {
	lo := int64(0)
	if i > 0 {
		lo = d.idEnd[i-1]
	}
	return d.ids[lo:d.idEnd[i]]
}
