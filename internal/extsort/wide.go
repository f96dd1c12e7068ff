package extsort

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/neardup/neardup/internal/kmerge"
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
// and yields them sorted by key, then document, spilling runs to disk. It
// holds at most about 2·limit entries (16 bytes each) in memory, what
// Sorter's limit and sort scratch take.
//
// Entries go into chunks of at most wideChunk entries, each sorted in place
// by a goroutine of its own as soon as it is full, while the next one
// fills; once the chunks add up to limit − limit/64 entries, that goroutine
// merges them into a run on disk while the next run's chunks fill. So a
// run holds the same entries whatever the chunk size, and the sorting is
// done in the background whether the entries end up on disk or not: with
// a budget larger than the corpus, the chunks stay in memory and are
// merged at the end, where a single buffer would be sorted then, on one
// core. Add waits only when the chunk or run before is still being sorted
// or written when the next chunk is full.
//
// A run on disk is, per entry, the uvarint of the key's increase over the
// previous entry's and the uvarint of the document. A WideSorter is not safe
// for concurrent use; its output is deterministic: the sorted multiset of
// what was added, whatever the limit.
type WideSorter struct {
	dir     string
	prefix  string
	limit   int      // entries a run holds
	chunk   int      // entries a chunk holds
	buf     []Wide   // the chunk being filled
	sorted  [][]Wide // the current run's chunks sorted so far
	held    int      // entries of the current run in sorted and in flight
	free    [][]Wide // chunks of runs written, for reuse
	scratch []Wide
	flight  chan wideJob // the job in flight, if busy
	busy    bool
	err     error // the first spill error
	runs    []string
	index   []runIndex // each run's index, as runs
	bytes   int64
	count   int64
}

// wideChunk is the most entries a WideSorter's chunk holds (128 MiB):
// at --memory 1GiB a run is one chunk, so it is written without a merge.
const wideChunk = 1 << 23

// wideJob is the background goroutine's work: sort a chunk, or sort the
// last of a run's chunks and write the run; it comes back with the chunks
// and the run written.
type wideJob struct {
	chunks [][]Wide // the last unsorted
	write  bool
	name   string
	size   int64
	index  runIndex
	err    error
}

// NewWide returns a WideSorter that holds at most about 2·limit entries in
// memory and spills runs into dir (os.TempDir() if empty) with file names
// starting with prefix.
func NewWide(dir, prefix string, limit int) *WideSorter {
	limit = max(limit, 1024)
	limit -= limit / 64
	return &WideSorter{dir: dir, prefix: prefix, limit: limit, chunk: min(limit, wideChunk), flight: make(chan wideJob, 1)}
}

// Add adds entries given as pairs of words, key then document (what
// sketch.AppendKeyEntries makes for wide keys); the document word must be
// below 1<<32. It may start sorting a chunk or writing a run, and wait for
// the one before; it returns the error of an earlier spill, if any. It
// panics on an odd number of words.
func (s *WideSorter) Add(words ...uint64) error {
	if len(words)%2 != 0 {
		panic("extsort: WideSorter.Add of an odd number of words")
	}
	if s.err != nil {
		return s.err
	}
	for i := 0; i < len(words); i += 2 {
		if len(s.buf) == cap(s.buf) {
			s.grow()
		}
		s.buf = append(s.buf, Wide{Key: words[i], Doc: uint32(words[i+1])})
		if s.held+len(s.buf) >= s.limit {
			if err := s.hand(true); err != nil {
				return err
			}
		} else if len(s.buf) >= s.chunk {
			if err := s.hand(false); err != nil {
				return err
			}
		}
	}
	s.count += int64(len(words) / 2)
	return nil
}

// grow doubles the first chunk up to the chunk size (see Sorter.grow);
// a later one is a chunk of a run written, or made full size: once a chunk
// has filled, the entries are not few.
func (s *WideSorter) grow() {
	if len(s.buf) == 0 && len(s.free) > 0 {
		s.buf = s.free[len(s.free)-1][:0]
		s.free = s.free[:len(s.free)-1]
		return
	}
	c := min(s.chunk, max(2*cap(s.buf), 1<<15))
	if s.busy || s.held > 0 || len(s.runs) > 0 {
		c = s.chunk
	}
	b := make([]Wide, len(s.buf), c)
	copy(b, s.buf)
	s.buf = b
}

// Len is the number of entries added.
func (s *WideSorter) Len() int64 { return s.count }

// Runs is the number of runs spilled so far. It waits for a spill in
// flight (whose error the next Add or Iter returns).
func (s *WideSorter) Runs() int {
	s.wait()
	return len(s.runs)
}

