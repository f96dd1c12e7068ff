package extsort

import (
	"bufio"
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// Wide is a band-key entry with a key of up to 64 bits: the batch driver's
// entry when bucket keys are wider than 32 bits (sketch.WideKeys). Entries
// sort by Key, then Doc.
type Wide struct {
	Key uint64
	Doc uint32
}

// compareWide orders entries by key, then document.
func compareWide(a, b Wide) int {
	if c := cmp.Compare(a.Key, b.Key); c != 0 {
		return c
	}
	return cmp.Compare(a.Doc, b.Doc)
}

// WideSorter is Sorter for Wide entries: it collects (key, document) pairs
// and yields them sorted by key, then document, spilling runs of at most
// limit entries (16 bytes each in memory, plus as much again of sorting
// scratch). A run on disk is, per entry, the uvarint of the key's increase
// over the previous entry's and the uvarint of the document. It is not safe
// for concurrent use; its output is deterministic: the sorted multiset of
// what was added, whatever the limit.
type WideSorter struct {
	dir     string
	prefix  string
	limit   int
	buf     []Wide
	scratch []Wide
	runs    []string
	spilled int64
	count   int64
}

// NewWide returns a WideSorter that holds at most limit entries in memory
// and spills runs into dir (os.TempDir() if empty) with file names starting
// with prefix.
func NewWide(dir, prefix string, limit int) *WideSorter {
	return &WideSorter{dir: dir, prefix: prefix, limit: max(limit, 1024)}
}

// Add adds entries given as pairs of words, key then document (what
// sketch.AppendKeyEntries makes for wide keys); the document word must be
// below 1<<32. It may spill a run to disk; it panics on an odd number of
// words.
func (s *WideSorter) Add(words ...uint64) error {
	if len(words)%2 != 0 {
		panic("extsort: WideSorter.Add of an odd number of words")
	}
	for i := 0; i < len(words); i += 2 {
		if len(s.buf) == cap(s.buf) {
			s.grow()
		}
		s.buf = append(s.buf, Wide{Key: words[i], Doc: uint32(words[i+1])})
		if len(s.buf) >= s.limit {
			if err := s.spill(); err != nil {
				return err
			}
		}
	}
	s.count += int64(len(words) / 2)
	return nil
}

// grow doubles the buffer up to the limit (see Sorter.grow).
func (s *WideSorter) grow() {
	c := min(s.limit, max(2*cap(s.buf), 1<<15))
	b := make([]Wide, len(s.buf), c)
	copy(b, s.buf)
	s.buf = b
}

// Len is the number of entries added.
func (s *WideSorter) Len() int64 { return s.count }

// Runs is the number of runs spilled so far.
func (s *WideSorter) Runs() int { return len(s.runs) }

// SpilledBytes is how many bytes of runs were written to disk.
func (s *WideSorter) SpilledBytes() int64 { return s.spilled }

func (s *WideSorter) sortBuf() {
	if cap(s.scratch) < len(s.buf) {
		s.scratch = make([]Wide, len(s.buf))
	}
	sortWide(s.buf, s.scratch[:len(s.buf)])
}

// sortWide sorts a by key, then document, with scratch b of the same
// length: an LSD radix sort on the key's high 32 bits (four byte passes,
// skipping bytes equal in every key), then slices.SortFunc over each run of
// entries equal in those bits, which for random 64-bit keys is of one
// entry or two. The shape is lsh.SortEntries'; sorting on all eight bytes
// would move the 16-byte entries twice as often.
func sortWide(a, b []Wide) {
	if len(a) < 256 {
		slices.SortFunc(a, compareWide)
		return
	}
	var and, or uint64 = ^uint64(0), 0
	for _, e := range a {
		and &= e.Key
		or |= e.Key
	}
	varying := and ^ or
	src, dst := a, b
	for shift := uint(32); shift < 64; shift += 8 {
		if varying>>shift&0xff == 0 {
			continue
		}
		var count [256]int
		for _, e := range src {
			count[e.Key>>shift&0xff]++
		}
		pos := 0
		for i, c := range count {
			count[i] = pos
			pos += c
		}
		for _, e := range src {
			d := e.Key >> shift & 0xff
			dst[count[d]] = e
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &a[0] {
		copy(a, src)
	}
	for i := 0; i < len(a); {
		hi := a[i].Key >> 32
		j := i + 1
		for j < len(a) && a[j].Key>>32 == hi {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(a[i:j], compareWide)
		}
		i = j
	}
}

func (s *WideSorter) spill() error {
	s.sortBuf()
	f, err := os.CreateTemp(s.dir, s.prefix+"-run-*")
	if err != nil {
		return fmt.Errorf("extsort: spill: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var tmp [2 * binary.MaxVarintLen64]byte
	prev := uint64(0)
	for _, e := range s.buf {
		n := binary.PutUvarint(tmp[:], e.Key-prev)
		n += binary.PutUvarint(tmp[n:], uint64(e.Doc))
		prev = e.Key
		if _, err := w.Write(tmp[:n]); err != nil {
			f.Close()
			return fmt.Errorf("extsort: spill %s: %w", f.Name(), err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("extsort: spill %s: %w", f.Name(), err)
	}
	if st, _ := f.Stat(); st != nil {
		s.spilled += st.Size()
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("extsort: spill %s: %w", f.Name(), err)
	}
	s.runs = append(s.runs, f.Name())
	s.buf = s.buf[:0]
	return nil
}

// Close removes the runs spilled so far and drops the buffer, for a
// WideSorter abandoned before Iter. It may be called more than once.
func (s *WideSorter) Close() error {
	var first error
	for _, name := range s.runs {
		if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) && first == nil {
			first = fmt.Errorf("extsort: %w", err)
		}
	}
	s.buf, s.scratch, s.runs = nil, nil, nil
	return first
}

// Iter returns an iterator over every entry added, by key, then document.
// No more entries may be added afterwards. Close the iterator to remove the
// runs.
func (s *WideSorter) Iter() (*WideIterator, error) {
	s.sortBuf()
	it := &WideIterator{runs: s.runs}
	srcs := []*wideSource{{mem: s.buf}}
	for _, name := range s.runs {
		f, err := os.Open(name)
		if err != nil {
			it.Close()
			return nil, fmt.Errorf("extsort: %w", err)
		}
		it.files = append(it.files, f)
		srcs = append(srcs, &wideSource{f: f, r: bufio.NewReaderSize(f, 1<<16)})
	}
	s.buf, s.scratch, s.runs = nil, nil, nil
	for _, src := range srcs {
		ok, err := src.next()
		if err != nil {
			it.Close()
			return nil, err
		}
		if ok {
			it.heap = append(it.heap, src)
		}
	}
	heap.Init(&it.heap)
	return it, nil
}

// wideSource is one sorted run: the in-memory remainder or a file.
type wideSource struct {
	mem  []Wide
	pos  int
	f    *os.File
	r    *bufio.Reader
	head Wide
}

// next loads the run's next entry into head; false at its end.
func (s *wideSource) next() (bool, error) {
	if s.r == nil {
		if s.pos >= len(s.mem) {
			return false, nil
		}
		s.head = s.mem[s.pos]
		s.pos++
		return true, nil
	}
	d, err := binary.ReadUvarint(s.r)
	if errors.Is(err, io.EOF) {
		return false, nil
	}
	var doc uint64
	if err == nil {
		doc, err = binary.ReadUvarint(s.r)
	}
	if err != nil {
		return false, fmt.Errorf("extsort: read run %s: %w", s.f.Name(), err)
	}
	s.head = Wide{Key: s.head.Key + d, Doc: uint32(doc)}
	return true, nil
}

// wideHeap orders runs by their head entry.
type wideHeap []*wideSource

func (h wideHeap) Len() int           { return len(h) }
func (h wideHeap) Less(i, j int) bool { return compareWide(h[i].head, h[j].head) < 0 }
func (h wideHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *wideHeap) Push(x any)        { *h = append(*h, x.(*wideSource)) }
func (h *wideHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// WideIterator yields the sorted entries of a WideSorter. Not safe for
// concurrent use.
type WideIterator struct {
	heap  wideHeap
	files []*os.File
	runs  []string
	last  Wide
	err   error
}

// Next returns the next entry, or false at the end or on error (see Err).
func (it *WideIterator) Next() (Wide, bool) {
	if len(it.heap) == 0 || it.err != nil {
		return Wide{}, false
	}
	top := it.heap[0]
	e := top.head
	ok, err := top.next()
	switch {
	case err != nil:
		it.err = err
		return Wide{}, false
	case ok:
		heap.Fix(&it.heap, 0)
	default:
		heap.Pop(&it.heap)
	}
	it.last = e
	return e, true
}

// Last returns the entry Next returned last (the zero Wide before the
// first).
func (it *WideIterator) Last() Wide { return it.last }

// Err returns the first error met while reading runs.
func (it *WideIterator) Err() error { return it.err }

// Close closes and removes the runs.
func (it *WideIterator) Close() error {
	var first error
	for _, f := range it.files {
		f.Close()
	}
	for _, name := range it.runs {
		if err := os.Remove(name); err != nil && first == nil {
			first = err
		}
	}
	it.files, it.runs, it.heap = nil, nil, nil
	return first
}
