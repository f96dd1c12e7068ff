package lsh

import (
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"strings"

	"github.com/neardup/neardup/internal/radix"
)

// DocBits returns the number of low bits an entry needs for document indices
// 0 … n−1: bits.Len(n−1), and at least 1. It panics if n exceeds 1<<32, the
// document indices being uint32.
func DocBits(n int) uint {
	if n > 1<<32 {
		panic(fmt.Sprintf("lsh: DocBits(%d): more than 1<<32 documents", n))
	}
	return uint(max(1, bits.Len64(uint64(max(n, 1)-1))))
}

// PackEntry returns the batch entry of a band key and a document: the high
// 64−docBits bits of key above the docBits bits of doc. doc must be less
// than 1<<docBits (it is not checked here); docBits must be in 1..32.
// Entries sort by key first and, within a key, by document.
func PackEntry(key uint64, doc uint32, docBits uint) uint64 {
	return key&^(1<<docBits-1) | uint64(doc)
}

// AppendEntries appends PackEntry(key, doc, docBits) for each of keys to dst
// and returns the extended slice.
func AppendEntries(dst, keys []uint64, doc uint32, docBits uint) []uint64 {
	mask := uint64(1)<<docBits - 1
	for _, k := range keys {
		dst = append(dst, k&^mask|uint64(doc))
	}
	return dst
}

// EntryKey returns the key bits of an entry: the band key with its low
// docBits bits cleared.
func EntryKey(e uint64, docBits uint) uint64 { return e &^ (1<<docBits - 1) }

// EntryDoc returns the document index of an entry.
func EntryDoc(e uint64, docBits uint) uint32 { return uint32(e & (1<<docBits - 1)) }

// PackPair returns the candidate pair (a, b) as uint64(a)<<32 | b. Pairs
// produced by this package always have a < b, so they sort by a, then b.
func PackPair(a, b uint32) uint64 { return uint64(a)<<32 | uint64(b) }

// UnpackPair splits a packed pair into its two document indices.
func UnpackPair(p uint64) (a, b uint32) { return uint32(p >> 32), uint32(p) }

// SortEntries sorts entries ascending, by key and then by document, and
// returns the scratch buffer used, as [radix.Sort] does (pass the previous
// result to sort again without allocating). It is faster than a full sort:
// it radix-sorts on the key bits only, then orders the documents within each
// run of equal keys, which is usually of length one or two.
func SortEntries(entries, scratch []uint64, docBits uint) []uint64 {
	return sortEntries(entries, scratch, docBits, 1)
}

// sortEntries is SortEntries with the radix sort spread over workers
// goroutines; the result is the same.
func sortEntries(entries, scratch []uint64, docBits uint, workers int) []uint64 {
	scratch = radix.SortKeyParallel(entries, scratch, docBits, workers)
	keyMask := ^(uint64(1)<<docBits - 1)
	for i := 0; i < len(entries); {
		k := entries[i] & keyMask
		j := i + 1
		for j < len(entries) && entries[j]&keyMask == k {
			j++
		}
		if j-i > 1 {
			slices.Sort(entries[i:j])
		}
		i = j
	}
	return scratch
}

// SortUnique sorts values ascending and removes duplicates in place. It
// returns the distinct values (a prefix of values) and the scratch buffer
// used, as [radix.Sort] does.
func SortUnique(values, scratch []uint64) (unique, scratchOut []uint64) {
	scratch = radix.Sort(values, scratch)
	return slices.Compact(values), scratch
}

// Default values of CandidateOptions.
const (
	// DefaultCap is the default CandidateOptions.Cap: a bucket of 1000
	// documents yields 499,500 pairs, about the most that is cheap to verify
	// for one shared key; keys shared more widely are mostly boilerplate.
	DefaultCap = 1000

	// DefaultLargest is the default CandidateOptions.Largest.
	DefaultLargest = 10

	// NoLargest as CandidateOptions.Largest keeps no list of capped buckets.
	NoLargest = -1

	// MaxCap is the largest CandidateOptions.Cap accepted: a full bucket
	// emits Cap·(Cap−1)/2 pairs at once.
	MaxCap = 1 << 16
)

