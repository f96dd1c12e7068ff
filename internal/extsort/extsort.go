// Package extsort sorts more uint64 values than fit in a memory budget: values
// are buffered, and each full buffer is radix-sorted and written to a temporary
// file as a run (delta-encoded uvarints); reading merges the in-memory
// remainder with every run with a loser tree (internal/kmerge, with which
// RecordSorter and WideSorter merge too). The batch dedup driver uses it
// for packed (band key | document) entries and (a | b) candidate pairs.
//
// WideSorter does the same for (64-bit key, document) entries, the band-key
// entries of dedup's default 64-bit keys, the most numerous values a run
// sorts: it sorts chunks in place in the background as they fill, merges a
// run's chunks as it writes the run, decodes each run from a large buffer,
// and can split the merge into key ranges read side by side (IterParts).
//
// Partitioned takes the same entries without sorting them as they come:
// it scatters them into 256 key ranges by the key's top byte, in memory or
// appended to one spill file past its budget, and sorts each range in
// memory when it is read (Range), ranges side by side on goroutines of
// their own. The batch dedup driver uses it for 64-bit band keys.
package extsort

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/neardup/neardup/internal/kmerge"
	"github.com/neardup/neardup/internal/radix"
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
		if len(s.buf)+len(vs) > cap(s.buf) && cap(s.buf) < s.limit {
			s.grow(len(s.buf) + len(vs))
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

// grow makes room for at least n values (at most limit). The buffer doubles:
// append grows a large slice by only a quarter, which moved the values of a
// large buffer some twenty-five times on its way to the limit and left as many
// dead copies for the collector (BenchmarkAddIter: 55 % fewer bytes
// allocated).
func (s *Sorter) grow(n int) {
	c := min(s.limit, max(n, 2*cap(s.buf), 1<<16))
	b := make([]uint64, len(s.buf), c)
	copy(b, s.buf)
	s.buf = b
}

func (s *Sorter) sortBuf() {
	if cap(s.scratch) < len(s.buf) {
		s.scratch = make([]uint64, len(s.buf))
	}
	s.scratch = radix.Sort(s.buf, s.scratch[:len(s.buf)])
}

func (s *Sorter) spill() error {
	s.sortBuf()
	w, err := createRun(s.dir, s.prefix)
	if err != nil {
		return err
	}
	prev := uint64(0)
	for _, v := range s.buf {
		if len(w.buf) > cap(w.buf)-binary.MaxVarintLen64 {
			if err := w.flush(); err != nil {
				return err
			}
		}
		w.buf = binary.AppendUvarint(w.buf, v-prev)
		prev = v
	}
	name, size, err := w.finish()
	if err != nil {
		return err
	}
	s.spilled += size
	s.runs = append(s.runs, name)
	s.buf = s.buf[:0]
	return nil
}

// runWriter writes a run file: its bytes are appended to buf, which flush
// writes out in large blocks.
type runWriter struct {
	f   *os.File
	buf []byte
	off int64 // bytes written out before buf
}

// createRun creates a run file in dir (os.TempDir() if empty) whose name
// starts with prefix.
func createRun(dir, prefix string) (*runWriter, error) {
	f, err := os.CreateTemp(dir, prefix+"-run-*")
	if err != nil {
		return nil, fmt.Errorf("extsort: spill: %w", err)
	}
	return &runWriter{f: f, buf: make([]byte, 0, 1<<20)}, nil
}

// flush writes buf out; on error the run is removed.
func (w *runWriter) flush() error {
	if _, err := w.f.Write(w.buf); err != nil {
		w.abort()
		return fmt.Errorf("extsort: spill %s: %w", w.f.Name(), err)
	}
	w.off += int64(len(w.buf))
	w.buf = w.buf[:0]
	return nil
}

// finish writes out the rest and closes the run, returning its name and
// size; on error the run is removed.
func (w *runWriter) finish() (string, int64, error) {
	if err := w.flush(); err != nil {
		return "", 0, err
	}
	size := int64(-1)
	if st, err := w.f.Stat(); err == nil {
		size = st.Size()
	}
	if err := w.f.Close(); err != nil {
		os.Remove(w.f.Name())
		return "", 0, fmt.Errorf("extsort: spill %s: %w", w.f.Name(), err)
	}
	return w.f.Name(), max(size, 0), nil
}

func (w *runWriter) abort() {
	w.f.Close()
	os.Remove(w.f.Name())
}

// openRuns opens the run files names for reading, in order; on an error it
// closes those it opened (the runs stay, for the caller to remove).
func openRuns(names []string) ([]*os.File, error) {
	files := make([]*os.File, 0, len(names))
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			return nil, fmt.Errorf("extsort: %w", err)
		}
		files = append(files, f)
	}
	return files, nil
}

// removeRuns removes run files, ignoring those already gone; it returns
// the first other error.
func removeRuns(names []string) error {
	var first error
	for _, name := range names {
		if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) && first == nil {
			first = fmt.Errorf("extsort: %w", err)
		}
	}
	return first
}

// Close removes the runs spilled so far and drops the buffer, for a Sorter
// abandoned before Iter (after Iter the Iterator owns the runs). It may be
// called more than once; the Sorter is unusable afterwards.
func (s *Sorter) Close() error {
	err := removeRuns(s.runs)
	s.buf, s.scratch, s.runs = nil, nil, nil
	return err
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
	it.srcs = []*source{{mem: s.buf}}
	files, err := openRuns(s.runs)
	if err != nil {
		it.Close()
		return nil, err
	}
	it.files = files
	for _, f := range files {
		it.srcs = append(it.srcs, &source{f: f, r: bufio.NewReaderSize(f, 1<<16)})
	}
	s.buf, s.scratch, s.runs = nil, nil, nil
	it.tree = kmerge.New(len(it.srcs), nil)
	for i, src := range it.srcs {
		v, err := src.Next()
		if err != nil && !errors.Is(err, io.EOF) {
			it.Close()
			return nil, err
		}
		it.tree.Set(i, v, err == nil)
	}
	it.tree.Init()
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
	srcs   []*source    // the runs and the in-memory remainder, when some were spilled
	tree   *kmerge.Tree // their merge: the values are the keys
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
	if it.tree == nil || it.err != nil {
		return 0, false
	}
	for {
		w, ok := it.tree.Winner()
		if !ok {
			return 0, false
		}
		v := it.tree.Top()
		next, err := it.srcs[w].Next()
		if err != nil && !errors.Is(err, io.EOF) {
			it.err = err
			return 0, false
		}
		it.tree.Replace(next, err == nil)
		if it.unique && it.any && v == it.last {
			continue
		}
		it.last, it.any = v, true
		return v, true
	}
}

// Err returns the first error met while reading runs.
func (it *Iterator) Err() error { return it.err }

// Close closes and removes the runs.
func (it *Iterator) Close() error {
	for _, f := range it.files {
		f.Close()
	}
	err := removeRuns(it.runs)
	it.files, it.runs = nil, nil
	return err
}
