package extsort

import (
	"context"
	"fmt"
	"io"
	"math/bits"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sync/semaphore"
)

// Partitions is the number of key ranges a Partitioned store splits its
// entries into: one for each value of the key's top byte.
const Partitions = 256

// Partitioned collects (key, document) entries like WideSorter, but does not
// sort them as they come: it scatters them by the key's top byte into
// Partitions key ranges (a "grace" hash-join layout), and sorts each range
// only when it is read, in memory, on the goroutine that reads it. Ranges
// stay in memory while the entries fit in the budget; past it, the range
// holding the most memory is spilled: its entries, and from then on every
// entry added to it, are appended in arrival order to one shared spill file
// (segments of up to partMaxBlock words, staged in a block of the range). So no
// entry is sorted while adding, none is written more than once, and none
// read back more than once; most keys being unique, a k-way merge of sorted
// runs compared each entry log2(runs) times for nothing. Entries are held,
// in memory and in the spill file alike, in words of 8 bytes, mostly (the
// key's low 7 bytes and the difference from the range's document before;
// see wordEscape), twice as many in the budget as 16-byte Wide entries.
//
// Reading (Range) loads a range whole (its blocks in memory, or its
// segments read back), decodes it, sorts it by key, then document (a stable LSD radix
// sort on the key's bits 32 to 55, then a sort of each run of entries equal
// in the high 32 bits, which for random keys is of one entry or two), and
// yields it. A range too large to sort within the reading share of the
// budget falls back to a WideSorter of its own (skew: one key shared by
// millions of entries, or a tiny budget).
//
// Add stages each range's last words, up to a cache line of them
// (lineWords), and stores them in the range's block a line at once;
// Range, Runs and SpilledBytes first move those still staged to their
// ranges, which may spill.
//
// Its output is deterministic: the sorted multiset of what was added,
// whatever the budget; which ranges spill depends only on the entries
// added, in their order, and on the hold (Grow) when each was added. Add
// is not safe for concurrent use (Grow is); Range iterators over disjoint
// ranges may be read on goroutines of their own.
type Partitioned struct {
	dir, prefix string
	hold        int64        // bytes of blocks held while adding
	grow        atomic.Int64 // a larger hold, from Grow, that Add takes up when a range is full
	sortMem     int64        // bytes the reading iterators may hold at once
	stage       int          // words a spilled range stages before writing them
	parts       [Partitions]partition
	cur         [Partitions][]uint64          // each range's block being filled, or its words staged
	line        [Partitions][lineWords]uint64 // each range's last words, a line's worth at most (Add)
	lines       [Partitions]uint8             // words in line
	prev        [Partitions]uint32            // each range's last document added: the next one's delta's base
	drainMu     sync.Mutex                    // held by drain, which Range may call on several goroutines
	held        int64                         // bytes of blocks held now
	pool        blockPool                     // where blocks come from, and go back to after a spill
	maxSeg      int                           // the longest segment written, in bytes
	f           *os.File
	unlinked    bool  // f's name was removed once made (Close)
	off         int64 // bytes written to f
	spilled     int   // ranges that wrote segments
	count       int64
	err         error
	sem         *semaphore.Weighted
}

// partition is one key range: its entries' words in memory blocks, in the
// order added, or (once spilled) in segments of the spill file, then those
// staged in its Partitioned.cur (apart, so that Add touches 6 KiB of
// slice headers, not every partition).
type partition struct {
	blocks [][]uint64 // full blocks
	mem    int64      // words the blocks and cur can hold
	n      int        // words in blocks and segments (not cur)
	spill  bool
	segs   []segment
}

// segment is a run of a range's words in the spill file.
type segment struct {
	off int64
	n   int // bytes
}

// The words a range's entries are held in, in memory and in the spill
// file alike: an entry is one word, the key's low 7 bytes (the top byte is
// the range's) with, in the top byte, the zigzag of the difference between
// its document and the document of the range's entry before it (0 before
// the first), when that zigzag is below wordEscape; else two words, the
// key's low 7 bytes with wordEscape in the top byte, then the document.
// Entries come in document order, mostly (16 bands: differences of 0 or a
// few documents), so an entry takes 8 bytes where a Wide takes 16, and the
// blocks stay arrays of words, written a line at once (storeLine) and
// spilled as they are. The words are decoded once, when the range is read
// (wordDecoder): the keys for the single-key filter, the documents (a
// running sum) as the entries kept are written as Wide for the sort.
const (
	wordEscape = 0xff      // the top byte of an entry whose document is the next word
	keyMask    = 1<<56 - 1 // a word's key bits
	maxDoc     = 1<<32 - 1 // the largest document
)