// CandidateOptions configures candidate generation ([Candidates],
// [NewGrouper]). The zero value, and nil, ask for the defaults.
type CandidateOptions struct {
	// Cap is the largest bucket, in documents, whose members are all paired
	// with each other: a bucket of s ≤ Cap documents yields s·(s−1)/2 pairs.
	// A larger bucket (a key shared by very many documents, usually
	// boilerplate) instead links every member to its first, lowest-index
	// member, s−1 pairs, and is counted in CandidateMetrics.CappedBuckets and
	// listed in CandidateMetrics.Largest. 0 means the default, DefaultCap
	// (1000 documents). Range 2..MaxCap.
	Cap int

	// Largest is how many capped buckets CandidateMetrics.Largest keeps, the
	// largest first. 0 means the default, DefaultLargest (10 buckets);
	// NoLargest (−1) keeps none.
	Largest int

	// Workers is the number of goroutines Candidates sorts with (the
	// grouping itself is sequential); the result does not depend on it. 0
	// means the default, runtime.GOMAXPROCS(0). Range 0 and up; a Grouper
	// ignores it.
	Workers int

	// Reference is the number of reference documents, numbered 0 …
	// Reference−1 below every other document: documents already
	// deduplicated elsewhere (an archive), which are paired with the others
	// but never with each other. No pair of two reference documents is
	// emitted: a bucket of only reference documents yields no pair, and a
	// capped bucket links its other members to its first member, which is
	// a reference document whenever the bucket holds one. Buckets are
	// counted, capped and listed as without it; CandidateMetrics.Pairs
	// counts only the pairs emitted. Every pair with a document at or above
	// Reference is emitted exactly as without it. Default 0: none.
	Reference uint32
}

// EnsureDefaults fills zero fields with their defaults and returns o. It is
// nil-safe: a nil o yields a new CandidateOptions holding the defaults.
func (o *CandidateOptions) EnsureDefaults() *CandidateOptions {
	if o == nil {
		o = &CandidateOptions{}
	}
	if o.Cap == 0 {
		o.Cap = DefaultCap
	}
	if o.Largest == 0 {
		o.Largest = DefaultLargest
	}
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return o
}

// Validate reports whether o, with defaults filled in, is usable; errors
// wrap ErrInvalidOptions. It is nil-safe.
func (o *CandidateOptions) Validate() error {
	var c CandidateOptions
	if o != nil {
		c = *o
	}
	c.EnsureDefaults()
	if c.Cap < 2 || c.Cap > MaxCap {
		return fmt.Errorf("%w: Cap = %d; must be in 2..%d", ErrInvalidOptions, c.Cap, MaxCap)
	}
	if c.Largest < NoLargest {
		return fmt.Errorf("%w: Largest = %d; must be at least %d", ErrInvalidOptions, c.Largest, NoLargest)
	}
	if c.Workers < 1 {
		return fmt.Errorf("%w: Workers = %d; must be at least 1, or 0 for the default", ErrInvalidOptions, c.Workers)
	}
	return nil
}

// Bucket describes one capped bucket of candidate generation.
type Bucket struct {
	Key   uint64 // the band key with its low docBits bits cleared (EntryKey)
	Size  int    // distinct documents in the bucket
	First uint32 // the lowest document index, which every other member was linked to
}

// CandidateMetrics counts the work of candidate generation. It is a plain
// value; Largest is owned by the caller once returned.
type CandidateMetrics struct {
	Entries          int64    // entries consumed, duplicates included
	DuplicateEntries int64    // entries equal to their predecessor (same key and document), ignored
	Buckets          int64    // distinct keys
	SharedBuckets    int64    // buckets of two or more documents (the rest yield no pairs)
	Pairs            int64    // pairs emitted, before deduplication
	UniquePairs      int64    // distinct pairs; set by Candidates (a streaming driver sets it after its merge)
	CappedBuckets    int64    // buckets larger than Cap, linked to their first member
	CappedMembers    int64    // documents in capped buckets, summed over those buckets
	Largest          []Bucket // the largest capped buckets, by size descending, then key ascending
}

// DuplicatePairRatio returns the fraction of emitted pairs that were
// duplicates, 1 − UniquePairs/Pairs, or 0 if no pairs were emitted.
func (m CandidateMetrics) DuplicatePairRatio() float64 {
	if m.Pairs == 0 {
		return 0
	}
	return 1 - float64(m.UniquePairs)/float64(m.Pairs)
}

// String returns the metrics as an aligned two-column table, followed by the
// largest capped buckets, if any.
func (m CandidateMetrics) String() string {
	var sb strings.Builder
	row := func(name string, v int64) { fmt.Fprintf(&sb, "%-18s %12d\n", name, v) }
	row("entries", m.Entries)
	row("duplicate entries", m.DuplicateEntries)
	row("buckets", m.Buckets)
	row("shared buckets", m.SharedBuckets)
	row("pairs", m.Pairs)
	row("unique pairs", m.UniquePairs)
	row("capped buckets", m.CappedBuckets)
	row("capped members", m.CappedMembers)
	for _, b := range m.Largest {
		fmt.Fprintf(&sb, "capped bucket      %#016x size %d first %d\n", b.Key, b.Size, b.First)
	}
	return sb.String()
}

