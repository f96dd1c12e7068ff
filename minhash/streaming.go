package minhash

import (
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"
)

// Streaming is a signature for elements that arrive over time, from any
// number of goroutines: Add is lock-free (an atomic compare-and-swap minimum
// per touched slot or bin) and Snapshot finishes the current state into a
// Signature without disturbing it. It keeps the raw minima (one-permutation
// bins, and the keys of the densification rounds that can still fill an
// empty bin), so two Streamings of equal Params merge exactly for both
// schemes, and a Snapshot equals Hasher.Sign over the same elements.
//
// While some one-permutation bins are empty (fewer than a few K distinct
// elements so far), Add re-hashes each element through the densification
// rounds that can still fill them: up to 2K−1 rounds for the first element,
// a few for the next dozens, none once every bin has an element.
//
// The zero Streaming is not usable; call NewStreaming. It is safe for
// concurrent use. A Snapshot taken while Adds run reflects every Add that
// returned before the Snapshot began and possibly parts of those in flight; the
// final state does not depend on the order or interleaving of Adds.
type Streaming struct {
	h    *Hasher // constants only; its mins are not used
	mins []atomic.Uint64
	keys []atomic.Uint64 // densification keys (OnePermutation)
	rmax atomic.Int64    // rounds that can still lower a key (OnePermutation)

	mu   sync.Mutex // guards snap, used by Snapshot
	snap *Hasher
}

// NewStreaming returns an empty Streaming signature under p.
func NewStreaming(p Params) (*Streaming, error) {
	h, err := NewHasher(p)
	if err != nil {
		return nil, err
	}
	snap, _ := NewHasher(p)
	s := &Streaming{h: h, snap: snap, mins: make([]atomic.Uint64, h.p.K)}
	for i := range s.mins {
		s.mins[i].Store(empty)
	}
	if h.p.Scheme == OnePermutation {
		s.keys = make([]atomic.Uint64, h.p.K)
		for i := range s.keys {
			s.keys[i].Store(empty)
		}
		s.rmax.Store(int64(2*h.p.K - 1))
	}
	return s, nil
}

// Params returns the Streaming signature's Params.
func (s *Streaming) Params() Params { return s.h.p }

func casMin(a *atomic.Uint64, v uint64) {
	for {
		old := a.Load()
		if v >= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}

// Add adds features (well-mixed 64-bit hashes, as for Hasher.Push).
func (s *Streaming) Add(features ...uint64) {
	h := s.h
	if h.p.Scheme == KHash {
		for _, f := range features {
			x := reduce61(f)
			for i, ai := range h.a {
				casMin(&s.mins[i], khash(ai, h.b[i], x))
			}
		}
		return
	}
	k := uint64(len(s.mins))
	for _, f := range features {
		v := f * h.mult
		i, _ := bits.Mul64(v, k)
		casMin(&s.mins[i], v)
	}
	// A pair (feature, round r) can lower a key only if r ≤ rmax: rmax only
	// falls, and every bin empty in round 0 already holds a key of round ≤
	// rmax or will be filled in round 0.
	rmax := int(s.rmax.Load())
	if rmax == 0 || len(features) == 0 {
		return
	}
	for r := 1; r <= rmax; r++ {
		m := h.roundMult(r)
		for _, f := range features {
			if b, key := h.roundBin(f, m, r); s.mins[b].Load() == empty {
				casMin(&s.keys[b], key)
			}
		}
	}
	s.lowerRMax()
}

// lowerRMax recomputes the last round that can still lower a key (as
// Hasher.maxRound) and lowers rmax to it. Any value computed from the state
// at some moment is an upper bound from then on, so the smallest is kept.
func (s *Streaming) lowerRMax() {
	last := 2*len(s.mins) - 1
	r := 0
	for i := range s.mins {
		if s.mins[i].Load() == empty {
			r = max(r, min(int(s.keys[i].Load()>>roundShift), last))
		}
	}
	for {
		old := s.rmax.Load()
		if int64(r) >= old || s.rmax.CompareAndSwap(old, int64(r)) {
			return
		}
	}
}

// Merge folds o's elements into s, as if every element added to o had been
// added to s. Both must have equal Params.
func (s *Streaming) Merge(o *Streaming) error {
	if s.h.p != o.h.p {
		return fmt.Errorf("%w: merging %s into %s", ErrParamsMismatch, o.h.p, s.h.p)
	}
	for i := range o.mins {
		casMin(&s.mins[i], o.mins[i].Load())
	}
	for i := range o.keys {
		casMin(&s.keys[i], o.keys[i].Load())
	}
	if s.keys != nil {
		s.lowerRMax()
	}
	return nil
}

// Snapshot appends the signature of everything added so far to dst.
func (s *Streaming) Snapshot(dst Signature) Signature {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.mins {
		s.snap.mins[i] = s.mins[i].Load()
	}
	for i := range s.keys {
		s.snap.keys[i] = s.keys[i].Load()
	}
	// The keys are complete: the snapshot Hasher must not recompute them.
	s.snap.lazy = true
	return s.snap.AppendSignature(dst)
}