// lineWords is how many words Add stages for a range before storing them
// in its block together: a cache line of 64 bytes, written at once
// (storeLine), so that the scatter into 256 blocks, none of whose lines is
// cached, neither reads each line before writing it nor evicts what is
// cached. Every block holds a multiple of it.
const lineWords = 8

// Block sizes of a range in memory, in words: the first block is small,
// for corpora that give a range few entries; each next one twice the one
// before, up to partMaxBlock (64 KiB), so that a range holds at most one
// partly filled block of that size. A spilled range stages up to
// partMaxBlock words before writing them as a segment.
const (
	partMinBlock = 1 << 5
	partMaxBlock = 1 << 13
)

// NewPartitioned returns a Partitioned store that holds at most about
// budget bytes: three quarters for the ranges while adding (entries of 8
// bytes, mostly, in memory blocks, and those staged by spilled ranges), a
// quarter for the ranges being sorted while reading. It spills into one
// file in dir (os.TempDir() if empty) whose name starts with prefix.
func NewPartitioned(dir, prefix string, budget int64) *Partitioned {
	budget = max(budget, 1<<20)
	sortMem := budget / 4
	hold := budget - sortMem
	stage := int(min(max(hold/(4*8*Partitions), partMinBlock), partMaxBlock)) &^ (lineWords - 1)
	return &Partitioned{dir: dir, prefix: prefix, hold: hold, sortMem: sortMem, stage: stage, pool: newBlockPool(hold), sem: semaphore.NewWeighted(sortMem)}
}

// Grow lets the store hold up to hold bytes of blocks while adding, if that
// is more than it may now (three quarters of NewPartitioned's budget, or an
// earlier Grow's): for a caller that learns, once adding has begun, that
// its budget leaves the entries more room than it first gave them. The
// reading share stays as it was; ranges already spilled stay spilled. It
// may be called while another goroutine adds; Add takes the new hold up
// the next time a range needs a block.
func (s *Partitioned) Grow(hold int64) {
	for {
		old := s.grow.Load()
		if hold <= old || s.grow.CompareAndSwap(old, hold) {
			return
		}
	}
}

// Add adds entries given as pairs of words, key then document (what
// sketch.AppendKeyEntries makes for wide keys); the document word must be
// below 1<<32 (its low 32 bits are taken). It may spill ranges; it
// returns the error of an earlier spill, if any. It panics on an odd
// number of words.
func (s *Partitioned) Add(words ...uint64) error {
	if len(words)%2 != 0 {
		panic("extsort: Partitioned.Add of an odd number of words")
	}
	if s.err != nil {
		return s.err
	}
	for i := 0; i < len(words); i += 2 {
		k, d := words[i], uint32(words[i+1])
		r := k >> 56
		delta := int64(d) - int64(s.prev[r])
		s.prev[r] = d
		z := uint64(delta<<1 ^ delta>>63)
		w := k&keyMask | z<<56
		if z >= wordEscape {
			if err := s.stageWord(r, k|wordEscape<<56); err != nil {
				return err
			}
			w = uint64(d)
		}
		// stageWord's steps, written out: it is not inlined, and this
		// is every entry's path.
		j := s.lines[r] & (lineWords - 1)
		s.line[r][j] = w
		if j < lineWords-1 {
			s.lines[r] = j + 1
			continue
		}
		s.lines[r] = 0
		if err := s.storeStaged(r); err != nil {
			return err
		}
	}
	storeFence()
	s.count += int64(len(words) / 2)
	return nil
}

// stageWord stages the word w for range r, as Add does (the first word of
// an escaped entry).
func (s *Partitioned) stageWord(r, w uint64) error {
	j := s.lines[r] & (lineWords - 1)
	s.line[r][j] = w
	if j < lineWords-1 {
		s.lines[r] = j + 1
		return nil
	}
	s.lines[r] = 0
	return s.storeStaged(r)
}

// storeStaged stores the line of words staged for range r in its block.
func (s *Partitioned) storeStaged(r uint64) error {
	l := &s.line[r]
	c := &s.cur[r]
	if len(*c) == cap(*c) {
		if err := s.full(int(r)); err != nil {
			return err
		}
	}
	n := len(*c)
	if cap(*c)-n < lineWords { // only after drain
		return s.addSlow(int(r), l[:])
	}
	dst := (*c)[n : n+lineWords]
	if p := unsafe.Pointer(&dst[0]); lineAligned(p) {
		storeLine(p, unsafe.Pointer(l))
	} else {
		copy(dst, l[:])
	}
	*c = (*c)[:n+lineWords]
	return nil
}

// addSlow appends the words ws to range r one by one, making room as
// needed.
func (s *Partitioned) addSlow(r int, ws []uint64) error {
	for _, w := range ws {
		c := &s.cur[r]
		if len(*c) == cap(*c) {
			if err := s.full(r); err != nil {
				return err
			}
		}
		*c = append(*c, w)
	}
	return nil
}

