package extsort

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/neardup/neardup/internal/kmerge"
)

// Record is a sort key of two words with a payload of two words: the batch
// driver's verified pair (key: the two documents, or their ranks; payload:
// the verdict's similarities as float64 bits). Records sort by Key[0], then
// Key[1], then Val[0], then Val[1], so the order of equal keys is defined.
type Record struct {
	Key [2]uint64
	Val [2]uint64
}

// RecordBytes is what a Record costs in a RecordSorter's buffer.
const RecordBytes = 32

// CompareRecords orders records by key, then payload. It returns -1, 0 or +1.
func CompareRecords(a, b Record) int {
	if c := cmp.Compare(a.Key[0], b.Key[0]); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Key[1], b.Key[1]); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Val[0], b.Val[0]); c != 0 {
		return c
	}
	return cmp.Compare(a.Val[1], b.Val[1])
}

// RecordSorter is Sorter for Records: it collects them and yields them in
// CompareRecords order, spilling runs of at most limit records (32 bytes
// each in memory; the sort is in place). A run on disk is, per record, the
// uvarint of Key[0]'s increase over the previous record's, the uvarint of
// Key[1] and the payload's two words (8 bytes each, little-endian). It is
// not safe for concurrent use; its output is deterministic: the sorted
// multiset of what was added, whatever the limit.
type RecordSorter struct {
	dir     string
	prefix  string
	limit   int
	buf     []Record
	runs    []string
	spilled int64
	count   int64
}

// NewRecords returns a RecordSorter that holds at most limit records (at
// least 1024) in memory and spills runs into dir (os.TempDir() if empty)
// with file names starting with prefix.
func NewRecords(dir, prefix string, limit int) *RecordSorter {
	return &RecordSorter{dir: dir, prefix: prefix, limit: max(limit, 1024)}
}

// Add adds a record. It may spill a run to disk.
func (s *RecordSorter) Add(r Record) error {
	if len(s.buf) == cap(s.buf) {
		// Double up to the limit (see Sorter.grow).
		b := make([]Record, len(s.buf), min(s.limit, max(2*cap(s.buf), 1<<12)))
		copy(b, s.buf)
		s.buf = b
	}
	s.buf = append(s.buf, r)
	s.count++
	if len(s.buf) >= s.limit {
		return s.spill()
	}
	return nil
}

// Len is the number of records added.
func (s *RecordSorter) Len() int64 { return s.count }

// Runs is the number of runs spilled so far.
func (s *RecordSorter) Runs() int { return len(s.runs) }

// SpilledBytes is how many bytes of runs were written to disk.
func (s *RecordSorter) SpilledBytes() int64 { return s.spilled }

func (s *RecordSorter) spill() error {
	slices.SortFunc(s.buf, CompareRecords)
	f, err := os.CreateTemp(s.dir, s.prefix+"-run-*")
	if err != nil {
		return fmt.Errorf("extsort: spill: %w", err)
	}
	s.runs = append(s.runs, f.Name())
	w := bufio.NewWriterSize(f, 1<<20)
	var tmp [2*binary.MaxVarintLen64 + 16]byte
	prev := uint64(0)
	for _, r := range s.buf {
		n := binary.PutUvarint(tmp[:], r.Key[0]-prev)
		n += binary.PutUvarint(tmp[n:], r.Key[1])
		binary.LittleEndian.PutUint64(tmp[n:], r.Val[0])
		binary.LittleEndian.PutUint64(tmp[n+8:], r.Val[1])
		prev = r.Key[0]
		if _, err := w.Write(tmp[:n+16]); err != nil {
			f.Close()
			return fmt.Errorf("extsort: spill %s: %w", f.Name(), err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("extsort: spill %s: %w", f.Name(), err)
	}
	if st, err := f.Stat(); err == nil {
		s.spilled += st.Size()
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("extsort: spill %s: %w", f.Name(), err)
	}
	s.buf = s.buf[:0]
	return nil
}

// Close removes the runs spilled so far and drops the buffer, for a
// RecordSorter abandoned before Iter. It may be called more than once.
func (s *RecordSorter) Close() error {
	err := removeRuns(s.runs)
	s.buf, s.runs = nil, nil
	return err
}

// Iter returns an iterator over every record added, in CompareRecords
// order. No more records may be added afterwards. Close the iterator to
// remove the runs.
func (s *RecordSorter) Iter() (*RecordIterator, error) {
	slices.SortFunc(s.buf, CompareRecords)
	it := &RecordIterator{runs: s.runs}
	it.srcs = append(it.srcs, &recordSource{mem: s.buf})
	files, err := openRuns(s.runs)
	if err != nil {
		it.Close()
		return nil, err
	}
	it.files = files
	for _, f := range files {
		it.srcs = append(it.srcs, &recordSource{f: f, r: bufio.NewReaderSize(f, 1<<16)})
	}
	s.buf, s.runs = nil, nil
	it.tree = kmerge.New(len(it.srcs), func(i, j int) int { return CompareRecords(it.srcs[i].head, it.srcs[j].head) })
	for i, src := range it.srcs {
		ok, err := src.next()
		if err != nil {
			it.Close()
			return nil, err
		}
		it.tree.Set(i, src.head.Key[0], ok)
	}
	it.tree.Init()
	return it, nil
}

// recordSource is a sorted run: the in-memory remainder, or a file.
type recordSource struct {
	mem  []Record
	pos  int
	f    *os.File
	r    *bufio.Reader
	prev uint64
	head Record
}

// next loads the source's next record into head; false at its end.
func (s *recordSource) next() (bool, error) {
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
	if err != nil {
		return false, fmt.Errorf("extsort: read run %s: %w", s.f.Name(), err)
	}
	k1, err := binary.ReadUvarint(s.r)
	var v [16]byte
	if err == nil {
		_, err = io.ReadFull(s.r, v[:])
	}
	if err != nil {
		return false, fmt.Errorf("extsort: read run %s: %w", s.f.Name(), noEOF(err))
	}
	s.prev += d
	s.head = Record{Key: [2]uint64{s.prev, k1}, Val: [2]uint64{binary.LittleEndian.Uint64(v[:]), binary.LittleEndian.Uint64(v[8:])}}
	return true, nil
}

// noEOF turns an end of file inside a record into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// RecordIterator yields the sorted records. Not safe for concurrent use.
type RecordIterator struct {
	srcs  []*recordSource
	tree  *kmerge.Tree // by Key[0], then CompareRecords
	files []*os.File
	runs  []string
	err   error
}

// Next returns the next record, or false at the end or on error (see Err).
func (it *RecordIterator) Next() (Record, bool) {
	if it.tree == nil || it.err != nil {
		return Record{}, false
	}
	w, ok := it.tree.Winner()
	if !ok {
		return Record{}, false
	}
	src := it.srcs[w]
	r := src.head
	ok, err := src.next()
	if err != nil {
		it.err = err
		return Record{}, false
	}
	it.tree.Replace(src.head.Key[0], ok)
	return r, true
}

// Err returns the first error met while reading runs.
func (it *RecordIterator) Err() error { return it.err }

// Close closes and removes the runs.
func (it *RecordIterator) Close() error {
	var first error
	for _, f := range it.files {
		f.Close()
	}
	for _, name := range it.runs {
		if err := os.Remove(name); err != nil && first == nil {
			first = fmt.Errorf("extsort: %w", err)
		}
	}
	it.files, it.runs, it.srcs, it.tree = nil, nil, nil, nil
	return first
}
