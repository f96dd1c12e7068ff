// Package kmerge merges sorted sources: a loser tree over the sources'
// current values (their heads), ordered by a 64-bit key and, between equal
// keys, by a tie-breaking comparison and then by source number, so that the
// merge is stable and its output depends only on the sources. It is the one
// k-way merge of the module: extsort's sorters merge their runs with it,
// and lsh.Merger its Runs.
//
// A loser tree's internal nodes hold the source that lost there, so that
// replacing the winner's head costs one comparison a level (log₂ of the
// sources), against the two of a binary heap; comparing keys first keeps
// the common case to one integer comparison, the tie-breaking function
// being called only for equal keys.
package kmerge

// Tree merges k sources. Set every source's first head, then Init; then
// repeatedly take Winner's head and Replace it with that source's next.
// The zero value is a tree of no sources. Not safe for concurrent use.
type Tree[T any] struct {
	key   []uint64 // each source's head's key; ^0 once exhausted
	head  []T
	done  []bool
	nodes []int // nodes[0]: the winner; nodes 1 to k−1: the losers
	tie   func(a, b T) int
}

// New returns a tree over k sources. tie orders heads of equal keys
// (negative: a first); nil orders them by source number alone, as tie does
// for heads it finds equal.
func New[T any](k int, tie func(a, b T) int) *Tree[T] {
	return &Tree[T]{key: make([]uint64, k), head: make([]T, k), done: make([]bool, k), nodes: make([]int, max(k, 1)), tie: tie}
}

// Len is the number of sources.
func (t *Tree[T]) Len() int { return len(t.key) }

// Set sets source i's first head, or marks it exhausted if ok is false.
// Call it for every source before Init.
func (t *Tree[T]) Set(i int, key uint64, head T, ok bool) {
	t.load(i, key, head, ok)
}

func (t *Tree[T]) load(i int, key uint64, head T, ok bool) {
	if !ok {
		var zero T
		key, head = ^uint64(0), zero
	}
	t.key[i], t.head[i], t.done[i] = key, head, !ok
}

// less reports whether source i's head sorts before source j's: by key,
// exhausted sources last, then tie, then source number.
func (t *Tree[T]) less(i, j int) bool {
	if ki, kj := t.key[i], t.key[j]; ki != kj {
		return ki < kj
	}
	return t.tieLess(i, j)
}

func (t *Tree[T]) tieLess(i, j int) bool {
	if t.done[i] || t.done[j] {
		return !t.done[i] && t.done[j] || t.done[i] == t.done[j] && i < j
	}
	if t.tie != nil {
		if c := t.tie(t.head[i], t.head[j]); c != 0 {
			return c < 0
		}
	}
	return i < j
}

// Init plays the tournament between the heads Set.
func (t *Tree[T]) Init() {
	k := len(t.key)
	if k == 0 {
		return
	}
	win := make([]int, 2*k)
	for i := range k {
		win[k+i] = i
	}
	for n := k - 1; n >= 1; n-- {
		a, b := win[2*n], win[2*n+1]
		if t.less(a, b) {
			win[n], t.nodes[n] = a, b
		} else {
			win[n], t.nodes[n] = b, a
		}
	}
	t.nodes[0] = win[1] // for k = 1, the leaf of the only source
}

// Winner returns the source whose head sorts first; ok is false once every
// source is exhausted (or there are none).
func (t *Tree[T]) Winner() (i int, ok bool) {
	if len(t.key) == 0 {
		return 0, false
	}
	i = t.nodes[0]
	return i, !t.done[i]
}

// Head returns source i's head.
func (t *Tree[T]) Head(i int) T { return t.head[i] }

// Key returns source i's head's key.
func (t *Tree[T]) Key(i int) uint64 { return t.key[i] }

// Replace replaces the winner's head with its source's next one (ok false:
// the source is exhausted) and plays the winner's path again.
func (t *Tree[T]) Replace(key uint64, head T, ok bool) {
	w := t.nodes[0]
	t.load(w, key, head, ok)
	k := len(t.key)
	for n := (w + k) / 2; n >= 1; n /= 2 {
		if l := t.nodes[n]; t.less(l, w) {
			t.nodes[n], w = w, l
		}
	}
	t.nodes[0] = w
}