// drain moves the words Add staged (line) to their ranges' blocks, so
// that reading, and the counts of what spilled, see every entry. It may
// spill. It is called on reading, perhaps on several goroutines at once
// (Range), and returns the store's error, if any.
func (s *Partitioned) drain() error {
	s.drainMu.Lock()
	defer s.drainMu.Unlock()
	for r, n := range s.lines {
		if n == 0 || s.err != nil {
			continue
		}
		s.lines[r] = 0
		s.addSlow(r, s.line[r][:n]) // an error is s.err
	}
	return s.err
}

// full makes room in range i's cur: writes the words staged by a spilled
// range, or gives an in-memory one a new block, after spilling the ranges
// holding the most memory (i perhaps) while the blocks would exceed the
// budget.
func (s *Partitioned) full(i int) error {
	p, cur := &s.parts[i], &s.cur[i]
	if p.spill {
		if err := s.write(p, *cur); err != nil {
			return err
		}
		p.n += len(*cur)
		*cur = (*cur)[:0]
		return nil
	}
	size := int64(min(max(int(p.mem), partMinBlock), partMaxBlock))
	if g := s.grow.Load(); g > s.hold {
		s.hold = g
	}
	for s.held+8*size > s.hold {
		big := -1
		for j := range s.parts {
			if q := &s.parts[j]; !q.spill && q.mem > 0 && (big < 0 || q.mem > s.parts[big].mem) {
				big = j
			}
		}
		if big < 0 {
			break // only staged words left: go over rather than fail
		}
		if err := s.spillPart(big); err != nil {
			return err
		}
		if big == i {
			return nil
		}
	}
	if *cur != nil {
		p.blocks = append(p.blocks, *cur)
		p.n += len(*cur)
	}
	*cur = s.pool.get(int(size))
	p.mem += size
	s.held += 8 * size
	return nil
}

// spillPart turns range i into a spilled range: its blocks are written as
// they are, and dropped for a block of staged words.
func (s *Partitioned) spillPart(i int) error {
	p, cur := &s.parts[i], &s.cur[i]
	p.spill = true
	for _, b := range append(p.blocks, *cur) {
		if err := s.write(p, b); err != nil {
			return err
		}
	}
	p.n += len(*cur)
	s.held += 8 * (int64(s.stage) - p.mem)
	for _, b := range p.blocks {
		s.pool.put(b)
	}
	if *cur != nil {
		s.pool.put(*cur)
	}
	p.blocks, *cur, p.mem = nil, s.pool.get(s.stage), int64(s.stage)
	return nil
}

// write appends the words ws of p (at most partMaxBlock) to the spill
// file as a segment, as they are in memory (the file is private to the
// process: its byte order is the machine's); the caller counts them in
// p.n.
func (s *Partitioned) write(p *partition, ws []uint64) error {
	if len(ws) == 0 {
		return nil
	}
	if s.f == nil {
		f, err := os.CreateTemp(s.dir, s.prefix+"-parts-*")
		if err != nil {
			s.err = fmt.Errorf("extsort: spill: %w", err)
			return s.err
		}
		s.f = f
		// Unlinked at once where the system allows it (Unix), the file
		// goes when closed, even if the process dies; and Close can
		// leave the freeing of its blocks and cached pages, a tenth of a
		// second for 500 MB, to a goroutine of its own.
		s.unlinked = os.Remove(f.Name()) == nil
	}
	b := wordBytes(ws)
	if _, err := s.f.Write(b); err != nil {
		s.err = fmt.Errorf("extsort: spill %s: %w", s.f.Name(), err)
		return s.err
	}
	if len(p.segs) == 0 {
		s.spilled++
	}
	p.segs = append(p.segs, segment{off: s.off, n: len(b)})
	s.off += int64(len(b))
	s.maxSeg = max(s.maxSeg, len(b))
	return nil
}

// wordBytes returns the bytes of ws (aliasing them), as the spill file
// holds them.
func wordBytes(ws []uint64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(ws))), 8*len(ws))
}

// readWords reads the segment g of the spill file into ws (len(ws) words
// at least), and returns its words.
func (s *Partitioned) readWords(ws []uint64, g segment) ([]uint64, error) {
	if g.n%8 != 0 {
		return nil, fmt.Errorf("extsort: read %s at %d: segment of %d bytes: %w", s.f.Name(), g.off, g.n, errRunCut)
	}
	ws = ws[:g.n/8]
	if _, err := s.f.ReadAt(wordBytes(ws), g.off); err != nil && err != io.EOF {
		return nil, fmt.Errorf("extsort: read %s: %w", s.f.Name(), err)
	}
	return ws, nil
}

