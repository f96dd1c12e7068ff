// Package kmerge merges sorted sources: a loser tree over the sources'
// current values (their heads), ordered by a 64-bit key and, between equal
// keys, by a tie-breaking comparison and then by source number, so that the
// merge is stable and its output depends only on the sources. The tree
// holds only the keys: the caller keeps the heads. extsort's three sorters
// merge their runs with it. (lsh.Merger keeps its binary heap of bare
// uint64s, which its BenchmarkMerger found 31–46 % faster than this tree.)
//
// A loser tree's internal nodes hold the source that lost there, with its
// key, so that replacing the winner's head costs one comparison a level
// (log₂ of the sources), against the two of a binary heap; comparing keys
// first keeps the common case to one integer comparison, the tie-breaking
// function being called only for equal keys.
package kmerge

// Tree merges k sources by their heads' keys. The caller keeps each
// source's head; the tree keeps its key. Set every source's first key,
// then Init; then repeatedly take Winner's head and Replace its key with
// that of the source's next head. The zero value is a tree of no sources.
// Not safe for concurrent use.
type Tree struct {
	nodes []node   // nodes[0]: the winner; nodes 1 to k−1: the losers there
	keys  []uint64 // each source's head's key until Init
	done  []bool
	tie   func(i, j int) int
}

// node is a source and its head's key (^0 once exhausted), held where the
// source lost (or, at the root, won), so that playing a path reads no other
// array.
type node struct {
	key uint64
	src int32
}

// New returns a tree over k sources. tie compares the heads of sources i
// and j when their keys are equal (negative: i's first); nil orders them by
// source number alone, as ties that tie finds equal are.
func New(k int, tie func(i, j int) int) *Tree {
	return &Tree{nodes: make([]node, max(k, 1)), keys: make([]uint64, k), done: make([]bool, k), tie: tie}
}

// Len is the number of sources.
func (t *Tree) Len() int { return len(t.done) }

// Set sets source i's first head's key, or marks the source exhausted if
// ok is false. Call it for every source before Init.
func (t *Tree) Set(i int, key uint64, ok bool) {
	if !ok {
		key = ^uint64(0)
	}
	t.keys[i], t.done[i] = key, !ok
}

// before reports whether a sorts before b: by key, exhausted sources last,
// then tie, then source number.
func (t *Tree) before(a, b node) bool {
	return a.key < b.key || a.key == b.key && t.tieLess(int(a.src), int(b.src))
}

func (t *Tree) tieLess(i, j int) bool {
	if t.done[i] || t.done[j] {
		return !t.done[i] && t.done[j] || t.done[i] == t.done[j] && i < j
	}
	if t.tie != nil {
		if c := t.tie(i, j); c != 0 {
			return c < 0
		}
	}
	return i < j
}

// Init plays the tournament between the heads Set.
func (t *Tree) Init() {
	k := len(t.done)
	if k == 0 {
		return
	}
	win := make([]node, 2*k)
	for i := range k {
		win[k+i] = node{t.keys[i], int32(i)}
	}
	for n := k - 1; n >= 1; n-- {
		a, b := win[2*n], win[2*n+1]
		if t.before(a, b) {
			win[n], t.nodes[n] = a, b
		} else {
			win[n], t.nodes[n] = b, a
		}
	}
	t.nodes[0] = win[1] // for k = 1, the leaf of the only source
	t.keys = nil
}

// Winner returns the source whose head sorts first; ok is false once every
// source is exhausted (or there are none).
func (t *Tree) Winner() (i int, ok bool) {
	if len(t.done) == 0 {
		return 0, false
	}
	w := t.nodes[0].src
	return int(w), !t.done[w]
}

// Top returns the winner's head's key.
func (t *Tree) Top() uint64 { return t.nodes[0].key }

// Replace sets the winner's next head's key (ok false: its source is
// exhausted) and plays the winner's path again.
func (t *Tree) Replace(key uint64, ok bool) {
	w := node{key, t.nodes[0].src}
	if !ok {
		w.key = ^uint64(0)
	}
	t.done[w.src] = !ok
	nodes := t.nodes
	for n := (uint(w.src) + uint(len(nodes))) / 2; n >= 1; n /= 2 {
		if l := nodes[n]; l.key < w.key || l.key == w.key && t.tieLess(int(l.src), int(w.src)) {
			nodes[n], w = w, l
		}
	}
	nodes[0] = w
}
