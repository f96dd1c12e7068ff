package dedup

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/neardup/neardup/internal/extsort"
	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/lsh"
)

// entrySorter sorts the band-key entries (sketch.AppendKeyEntries): an
// extsort.Sorter of key | document words for keys of at most 32 bits, an
// extsort.Partitioned store of (key, document) word pairs for wider keys.
type entrySorter interface {
	Add(words ...uint64) error
	Len() int64
	Runs() int
	SpilledBytes() int64
}

// partitionEntries chooses extsort.Partitioned for wide keys; tests turn
// it off to compare with extsort.WideSorter, which sorts and merges runs.
var partitionEntries = true

// newEntrySorter returns the entrySorter of keys keyBits wide, holding at
// most about 2·budget bytes: budget of entries and as much again of sorting
// scratch (extsort.Sorter), or 2·budget of entries in key ranges, a quarter
// of it for sorting the ranges read side by side (extsort.Partitioned).
func newEntrySorter(dir string, budget int64, keyBits int) entrySorter {
	if sketch.WideKeys(keyBits) {
		if !partitionEntries {
			return extsort.NewWide(dir, "entries", int(budget/16))
		}
		return extsort.NewPartitioned(dir, "entries", 2*budget)
	}
	return extsort.New(dir, "entries", int(budget/8))
}

// entryStream yields the sorted entries as the Grouper takes them, key |
// document with the key's high 32 bits (sketch.EntryBucket). With wide keys,
// two keys equal in those bits are different buckets: brk reports the first
// entry of such a key, before which the caller closes the open bucket.
type entryStream struct {
	narrow *extsort.Iterator
	part   *extsort.PartIterator
	wide   *extsort.WideIterator
	last   uint64 // the last wide key yielded
	any    bool
}

// next returns the next entry; ok is false at the end or on error.
func (s *entryStream) next() (e uint64, ok bool) {
	var w extsort.Wide
	switch {
	case s.part != nil:
		w, ok = s.part.Next()
	case s.narrow != nil:
		return s.narrow.Next()
	default:
		w, ok = s.wide.Next()
	}
	return w.Key&^(1<<sketch.EntryDocBits-1) | uint64(w.Doc), ok
}

// breaks reports whether entry e, about to go to the Grouper after the
// entries it was given so far, opens a bucket whose key differs from the
// last one's only below the high 32 bits (wide keys only). Call it only for
// the entries passed on, so that an entry left out does not hide a break.
func (s *entryStream) breaks() bool {
	var k uint64
	switch {
	case s.part != nil:
		k = s.part.Last().Key
	case s.wide != nil:
		k = s.wide.Last().Key
	default:
		return false
	}
	brk := s.any && k != s.last && k>>sketch.EntryDocBits == s.last>>sketch.EntryDocBits
	s.last, s.any = k, true
	return brk
}

// skipSingles makes the stream leave out, where it can, the entries of keys
// no other entry has (extsort.PartIterator.SkipSingles): a bucket of one
// document pairs with nothing, and most buckets are. Those of documents in
// skip do not count (singles).
func (s *entryStream) skipSingles(skip extsort.DocSet) {
	if s.part != nil {
		s.part.SkipSingles(skip)
	}
}

// singles returns how many entries left out by skipSingles count: each is
// an entry, and a bucket, the Grouper did not see.
func (s *entryStream) singles() int64 {
	if s.part == nil {
		return 0
	}
	return s.part.Singles() - s.part.SinglesIn()
}

// dropped returns how many entries skipSingles left out that do not count.
func (s *entryStream) dropped() int64 {
	if s.part == nil {
		return 0
	}
	return s.part.SinglesIn()
}

func (s *entryStream) err() error {
	switch {
	case s.part != nil:
		return s.part.Err()
	case s.narrow != nil:
		return s.narrow.Err()
	}
	return s.wide.Err()
}

func (s *entryStream) close() error {
	switch {
	case s.part != nil:
		return s.part.Close()
	case s.narrow != nil:
		return s.narrow.Close()
	}
	return s.wide.Close()
}

// candidateParts is how many key ranges the candidates stage splits wide
// band-key entries into (each a run of extsort.Partitioned's ranges, or
// extsort.WideSorter.IterParts), each sorted and grouped by a goroutine of
// its own, up to Workers at a time. Fixed, not the worker count, so that
// the pair runs spilled (report.json's spill counts) do not depend on
// Workers either. At most extsort.Partitions.
var candidateParts = 8

// keepSingles makes the candidates stage group every band-key entry, those
// of keys held once too; tests turn it on to compare with the default,
// which leaves those out (entryStream.skipSingles).
var keepSingles = false

