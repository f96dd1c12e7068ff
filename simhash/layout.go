package simhash

import (
	"fmt"
	"math"
	"math/bits"
)

// newBlocks splits the 64 bits into nb blocks numbered from the most
// significant bit, the first 64 mod nb of them one bit longer.
func newBlocks(nb int) []block {
	blocks := make([]block, 0, nb)
	off := 0
	for j := range nb {
		size := 64 / nb
		if j < 64%nb {
			size++
		}
		blocks = append(blocks, block{off: off, size: size, mask: blockMask(off, size)})
		off += size
	}
	return blocks
}

// blockSets returns one bitmask per (nb−k)-subset of the nb blocks, in
// lexicographic order, so the first (blocks 0..nb−k−1 leading, the rest after
// in order) is the identity permutation.
func blockSets(nb, k int) []uint32 {
	var sets []uint32
	var walk func(start, left int, set uint32)
	walk = func(start, left int, set uint32) {
		if left == 0 {
			sets = append(sets, set)
			return
		}
		for j := start; j <= nb-left; j++ {
			walk(j+1, left-1, set|1<<j)
		}
	}
	walk(0, nb-k, 0)
	return sets
}

// firstTables returns, for every set z of blocks (a bitmask), the lowest
// numbered table whose blocks are all in z, or noTable. Two fingerprints whose
// equal blocks are z share the key prefix of exactly the tables whose blocks
// are in z; reporting a match only from table first[z] reports it once.
func firstTables(nb int, sets []uint32) []uint16 {
	first := make([]uint16, 1<<nb)
	for z := range first {
		first[z] = noTable
	}
	for ti, s := range sets {
		first[s] = uint16(ti)
	}
	for z := range first {
		for rest := uint32(z); rest != 0; rest &= rest - 1 {
			first[z] = min(first[z], first[uint32(z)&^(rest&-rest)])
		}
	}
	return first
}

// Layout is the table layout of the block-permutation scheme (see the package
// doc) without the tables' contents: for batch work, where every fingerprint's
// table keys become packed uint64 entries that an external sort brings
// together, as band keys are for MinHash (package lsh), instead of living in
// an Index.
//
// # Entries
//
// A fingerprint fp of document doc contributes one entry per table t,
// T = Tables() entries in all:
//
//	entry = t << (64 − tb) | prefix_t(fp) << (64 − tb − kb_t) | doc
//
// where tb = TableBits() (enough bits for t), prefix_t(fp) is the first kb_t
// bits of fp permuted so that table t's blocks lead, kb_t = KeyBits(t,
// docBits) = min(PrefixBits(t), 64 − tb − docBits), and doc fills the low
// docBits bits. The bits between the key and the document are zero. Sorted
// ascending, the entries of one table and one key are adjacent, their
// documents ascending: a bucket. Any two documents within Hamming distance
// k ≤ MaxDistance() agree on all the blocks of at least one table (package
// doc), so they share that table's full prefix and a fortiori its kb_t
// leading bits: they meet in a bucket. When kb_t is cut short of PrefixBits(t)
// (many documents and a long prefix) buckets hold more unrelated documents
// but miss nothing.
//
// Entries sort with the same machinery as lsh band-key entries: the bucket
// key is the entry with its low docBits bits cleared, as lsh.EntryKey
// computes, so lsh.SortEntries and package internal/extsort order them. A
// Grouper then turns the sorted stream into candidate pairs, each checked
// with one popcount against the fingerprints the caller keeps.
//
// The zero value is not usable; call NewLayout. A Layout is immutable and
// safe for concurrent use; its
// entries are deterministic functions of the options, fingerprint, document
// and docBits. Entries are comparable only between Layouts of equal Options
// and equal docBits.
type Layout struct {
	k         int
	blocks    []block
	tables    []table // set, prefix and moves only: no contents
	first     []uint16
	tableBits uint
}

// NewLayout returns the layout opts describes (zero fields take their
// defaults, as for NewIndex). The error wraps ErrInvalidOptions.
func NewLayout(opts Options) (*Layout, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.EnsureDefaults()
	k, nb := opts.k(), opts.Blocks
	l := &Layout{k: k, blocks: newBlocks(nb)}
	sets := blockSets(nb, k)
	for _, s := range sets {
		l.tables = append(l.tables, newTable(l.blocks, s))
	}
	l.first = firstTables(nb, sets)
	l.tableBits = uint(bits.Len(uint(len(sets) - 1)))
	return l, nil
}

// MaxDistance returns K, the largest Hamming distance the layout finds every
// pair within.
func (l *Layout) MaxDistance() int { return l.k }

// Blocks returns B, the number of blocks.
func (l *Layout) Blocks() int { return len(l.blocks) }

// Tables returns the number of tables, C(B, K): the entries per document.
func (l *Layout) Tables() int { return len(l.tables) }

// TableBits returns the high entry bits that hold the table number:
// bits.Len(Tables() − 1), 0 for a single table.
func (l *Layout) TableBits() int { return int(l.tableBits) }

// PrefixBits returns the length in bits of table t's key prefix: the total
// size of its blocks. It panics if t is not in 0..Tables()−1.
func (l *Layout) PrefixBits(t int) int { return int(l.tables[t].prefix) }

