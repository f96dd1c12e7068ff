package dedup

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/neardup/neardup/internal/extsort"
	"github.com/neardup/neardup/internal/sketch"
)

// entrySorter sorts the band-key entries (sketch.AppendKeyEntries): an
// extsort.Sorter of key | document words for keys of at most 32 bits, an
// extsort.WideSorter of (key, document) word pairs for wider keys.
type entrySorter interface {
	Add(words ...uint64) error
	Len() int64
	Runs() int
	SpilledBytes() int64
}

// newEntrySorter returns the entrySorter of keys keyBits wide, holding at
// most budget bytes of entries in memory, and as much again: sorting scratch
// (extsort.Sorter) or the buffer being sorted and spilled in the background
// (extsort.WideSorter).
func newEntrySorter(dir string, budget int64, keyBits int) entrySorter {
	if sketch.WideKeys(keyBits) {
		return extsort.NewWide(dir, "entries", int(budget/16))
	}
	return extsort.New(dir, "entries", int(budget/8))
}

// entryStream yields the sorted entries as the Grouper takes them, key |
// document with the key's high 32 bits (sketch.EntryBucket). With wide keys,
// two keys equal in those bits are different buckets: brk reports the first
// entry of such a key, before which the caller closes the open bucket.
type entryStream struct {
	narrow *extsort.Iterator
	wide   *extsort.WideIterator
	last   uint64 // the last wide key yielded
	any    bool
}

func (r *run) entryStream() (*entryStream, error) {
	switch s := r.entries.(type) {
	case *extsort.WideSorter:
		it, err := s.Iter()
		return &entryStream{wide: it}, err
	case *extsort.Sorter:
		it, err := s.Iter(false)
		return &entryStream{narrow: it}, err
	}
	panic(fmt.Sprintf("dedup: entry sorter %T", r.entries))
}

// next returns the next entry; ok is false at the end or on error.
func (s *entryStream) next() (e uint64, ok bool) {
	if s.narrow != nil {
		return s.narrow.Next()
	}
	w, ok := s.wide.Next()
	return w.Key&^(1<<sketch.EntryDocBits-1) | uint64(w.Doc), ok
}

// breaks reports whether entry e, about to go to the Grouper after the
// entries it was given so far, opens a bucket whose key differs from the
// last one's only below the high 32 bits (wide keys only). Call it only for
// the entries passed on, so that an entry left out does not hide a break.
func (s *entryStream) breaks() bool {
	if s.wide == nil {
		return false
	}
	k := s.wide.Last().Key
	brk := s.any && k != s.last && k>>sketch.EntryDocBits == s.last>>sketch.EntryDocBits
	s.last, s.any = k, true
	return brk
}

func (s *entryStream) err() error {
	if s.narrow != nil {
		return s.narrow.Err()
	}
	return s.wide.Err()
}

func (s *entryStream) close() error {
	if s.narrow != nil {
		return s.narrow.Close()
	}
	return s.wide.Close()
}

