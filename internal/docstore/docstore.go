// Package docstore keeps one variable-length record of uint64 values per
// document (a sorted feature set, a packed signature) in a virtual array that
// lives in memory up to a budget and spills whole chunks to a temporary file
// past it. The batch dedup driver appends records in document order and later
// reads them back, by document, to verify candidate pairs.
package docstore

import (
	"fmt"
	"os"
	"slices"
	"unsafe"
)

// chunkVals is the size of a chunk in values (8 MiB).
const chunkVals = 1 << 20

type chunk struct {
	mem  []uint64 // nil once spilled
	file int64    // byte offset in the spill file, when spilled
	n    int      // values in the chunk
}

// Store is an append-only list of records. Appends are not safe for
// concurrent use; once appends are done, Get is safe for concurrent use.
type Store struct {
	dir, prefix string
	budget      int64 // bytes of chunks kept in memory
	inMem       int64
	chunks      []chunk
	offs        []int64 // record i is values offs[i]..offs[i+1]
	total       int64
	spillNext   int // first chunk not yet spilled
	f           *os.File
	fileSize    int64
}

// New returns a Store keeping at most budget bytes of values in memory,
// spilling to a file in dir (os.TempDir() if empty) whose name starts with prefix.
func New(dir, prefix string, budget int64) *Store {
	return &Store{dir: dir, prefix: prefix, budget: max(budget, 2*chunkVals*8), offs: []int64{0}}
}

// Len is the number of records.
func (s *Store) Len() int { return len(s.offs) - 1 }

// Values is the total number of values stored.
func (s *Store) Values() int64 { return s.total }

// SpilledBytes is the size of the spill file.
func (s *Store) SpilledBytes() int64 { return s.fileSize }

// Append adds a record and returns its index.
func (s *Store) Append(vals []uint64) (int, error) {
	for len(vals) > 0 {
		if len(s.chunks) == 0 || s.chunks[len(s.chunks)-1].n == chunkVals {
			s.chunks = append(s.chunks, chunk{mem: make([]uint64, chunkVals)})
			s.inMem += chunkVals * 8
			if err := s.enforce(); err != nil {
				return 0, err
			}
		}
		c := &s.chunks[len(s.chunks)-1]
		k := copy(c.mem[c.n:], vals)
		c.n += k
		vals = vals[k:]
		s.total += int64(k)
	}
	s.offs = append(s.offs, s.total)
	return len(s.offs) - 2, nil
}

// enforce spills the oldest full chunks while memory is over budget.
func (s *Store) enforce() error {
	for s.inMem > s.budget && s.spillNext < len(s.chunks)-1 {
		c := &s.chunks[s.spillNext]
		if s.f == nil {
			f, err := os.CreateTemp(s.dir, s.prefix+"-store-*")
			if err != nil {
				return fmt.Errorf("docstore: %w", err)
			}
			// Unlinked at once: the data lives until the file is closed.
			os.Remove(f.Name())
			s.f = f
		}
		b := unsafe.Slice((*byte)(unsafe.Pointer(&c.mem[0])), c.n*8)
		if _, err := s.f.WriteAt(b, s.fileSize); err != nil {
			return fmt.Errorf("docstore: spill: %w", err)
		}
		c.file = s.fileSize
		s.fileSize += int64(len(b))
		c.mem = nil
		s.inMem -= chunkVals * 8
		s.spillNext++
	}
	return nil
}

// Get appends record i to dst and returns it.
func (s *Store) Get(dst []uint64, i int) ([]uint64, error) {
	lo, hi := s.offs[i], s.offs[i+1]
	for lo < hi {
		ci := int(lo / chunkVals)
		at := int(lo % chunkVals)
		n := int(min(hi-lo, int64(chunkVals-at)))
		c := &s.chunks[ci]
		if c.mem != nil {
			dst = append(dst, c.mem[at:at+n]...)
		} else {
			// The spill file holds native-order values written by this
			// process, so they are read back as they are.
			start := len(dst)
			dst = slices.Grow(dst, n)[:start+n]
			b := unsafe.Slice((*byte)(unsafe.Pointer(&dst[start])), n*8)
			if _, err := s.f.ReadAt(b, c.file+int64(at)*8); err != nil {
				return dst[:start], fmt.Errorf("docstore: read record %d: %w", i, err)
			}
		}
		lo += int64(n)
	}
	return dst, nil
}

// Close releases the spill file.
func (s *Store) Close() error {
	s.chunks = nil
	if s.f != nil {
		return s.f.Close()
	}
	return nil
}