// wordDecoder decodes a range's words into entries, in the order added,
// across the blocks or segments that hold them in turn (an escaped entry's
// two words may be in two of them). The zero wordDecoder, with top set,
// is at a range's start.
type wordDecoder struct {
	top     uint64 // the range's keys' top byte, in place
	prev    int64  // the document of the entry before
	esc     bool   // the last word was an escape: the next one is its document
	key     uint64 // the escaped entry's key
	escapes int    // escaped entries decoded (their second words)
}

// decode appends the entries of the words ws to dst; an entry whose
// document would fall outside 32 bits is errRunVarint. An escape at the
// end of ws waits for the next words (end checks that none is left).
func (d *wordDecoder) decode(dst []Wide, ws []uint64) ([]Wide, error) {
	i, prev := 0, d.prev
	if d.esc && len(ws) > 0 {
		if ws[0] > maxDoc {
			return dst, errRunVarint
		}
		prev = int64(ws[0])
		dst = append(dst, Wide{Key: d.key, Doc: uint32(prev)})
		d.esc, i = false, 1
		d.escapes++
	}
	for ; i < len(ws); i++ {
		v := ws[i]
		z := v >> 56
		if z != wordEscape { // most
			doc := prev + (int64(z>>1) ^ -int64(z&1))
			if uint64(doc) > maxDoc {
				return dst, errRunVarint
			}
			dst = append(dst, Wide{Key: d.top | v&keyMask, Doc: uint32(doc)})
			prev = doc
			continue
		}
		if i++; i == len(ws) {
			d.esc, d.key = true, d.top|v&keyMask
			break
		}
		if ws[i] > maxDoc {
			return dst, errRunVarint
		}
		prev = int64(ws[i])
		dst = append(dst, Wide{Key: d.top | v&keyMask, Doc: uint32(prev)})
		d.escapes++
	}
	d.prev = prev
	return dst, nil
}

// end returns errRunCut if the words decoded ended inside an entry.
func (d *wordDecoder) end() error {
	if d.esc {
		return errRunCut
	}
	return nil
}

// Len is the number of entries added.
func (s *Partitioned) Len() int64 { return s.count }

// Runs is the number of ranges that wrote entries to disk. Call it once
// every entry is added: it moves those Add staged to their ranges, which
// may spill.
func (s *Partitioned) Runs() int {
	s.drain()
	return s.spilled
}

// SpilledBytes is how many bytes were written to the spill file. Call it
// once every entry is added, as Runs.
func (s *Partitioned) SpilledBytes() int64 {
	s.drain()
	return s.off
}

// Close removes the spill file and drops the entries. Call it once every
// iterator is closed; it may be called more than once. Where the file was
// unlinked when made (Unix), its name is already gone, and closing it,
// which frees its space, is left to a goroutine.
func (s *Partitioned) Close() error {
	s.parts, s.cur, s.lines = [Partitions]partition{}, [Partitions][]uint64{}, [Partitions]uint8{}
	s.pool.reset()
	f := s.f
	if f == nil {
		return nil
	}
	s.f = nil
	if s.unlinked {
		// Nothing to remove; the last close frees the file's blocks and
		// pages in the kernel, off the caller's path (the candidates
		// stage's end, where it left both cores waiting).
		go f.Close()
		return nil
	}
	f.Close()
	return removeRuns([]string{f.Name()})
}

// Range returns an iterator over the entries of the key ranges lo to
// hi−1, by key, then document. No more entries may be added once an
// iterator is made; iterators of disjoint ranges may be read on
// goroutines of their own, each holding (for the range it sorts) twice
// the range's entries, within the budget's reading quarter: one waits
// while the others hold it. Close it when done.
func (s *Partitioned) Range(lo, hi int) *PartIterator {
	if lo < 0 || hi > Partitions || lo > hi {
		panic(fmt.Sprintf("extsort: Range(%d, %d) of %d ranges", lo, hi, Partitions))
	}
	it := &PartIterator{s: s, next: lo, hi: hi}
	it.err = s.drain()
	return it
}

// PartIterator yields the sorted entries of consecutive key ranges of a
// Partitioned store. Not safe for concurrent use.
type PartIterator struct {
	s         *Partitioned
	next, hi  int    // the next range to load, and the end
	cur       []Wide // the loaded range's sorted entries
	pos       int
	a, b      []Wide // the sort's buffers, reused from range to range (b holds a spilled range's words first)
	held      int64  // bytes reserved from the store's reading share
	fb        *WideIterator
	last      Wide
	err       error
	fallbacks int // ranges handed to a WideSorter (for tests)
	count     [2][1 << 12]int

	skipSingles bool     // leave out the entries of keys held once
	apart       DocSet   // documents whose left-out entries singlesIn counts
	singles     int64    // entries left out
	singlesIn   int64    // those of documents in apart
	filter      []uint64 // singleFilter's words, reused from range to range
}