// partBounds splits n key ranges into k parts (at most n) of consecutive
// ranges, returning the k+1 boundaries: the parts' sizes fall linearly
// (weights k, k−1, …, 1; at least one range each), so that the parts the
// workers take last, in order, are the smallest and none runs alone for
// long at the end of the stage. The split depends on k and n only, never
// on the workers: which pairs go to which part's sorter, and so what
// spills, is the same whatever Workers.
func partBounds(k, n int) []int {
	k = min(max(k, 1), n)
	w := k * (k + 1) / 2 // the weights' sum
	b := make([]int, k+1)
	c := 0 // the weights so far
	for i := 1; i <= k; i++ {
		c += k - i + 1
		b[i] = min(max((n*c+w/2)/w, b[i-1]+1), n-(k-i))
	}
	return b
}

// candidates sorts the band-key entries, groups them into buckets and
// collects the unique candidate pairs, spilling both to disk past the budget.
//
// Wide entries are read in candidateParts key ranges (partBounds; boundaries at
// multiples of 2^EntryDocBits, so that a bucket, whose key the entries'
// high 32 bits and the break between wide keys name, never spans two),
// each a run of consecutive extsort.Partitioned ranges, each of those
// sorted in memory as it is reached; each part is grouped by its own
// Grouper into its own pair sorter, on up to Workers goroutines; the ranges' metrics, largest buckets and pairs are then
// merged as if one Grouper had read them in order (the counts add up, the
// largest buckets' lists merge by size, then key, and the pairs are a
// sorted set).
func (r *run) candidates(ctx context.Context) error {
	r.bar.CountStage("candidates", "keys", r.entries.Len())
	defer r.bar.Finish()
	r.rep.Spill.EntryRuns = r.entries.Runs()
	r.rep.Spill.EntryBytes = r.entries.SpilledBytes()
	pairLimit := int(r.opts.Memory / 32 / 8)
	skip := r.skippedDocs()
	var parts []*candidatePart
	switch s := r.entries.(type) {
	case *extsort.Partitioned:
		defer s.Close()
		bounds := partBounds(candidateParts, extsort.Partitions)
		parts = make([]*candidatePart, len(bounds)-1)
		for i := range parts {
			lo, hi := bounds[i], bounds[i+1]
			parts[i] = &candidatePart{open: func() (*entryStream, error) {
				return &entryStream{part: s.Range(lo, hi)}, nil
			}, pairs: extsort.New(r.tmp, "pairs", pairLimit/len(parts))}
		}
	case *extsort.WideSorter:
		ps, err := s.IterParts(candidateParts, sketch.EntryDocBits)
		if err != nil {
			return err
		}
		defer ps.Close()
		parts = make([]*candidatePart, ps.Len())
		for i := range parts {
			parts[i] = &candidatePart{open: func() (*entryStream, error) {
				it, err := ps.Part(i)
				return &entryStream{wide: it}, err
			}, pairs: extsort.New(r.tmp, "pairs", pairLimit/len(parts))}
		}
	case *extsort.Sorter:
		parts = []*candidatePart{{open: func() (*entryStream, error) {
			it, err := s.Iter(false)
			return &entryStream{narrow: it}, err
		}, pairs: extsort.New(r.tmp, "pairs", pairLimit)}}
	default:
		panic(fmt.Sprintf("dedup: entry sorter %T", r.entries))
	}
	defer func() {
		for _, p := range parts {
			if p.sorted != nil {
				p.sorted.Close()
			}
			p.pairs.Close()
		}
	}()
	if err := r.groupParts(ctx, parts, skip); err != nil {
		return err
	}

	// Merge the parts' results in key order.
	var ms []lsh.CandidateMetrics
	for i, p := range parts {
		ms = append(ms, p.metrics)
		if i == 0 {
			r.top = p.top
		} else {
			r.top.Merge(&p.top)
		}
		r.rep.Spill.PairRuns += p.pairRuns
		r.rep.Spill.PairBytes += p.pairBytes
	}
	r.buckets = mergeCandidateMetrics(ms)

	its := make([]lsh.Run, len(parts))
	for i, p := range parts {
		its[i] = pairRun{p.sorted}
	}
	pit := lsh.Run(its[0])
	if len(its) > 1 {
		pit = lsh.NewMerger(its, true)
	}
	r.pairs = newPairList(r.tmp, int(r.opts.Memory/16/8))
	for {
		v, err := pit.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if err := r.pairs.add(v); err != nil {
			return err
		}
		if uint32(v>>32) < r.ref.n {
			r.ref.candidates++
		}
	}
	r.buckets.UniquePairs = r.pairs.n
	return r.pairs.done()
}