// Candidates returns the candidate pairs of an in-memory batch: entries
// holds PackEntry(key, doc, docBits) for every band key of every document,
// in any order. Documents sharing a key form a bucket; a bucket of s ≤ Cap
// documents yields all s·(s−1)/2 pairs, a larger one links each member to
// its lowest-index member (see CandidateOptions). The pairs, packed with
// PackPair (a < b), are appended to dst sorted ascending and without
// duplicates, and the extended slice is returned with the metrics.
//
// Candidates sorts entries in place ([SortEntries]) and then reuses it as
// scratch space: its contents are unspecified on return, and dst must not
// overlap it. It allocates a
// scratch buffer of len(entries) and, if the pairs outnumber the entries,
// more. The sorts run on opts.Workers goroutines. The result is
// deterministic: it depends only on the multiset of entries, never on
// Workers. docBits must be in 1..32 and opts valid, else the error wraps
// ErrInvalidArgument or ErrInvalidOptions.
//
// For batches larger than memory, use the streaming pieces instead:
// SortEntries per run, a Merger over the runs, a Grouper, and SortUnique and
// a unique Merger over the pair runs (see the package doc).
func Candidates(dst, entries []uint64, docBits uint, opts *CandidateOptions) ([]uint64, CandidateMetrics, error) {
	g, err := NewGrouper(docBits, opts)
	if err != nil {
		return dst, CandidateMetrics{}, err
	}
	var o CandidateOptions
	if opts != nil {
		o = *opts
	}
	workers := o.EnsureDefaults().Workers
	scratch := sortEntries(entries, nil, docBits, workers)
	start := len(dst)
	dst, err = g.Append(dst, entries)
	if err != nil {
		panic("lsh: Candidates: sorted entries rejected: " + err.Error())
	}
	dst = g.Flush(dst)
	m := g.Metrics()

	pairs := dst[start:]
	if len(scratch) < len(pairs) && len(entries) >= len(pairs) {
		scratch = entries // consumed: free to reuse
	}
	radix.SortKeyParallel(pairs, scratch, 0, workers)
	pairs = slices.Compact(pairs)
	m.UniquePairs = int64(len(pairs))
	return dst[:start+len(pairs)], m, nil
}

// Grouper turns a stream of entries sorted ascending (by key, then
// document, as SortEntries leaves them) into candidate pairs, holding only
// the current bucket (at most Cap documents) in memory. Feed it with
// Append, in as many calls as convenient, and end the stream with Flush.
// Pairs are emitted when their bucket closes (or, for a capped bucket, as
// members arrive), in a deterministic order, but neither sorted nor
// deduplicated across buckets: sort and deduplicate them with SortUnique
// and, across spilled runs, a unique Merger.
//
// A Grouper is made by NewGrouper; its zero value is not usable. It is not
// safe for concurrent use. Its output depends only on the entries.
type Grouper struct {
	docMask  uint64
	cap      int
	largestN int
	ref      uint32 // CandidateOptions.Reference

	started bool
	last    uint64   // the last entry consumed
	key     uint64   // key bits of the open bucket
	size    int      // distinct documents in the open bucket
	first   uint32   // the open bucket's first (lowest) document
	members []uint32 // once size ≥ 2: its documents while size ≤ cap; then only the first

	m CandidateMetrics
}

