package simhash

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/neardup/neardup/internal/radix"
)

// Default values of PairOptions.
const (
	// DefaultCap is the default PairOptions.Cap: a bucket of 4096 documents
	// costs 8.4 million popcounts (about 10 ms), and random fingerprints
	// fill buckets that large only when a table's key is short for the
	// corpus (16 bits at 268 million documents), which a layout chosen for
	// the corpus size avoids (see package plan).
	DefaultCap = 4096

	// NoCap as PairOptions.Cap compares every pair of every bucket, however
	// large: exact, at a cost quadratic in the largest bucket.
	NoCap = -1
)

// PairOptions configures a Grouper and Layout.Pairs. The zero value, and nil,
// ask for the defaults.
type PairOptions struct {
	// Cap is the largest bucket, in documents, whose members are all
	// compared with each other. A larger bucket (many documents sharing a
	// table key: exact duplicates by the thousand, or a key too short for
	// the corpus) instead compares each member with its first,
	// lowest-numbered member only, and is counted in
	// PairMetrics.CappedBuckets: pairs are then missed, and pairs from
	// capped buckets may repeat across tables. 0 means the default,
	// DefaultCap (4096 documents); NoCap (−1) never caps. Range 2 and up,
	// or NoCap.
	Cap int
}

// EnsureDefaults fills zero fields with their defaults and returns o. It is
// nil-safe: a nil o yields a new PairOptions holding the defaults.
func (o *PairOptions) EnsureDefaults() *PairOptions {
	if o == nil {
		o = &PairOptions{}
	}
	if o.Cap == 0 {
		o.Cap = DefaultCap
	}
	return o
}

// Validate reports whether o, with defaults filled in, is usable; errors wrap
// ErrInvalidOptions. It is nil-safe.
func (o *PairOptions) Validate() error {
	var c PairOptions
	if o != nil {
		c = *o
	}
	c.EnsureDefaults()
	if c.Cap < 2 && c.Cap != NoCap {
		return fmt.Errorf("%w: Cap %d (want at least 2, or NoCap)", ErrInvalidOptions, c.Cap)
	}
	return nil
}

// PairMetrics counts the work of turning entries into pairs. A plain value.
type PairMetrics struct {
	Entries          int64 // entries consumed, duplicates included
	DuplicateEntries int64 // entries equal to their predecessor, ignored
	Buckets          int64 // distinct (table, key) buckets
	SharedBuckets    int64 // buckets of two or more documents
	Comparisons      int64 // pairs whose Hamming distance was computed
	Pairs            int64 // pairs emitted: within distance k, each once (but see CappedBuckets)
	CappedBuckets    int64 // buckets larger than PairOptions.Cap: members compared with the first only
	CappedMembers    int64 // documents in capped buckets, summed over them
}

// ComparisonsPerEntry returns Comparisons/Entries, or 0 without entries.
func (m PairMetrics) ComparisonsPerEntry() float64 {
	if m.Entries == 0 {
		return 0
	}
	return float64(m.Comparisons) / float64(m.Entries)
}

// String returns the metrics as an aligned two-column table.
func (m PairMetrics) String() string {
	var sb strings.Builder
	row := func(name string, v int64) { fmt.Fprintf(&sb, "%-18s %12d\n", name, v) }
	row("entries", m.Entries)
	row("duplicate entries", m.DuplicateEntries)
	row("buckets", m.Buckets)
	row("shared buckets", m.SharedBuckets)
	row("comparisons", m.Comparisons)
	row("pairs", m.Pairs)
	row("capped buckets", m.CappedBuckets)
	row("capped members", m.CappedMembers)
	return sb.String()
}

// Grouper turns a stream of a Layout's entries, sorted ascending, into the
// pairs of documents within Hamming distance k: the "bucket → candidate
// pairs" step of batch SimHash. It holds only the open bucket (at most Cap
// documents and their fingerprints) in memory.
//
// The caller keeps every document's fingerprint, indexed by document: fps[d]
// is the fingerprint entry document d was made from (8 bytes a document, the
// sketch itself). The Grouper reads fps and never writes it; fps must not
// change while the Grouper is in use.
//
// Within a bucket every pair of documents is compared (one popcount of the
// xor of their fingerprints) and emitted, packed as uint64(a)<<32 | b with
// a < b (lsh.PackPair's packing), when its distance is at most k and the
// bucket's table is the lowest-numbered table whose blocks the pair agrees
// on. Every pair within distance k ≤ MaxDistance() therefore comes out
// exactly once over the whole stream, whatever the number of tables, and
// nothing farther comes out: no deduplication or filtering pass is needed.
// (Capped buckets are the exception; see PairOptions.Cap.) Pairs are emitted
// when their bucket closes, in a deterministic order (by table, key, then
// a and b) that is not sorted by pair.
//
// A Grouper is made by Layout.NewGrouper; its zero value is not usable. It is
// not safe for concurrent use. Its output depends only on the entries, the
// fingerprints, k and the options.
type Grouper struct {
	l       *Layout
	fps     []uint64
	k       int
	docMask uint64
	cap     int // 0: no cap

	started bool
	last    uint64   // the last entry consumed
	key     uint64   // key bits (table included) of the open bucket
	table   int      // its table
	size    int      // distinct documents in the open bucket
	docs    []uint32 // its documents while size ≤ cap; then only the first
	fpb     []uint64 // their fingerprints

	m PairMetrics
}