// DocSet is a set of documents, one bit each: document d is in it when bit
// d − Base (the difference taken modulo 2³², so that documents numbered
// below Base wrap past every other) of Bits is set. The zero DocSet is
// empty.
type DocSet struct {
	Bits []uint64
	Base uint32
}

// Has reports whether doc is in the set.
func (s DocSet) Has(doc uint32) bool {
	d := int(doc - s.Base)
	return d>>6 < len(s.Bits) && s.Bits[d>>6]>>(d&63)&1 != 0
}

// SkipSingles makes the iterator leave out of what Next yields the entries
// whose key no other entry has (most, for random keys), counted by Singles:
// before sorting a range in memory, a pass over its entries marks, in a
// filter of a few bits a slot, the slots that two or more of them hash to
// (two slots a key); an entry one of whose slots no other entry hashes to
// holds its key alone, and is left out. The others (those of shared keys,
// and the few single ones sharing both slots) are
// sorted and yielded as before, so Next yields every entry of every shared
// key, by key, then document, and single ones only among them. The
// entries left out whose document is in apart are counted by SinglesIn as
// well (nothing is copied: they are counted as the filter leaves them
// out). Ranges too large to sort in memory (the fallback) leave out
// nothing. Call it before the first Next.
func (it *PartIterator) SkipSingles(apart DocSet) {
	it.skipSingles, it.apart = true, apart
}

// Singles returns how many entries the iterator left out so far
// (SkipSingles).
func (it *PartIterator) Singles() int64 { return it.singles }

// SinglesIn returns how many of the entries left out so far are of
// documents in SkipSingles's set.
func (it *PartIterator) SinglesIn() int64 { return it.singlesIn }

// Next returns the next entry, or false at the end or on error (see Err).
func (it *PartIterator) Next() (Wide, bool) {
	if it.pos < len(it.cur) {
		e := it.cur[it.pos]
		it.pos++
		it.last = e
		return e, true
	}
	return it.advance()
}

// advance yields from the fallback sorter, or loads the next range that
// has entries.
func (it *PartIterator) advance() (Wide, bool) {
	for it.err == nil {
		if it.fb != nil {
			if e, ok := it.fb.Next(); ok {
				it.last = e
				return e, true
			}
			it.err = it.fb.Err()
			if err := it.fb.Close(); it.err == nil {
				it.err = err
			}
			it.fb = nil
			it.release()
			continue
		}
		if it.next == it.hi {
			return Wide{}, false
		}
		i := it.next
		it.next++
		if it.err = it.load(i); it.err != nil {
			break
		}
		if it.pos < len(it.cur) {
			return it.Next()
		}
	}
	return Wide{}, false
}

// reserve makes sure the iterator holds n bytes of the reading share,
// waiting for other iterators to release theirs; it holds nothing while it
// waits, so that two iterators cannot wait for each other.
func (it *PartIterator) reserve(n int64) {
	if it.held >= n {
		return
	}
	it.release()
	it.s.sem.Acquire(context.Background(), n) // cannot fail: no deadline
	it.held = n
}

// release gives back what the iterator holds.
func (it *PartIterator) release() {
	if it.held > 0 {
		it.s.sem.Release(it.held)
	}
	it.held, it.a, it.b, it.filter = 0, nil, nil, nil
}

