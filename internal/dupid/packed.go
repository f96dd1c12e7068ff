package dupid

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/neardup/neardup/internal/extsort"
	"github.com/neardup/neardup/internal/radix"
)

// packedBuckets is the number of buckets a packedStore scatters its values
// into, by their top byte.
const packedBuckets = 256

// Block sizes of a bucket, in values: the first is small, for small inputs;
// each next one twice the one before, up to packedMaxBlock (32 KiB).
const (
	packedMinBlock = 1 << 4
	packedMaxBlock = 1 << 12
)

// packedStore collects packed values (an id's hash's high 32 bits above its
// number) and yields them sorted. While they fit in limit values it holds
// them in memory, scattered by their top byte into buckets of blocks (so
// that adding never copies what was added before, and nothing is sorted
// until the end); each bucket is then sorted on its own, a few hundred
// kilobytes at a time, when it is read (by iter, in order, or by shared,
// on several goroutines, which yields only the values a scan would find). Past the limit, or when one bucket
// is too large to sort within a quarter of the limit (the hashes of many
// copies of one id), every value goes to an extsort.Sorter holding a
// quarter of the limit, which spills sorted runs. Its output, the sorted
// multiset of the values added, does not depend on which way it took.
//
// add only appends to a block of feedBlock values: the scattering, whose
// writes into 256 places miss the cache of a caller busy with other work,
// runs on a goroutine of its own, started at the first full block and
// stopped by iter or close.
type packedStore struct {
	dir, prefix string
	limit       int64 // values held in buckets at most
	count       int64

	// The caller's side.
	blk  []uint64 // values added since the last block handed over
	work chan []uint64
	free chan []uint64
	done chan struct{}

	// The scattering goroutine's side (the caller's once done is closed).
	full    [packedBuckets][][]uint64 // each bucket's full blocks
	cur     [packedBuckets][]uint64   // each bucket's block being filled
	held    int64
	sorter  *extsort.Sorter // past the limit: every value
	err     error
	failed  atomic.Bool
	spilled atomic.Int64
}

// feedBlock is the size in values of the blocks add hands to the
// scattering goroutine, and feedDepth how many may wait for it.
const (
	feedBlock = 1 << 12
	feedDepth = 4
)

func newPackedStore(dir, prefix string, limit int64) *packedStore {
	return &packedStore{dir: dir, prefix: prefix, limit: max(limit, 1024)}
}

// add adds one value. It returns the error of an earlier spill, if any.
func (s *packedStore) add(v uint64) error {
	s.count++
	s.blk = append(s.blk, v)
	if len(s.blk) < feedBlock {
		return nil
	}
	if s.failed.Load() {
		return s.finish()
	}
	if s.work == nil {
		s.work, s.free, s.done = make(chan []uint64, feedDepth), make(chan []uint64, feedDepth+2), make(chan struct{})
		go s.scatter()
	}
	s.work <- s.blk
	select {
	case s.blk = <-s.free:
	default:
		s.blk = make([]uint64, 0, feedBlock)
	}
	return nil
}

// scatter places the blocks handed over, then gives them back.
func (s *packedStore) scatter() {
	defer close(s.done)
	for blk := range s.work {
		if s.err == nil {
			if s.err = s.place(blk); s.err != nil {
				s.failed.Store(true)
			}
		}
		select {
		case s.free <- blk[:0]:
		default:
		}
	}
}

// finish stops the scattering goroutine, places what is left and returns
// the first error. No value may be added afterwards.
func (s *packedStore) finish() error {
	if s.work != nil {
		close(s.work)
		<-s.done
		s.work = nil
	}
	if s.err == nil && len(s.blk) > 0 {
		s.err = s.place(s.blk)
	}
	s.blk = nil
	return s.err
}

// place scatters vs into the buckets, or adds them to the sorter.
func (s *packedStore) place(vs []uint64) error {
	if s.sorter != nil {
		err := s.sorter.Add(vs...)
		s.spilled.Store(s.sorter.SpilledBytes())
		return err
	}
	for i, v := range vs {
		c := &s.cur[v>>56]
		if len(*c) == cap(*c) {
			size := packedMinBlock
			if cap(*c) > 0 {
				size = min(2*cap(*c), packedMaxBlock)
				s.full[v>>56] = append(s.full[v>>56], *c)
			}
			*c = make([]uint64, 0, size)
		}
		*c = append(*c, v)
		s.held++
		if s.held > s.limit {
			if err := s.toSorter(); err != nil {
				return err
			}
			return s.place(vs[i+1:])
		}
	}
	return nil
}

// toSorter moves every value held in buckets to an extsort.Sorter, which
// takes every later one too, releasing each bucket once moved.
func (s *packedStore) toSorter() error {
	s.sorter = extsort.New(s.dir, s.prefix, int(s.limit/8))
	defer func() { s.spilled.Store(s.sorter.SpilledBytes()) }()
	for i := range s.full {
		for _, blk := range s.full[i] {
			if err := s.sorter.Add(blk...); err != nil {
				return err
			}
		}
		if err := s.sorter.Add(s.cur[i]...); err != nil {
			return err
		}
		s.full[i], s.cur[i] = nil, nil
	}
	s.held = 0
	return nil
}

// spilledBytes returns the bytes of runs written so far.
func (s *packedStore) spilledBytes() int64 { return s.spilled.Load() }

