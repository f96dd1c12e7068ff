package lsh

import (
	"errors"
	"fmt"
	"io"
)

// Run is a source of uint64 values in ascending order, such as a sorted run
// of entries or pairs spilled to disk. Next returns the next value, or
// io.EOF once the run is exhausted; any other error aborts the merge.
type Run interface {
	Next() (uint64, error)
}

// Compile-time checks that the package's runs implement Run.
var (
	_ Run = (*sliceRun)(nil)
	_ Run = (*Merger)(nil)
)

// SliceRun returns a Run over the values of s, which must be sorted
// ascending. The Run reads s lazily; s must not change while it is in use.
func SliceRun(s []uint64) Run { return &sliceRun{s: s} }

type sliceRun struct{ s []uint64 }

// Next returns the next value of the slice, or io.EOF once it is consumed.
func (r *sliceRun) Next() (uint64, error) {
	if len(r.s) == 0 {
		return 0, io.EOF
	}
	v := r.s[0]
	r.s = r.s[1:]
	return v, nil
}

// Merger merges ascending Runs into one ascending stream, optionally
// dropping duplicates: with unique set, each distinct value is returned
// once. A Merger is itself a Run, so merges can be cascaded. It checks that
// every run is ascending and fails with an error wrapping ErrUnsorted if
// one is not.
//
// A Merger is made by NewMerger; its zero value is an exhausted merge. It is
// not safe for concurrent use. Its output depends only on the runs' values.
type Merger struct {
	runs   []Run
	unique bool

	heap    []mergeItem // min-heap on (v, run)
	started bool        // the heap has been primed
	emitted bool        // last holds a returned value
	last    uint64
	err     error
}

type mergeItem struct {
	v   uint64
	run int
}

func (a mergeItem) less(b mergeItem) bool {
	return a.v < b.v || a.v == b.v && a.run < b.run
}

// NewMerger returns a Merger over runs. It reads nothing until the first
// Next or Append. The runs slice is retained.
func NewMerger(runs []Run, unique bool) *Merger {
	return &Merger{runs: runs, unique: unique}
}

// Next returns the next merged value, or io.EOF at the end. After an error
// every later call returns the same error.
func (m *Merger) Next() (uint64, error) {
	if m.err != nil {
		return 0, m.err
	}
	if !m.started {
		m.started = true
		m.heap = make([]mergeItem, 0, len(m.runs))
		for i := range m.runs {
			if err := m.push(i); err != nil {
				return 0, m.fail(err)
			}
		}
	}
	for len(m.heap) > 0 {
		top := m.heap[0]
		// Replace the top by the next value of its run, or drop it.
		v, err := m.runs[top.run].Next()
		switch {
		case err == nil:
			if v < top.v {
				return 0, m.fail(fmt.Errorf("%w: run %d yielded %#x after %#x", ErrUnsorted, top.run, v, top.v))
			}
			m.heap[0] = mergeItem{v, top.run}
		case errors.Is(err, io.EOF):
			n := len(m.heap) - 1
			m.heap[0] = m.heap[n]
			m.heap = m.heap[:n]
		default:
			return 0, m.fail(fmt.Errorf("lsh: merge run %d: %w", top.run, err))
		}
		m.down(0)
		if m.unique && m.emitted && top.v == m.last {
			continue
		}
		m.emitted, m.last = true, top.v
		return top.v, nil
	}
	m.err = io.EOF
	return 0, io.EOF
}

// Append appends up to n merged values to dst and returns the extended
// slice. At the end of the merge it returns io.EOF, possibly together with
// values appended by this call; on another error it returns the values
// appended before it.
func (m *Merger) Append(dst []uint64, n int) ([]uint64, error) {
	for range n {
		v, err := m.Next()
		if err != nil {
			return dst, err
		}
		dst = append(dst, v)
	}
	return dst, nil
}

func (m *Merger) fail(err error) error {
	m.err = err
	return err
}

// push reads the first value of run i onto the heap.
func (m *Merger) push(i int) error {
	v, err := m.runs[i].Next()
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("lsh: merge run %d: %w", i, err)
	}
	m.heap = append(m.heap, mergeItem{v, i})
	m.up(len(m.heap) - 1)
	return nil
}

func (m *Merger) up(i int) {
	h := m.heap
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].less(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (m *Merger) down(i int) {
	h := m.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && h[r].less(h[l]) {
			c = r
		}
		if !h[c].less(h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