// load reads range i whole and sorts it into it.cur, or hands it to a
// fallback WideSorter (it.fb) if sorting it in memory would take more than
// the reading share. Under SkipSingles, the entries of keys held once are
// left out first (singleFilter). The range's words (its blocks, or its
// segments read back into it.b) are decoded once: as they are split by
// the filter, or before the sort if none.
func (it *PartIterator) load(i int) error {
	s := it.s
	p := &s.parts[i]
	it.cur, it.pos = nil, 0
	cur := s.cur[i]
	n := p.n + len(cur) // words: the entries are as many, or fewer
	if n == 0 {
		return nil
	}
	var f singleFilter
	if it.skipSingles && n >= filterMin {
		f = newSingleFilter(n)
		if int64(32*n+8*f.words) > s.sortMem {
			f = singleFilter{} // sort them all rather than fall back
		}
	}
	if int64(32*n) > s.sortMem {
		return it.fallback(i)
	}
	if cap(it.a) < n || len(it.filter) < f.words {
		// Room for a quarter more, so that the next ranges, about as
		// large, seldom ask again, within the share.
		m := n + n/4
		fw := 0
		if f.words > 0 {
			fw = newSingleFilter(m).words
		}
		if int64(32*m+8*fw) > s.sortMem {
			m, fw = n, f.words // what this range needs, which fits
		}
		it.reserve(int64(32*m + 8*fw))
		it.a, it.b, it.filter = makeHuge(m)[:0], makeHuge(m), make([]uint64, fw)
	}
	var srcs [][]uint64
	if p.spill {
		// The segments' words, in order, into b (twice as many words as
		// the range has), which the sort writes only once they are
		// decoded into a.
		ws := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(it.b))), 2*len(it.b))
		at := 0
		for _, g := range p.segs {
			got, err := s.readWords(ws[at:], g)
			if err != nil {
				return err
			}
			at += len(got)
		}
		srcs = [][]uint64{ws[:at], cur}
	} else {
		srcs = append(p.blocks, cur)
	}
	top := uint64(i) << 56
	dec := wordDecoder{top: top}
	a, b := it.a[:n], it.b[:n]
	c := &it.count
	clear(c[0][:])
	clear(c[1][:])
	k := 0
	if f.words == 0 {
		es := a[:0]
		for _, src := range srcs {
			var err error
			if es, err = dec.decode(es, src); err != nil {
				return it.corrupt(err)
			}
		}
		k = len(es)
	} else {
		f.f = it.filter[:f.words]
		clear(f.f)
		skip := false
		for _, src := range srcs {
			skip = f.markWords(src, top, skip)
		}
		f.seal()
		// The shared keys' entries to a; the single ones of documents
		// in it.apart counted.
		in := 0
		for _, src := range srcs {
			var err error
			if k, in, err = f.splitWords(src, a, k, it.apart, in, &dec); err != nil {
				return it.corrupt(err)
			}
		}
		it.singles += int64(n - dec.escapes - k)
		it.singlesIn += int64(in)
	}
	if err := dec.end(); err != nil {
		return it.corrupt(err)
	}
	countDigits(c, a[:k])
	it.cur = it.sort([][]Wide{a[:k]}, k, a[:k], b[:k])
	*p, s.cur[i] = partition{}, nil // its entries are in it.a or it.b now
	return nil
}

// corrupt wraps an error decoding a range's words, which can only be the
// spill file's (or a bug).
func (it *PartIterator) corrupt(err error) error {
	if it.s.f != nil {
		return fmt.Errorf("extsort: read %s: %w", it.s.f.Name(), err)
	}
	return fmt.Errorf("extsort: decode: %w", err)
}

// filterMin is the fewest entries a range needs for SkipSingles to filter
// them: below it, sorting them all costs about as much.
const filterMin = 256

// filterSlots is how many slots of a singleFilter there are at least for
// each entry of the range (a power of two, up to twice that): about one
// single key in filterSlots shares its slot with another entry and is kept.
var filterSlots = 8

// singleFilter finds the entries of a range whose key no other entry has:
// each key hashes to two slots (perhaps one) of a group of 64, and a slot
// has two bits, "seen" and "seen twice", in a pair of words (the group's
// seen bits, then its seen-twice bits), so that one cache line holds both.
// markWords adds each entry to its slots once; seal then keeps the
// seen-twice words alone, which split and splitWords read: an entry one
// of whose slots was not seen twice holds its key alone (every entry of a
// key adds to each of the key's slots, so a key of two entries or more
// leaves all its slots seen twice). A single key is kept (taken for a shared one) only if both its
// slots are shared with other entries: with a load of n/slots, about
// (2n/slots)² of the single keys against n/slots with one slot a key; at
// the same size and still one line a look-up, a third as many at 5M short
// documents (2.0 % against 6.6 %), each of which the range's sort and a
// Grouper's bucket of one would cost. Keys of a range are
// random in their low 56 bits, mostly; the hash (a multiply by an odd
// constant: the top bits pick the group, the low twelve the two slots)
// spreads the others.
type singleFilter struct {
	f     []uint64
	shift uint // 64 − log2(groups)
	words int  // len(f)
}

// newSingleFilter returns the shape (no words yet) of a filter for n
// entries: at least filterSlots·n slots, 128 at least.
func newSingleFilter(n int) singleFilter {
	lg := max(bits.Len(uint(filterSlots*n-1)), 7)
	return singleFilter{shift: uint(64 - (lg - 6)), words: 1 << (lg - 5)}
}

// slots returns the index of key k's group, and the mask of its slots in
// the group.
func (f *singleFilter) slots(k uint64) (int, uint64) {
	h := k * 0x9e3779b97f4a7c15
	return int(h >> f.shift), 1<<(h&63) | 1<<(h>>6&63)
}