// SpilledBytes is how many bytes of runs were written to disk. It waits
// for a spill in flight (whose error the next Add or Iter returns).
func (s *WideSorter) SpilledBytes() int64 {
	s.wait()
	return s.bytes
}

// hand gives the full chunk to a goroutine that sorts it and, with write,
// merges it with the run's other chunks into a run on disk, after waiting
// for the job before; Add goes on with another chunk.
func (s *WideSorter) hand(write bool) error {
	if err := s.wait(); err != nil {
		return err
	}
	if s.scratch == nil {
		s.scratch = make([]Wide, s.chunk/32)
	}
	j := wideJob{write: write}
	if write {
		j.chunks = append(s.sorted, s.buf)
		s.sorted, s.held = nil, 0
	} else {
		j.chunks = [][]Wide{s.buf}
		s.held += len(s.buf)
	}
	s.buf = nil
	s.busy = true
	go func() {
		sortWideInPlace(j.chunks[len(j.chunks)-1], s.scratch)
		if j.write {
			j.name, j.size, j.index, j.err = writeWideRun(s.dir, s.prefix, j.chunks)
		}
		s.flight <- j
	}()
	return nil
}

// wait waits for the job in flight, if any, and takes its chunks back.
func (s *WideSorter) wait() error {
	if !s.busy {
		return s.err
	}
	j := <-s.flight
	s.busy = false
	if !j.write {
		s.sorted = append(s.sorted, j.chunks[0])
		return s.err
	}
	for _, c := range j.chunks {
		s.free = append(s.free, c[:0])
	}
	if j.err != nil && s.err == nil {
		s.err = j.err
	}
	if j.err == nil {
		s.runs = append(s.runs, j.name)
		s.index = append(s.index, j.index)
		s.bytes += j.size
	}
	return s.err
}

// indexPoint is where an entry of a run starts: its byte offset, its key
// and the key before it (the base of its delta), so that reading can start
// there. A run's index, kept in memory beside the run (the file's format is
// unchanged), holds one entry in indexSpacing(len(run)), the first one
// included, and serves as a sample of its keys too (WideSorter.IterParts).
type indexPoint struct {
	off       int64
	key, prev uint64
}

// runIndex is a run's index: a point every every entries.
type runIndex struct {
	every  int
	points []indexPoint
}

// indexSpacing is the entries between two points of the index of a run of
// n entries: at least 256 points, at most 4096 entries apart (24 bytes of
// index per 64 KiB of entries).
func indexSpacing(n int) int { return min(1<<12, max(1, n/256)) }

// writeWideRun writes the entries of the sorted chunks, merged, as a run
// and returns its index.
func writeWideRun(dir, prefix string, chunks [][]Wide) (string, int64, runIndex, error) {
	w, err := createRun(dir, prefix)
	if err != nil {
		return "", 0, runIndex{}, err
	}
	n := 0
	for _, c := range chunks {
		n += len(c)
	}
	every := indexSpacing(n)
	index := make([]indexPoint, 0, (n+every-1)/every)
	prev := uint64(0)
	i := 0
	add := func(e Wide) error {
		if len(w.buf) > cap(w.buf)-maxWideBytes {
			if err := w.flush(); err != nil {
				return err
			}
		}
		if i%every == 0 {
			index = append(index, indexPoint{off: w.off + int64(len(w.buf)), key: e.Key, prev: prev})
		}
		i++
		w.buf = binary.AppendUvarint(w.buf, e.Key-prev)
		w.buf = binary.AppendUvarint(w.buf, uint64(e.Doc))
		prev = e.Key
		return nil
	}
	if len(chunks) == 1 {
		for _, e := range chunks[0] {
			if err := add(e); err != nil {
				return "", 0, runIndex{}, err
			}
		}
	} else {
		var t loserTree
		srcs := make([]*wideRun, len(chunks))
		for k, c := range chunks {
			srcs[k] = &wideRun{mem: c}
		}
		t.init(srcs) // in memory: no error
		for e, ok, _ := t.pop(); ok; e, ok, _ = t.pop() {
			if err := add(e); err != nil {
				return "", 0, runIndex{}, err
			}
		}
	}
	name, size, err := w.finish()
	return name, size, runIndex{every: every, points: index}, err
}

// maxWideBytes is the most bytes an entry takes in a run: a 64-bit and a
// 32-bit uvarint.
const maxWideBytes = binary.MaxVarintLen64 + 5