// NewGrouper returns a Grouper for entries packed with docBits (1..32)
// document bits. Errors wrap ErrInvalidArgument or ErrInvalidOptions.
func NewGrouper(docBits uint, opts *CandidateOptions) (*Grouper, error) {
	if docBits < 1 || docBits > 32 {
		return nil, fmt.Errorf("%w: docBits = %d; must be in 1..32", ErrInvalidArgument, docBits)
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	var o CandidateOptions
	if opts != nil {
		o = *opts
	}
	o.EnsureDefaults()
	return &Grouper{
		docMask:  1<<docBits - 1,
		cap:      o.Cap,
		largestN: max(o.Largest, 0),
		ref:      o.Reference,
	}, nil
}

// Append consumes entries, which must continue the ascending order of the
// entries consumed so far in this stream (an entry equal to its predecessor
// is counted as a duplicate and ignored), appends the pairs completed by
// them to dst, and returns the extended slice. The last bucket stays open
// until an entry with another key arrives or Flush is called. On an entry
// below its predecessor Append returns the pairs so far and an error
// wrapping ErrUnsorted; the entries before it have been consumed.
//
// One call can emit up to Cap·(Cap−1)/2 pairs per bucket it closes; a
// driver bounding memory feeds entries in chunks and drains dst in between.
func (g *Grouper) Append(dst, entries []uint64) ([]uint64, error) {
	keyMask := ^g.docMask
	for i, e := range entries {
		switch {
		case !g.started:
			g.started = true
			g.open(e)
		case e <= g.last:
			if e != g.last {
				g.m.Entries += int64(i)
				return dst, fmt.Errorf("%w: entry %#x (index %d of this call) after %#x", ErrUnsorted, e, i, g.last)
			}
			g.m.DuplicateEntries++
		case e&keyMask != g.key:
			// Most buckets hold one document: only a shared bucket needs closing.
			if g.size > 1 {
				dst = g.close(dst)
			}
			g.open(e)
		default:
			dst = g.add(dst, uint32(e&g.docMask))
		}
		g.last = e
	}
	g.m.Entries += int64(len(entries))
	return dst, nil
}

// Flush closes the open bucket, appends its pairs to dst and returns the
// extended slice. It ends the stream: the next Append starts a new,
// independent stream (which may begin with any entry). Metrics keep
// accumulating across streams.
func (g *Grouper) Flush(dst []uint64) []uint64 {
	if g.started && g.size > 1 {
		dst = g.close(dst)
	}
	g.started = false
	return dst
}

// Metrics returns the counts so far; UniquePairs is left zero. The Largest
// slice is a copy.
func (g *Grouper) Metrics() CandidateMetrics {
	m := g.m
	m.Largest = slices.Clone(g.m.Largest)
	return m
}

func (g *Grouper) open(e uint64) {
	g.key = e &^ g.docMask
	g.size = 1
	g.first = uint32(e & g.docMask)
	g.m.Buckets++
}

// add puts another document (above all present) into the open bucket.
func (g *Grouper) add(dst []uint64, doc uint32) []uint64 {
	g.size++
	if g.size == 2 {
		g.members = append(g.members[:0], g.first)
	}
	if g.size <= g.cap {
		g.members = append(g.members, doc)
		return dst
	}
	first := uint64(g.members[0]) << 32
	if g.size == g.cap+1 {
		// The bucket just outgrew the cap: link the members buffered so far
		// to the first instead of pairing them all (bar reference
		// documents, which are never paired with each other: members
		// ascend, so they come first).
		ms := g.members[1:]
		for len(ms) > 0 && ms[0] < g.ref {
			ms = ms[1:]
		}
		for _, m := range ms {
			dst = append(dst, first|uint64(m))
		}
		g.m.Pairs += int64(len(ms))
		g.members = g.members[:1]
	}
	if doc < g.ref {
		return dst
	}
	g.m.Pairs++
	return append(dst, first|uint64(doc))
}

// close emits the remaining pairs of the open bucket, which holds two or
// more documents, and records it.
func (g *Grouper) close(dst []uint64) []uint64 {
	g.m.SharedBuckets++
	if g.size > g.cap {
		g.m.CappedBuckets++
		g.m.CappedMembers += int64(g.size)
		g.recordLargest(Bucket{Key: g.key, Size: g.size, First: g.members[0]})
		return dst
	}
	ms := g.members
	// Members ascend, so reference documents come first: ms[:r] are
	// reference documents, which are paired only with ms[r:].
	r := 0
	for r < len(ms) && ms[r] < g.ref {
		r++
	}
	for x, a := range ms {
		hi := uint64(a) << 32
		for _, b := range ms[max(x+1, r):] {
			dst = append(dst, hi|uint64(b))
		}
	}
	n := len(ms)
	g.m.Pairs += int64(n*(n-1)/2 - r*(r-1)/2)
	return dst
}

// recordLargest keeps the largestN biggest capped buckets, ordered by size
// descending, then key ascending.
func (g *Grouper) recordLargest(b Bucket) {
	l := g.m.Largest
	i, _ := slices.BinarySearchFunc(l, b, func(x, y Bucket) int {
		if x.Size != y.Size {
			return y.Size - x.Size // descending size
		}
		switch {
		case x.Key < y.Key:
			return -1
		case x.Key > y.Key:
			return 1
		}
		return 0
	})
	if i >= g.largestN {
		return
	}
	l = slices.Insert(l, i, b)
	if len(l) > g.largestN {
		l = l[:g.largestN]
	}
	g.m.Largest = l
}
