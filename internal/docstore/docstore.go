// Package docstore keeps one variable-length record per document (its text, a
// packed signature, a sorted feature set) in a virtual byte array that lives in
// memory up to a budget and spills whole chunks to a temporary file past it.
// The batch dedup driver appends records in document order and later reads
// them back, by document, to verify candidate pairs.
package docstore

import (
	"fmt"
	"os"
	"slices"
	"unsafe"

	"github.com/neardup/neardup/internal/hugepage"
)

// Chunk sizes: a quarter of the budget, as a power of two in
// [minChunk, maxChunk], so that a small budget is not rounded up to a few
// large chunks (the two-chunk floor at 8 MiB would double a 8 MiB budget).
const (
	minChunk = 64 << 10
	maxChunk = 8 << 20
)

// chunkFor returns the chunk size for a budget.
func chunkFor(budget int64) int64 {
	c := int64(maxChunk)
	for c > minChunk && c > budget/4 {
		c /= 2
	}
	return c
}

type chunk struct {
	mem  []byte // nil once spilled
	file int64  // byte offset in the spill file, when spilled
	n    int    // values in the chunk
}

// Store is an append-only list of records. Appends are not safe for
// concurrent use; once appends are done, Get is safe for concurrent use.
type Store struct {
	dir, prefix string
	budget      int64 // bytes of chunks kept in memory
	chunkSize   int64
	inMem       int64
	chunks      []chunk
	offs        Offsets // record i is bytes offs.At(i)..offs.At(i+1)
	total       int64
	spillNext   int // first chunk not yet spilled
	f           *os.File
	fileSize    int64
}

// New returns a Store keeping at most budget bytes of records in memory (but
// always two chunks: chunks are a quarter of the budget, between 64 KiB and
// 8 MiB), spilling to a file in dir (os.TempDir() if empty) whose name
// starts with prefix.
func New(dir, prefix string, budget int64) *Store {
	c := chunkFor(budget)
	s := &Store{dir: dir, prefix: prefix, budget: max(budget, 2*c), chunkSize: c}
	s.offs.Append(0)
	return s
}

// Len is the number of records.
func (s *Store) Len() int { return s.offs.Len() - 1 }

// Size is the total number of bytes stored.
func (s *Store) Size() int64 { return s.total }

// MemoryBytes is the memory held by chunks not spilled.
func (s *Store) MemoryBytes() int64 { return s.inMem }

// SpilledBytes is the size of the spill file.
func (s *Store) SpilledBytes() int64 { return s.fileSize }

// Append adds a record and returns its index.
func (s *Store) Append(vals []byte) (int, error) {
	for len(vals) > 0 {
		if len(s.chunks) == 0 || int64(s.chunks[len(s.chunks)-1].n) == s.chunkSize {
			mem, err := s.newChunk()
			if err != nil {
				return 0, err
			}
			s.chunks = append(s.chunks, chunk{mem: mem})
			s.inMem += s.chunkSize
		}
		c := &s.chunks[len(s.chunks)-1]
		k := copy(c.mem[c.n:], vals)
		c.n += k
		vals = vals[k:]
		s.total += int64(k)
	}
	s.offs.Append(s.total)
	return s.offs.Len() - 2, nil
}