// Close waits for a spill in flight, removes the runs spilled so far and
// drops the buffers, for a WideSorter abandoned before Iter. It may be
// called more than once.
func (s *WideSorter) Close() error {
	s.wait()
	err := removeRuns(s.runs)
	s.release()
	return err
}

// sortWideInPlace sorts a by key, then document, with a scratch b that may
// be much shorter than a: an in-place MSD radix sort (American flag sort)
// of the key's high 32 bits down to parts that fit in b, each finished by
// an LSD radix sort through b (sortHigh), then slices.SortFunc over each
// run of entries equal in those bits, which for random 64-bit keys is of
// one entry or two. Sorting on the high 32 bits only, as lsh.SortEntries
// does: sorting on all eight bytes would move the 16-byte entries twice as
// often.
func sortWideInPlace(a, b []Wide) {
	if len(a) < 256 {
		slices.SortFunc(a, compareWide)
		return
	}
	sortHigh(a, b, 56)
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

// sortHigh sorts a, whose keys are equal above bit shift+8, by the key's
// bits 32 to shift+8 (shift is 32, 40, 48 or 56). A part that fits in the
// scratch b is LSD radix sorted through it; a larger one is partitioned in
// place on the byte at shift, and each partition sorted in turn.
func sortHigh(a, b []Wide, shift uint) {
	switch {
	case len(a) < 64:
		// Insertion sort on the high 32 bits: the caller sorts equal ones.
		for i := 1; i < len(a); i++ {
			e := a[i]
			j := i
			for j > 0 && a[j-1].Key>>32 > e.Key>>32 {
				a[j] = a[j-1]
				j--
			}
			a[j] = e
		}
		return
	case len(a) <= len(b):
		lsdHigh(a, b[:len(a)], shift)
		return
	}
	var count [256]int
	for _, e := range a {
		count[e.Key>>shift&0xff]++
	}
	var next, end [256]int
	pos := 0
	for d, c := range count {
		next[d] = pos
		pos += c
		end[d] = pos
	}
	for d := range 256 {
		for next[d] < end[d] {
			e := a[next[d]]
			// Carry e to its partition, taking the entry there, until
			// an entry of partition d turns up.
			for x := int(e.Key >> shift & 0xff); x != d; x = int(e.Key >> shift & 0xff) {
				a[next[x]], e = e, a[next[x]]
				next[x]++
			}
			a[next[d]] = e
			next[d]++
		}
	}
	if shift == 32 {
		return
	}
	lo := 0
	for d := range 256 {
		if end[d]-lo > 1 {
			sortHigh(a[lo:end[d]], b, shift-8)
		}
		lo = end[d]
	}
}

// lsdHigh sorts a by the key's bits 32 to shift+8 with an LSD radix sort
// through b (as long as a), skipping bytes equal in every entry.
func lsdHigh(a, b []Wide, shift uint) {
	src, dst := a, b
	for s := uint(32); s <= shift; s += 8 {
		var count [256]int
		for _, e := range src {
			count[e.Key>>s&0xff]++
		}
		if count[src[0].Key>>s&0xff] == len(src) {
			continue // the same byte in every entry
		}
		pos := 0
		for i, c := range count {
			count[i] = pos
			pos += c
		}
		for _, e := range src {
			d := e.Key >> s & 0xff
			dst[count[d]] = e
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &a[0] {
		copy(a, src)
	}
}

// release drops the sorter's chunks, runs and scratch.
func (s *WideSorter) release() {
	s.buf, s.sorted, s.free, s.scratch, s.runs, s.index = nil, nil, nil, nil, nil, nil
}

// Iter returns an iterator over every entry added, by key, then document.
// No more entries may be added afterwards. Close the iterator to remove the
// runs.
func (s *WideSorter) Iter() (*WideIterator, error) {
	p, err := s.IterParts(1, 0)
	if err != nil {
		return nil, err
	}
	it, err := p.Part(0)
	if err != nil {
		p.Close()
		return nil, err
	}
	it.files, it.runs = p.files, p.runs
	return it, nil
}

// wideReadBuf is the bytes of a run read at a time.
const wideReadBuf = 1 << 17

// Errors of a run read back.
var (
	// errRunCut: a run ends inside an entry.
	errRunCut = errors.New("run cut inside an entry")
	// errRunVarint: a uvarint of more than 64 bits, a key past 64 bits or
	// a document past 32.
	errRunVarint = errors.New("value out of range")
)

// wideRun is one sorted run being merged: the in-memory remainder, or a
// run file decoded from a large buffer.
type wideRun struct {
	mem  []Wide
	r    io.Reader
	name string
	buf  []byte // bytes read and not yet decoded: buf[pos:]
	pos  int
	eof  bool
	last uint64 // the last key decoded
}

// next returns the run's next entry; ok is false at its end.
func (w *wideRun) next() (e Wide, ok bool, err error) {
	if w.r == nil {
		if len(w.mem) == 0 {
			return Wide{}, false, nil
		}
		e = w.mem[0]
		w.mem = w.mem[1:]
		return e, true, nil
	}
	if len(w.buf)-w.pos < maxWideBytes && !w.eof {
		if err := w.fill(); err != nil {
			return Wide{}, false, err
		}
	}
	if w.pos == len(w.buf) {
		return Wide{}, false, nil
	}
	d, n := binary.Uvarint(w.buf[w.pos:])
	if n > 0 {
		w.pos += n
		var doc uint64
		doc, n = binary.Uvarint(w.buf[w.pos:])
		if n > 0 && doc <= 1<<32-1 && w.last+d >= w.last {
			w.pos += n
			w.last += d
			return Wide{Key: w.last, Doc: uint32(doc)}, true, nil
		}
	}
	if n == 0 {
		return Wide{}, false, fmt.Errorf("extsort: read run %s: %w", w.name, errRunCut)
	}
	return Wide{}, false, fmt.Errorf("extsort: read run %s: %w", w.name, errRunVarint)
}

// fill moves the undecoded bytes to the front of the buffer and reads more
// after them.
func (w *wideRun) fill() error {
	n := copy(w.buf[:cap(w.buf)], w.buf[w.pos:])
	w.buf, w.pos = w.buf[:n], 0
	for len(w.buf) < cap(w.buf) {
		m, err := w.r.Read(w.buf[len(w.buf):cap(w.buf)])
		w.buf = w.buf[:len(w.buf)+m]
		if errors.Is(err, io.EOF) {
			w.eof = true
			return nil
		}
		if err != nil {
			return fmt.Errorf("extsort: read run %s: %w", w.name, err)
		}
	}
	return nil
}

// loserTree merges runs with a kmerge.Tree: by key, then document, then
// run number.
type loserTree struct {
	runs []*wideRun
	head []Wide // each run's current entry
	t    *kmerge.Tree
}

// init reads each run's first entry and plays the tournament.
func (t *loserTree) init(runs []*wideRun) error {
	t.runs, t.head = runs, make([]Wide, len(runs))
	t.t = kmerge.New(len(runs), func(i, j int) int { return cmp.Compare(t.head[i].Doc, t.head[j].Doc) })
	for i, r := range runs {
		e, ok, err := r.next()
		if err != nil {
			return err
		}
		t.head[i] = e
		t.t.Set(i, e.Key, ok)
	}
	t.t.Init()
	return nil
}

// pop returns the smallest head and replaces it with the next entry of its
// run; ok is false when every run is exhausted.
func (t *loserTree) pop() (e Wide, ok bool, err error) {
	w, ok := t.t.Winner()
	if !ok {
		return Wide{}, false, nil
	}
	e = t.head[w]
	n, more, err := t.runs[w].next()
	if err != nil {
		return Wide{}, false, err
	}
	t.head[w] = n
	t.t.Replace(n.Key, more)
	return e, true, nil
}

// WideIterator yields the sorted entries of a WideSorter. Not safe for
// concurrent use.
type WideIterator struct {
	mem   []Wide // when nothing was spilled
	pos   int
	tree  loserTree // of the runs and the in-memory remainder, when some were spilled
	files []*os.File
	runs  []string
	last  Wide
	err   error
}

// Next returns the next entry, or false at the end or on error (see Err).
func (it *WideIterator) Next() (Wide, bool) {
	if it.tree.runs == nil {
		if it.pos == len(it.mem) {
			return Wide{}, false
		}
		it.last = it.mem[it.pos]
		it.pos++
		return it.last, true
	}
	if it.err != nil {
		return Wide{}, false
	}
	e, ok, err := it.tree.pop()
	if err != nil {
		it.err = err
		return Wide{}, false
	}
	if ok {
		it.last = e
	}
	return e, ok
}

// Last returns the entry Next returned last (the zero Wide before the
// first).
func (it *WideIterator) Last() Wide { return it.last }

// Err returns the first error met while reading runs.
func (it *WideIterator) Err() error { return it.err }

// Close closes and removes the runs.
func (it *WideIterator) Close() error {
	for _, f := range it.files {
		f.Close()
	}
	err := removeRuns(it.runs)
	it.files, it.runs, it.mem, it.tree = nil, nil, nil, loserTree{}
	return err
}
