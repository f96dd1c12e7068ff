package extsort

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
)

// WideParts is the sorted entries of a WideSorter split into consecutive
// key ranges, each read by an iterator of its own, so that goroutines can
// merge the ranges side by side: every entry of part i sorts before every
// entry of part i+1, and the parts read in order yield what Iter yields.
// Part may be called from several goroutines at once, and the iterators it
// returns may each be read on a goroutine of its own; Close, once every
// iterator is closed, removes the runs.
type WideParts struct {
	mem   [][]Wide // the chunks in memory, each sorted
	memAt [][]int  // part i's entries of mem[c] are mem[c][memAt[c][i]:memAt[c][i+1]]
	parts int
	files []*os.File
	runs  []string
	cuts  [][]runCut // cuts[r][i]: where part i starts in run r; one more at the end
}

// runCut is where a part starts in a run file: its byte offset and the key
// before it, the base of the first entry's delta.
type runCut struct {
	off  int64
	prev uint64
}

// IterParts returns the entries added split into at most n parts by key
// (fewer when the keys are too few or too alike), about equally large:
// the boundaries are drawn from a sample of the keys (one in
// wideIndexEvery of each run and of the in-memory remainder). Every
// boundary is a multiple of 1<<shift (shift below 64), so that entries
// whose keys are equal above bit shift fall in the same part. Where the
// boundaries fall depends only on the entries added and the limit, not on
// timing. No more entries may be added afterwards.
func (s *WideSorter) IterParts(n int, shift uint) (*WideParts, error) {
	if shift >= 64 {
		panic(fmt.Sprintf("extsort: IterParts shift %d; must be below 64", shift))
	}
	if err := s.wait(); err != nil {
		s.Close()
		return nil, err
	}
	if s.scratch == nil {
		s.scratch = make([]Wide, max(len(s.buf)/32, 256))
	}
	sortWideInPlace(s.buf, s.scratch)
	p := &WideParts{runs: s.runs}
	for _, c := range append(s.sorted, s.buf) {
		if len(c) > 0 {
			p.mem = append(p.mem, c)
		}
	}
	index := s.index
	s.release()
	files, err := openRuns(p.runs)
	if err != nil {
		p.Close()
		return nil, err
	}
	p.files = files
	bounds := wideBounds(p.mem, index, n, shift)
	p.parts = len(bounds) + 1
	for _, c := range p.mem {
		at := []int{0}
		for _, b := range bounds {
			at = append(at, sort.Search(len(c), func(i int) bool { return c[i].Key >= b }))
		}
		p.memAt = append(p.memAt, append(at, len(c)))
	}
	for r, f := range p.files {
		st, err := f.Stat()
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("extsort: %w", err)
		}
		cuts := []runCut{{}}
		for _, b := range bounds {
			c, err := locate(f, index[r].points, st.Size(), b)
			if err != nil {
				p.Close()
				return nil, err
			}
			cuts = append(cuts, c)
		}
		p.cuts = append(p.cuts, append(cuts, runCut{off: st.Size()}))
	}
	return p, nil
}

// wideBounds returns up to n−1 ascending, distinct boundaries, multiples
// of 1<<shift, splitting the keys into about equal parts, none of them
// empty: quantiles of the keys sampled by the runs' indexes and, as
// sparsely, the in-memory remainder, each sample weighted by the entries it
// stands for. The first key of every source is sampled, so the smallest
// sample is the smallest key, and a boundary above it leaves the first
// part something.
func wideBounds(mem [][]Wide, index []runIndex, n int, shift uint) []uint64 {
	type sample struct {
		key uint64
		n   int
	}
	var keys []sample
	total := 0
	for _, c := range mem {
		every := indexSpacing(len(c))
		for i := 0; i < len(c); i += every {
			keys = append(keys, sample{c[i].Key, min(every, len(c)-i)})
		}
		total += len(c)
	}
	for _, ix := range index {
		// The last point stands for fewer; the weights only place the
		// boundaries.
		for _, pt := range ix.points {
			keys = append(keys, sample{pt.key, ix.every})
			total += ix.every
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.SortFunc(keys, func(a, b sample) int { return cmp.Compare(a.key, b.key) })
	var bounds []uint64
	low := keys[0].key
	acc, j := 0, 1
	for _, k := range keys {
		for j < n && acc >= j*total/n {
			if b := k.key &^ (1<<shift - 1); b > low && (len(bounds) == 0 || b > bounds[len(bounds)-1]) {
				bounds = append(bounds, b)
			}
			j++
		}
		acc += k.n
	}
	return bounds
}

// locate returns where the first entry of key at least b starts in the run
// f of size bytes, whose index points are ix: it decodes at most one
// index spacing of entries, from the last index point below b.
func locate(f *os.File, ix []indexPoint, size int64, b uint64) (runCut, error) {
	i := sort.Search(len(ix), func(i int) bool { return ix[i].key >= b })
	if i == 0 {
		return runCut{}, nil
	}
	from, to := ix[i-1], size
	if i < len(ix) {
		to = ix[i].off
	}
	buf := make([]byte, to-from.off)
	if _, err := f.ReadAt(buf, from.off); err != nil && err != io.EOF {
		return runCut{}, fmt.Errorf("extsort: read run %s: %w", f.Name(), err)
	}
	key, pos := from.prev, 0
	for pos < len(buf) {
		d, n := binary.Uvarint(buf[pos:])
		if n <= 0 || key+d < key {
			return runCut{}, fmt.Errorf("extsort: read run %s: %w", f.Name(), errRunVarint)
		}
		if key+d >= b {
			return runCut{off: from.off + int64(pos), prev: key}, nil
		}
		key += d
		_, m := binary.Uvarint(buf[pos+n:])
		if m <= 0 {
			return runCut{}, fmt.Errorf("extsort: read run %s: %w", f.Name(), errRunCut)
		}
		pos += n + m
	}
	if i < len(ix) {
		return runCut{off: to, prev: ix[i].prev}, nil
	}
	return runCut{off: size, prev: key}, nil
}

// Len is the number of parts.
func (p *WideParts) Len() int { return p.parts }

// Part returns an iterator over part i's entries, by key, then document.
// Close it when done (which frees its buffers; the runs stay until the
// WideParts is closed).
func (p *WideParts) Part(i int) (*WideIterator, error) {
	var srcs []*wideRun
	for c, m := range p.mem {
		srcs = append(srcs, &wideRun{mem: m[p.memAt[c][i]:p.memAt[c][i+1]]})
	}
	switch {
	case len(p.files) == 0 && len(srcs) == 0:
		return &WideIterator{}, nil
	case len(p.files) == 0 && len(srcs) == 1:
		return &WideIterator{mem: srcs[0].mem}, nil
	}
	for r, f := range p.files {
		from, to := p.cuts[r][i], p.cuts[r][i+1]
		srcs = append(srcs, &wideRun{r: io.NewSectionReader(f, from.off, to.off-from.off), name: f.Name(),
			buf: make([]byte, 0, wideReadBuf), last: from.prev})
	}
	it := &WideIterator{}
	if err := it.tree.init(srcs); err != nil {
		return nil, err
	}
	return it, nil
}

// Close closes and removes the runs. It may be called more than once.
func (p *WideParts) Close() error {
	for _, f := range p.files {
		f.Close()
	}
	err := removeRuns(p.runs)
	p.files, p.runs, p.mem = nil, nil, nil
	return err
}