// candidates sorts the band-key entries, groups them into buckets and
// collects the unique candidate pairs, spilling both to disk past the budget.
func (r *run) candidates(ctx context.Context) error {
	r.bar.CountStage("candidates", "keys", r.entries.Len())
	defer r.bar.Finish()
	r.rep.Spill.EntryRuns = r.entries.Runs()
	r.rep.Spill.EntryBytes = r.entries.SpilledBytes()
	it, err := r.entryStream()
	if err != nil {
		return err
	}
	defer it.close()

	// Reference documents, numbered first, are never paired with each
	// other (jobspec's rules).
	g, err := r.sketch.NewGrouper(r.sigMem, r.job.BucketCap, r.ref.n)
	if err != nil {
		return err
	}
	sorter := extsort.New(r.tmp, "pairs", int(r.opts.Memory/32/8))
	chunk := make([]uint64, 0, 1<<14)
	var pairs []uint64
	read := int64(0) // keys read since the last flush, those left out too
	flush := func() error {
		var err error
		r.top.Add(chunk)
		pairs, err = g.Append(pairs[:0], chunk)
		if err != nil {
			return err
		}
		r.bar.Add(read, 0)
		chunk, read = chunk[:0], 0
		return sorter.Add(pairs...)
	}
	// brk closes the open bucket before an entry of another wide key with
	// the same high 32 bits.
	brk := func() error {
		if err := flush(); err != nil {
			return err
		}
		r.top.Close()
		return sorter.Add(g.Flush(pairs[:0])...)
	}
	skip := r.skippedDocs()
	for v, ok := it.next(); ok; v, ok = it.next() {
		read++
		if skip != nil {
			// A reference document's number wraps past every other.
			if d := int(sketch.EntryDoc(v) - r.ref.n); d>>6 < len(skip) && skip[d>>6]>>(d&63)&1 != 0 {
				continue
			}
		}
		if it.breaks() {
			if err := brk(); err != nil {
				return err
			}
		}
		chunk = append(chunk, v)
		if len(chunk) == cap(chunk) {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := it.err(); err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	if err := sorter.Add(g.Flush(pairs[:0])...); err != nil {
		return err
	}
	r.buckets = g.Metrics()
	r.rep.Spill.PairRuns = sorter.Runs()
	r.rep.Spill.PairBytes = sorter.SpilledBytes()

	pit, err := sorter.Iter(true)
	if err != nil {
		return err
	}
	defer pit.Close()
	r.pairs = newPairList(r.tmp, int(r.opts.Memory/16/8))
	for v, ok := pit.Next(); ok; v, ok = pit.Next() {
		if err := r.pairs.add(v); err != nil {
			return err
		}
		if uint32(v>>32) < r.ref.n {
			r.ref.candidates++
		}
	}
	if err := pit.Err(); err != nil {
		return err
	}
	r.buckets.UniquePairs = r.pairs.n
	return r.pairs.done()
}

// skippedDocs returns the set of documents (numbered after the reference
// documents, one bit each) whose band-key entries candidates leaves out, or
// nil if there are none: the copies found after signing (banded, but not
// paired) and the documents made bad after signing (a repeated id), so that
// they pair with nothing, as if they had never been read. A bit set, not a
// look-up of each entry's document in r.docs.status: the entries come in key
// order, so those look-ups fall anywhere in a byte a document, which missed
// the cache on most entries (11 % of a 5M-document run's CPU); the set is an
// eighth of the size.
func (r *run) skippedDocs() []uint64 {
	lateCopies := r.exact != nil && r.exact.lateCopies
	dropped := r.dropped > 0
	if !lateCopies && !dropped {
		return nil
	}
	set := make([]uint64, (len(r.docs.status)+63)/64)
	for d, st := range r.docs.status {
		if lateCopies && st == docCopy || dropped && st == docBad {
			set[d/64] |= 1 << (d % 64)
		}
	}
	return set
}

// pairList holds the sorted unique candidate pairs (a<<32 | b), in memory up
// to a limit and in a file of little-endian uint64s past it. It is read
// front to back, as often as needed.
type pairList struct {
	dir   string
	limit int
	mem   []uint64
	f     *os.File
	w     *bufio.Writer
	n     int64
}

func newPairList(dir string, limit int) *pairList {
	return &pairList{dir: dir, limit: max(limit, 1024)}
}

func (l *pairList) add(v uint64) error {
	l.n++
	if l.f == nil {
		if len(l.mem) < l.limit {
			l.mem = append(l.mem, v)
			return nil
		}
		f, err := os.CreateTemp(l.dir, "candidates-*")
		if err != nil {
			return fmt.Errorf("dedup: %w", err)
		}
		l.f, l.w = f, bufio.NewWriterSize(f, 1<<20)
		for _, m := range l.mem {
			l.w.Write(binary.LittleEndian.AppendUint64(nil, m))
		}
		l.mem = nil
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	_, err := l.w.Write(b[:])
	return err
}

func (l *pairList) done() error {
	if l.w != nil {
		return l.w.Flush()
	}
	return nil
}

// each calls fn with consecutive chunks of the pairs, in order.
func (l *pairList) each(fn func([]uint64) error) error {
	const chunk = 1 << 13
	if l.f == nil {
		for i := 0; i < len(l.mem); i += chunk {
			if err := fn(l.mem[i:min(i+chunk, len(l.mem))]); err != nil {
				return err
			}
		}
		return nil
	}
	if _, err := l.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	br := bufio.NewReaderSize(l.f, 1<<20)
	buf := make([]byte, 8*chunk)
	vals := make([]uint64, chunk)
	for {
		n, err := io.ReadFull(br, buf)
		if n%8 != 0 {
			return fmt.Errorf("dedup: candidate file cut mid-value")
		}
		for i := 0; i < n/8; i++ {
			vals[i] = binary.LittleEndian.Uint64(buf[8*i:])
		}
		if n > 0 {
			if err := fn(vals[:n/8]); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (l *pairList) close() {
	if l.f != nil {
		l.f.Close()
		os.Remove(l.f.Name())
	}
}
