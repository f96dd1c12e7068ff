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
// Signature without disturbing it. It keeps the raw minima (one-permutation bins
// before densification), so two Streamings of equal Params merge exactly for
// both schemes.
//
// The zero Streaming is not usable; call NewStreaming. It is safe for
// concurrent use. A Snapshot taken while Adds run reflects every Add that
// returned before the Snapshot began and possibly parts of those in flight; the
// final state does not depend on the order or interleaving of Adds.
type Streaming struct {
	h    *Hasher // constants only; its mins are not used
	mins []atomic.Uint64

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
	return nil
}

// Snapshot appends the signature of everything added so far to dst.
func (s *Streaming) Snapshot(dst Signature) Signature {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.mins {
		s.snap.mins[i] = s.mins[i].Load()
	}
	return s.snap.AppendSignature(dst)
}