// markWords marks the slots of the keys of the words ws of range top (the
// keys' top byte, in place): seen, or seen twice if seen before, skipping
// escaped entries' document words: the first of ws if skip (ws follows an escape); it
// returns whether the word after ws is one.
func (f *singleFilter) markWords(ws []uint64, top uint64, skip bool) bool {
	// The groups' word pairs as pairs (one bounds check a look-up, not
	// two), the shift in a local (the stores to w could alias f) and
	// masked (no test for shifts past 63).
	w, shift := unsafe.Slice((*[2]uint64)(unsafe.Pointer(unsafe.SliceData(f.f))), len(f.f)/2), f.shift&63
	i := 0
	if skip {
		i = 1
	}
	for ; i < len(ws); i++ {
		v := ws[i]
		h := (top | v&keyMask) * 0x9e3779b97f4a7c15 // slots
		m := uint64(1)<<(h&63) | 1<<(h>>6&63)
		p := &w[h>>shift]
		p[1] |= p[0] & m
		p[0] |= m
		if v>>56 == wordEscape {
			i++ // past its document word (a branch: an i computed from v would make each load wait for the one before)
		}
	}
	return i > len(ws)
}

// seal ends the marking: it moves each group's seen-twice word to the
// group's index (f[g] = f[2g+1], in place, in order: each word is read
// before it is written), all that split and splitWords read. Their
// look-ups then reach half the words: at 5M short documents a range's
// filter is 1 MiB, the second-level cache's size (here), which the
// range's words and entries stream through as well; half of it stays
// there mostly. For a sequential pass over the filter (about 35 µs at
// 1 MiB), splitWords took 169 perf samples of a 5M-document dedup run
// instead of 237 (499 Hz, means of eight runs), and a range of 300,000
// entries is marked, sealed and split in 7.1 ns an entry instead of 8.7
// (BenchmarkSingleFilter, with markWords' pairs).
func (f *singleFilter) seal() {
	w := f.f
	for g := range len(w) / 2 {
		w[g] = w[2*g+1]
	}
}

// split copies the entries of es whose slots were all seen twice to dst
// from index k on, and counts the others whose document is in apart from in
// on; it returns the new end and count. dst may be es itself, or hold es
// further on: an entry is written no further than where it is read.
func (f *singleFilter) split(es, dst []Wide, k int, apart DocSet, in int) (int, int) {
	w := f.f
	if apart.Bits == nil {
		for _, e := range es {
			g, s := f.slots(e.Key)
			if w[g]&s == s {
				dst[k] = e
				k++
			}
		}
		return k, in
	}
	set := apart.Bits
	for _, e := range es {
		g, s := f.slots(e.Key)
		if w[g]&s == s {
			dst[k] = e
			k++
		} else if d := int(e.Doc - apart.Base); d>>6 < len(set) {
			in += int(set[d>>6] >> (d & 63) & 1) // no branch on it: the set may hold any share
		}
	}
	return k, in
}

// splitWords is split of the entries the words ws decode to (d, as
// wordDecoder.decode, whose errors it returns): the documents are decoded
// (a running sum) for every entry, kept or counted.
func (f *singleFilter) splitWords(ws []uint64, dst []Wide, k int, apart DocSet, in int, d *wordDecoder) (int, int, error) {
	if d.esc && len(ws) > 0 {
		// An escaped entry whose document is ws's first word.
		var es [1]Wide
		e, err := d.decode(es[:0], ws[:1])
		if err != nil {
			return k, in, err
		}
		k, in = f.split(e, dst, k, apart, in)
		ws = ws[1:]
	}
	// Two loops, without and with a set, and the filter's shift in a
	// local: fewer live values, none of them reloaded an entry (the
	// stores to dst could alias f).
	w, set, base, top, shift := f.f, apart.Bits, apart.Base, d.top, f.shift&63 // masked: no test for shifts past 63
	prev := d.prev
	var bad uint64 // the documents or'ed: past 32 bits if one is out of range
	if set == nil {
		for i := 0; i < len(ws); i++ {
			v := ws[i]
			doc := prev + (int64(v>>57) ^ -int64(v>>56&1))
			if v>>56 == wordEscape {
				if i++; i == len(ws) {
					d.esc, d.key = true, top|v&keyMask
					break
				}
				doc = int64(ws[i])
				d.escapes++
			}
			bad |= uint64(doc)
			prev = doc
			key := top | v&keyMask
			h := key * 0x9e3779b97f4a7c15
			g, s := int(h>>shift), uint64(1)<<(h&63)|1<<(h>>6&63)
			if w[g]&s == s {
				dst[k] = Wide{Key: key, Doc: uint32(doc)}
				k++
			}
		}
	} else {
		for i := 0; i < len(ws); i++ {
			v := ws[i]
			doc := prev + (int64(v>>57) ^ -int64(v>>56&1))
			if v>>56 == wordEscape {
				if i++; i == len(ws) {
					d.esc, d.key = true, top|v&keyMask
					break
				}
				doc = int64(ws[i])
				d.escapes++
			}
			bad |= uint64(doc)
			prev = doc
			key := top | v&keyMask
			h := key * 0x9e3779b97f4a7c15
			g, s := int(h>>shift), uint64(1)<<(h&63)|1<<(h>>6&63)
			if w[g]&s == s {
				dst[k] = Wide{Key: key, Doc: uint32(doc)}
				k++
			} else if x := int(uint32(doc) - base); x>>6 < len(set) {
				in += int(set[x>>6] >> (x & 63) & 1) // no branch on it: the set may hold any share
			}
		}
	}
	d.prev = prev
	if bad > maxDoc {
		return k, in, errRunVarint
	}
	return k, in, nil
}