// candidatePart is one key range of the band-key entries in the candidates
// stage: how to read it, and what grouping it gave.
type candidatePart struct {
	open    func() (*entryStream, error)
	pairs   *extsort.Sorter // its candidate pairs, a pair once per bucket
	metrics lsh.CandidateMetrics
	top     jobspec.TopBuckets
	// sorted reads pairs, sorted on the part's worker (groupPart) rather
	// than one part after another where they are merged; pairRuns and
	// pairBytes are what pairs spilled before.
	sorted    *extsort.Iterator
	pairRuns  int
	pairBytes int64
}

// pairRun reads an extsort.Iterator as an lsh.Run.
type pairRun struct{ it *extsort.Iterator }

func (p pairRun) Next() (uint64, error) {
	if v, ok := p.it.Next(); ok {
		return v, nil
	}
	if err := p.it.Err(); err != nil {
		return 0, err
	}
	return 0, io.EOF
}

// groupParts groups each part's entries on up to Workers goroutines, parts
// taken in order; it returns the error of the first part that failed.
func (r *run) groupParts(ctx context.Context, parts []*candidatePart, skip []uint64) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(parts))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(max(r.opts.Workers, 1), len(parts)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(parts); i = int(next.Add(1) - 1) {
				if errs[i] = r.groupPart(ctx, parts[i], skip); errs[i] != nil {
					cancel()
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// groupPart reads one part's entries into a Grouper of its own, leaving out
// those of skipped documents (skippedDocs), and adds the pairs to the part's
// sorter.
func (r *run) groupPart(ctx context.Context, p *candidatePart, skip []uint64) error {
	it, err := p.open()
	if err != nil {
		return err
	}
	defer it.close()
	skipped := extsort.DocSet{Bits: skip, Base: r.ref.n}
	if !keepSingles {
		it.skipSingles(skipped)
	}
	// Reference documents, numbered first, are never paired with each
	// other (jobspec's rules).
	g, err := r.sketch.NewGrouper(r.sigMem, r.job.BucketCap, r.ref.n)
	if err != nil {
		return err
	}
	chunk := make([]uint64, 0, 1<<14)
	var pairs []uint64
	read := int64(0) // keys read since the last flush, those left out too
	flush := func() error {
		var err error
		p.top.Add(chunk)
		pairs, err = g.Append(pairs[:0], chunk)
		if err != nil {
			return err
		}
		r.bar.Add(read, 0)
		chunk, read = chunk[:0], 0
		return p.pairs.Add(pairs...)
	}
	// brk closes the open bucket before an entry of another wide key with
	// the same high 32 bits.
	brk := func() error {
		if err := flush(); err != nil {
			return err
		}
		p.top.Close()
		return p.pairs.Add(g.Flush(pairs[:0])...)
	}
	for v, ok := it.next(); ok; v, ok = it.next() {
		read++
		if skip != nil && skipped.Has(sketch.EntryDoc(v)) {
			continue
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
	if err := p.pairs.Add(g.Flush(pairs[:0])...); err != nil {
		return err
	}
	p.metrics = g.Metrics()
	p.pairRuns, p.pairBytes = p.pairs.Runs(), p.pairs.SpilledBytes()
	if p.sorted, err = p.pairs.Iter(true); err != nil {
		return err
	}
	// Each single key left out is a bucket of one entry, which the Grouper
	// would have counted and closed with no pair.
	n := it.singles()
	p.metrics.Entries += n
	p.metrics.Buckets += n
	r.bar.Add(n+it.dropped(), 0)
	return nil
}

// mergeCandidateMetrics returns the metrics of one Grouper that read the
// parts' entries in order: the counts add up; the largest capped buckets,
// keys of different parts being different, merge by size, then key (a
// stable sort keeps a part's own order of equal ones), and the first
// lsh.DefaultLargest stay.
func mergeCandidateMetrics(ms []lsh.CandidateMetrics) lsh.CandidateMetrics {
	var m lsh.CandidateMetrics
	for _, p := range ms {
		m.Entries += p.Entries
		m.DuplicateEntries += p.DuplicateEntries
		m.Buckets += p.Buckets
		m.SharedBuckets += p.SharedBuckets
		m.Pairs += p.Pairs
		m.CappedBuckets += p.CappedBuckets
		m.CappedMembers += p.CappedMembers
		m.Largest = append(m.Largest, p.Largest...)
	}
	slices.SortStableFunc(m.Largest, jobspec.CompareBuckets)
	if len(m.Largest) > lsh.DefaultLargest {
		m.Largest = m.Largest[:lsh.DefaultLargest]
	}
	return m
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
