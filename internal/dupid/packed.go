package dupid

import (
	"fmt"

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
// kilobytes at a time, when it is read. Past the limit, or when one bucket
// is too large to sort within a quarter of the limit (the hashes of many
// copies of one id), every value goes to an extsort.Sorter holding a
// quarter of the limit, which spills sorted runs. Its output, the sorted
// multiset of the values added, does not depend on which way it took.
type packedStore struct {
	dir, prefix string
	limit       int64 // values held in buckets at most
	buckets     [packedBuckets][][]uint64
	held        int64
	sorter      *extsort.Sorter // past the limit: every value
	count       int64
}

func newPackedStore(dir, prefix string, limit int64) *packedStore {
	return &packedStore{dir: dir, prefix: prefix, limit: max(limit, 1024)}
}

// add adds one value. It may spill.
func (s *packedStore) add(v uint64) error {
	s.count++
	if s.sorter != nil {
		return s.sorter.Add(v)
	}
	b := &s.buckets[v>>56]
	n := len(*b)
	if n == 0 || len((*b)[n-1]) == cap((*b)[n-1]) {
		size := packedMinBlock
		if n > 0 {
			size = min(2*cap((*b)[n-1]), packedMaxBlock)
		}
		*b = append(*b, make([]uint64, 0, size))
		n++
	}
	(*b)[n-1] = append((*b)[n-1], v)
	s.held++
	if s.held > s.limit {
		return s.toSorter()
	}
	return nil
}

// toSorter moves every value held in buckets to an extsort.Sorter, which
// takes every later one too, releasing each bucket once moved.
func (s *packedStore) toSorter() error {
	s.sorter = extsort.New(s.dir, s.prefix, int(s.limit/8))
	for i := range s.buckets {
		for _, blk := range s.buckets[i] {
			if err := s.sorter.Add(blk...); err != nil {
				return err
			}
		}
		s.buckets[i] = nil
	}
	s.held = 0
	return nil
}

// spilledBytes returns the bytes of runs written so far.
func (s *packedStore) spilledBytes() int64 {
	if s.sorter == nil {
		return 0
	}
	return s.sorter.SpilledBytes()
}

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
	if s.sorter == nil {
		var largest int64
		for i := range s.buckets {
			var n int64
			for _, blk := range s.buckets[i] {
				n += int64(len(blk))
			}
			largest = max(largest, n)
		}
		// A bucket is copied and sorted with as much scratch: one too
		// large for a quarter of the limit goes the sorter's way.
		if 2*largest > s.limit/4 && largest > 2*packedMaxBlock {
			if err := s.toSorter(); err != nil {
				return nil, err
			}
		}
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

// next returns the next value, or false at the end or on error (see Err).
func (it *packedIter) next() (uint64, bool) {
	if it.it != nil {
		return it.it.Next()
	}
	for it.pos == len(it.cur) {
		if it.bucket == packedBuckets {
			return 0, false
		}
		blks := it.s.buckets[it.bucket]
		it.s.buckets[it.bucket] = nil // released once read
		it.bucket++
		it.a = it.a[:0]
		for _, blk := range blks {
			it.a = append(it.a, blk...)
		}
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
	s.buckets = [packedBuckets][][]uint64{}
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