// countDigits counts the entries of es by the two digits PartIterator.sort
// sorts on: the key's bits 32–43 and 44–55.
func countDigits(c *[2][1 << 12]int, es []Wide) {
	for _, e := range es {
		c[0][e.Key>>32&0xfff]++
		c[1][e.Key>>44&0xfff]++
	}
}

// sort sorts the n entries of srcs, in order, counted in it.count
// (countDigits), by key, then document, using a and b (each n long), and
// returns them sorted (in a or b). A stable LSD radix sort on the key's
// bits 32–43, then 44–55 (bits 56–63 are the range's, the same in all),
// skipping a digit equal in every entry; then each run of entries equal in
// the high 32 bits, in the order added, is sorted by key, then document.
func (it *PartIterator) sort(srcs [][]Wide, n int, a, b []Wide) []Wide {
	c0, c1 := &it.count[0], &it.count[1]
	var first Wide
	for _, src := range srcs {
		if len(src) > 0 {
			first = src[0]
			break
		}
	}
	dst := b
	if c0[first.Key>>32&0xfff] == n {
		// One digit: the entries in order.
		at := 0
		for _, src := range srcs {
			at += copy(dst[at:], src)
		}
	} else {
		prefix(c0)
		for _, src := range srcs {
			for _, e := range src {
				d := e.Key >> 32 & 0xfff
				dst[c0[d]] = e
				c0[d]++
			}
		}
	}
	out := dst
	if c1[first.Key>>44&0xfff] != n {
		prefix(c1)
		for _, e := range dst {
			d := e.Key >> 44 & 0xfff
			a[c1[d]] = e
			c1[d]++
		}
		out = a
	}
	for i := 0; i < len(out); {
		hi := out[i].Key >> 32
		j := i + 1
		for j < len(out) && out[j].Key>>32 == hi {
			j++
		}
		switch {
		case j-i == 2:
			if compareWide(out[i], out[i+1]) > 0 {
				out[i], out[i+1] = out[i+1], out[i]
			}
		case j-i > 2:
			slices.SortFunc(out[i:j], compareWide)
		}
		i = j
	}
	return out
}

// prefix turns counts into the positions where each digit's entries start.
func prefix(c *[1 << 12]int) {
	pos := 0
	for d, n := range c {
		c[d] = pos
		pos += n
	}
}

// fallback sorts range i, too large for the reading share, through a
// WideSorter holding the whole share.
func (it *PartIterator) fallback(i int) error {
	s, p := it.s, &it.s.parts[i]
	it.fallbacks++
	it.reserve(s.sortMem)
	it.a, it.b = nil, nil // the WideSorter takes the whole share
	w := NewWide(s.dir, s.prefix+"-part", int(s.sortMem/40))
	words := make([]uint64, 0, 2*partMaxBlock)
	dec := wordDecoder{top: uint64(i) << 56}
	var es []Wide
	add := func(ws []uint64) error {
		var err error
		if es, err = dec.decode(es[:0], ws); err != nil {
			return it.corrupt(err)
		}
		for len(es) > 0 {
			m := min(len(es), partMaxBlock)
			words = words[:0]
			for _, e := range es[:m] {
				words = append(words, e.Key, uint64(e.Doc))
			}
			if err := w.Add(words...); err != nil {
				return err
			}
			es = es[m:]
		}
		return nil
	}
	err := func() error {
		rbuf := make([]uint64, s.maxSeg/8)
		for _, g := range p.segs {
			ws, err := s.readWords(rbuf, g)
			if err != nil {
				return err
			}
			if err := add(ws); err != nil {
				return err
			}
		}
		for _, b := range append(p.blocks, s.cur[i]) {
			if err := add(b); err != nil {
				return err
			}
		}
		if err := dec.end(); err != nil {
			return it.corrupt(err)
		}
		return nil
	}()
	*p, s.cur[i] = partition{}, nil
	if err != nil {
		w.Close()
		return err
	}
	it.fb, err = w.Iter()
	return err
}

// Last returns the entry Next returned last (the zero Wide before the
// first).
func (it *PartIterator) Last() Wide { return it.last }

// Err returns the first error met while reading.
func (it *PartIterator) Err() error { return it.err }

// Close releases the iterator's buffers and its share of the budget.
func (it *PartIterator) Close() error {
	var err error
	if it.fb != nil {
		err = it.fb.Close()
		it.fb = nil
	}
	it.release()
	it.cur = nil
	return err
}