// Key returns fp permuted so that table t's blocks lead: its first
// PrefixBits(t) bits are table t's key, and two fingerprints agree on all of
// table t's blocks exactly when their keys share those bits. The permutation
// preserves Hamming distances. It panics if t is out of range.
func (l *Layout) Key(t int, fp uint64) uint64 { return l.tables[t].key(fp) }

// KeyBits returns how many of table t's prefix bits an entry keeps with
// docBits document bits: min(PrefixBits(t), 64 − TableBits() − docBits). It
// panics if t is out of range or docBits is not in 1..32.
func (l *Layout) KeyBits(t int, docBits uint) int {
	checkDocBits(docBits)
	return l.keyBits(t, docBits)
}

func (l *Layout) keyBits(t int, docBits uint) int {
	return min(int(l.tables[t].prefix), 64-int(l.tableBits)-int(docBits))
}

// checkDocBits panics unless docBits is in 1..32.
func checkDocBits(docBits uint) {
	if docBits < 1 || docBits > 32 {
		panic(fmt.Sprintf("simhash: docBits %d; want 1..32", docBits))
	}
}

// AppendEntries appends the Tables() entries of fingerprint fp and document
// doc, table by table, to dst and returns the extended slice (see Layout for
// the packing). docBits must be in 1..32 and doc below 1<<docBits; otherwise
// AppendEntries panics (a programmer error: docBits comes from the corpus
// size). It allocates only when dst lacks capacity.
func (l *Layout) AppendEntries(dst []uint64, fp uint64, doc uint32, docBits uint) []uint64 {
	checkDocBits(docBits)
	if uint64(doc)>>docBits != 0 {
		panic(fmt.Sprintf("simhash: document %d does not fit in %d bits", doc, docBits))
	}
	tb := l.tableBits
	low := 64 - tb - docBits // bits below the table number available to the key
	for ti := range l.tables {
		t := &l.tables[ti]
		key := t.key(fp)
		if t.prefix < low {
			key &^= ^uint64(0) >> t.prefix // keep the prefix only
		}
		// Shifting by 64 (tb = 0) gives 0 in Go, as wanted.
		e := uint64(ti)<<(64-tb) | (key>>tb)&^(uint64(1)<<docBits-1) | uint64(doc)
		dst = append(dst, e)
	}
	return dst
}

// entryTable returns the table number of an entry.
func (l *Layout) entryTable(e uint64) int { return int(e >> (64 - l.tableBits)) }

// sameBlocks returns the set of blocks, as a bitmask, in which two
// fingerprints whose xor is x agree.
func (l *Layout) sameBlocks(x uint64) uint32 {
	var z uint32
	for j, b := range l.blocks {
		if x&b.mask == 0 {
			z |= 1 << j
		}
	}
	return z
}

// DefaultEntryCost is the cost of one batch entry in bucket comparisons
// that ChooseBlocks (and package plan) weigh tables with: one entry (8 bytes
// built, radix-sorted or spilled, and scanned) costs about as much as 64
// comparisons of two fingerprints at hand (BENCHMARKS.md, "SimHash:
// weighting and k": 47–97 in two sessions of BenchmarkLayoutPairs against
// BenchmarkGrouperCompare).
const DefaultEntryCost = 64

// ModelComparisons returns the comparisons a document makes in buckets, in
// expectation, among n documents whose fingerprints are random, with entries
// of docBits document bits: Σ_t (n − 1)·2^−KeyBits(t, docBits). Near
// duplicates add their own comparisons, which no layout avoids. It panics if
// docBits is not in 1..32.
func (l *Layout) ModelComparisons(n int64, docBits uint) float64 {
	checkDocBits(docBits)
	var c float64
	for t := range l.tables {
		c += float64(max(n-1, 0)) * math.Ldexp(1, -l.keyBits(t, docBits))
	}
	return c
}

// ChooseBlocks returns the number of blocks B, from k+1 to MaxBlocks, whose
// layout for distance k costs least for n documents of random fingerprints
// with entries of docBits document bits: Tables·entryCost +
// ModelComparisons(n, docBits), the rule of package plan without a sample.
// k is a MaxDistance (ExactMatch for 0); entryCost must be positive (use
// DefaultEntryCost). Errors wrap ErrInvalidOptions or ErrInvalidArgument. The
// result is deterministic.
func ChooseBlocks(k int, n int64, docBits uint, entryCost float64) (int, error) {
	if err := (&Options{MaxDistance: k}).Validate(); err != nil {
		return 0, err
	}
	if docBits < 1 || docBits > 32 || !(entryCost > 0) || math.IsInf(entryCost, 0) || n < 0 {
		return 0, fmt.Errorf("%w: docBits %d, entry cost %v, %d documents (want 1..32, positive, at least 0)", ErrInvalidArgument, docBits, entryCost, n)
	}
	opts := Options{MaxDistance: k}
	lo := opts.EnsureDefaults().Blocks // k + 1
	best, bestCost := 0, math.Inf(1)
	for b := lo; b <= MaxBlocks; b++ {
		l, err := NewLayout(Options{MaxDistance: k, Blocks: b})
		if err != nil {
			break // too many tables, and more blocks only add tables
		}
		if float64(l.Tables())*entryCost >= bestCost {
			break // tables never fall as B grows: no later B can win
		}
		if c := float64(l.Tables())*entryCost + l.ModelComparisons(n, docBits); c < bestCost {
			best, bestCost = b, c
		}
	}
	return best, nil
}