// packedIter yields a packedStore's values in ascending order.
type packedIter struct {
	s      *packedStore
	it     *extsort.Iterator
	bucket int      // the next bucket to sort
	cur    []uint64 // the sorted bucket being read
	pos    int
	a, b   []uint64 // a bucket's values and the sort's scratch
}

// iter returns an iterator over every value added; no value may be added
// afterwards. Close it, then the store.
func (s *packedStore) iter() (*packedIter, error) {
	if _, err := s.settle(); err != nil {
		return nil, err
	}
	it := &packedIter{s: s}
	if s.sorter != nil {
		var err error
		if it.it, err = s.sorter.Iter(false); err != nil {
			return nil, fmt.Errorf("dupid: %w", err)
		}
	}
	return it, nil
}

// settle stops the adding and decides the way the values are read: it
// moves them to the sorter if one bucket is too large to sort in memory. It
// returns the size of the largest bucket (0 on the sorter's way).
func (s *packedStore) settle() (int64, error) {
	if err := s.finish(); err != nil {
		return 0, err
	}
	if s.sorter != nil {
		return 0, nil
	}
	var largest int64
	for i := range s.full {
		n := int64(len(s.cur[i]))
		for _, blk := range s.full[i] {
			n += int64(len(blk))
		}
		largest = max(largest, n)
	}
	// A bucket is copied and sorted with as much scratch: one too
	// large for a quarter of the limit goes the sorter's way.
	if 2*largest > s.limit/4 && largest > 2*packedMaxBlock {
		return 0, s.toSorter()
	}
	return largest, nil
}

// shared returns, if the values are held in buckets (ok; else nothing is
// read, and iter reads them from the sorter), v&low for every value v whose
// high bits (v&^low, low being a mask of low bits below the top byte) are
// another value's: what a scan of iter's sorted values finds, in no
// particular order. The buckets are sorted and scanned on up to workers
// goroutines at once, as many as their scratch (twice the largest bucket
// each) fits in a quarter of the limit: this runs alone at the end of a
// stage, its caller waiting. Each bucket is released once read, so that iter
// then yields nothing; no value may be added afterwards.
func (s *packedStore) shared(low uint64, workers int) (found []uint64, ok bool, err error) {
	largest, err := s.settle()
	if err != nil || s.sorter != nil {
		return nil, false, err
	}
	workers = int(min(int64(max(workers, 1)), max(s.limit/4/max(2*largest, 1), 1), packedBuckets))
	var next atomic.Int32
	parts := make([][]uint64, workers)
	work := func(w int) {
		var a, b, out []uint64
		for i := int(next.Add(1) - 1); i < packedBuckets; i = int(next.Add(1) - 1) {
			blks, cur := s.full[i], s.cur[i]
			s.full[i], s.cur[i] = nil, nil // released once read
			if len(blks) == 0 && len(cur) < 2 {
				continue
			}
			a = a[:0]
			for _, blk := range blks {
				a = append(a, blk...)
			}
			a = append(a, cur...)
			// Only the high bits need ordering: the values found go to
			// a sorter.
			b = radix.SortKey(a, b[:cap(b)], 32)
			out = appendShared(out, a, low)
		}
		parts[w] = out
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() { defer wg.Done(); work(w) }()
	}
	work(0)
	wg.Wait()
	for _, p := range parts {
		found = append(found, p...)
	}
	return found, true, nil
}

// appendShared appends to dst v&low for each value v of vs (sorted by their
// high bits) whose high bits (v&^low) another value of vs has.
func appendShared(dst, vs []uint64, low uint64) []uint64 {
	for i := 0; i < len(vs); {
		j := i + 1
		for j < len(vs) && vs[j]&^low == vs[i]&^low {
			j++
		}
		if j-i > 1 {
			for _, v := range vs[i:j] {
				dst = append(dst, v&low)
			}
		}
		i = j
	}
	return dst
}

// next returns the next value, or false at the end or on error (see Err).
func (it *packedIter) next() (uint64, bool) {
	if it.it != nil {
		return it.it.Next()
	}
	for it.pos == len(it.cur) {
		if it.bucket == packedBuckets {
			return 0, false
		}
		blks, cur := it.s.full[it.bucket], it.s.cur[it.bucket]
		it.s.full[it.bucket], it.s.cur[it.bucket] = nil, nil // released once read
		it.bucket++
		it.a = it.a[:0]
		for _, blk := range blks {
			it.a = append(it.a, blk...)
		}
		it.a = append(it.a, cur...)
		it.b = radix.Sort(it.a, it.b[:cap(it.b)])
		it.cur, it.pos = it.a, 0
	}
	v := it.cur[it.pos]
	it.pos++
	return v, true
}

// Err returns the error that ended the iteration, if any.
func (it *packedIter) Err() error {
	if it.it != nil {
		if err := it.it.Err(); err != nil {
			return fmt.Errorf("dupid: %w", err)
		}
	}
	return nil
}

func (it *packedIter) close() {
	if it.it != nil {
		it.it.Close()
		it.it = nil
	}
	it.a, it.b, it.cur = nil, nil, nil
	it.bucket = packedBuckets
}

// close removes the runs and drops the values.
func (s *packedStore) close() error {
	s.finish()
	s.full, s.cur = [packedBuckets][][]uint64{}, [packedBuckets][]uint64{}
	if s.sorter == nil {
		return nil
	}
	err := s.sorter.Close()
	s.sorter = nil
	if err != nil {
		return fmt.Errorf("dupid: %w", err)
	}
	return nil
}