// newChunk returns the memory of a new chunk. Past the budget it first
// spills the oldest chunks (every chunk is full when a new one is needed)
// and reuses the memory of the last one spilled: a store that spills
// allocates no more memory once at its budget, rather than a fresh chunk
// for every one written out, which cost page faults and zeroing of memory
// the garbage collector had just returned.
func (s *Store) newChunk() ([]byte, error) {
	var spare []byte
	for s.inMem+s.chunkSize > s.budget && s.spillNext < len(s.chunks) {
		c := &s.chunks[s.spillNext]
		if s.f == nil {
			f, err := os.CreateTemp(s.dir, s.prefix+"-store-*")
			if err != nil {
				return nil, fmt.Errorf("docstore: %w", err)
			}
			// Unlinked at once: the data lives until the file is closed.
			os.Remove(f.Name())
			s.f = f
		}
		b := c.mem[:c.n]
		if _, err := s.f.WriteAt(b, s.fileSize); err != nil {
			return nil, fmt.Errorf("docstore: spill: %w", err)
		}
		c.file = s.fileSize
		s.fileSize += int64(len(b))
		spare = c.mem
		c.mem = nil
		s.inMem -= s.chunkSize
		s.spillNext++
	}
	if spare != nil {
		return spare, nil
	}
	mem := make([]byte, s.chunkSize)
	// Backed by huge pages where whole ones fit (an 8 MiB chunk holds three
	// or four): a chunk is filled whole, and the feature sets' chunks at
	// 5M short documents under 1 GiB were 40k page faults of 4 KiB, a
	// fifth of the run's. Fresh memory is untouched until the copy into
	// it; memory the heap reuses is already backed, and the advice
	// changes nothing.
	hugepage.Advise(unsafe.Pointer(unsafe.SliceData(mem)), len(mem))
	return mem, nil
}

// Get appends record i to dst and returns it.
func (s *Store) Get(dst []byte, i int) ([]byte, error) {
	lo, hi := s.offs.At(i), s.offs.At(i+1)
	for lo < hi {
		ci := int(lo / s.chunkSize)
		at := int(lo % s.chunkSize)
		n := int(min(hi-lo, s.chunkSize-int64(at)))
		c := &s.chunks[ci]
		if c.mem != nil {
			dst = append(dst, c.mem[at:at+n]...)
		} else {
			start := len(dst)
			dst = slices.Grow(dst, n)[:start+n]
			if _, err := s.f.ReadAt(dst[start:], c.file+int64(at)); err != nil {
				return dst[:start], fmt.Errorf("docstore: read record %d: %w", i, err)
			}
		}
		lo += int64(n)
	}
	return dst, nil
}

// RecordLen returns the length in bytes of record i.
func (s *Store) RecordLen(i int) int { return int(s.offs.At(i+1) - s.offs.At(i)) }

// AppendUint64s adds a record of uint64 values (in native byte order: the
// store is private to one process) and returns its index.
func (s *Store) AppendUint64s(vals []uint64) (int, error) {
	if len(vals) == 0 {
		return s.Append(nil)
	}
	return s.Append(unsafe.Slice((*byte)(unsafe.Pointer(&vals[0])), 8*len(vals)))
}

// GetUint64s appends record i, written by AppendUint64s, to dst.
func (s *Store) GetUint64s(dst []uint64, i int) ([]uint64, error) {
	n := s.RecordLen(i) / 8
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	if n == 0 {
		return dst, nil
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&dst[start])), 8*n)
	got, err := s.Get(b[:0], i)
	if err == nil && len(got) != len(b) {
		err = fmt.Errorf("docstore: record %d: %d bytes, want %d", i, len(got), len(b))
	}
	return dst, err
}

// ViewUint64s returns record i, written by AppendUint64s, without copying
// it where it can: where the record lies whole in one chunk held in memory
// (as all but the few that straddle two chunks do while the store stays
// within its budget), vals is that memory, which the caller must not
// modify; else the record is read into buf's memory, as GetUint64s does.
// It returns buf (grown as needed) for the next call. Safe for concurrent
// use once appends are done, as Get is; vals is valid until Close.
func (s *Store) ViewUint64s(buf []uint64, i int) (vals, next []uint64, err error) {
	lo, hi := s.offs.At(i), s.offs.At(i+1)
	if lo == hi {
		return buf[:0], buf, nil
	}
	ci, at := int(lo/s.chunkSize), lo%s.chunkSize
	if c := &s.chunks[ci]; c.mem != nil && at+(hi-lo) <= s.chunkSize {
		if p := unsafe.Pointer(&c.mem[at]); uintptr(p)%8 == 0 {
			return unsafe.Slice((*uint64)(p), (hi-lo)/8), buf, nil
		}
	}
	buf, err = s.GetUint64s(buf[:0], i)
	return buf, buf, err
}

// Close releases the records, their offsets and the spill file.
func (s *Store) Close() error {
	s.chunks, s.offs = nil, Offsets{}
	if s.f != nil {
		return s.f.Close()
	}
	return nil
}
