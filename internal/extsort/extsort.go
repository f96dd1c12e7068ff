// Package extsort sorts more uint64 values than fit in a memory budget: values
// are buffered, and each full buffer is radix-sorted and written to a temporary
// file as a run (delta-encoded uvarints); reading merges the in-memory
// remainder with every run, with lsh.Merger (the merge the lsh package offers
// for streaming candidates, so there is one). The batch dedup driver uses it
// for packed (band key | document) entries and (a | b) candidate pairs.
package extsort

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/neardup/neardup/internal/radix"
	"github.com/neardup/neardup/lsh"
)

// Sorter collects values and yields them sorted. It is not safe for
// concurrent use. Its output is deterministic: the sorted multiset (or set,
// with Unique) of what was added, whatever the buffer size.
type Sorter struct {
	dir     string
	prefix  string
	limit   int // values held in memory before a run is spilled
	buf     []uint64
	scratch []uint64
	runs    []string
	spilled int64 // bytes written to runs
	count   int64 // values added
}

// New returns a Sorter that holds at most limit values (8 bytes each) in
// memory, plus as much again of sorting scratch, and spills runs into dir
// (os.TempDir() if empty) with file names starting with prefix.
func New(dir, prefix string, limit int) *Sorter {
	if limit < 1024 {
		limit = 1024
	}
	return &Sorter{dir: dir, prefix: prefix, limit: limit}
}

// Add adds values. It may spill a run to disk.
func (s *Sorter) Add(vs ...uint64) error {
	for len(vs) > 0 {
		if s.buf == nil {
			s.buf = make([]uint64, 0, min(s.limit, 1<<16))
		}
		room := s.limit - len(s.buf)
		n := min(room, len(vs))
		s.buf = append(s.buf, vs[:n]...)
		s.count += int64(n)
		vs = vs[n:]
		if len(s.buf) >= s.limit {
			if err := s.spill(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Len is the number of values added.
func (s *Sorter) Len() int64 { return s.count }

// Runs is the number of runs spilled so far.
func (s *Sorter) Runs() int { return len(s.runs) }

// SpilledBytes is how many bytes of runs were written to disk.
func (s *Sorter) SpilledBytes() int64 { return s.spilled }

func (s *Sorter) sortBuf() {
	if cap(s.scratch) < len(s.buf) {
		s.scratch = make([]uint64, len(s.buf))
	}
	s.scratch = radix.Sort(s.buf, s.scratch[:len(s.buf)])
}

func (s *Sorter) spill() error {
	s.sortBuf()
	f, err := os.CreateTemp(s.dir, s.prefix+"-run-*")
	if err != nil {
		return fmt.Errorf("extsort: spill: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var tmp [binary.MaxVarintLen64]byte
	prev := uint64(0)
	for _, v := range s.buf {
		n := binary.PutUvarint(tmp[:], v-prev)
		prev = v
		if _, err := w.Write(tmp[:n]); err != nil {
			f.Close()
			return fmt.Errorf("extsort: spill %s: %w", f.Name(), err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("extsort: spill %s: %w", f.Name(), err)
	}
	st, _ := f.Stat()
	if st != nil {
		s.spilled += st.Size()
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("extsort: spill %s: %w", f.Name(), err)
	}
	s.runs = append(s.runs, f.Name())
	s.buf = s.buf[:0]
	return nil
}

// Close removes the runs spilled so far and drops the buffer, for a Sorter
// abandoned before Iter (after Iter the Iterator owns the runs). It may be
// called more than once; the Sorter is unusable afterwards.
func (s *Sorter) Close() error {
	var first error
	for _, name := range s.runs {
		if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) && first == nil {
			first = fmt.Errorf("extsort: %w", err)
		}
	}
	s.buf, s.scratch, s.runs = nil, nil, nil
	return first
}

// Iter returns an iterator over every value added, in ascending order; with
// unique, each distinct value once. No more values may be added afterwards.
// Close the iterator to remove the runs.
func (s *Sorter) Iter(unique bool) (*Iterator, error) {
	s.sortBuf()
	it := &Iterator{unique: unique, runs: s.runs}
	if len(s.runs) == 0 {
		// Everything fits in memory: iterate the sorted buffer directly.
		it.mem = s.buf
		s.buf, s.scratch = nil, nil
		return it, nil
	}
	sources := []lsh.Run{&source{mem: s.buf}}
	for _, name := range s.runs {
		f, err := os.Open(name)
		if err != nil {
			it.Close()
			return nil, fmt.Errorf("extsort: %w", err)
		}
		it.files = append(it.files, f)
		sources = append(sources, &source{f: f, r: bufio.NewReaderSize(f, 1<<16)})
	}
	it.merge = lsh.NewMerger(sources, unique)
	s.buf, s.scratch, s.runs = nil, nil, nil
	return it, nil
}

// source is a sorted run: the in-memory remainder, or a file of
// delta-encoded uvarints.
type source struct {
	mem  []uint64
	pos  int
	f    *os.File
	r    *bufio.Reader
	prev uint64
}

// Compile-time check that a source is a run for lsh.Merger.
var _ lsh.Run = (*source)(nil)

// Next returns the run's next value, or io.EOF at its end.
func (s *source) Next() (uint64, error) {
	if s.r == nil {
		if s.pos >= len(s.mem) {
			return 0, io.EOF
		}
		s.pos++
		return s.mem[s.pos-1], nil
	}
	d, err := binary.ReadUvarint(s.r)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return 0, io.EOF
		}
		return 0, fmt.Errorf("extsort: read run %s: %w", s.f.Name(), err)
	}
	s.prev += d
	return s.prev, nil
}

// Iterator yields the sorted values. Not safe for concurrent use.
type Iterator struct {
	mem    []uint64 // when nothing was spilled
	pos    int
	merge  *lsh.Merger // of the runs and the in-memory remainder, when some were spilled
	files  []*os.File
	runs   []string
	unique bool
	last   uint64
	any    bool
	err    error
}

// Next returns the next value, or false at the end or on error (see Err).
func (it *Iterator) Next() (uint64, bool) {
	for it.pos < len(it.mem) {
		v := it.mem[it.pos]
		it.pos++
		if it.unique && it.any && v == it.last {
			continue
		}
		it.last, it.any = v, true
		return v, true
	}
	if it.merge == nil || it.err != nil {
		return 0, false
	}
	v, err := it.merge.Next()
	if err != nil {
		if !errors.Is(err, io.EOF) {
			it.err = err
		}
		return 0, false
	}
	return v, true
}

// Err returns the first error met while reading runs.
func (it *Iterator) Err() error { return it.err }

// Close closes and removes the runs.
func (it *Iterator) Close() error {
	var first error
	for _, f := range it.files {
		f.Close()
	}
	for _, name := range it.runs {
		if err := os.Remove(name); err != nil && first == nil {
			first = err
		}
	}
	it.files, it.runs = nil, nil
	return first
}