// NewGrouper returns a Grouper for this layout's entries packed with docBits
// (1..32) document bits, finding pairs within distance k (0..MaxDistance())
// among the documents whose fingerprints fps holds (see Grouper for what the
// caller keeps). Errors wrap ErrInvalidArgument, ErrQueryDistance or
// ErrInvalidOptions.
func (l *Layout) NewGrouper(fps []uint64, docBits uint, k int, opts *PairOptions) (*Grouper, error) {
	if docBits < 1 || docBits > 32 {
		return nil, fmt.Errorf("%w: docBits %d (want 1..32)", ErrInvalidArgument, docBits)
	}
	if k < 0 || k > l.k {
		return nil, fmt.Errorf("%w: k = %d (want 0..%d)", ErrQueryDistance, k, l.k)
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	var o PairOptions
	if opts != nil {
		o = *opts
	}
	o.EnsureDefaults()
	g := &Grouper{l: l, fps: fps, k: k, docMask: 1<<docBits - 1, cap: o.Cap}
	if o.Cap == NoCap {
		g.cap = 0
	}
	return g, nil
}

// Append consumes entries, which must continue the ascending order of the
// entries consumed so far in this stream (an entry equal to its predecessor
// is counted as a duplicate and ignored), appends the pairs their buckets
// complete to dst, and returns the extended slice. The last bucket stays
// open until an entry with another key arrives or Flush is called.
//
// On an entry below its predecessor the error wraps ErrUnsorted; on an entry
// whose document has no fingerprint (document ≥ len(fps)) it wraps
// ErrDocument. Either way the entries before it have been consumed and dst
// holds the pairs so far.
//
// One call can emit up to Cap·(Cap−1)/2 pairs per bucket it closes (all of
// them only for identical or nearly identical fingerprints); a driver
// bounding memory feeds entries in chunks and drains dst in between.
func (g *Grouper) Append(dst, entries []uint64) ([]uint64, error) {
	keyMask := ^g.docMask
	for i, e := range entries {
		switch {
		case !g.started:
			if err := g.check(e, i); err != nil {
				g.m.Entries += int64(i)
				return dst, err
			}
			g.started = true
			g.open(e)
		case e <= g.last:
			if e != g.last {
				g.m.Entries += int64(i)
				return dst, fmt.Errorf("%w: entry %#x (index %d of this call) after %#x", ErrUnsorted, e, i, g.last)
			}
			g.m.DuplicateEntries++
		default:
			if err := g.check(e, i); err != nil {
				g.m.Entries += int64(i)
				return dst, err
			}
			if e&keyMask != g.key {
				if g.size > 1 {
					dst = g.close(dst)
				}
				g.open(e)
			} else {
				dst = g.add(dst, uint32(e&g.docMask))
			}
		}
		g.last = e
	}
	g.m.Entries += int64(len(entries))
	return dst, nil
}

// check reports an entry whose document has no fingerprint.
func (g *Grouper) check(e uint64, i int) error {
	if doc := e & g.docMask; doc >= uint64(len(g.fps)) {
		return fmt.Errorf("%w: entry %#x (index %d of this call) names document %d; fingerprints are given for %d",
			ErrDocument, e, i, doc, len(g.fps))
	}
	return nil
}

// Flush closes the open bucket, appends its pairs to dst and returns the
// extended slice. It ends the stream: the next Append starts a new,
// independent stream. Metrics keep accumulating across streams.
func (g *Grouper) Flush(dst []uint64) []uint64 {
	if g.started && g.size > 1 {
		dst = g.close(dst)
	}
	g.started = false
	return dst
}

// Metrics returns the counts so far.
func (g *Grouper) Metrics() PairMetrics { return g.m }

func (g *Grouper) open(e uint64) {
	g.key = e &^ g.docMask
	g.table = g.l.entryTable(e)
	g.size = 1
	doc := uint32(e & g.docMask)
	g.docs = append(g.docs[:0], doc)
	g.fpb = append(g.fpb[:0], g.fps[doc])
	g.m.Buckets++
}

// add puts another document (above all present) into the open bucket.
func (g *Grouper) add(dst []uint64, doc uint32) []uint64 {
	g.size++
	fp := g.fps[doc]
	if g.cap == 0 || g.size <= g.cap {
		g.docs = append(g.docs, doc)
		g.fpb = append(g.fpb, fp)
		return dst
	}
	if g.size == g.cap+1 {
		// The bucket just outgrew the cap: compare the members buffered so
		// far with the first instead of with each other.
		for i := 1; i < len(g.docs); i++ {
			dst = g.link(dst, g.docs[i], g.fpb[i])
		}
		g.docs, g.fpb = g.docs[:1], g.fpb[:1]
	}
	return g.link(dst, doc, fp)
}

// link compares a member of a capped bucket with the bucket's first member.
func (g *Grouper) link(dst []uint64, doc uint32, fp uint64) []uint64 {
	g.m.Comparisons++
	if bits.OnesCount64(fp^g.fpb[0]) <= g.k {
		g.m.Pairs++
		dst = append(dst, uint64(g.docs[0])<<32|uint64(doc))
	}
	return dst
}

// close emits the remaining pairs of the open bucket, which holds two or more
// documents, and records it.
func (g *Grouper) close(dst []uint64) []uint64 {
	g.m.SharedBuckets++
	if g.cap != 0 && g.size > g.cap {
		g.m.CappedBuckets++
		g.m.CappedMembers += int64(g.size)
		return dst
	}
	fps, docs, k := g.fpb, g.docs, g.k
	n := len(fps)
	g.m.Comparisons += int64(n * (n - 1) / 2)
	for i, a := range fps {
		hi := uint64(docs[i]) << 32
		for j := i + 1; j < n; j++ {
			x := a ^ fps[j]
			if bits.OnesCount64(x) > k {
				continue
			}
			// Report the pair only from the first table whose blocks it
			// agrees on: it meets in that table's bucket too.
			if int(g.l.first[g.l.sameBlocks(x)]) != g.table {
				continue
			}
			g.m.Pairs++
			dst = append(dst, hi|uint64(docs[j]))
		}
	}
	return dst
}

// Pairs returns every pair of documents within Hamming distance k of each
// other, in memory: fps[i] is document i's fingerprint. It builds the
// entries (AppendEntries, with docBits = bits.Len(len(fps)−1), at least 1),
// sorts them, and groups them (a Grouper); the pairs, packed as
// uint64(a)<<32 | b with a < b, are appended to dst sorted ascending without
// duplicates. It allocates about 16 bytes per entry, Tables() entries per
// document. With NoCap, or no bucket over the cap (PairMetrics.CappedBuckets
// = 0), the result is exactly the pairs a comparison of all pairs finds.
//
// k must be in 0..MaxDistance() (else the error wraps ErrQueryDistance), fps
// hold at most 1<<32 fingerprints (else ErrInvalidArgument) and opts be
// valid. fps is only read. The result is deterministic.
func (l *Layout) Pairs(dst, fps []uint64, k int, opts *PairOptions) ([]uint64, PairMetrics, error) {
	if uint64(len(fps)) > 1<<32 {
		return dst, PairMetrics{}, fmt.Errorf("%w: %d fingerprints (want at most 1<<32)", ErrInvalidArgument, len(fps))
	}
	docBits := uint(max(1, bits.Len64(uint64(max(len(fps), 1)-1))))
	g, err := l.NewGrouper(fps, docBits, k, opts)
	if err != nil {
		return dst, PairMetrics{}, err
	}
	entries := make([]uint64, 0, len(fps)*len(l.tables))
	for i, fp := range fps {
		entries = l.AppendEntries(entries, fp, uint32(i), docBits)
	}
	scratch := radix.Sort(entries, make([]uint64, len(entries)))
	start := len(dst)
	dst, err = g.Append(dst, entries)
	if err != nil {
		panic("simhash: Pairs: sorted entries rejected: " + err.Error())
	}
	dst = g.Flush(dst)
	pairs := dst[start:]
	if len(scratch) < len(pairs) {
		scratch = make([]uint64, len(pairs))
	}
	radix.Sort(pairs, scratch[:len(pairs)])
	pairs = slices.Compact(pairs) // only capped buckets repeat pairs
	return dst[:start+len(pairs)], g.Metrics(), nil
}
