package simhash

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
)

// Entry is one (fingerprint, id) pair stored in an Index.
type Entry struct {
	Fingerprint uint64 // the document's SimHash fingerprint
	ID          uint64 // the caller's document id; (Fingerprint, ID) pairs are unique in an Index
}

// Match is one entry found by a query, with its distance from the query
// fingerprint.
type Match struct {
	ID          uint64 // the stored document's id
	Fingerprint uint64 // its fingerprint
	Distance    int    // Hamming distance from the query's fingerprint, 0..MaxDistance
}

func cmpMatch(a, b Match) int {
	if c := cmp.Compare(a.Distance, b.Distance); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Fingerprint, b.Fingerprint); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// Index finds every stored fingerprint within a Hamming distance k ≤ K of a
// query fingerprint, exactly (no false negatives, no false positives), with
// the block-permutation tables of Manku, Jain and Das Sarma (see the package
// doc).
//
// An Index is a set of (fingerprint, id) pairs: inserting a pair that is
// already present does nothing and reports false. Distinct ids may share a
// fingerprint (exact duplicates) and one id may be stored under several
// fingerprints; each pair is a separate match. Ids are opaque to the index.
//
// Memory is 16 bytes per entry per table, C(Blocks, K) tables (64 bytes per
// entry with the defaults), plus a directory of under 1 byte per entry per
// table; online inserts add slack of up to a quarter (slices grow
// geometrically), and after many removals the arrays keep up to twice the
// live entries. Insert and Remove cost amortized O(√n) slot moves per table
// (mostly memmove); Build and InsertBatch sort instead and are much faster
// for many entries. A merge of pending changes holds the write lock for
// about one pass over the arrays (milliseconds at a million entries).
//
// The zero value is not usable; create an Index with NewIndex. An Index is
// safe for concurrent use: queries share a read lock, changes take the write
// lock. Query results are deterministic: they depend only on the set of
// stored pairs, never on insertion order or timing.
type Index struct {
	k      int
	blocks []block
	tables []table
	// first[z] is the lowest-numbered table whose blocks are all among the
	// blocks set in z, or noTable. A match is reported only by the table
	// first[zero blocks of fp^match], so each is reported once.
	first []uint16

	mu   sync.RWMutex
	dead map[Entry]struct{} // tombstones for entries still in the tables' base
	n    int                // live entries

	inserts, removes, merges uint64 // guarded by mu

	queries, probes, candidates, matches atomic.Uint64
}

const noTable = math.MaxUint16

// NewIndex returns an empty Index laid out as opts says (zero fields take
// their defaults). It returns an error wrapping ErrInvalidOptions if opts is
// out of range.
func NewIndex(opts Options) (*Index, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.EnsureDefaults()
	k, nb := opts.k(), opts.Blocks

	ix := &Index{k: k, dead: make(map[Entry]struct{})}
	ix.blocks = newBlocks(nb)
	sets := blockSets(nb, k)
	for _, s := range sets {
		t := newTable(ix.blocks, s)
		t.buildDir()
		ix.tables = append(ix.tables, t)
	}
	ix.first = firstTables(nb, sets)
	return ix, nil
}

// blockMask returns the mask of size bits starting off bits below the MSB.
func blockMask(off, size int) uint64 {
	return (math.MaxUint64 >> (64 - size)) << (64 - off - size)
}

// MaxDistance returns K, the largest k Query accepts.
func (ix *Index) MaxDistance() int { return ix.k }

// Len returns the number of stored entries.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.n
}

// Insert adds the pair (fp, id) and reports whether it was added: false means
// it was already present.
func (ix *Index) Insert(fp, id uint64) bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	t0 := &ix.tables[0]
	key0 := t0.key(fp)
	if t0.inBase(key0, id) {
		e := Entry{fp, id}
		if _, ok := ix.dead[e]; !ok {
			return false
		}
		delete(ix.dead, e) // removed earlier but not yet compacted away
	} else {
		if _, ok := t0.deltaIndex(key0, id); ok {
			return false
		}
		for ti := range ix.tables {
			t := &ix.tables[ti]
			key := t.key(fp)
			i, _ := t.deltaIndex(key, id)
			t.delta = slices.Insert(t.delta, i, slot{key, id})
		}
	}
	ix.n++
	ix.inserts++
	ix.maybeCompact()
	return true
}

// Remove deletes the pair (fp, id) and reports whether it was present.
func (ix *Index) Remove(fp, id uint64) bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	t0 := &ix.tables[0]
	key0 := t0.key(fp)
	if _, ok := t0.deltaIndex(key0, id); ok {
		for ti := range ix.tables {
			t := &ix.tables[ti]
			i, _ := t.deltaIndex(t.key(fp), id)
			t.delta = slices.Delete(t.delta, i, i+1)
		}
	} else {
		e := Entry{fp, id}
		if _, gone := ix.dead[e]; gone || !t0.inBase(key0, id) {
			return false
		}
		ix.dead[e] = struct{}{}
	}
	ix.n--
	ix.removes++
	ix.maybeCompact()
	return true
}

// Build replaces the contents of the index with entries (duplicates among
// them are stored once). It sorts each table once, so it is much faster than
// inserting the entries one by one. entries is only read.
func (ix *Index) Build(entries []Entry) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for ti := range ix.tables {
		t := &ix.tables[ti]
		t.base, t.delta = nil, nil
		t.buildDir()
	}
	clear(ix.dead)
	ix.n = 0
	ix.insertBatch(entries)
}

// InsertBatch adds entries as Insert would, but sorts each table once and
// merges, which is much faster than inserting them one by one when there are
// many. It returns how many were added (entries not already present, counted
// once). entries is only read.
func (ix *Index) InsertBatch(entries []Entry) int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.insertBatch(entries)
}

func (ix *Index) insertBatch(entries []Entry) int {
	if len(entries) == 0 {
		return 0
	}
	ix.compact()
	t0 := &ix.tables[0]
	add := make([]slot, len(entries))
	scratch := make([]slot, len(entries))
	for i, e := range entries {
		add[i] = slot{t0.key(e.Fingerprint), e.ID}
	}
	sortSlots(add, scratch)
	add = slices.Compact(add)
	add = subtractSorted(add, t0.base)
	if len(add) == 0 {
		return 0
	}
	for ti := len(ix.tables) - 1; ti >= 0; ti-- {
		t := &ix.tables[ti]
		var s []slot
		if ti == 0 {
			s = add
		} else {
			s = make([]slot, len(add))
			for i, a := range add {
				s[i] = slot{t.key(t0.fingerprint(a.key)), a.id}
			}
			sortSlots(s, scratch)
		}
		t.merge(s, true)
	}
	ix.n += len(add)
	ix.inserts += uint64(len(add))
	return len(add)
}

// subtractSorted removes from the sorted a the slots present in the sorted b.
func subtractSorted(a, b []slot) []slot {
	w, j := 0, 0
	for _, s := range a {
		for j < len(b) && cmpSlot(b[j], s) < 0 {
			j++
		}
		if j < len(b) && b[j] == s {
			continue
		}
		a[w] = s
		w++
	}
	return a[:w]
}

// deltaLimit is the number of pending inserts and tombstones past which they
// are merged into base: about 2√n (see table).
func deltaLimit(n int) int {
	return max(256, 2*int(math.Sqrt(float64(n))))
}

func (ix *Index) maybeCompact() {
	if len(ix.tables[0].delta)+len(ix.dead) > deltaLimit(len(ix.tables[0].base)) {
		ix.compact()
	}
}

// compact merges the deltas into the bases and drops tombstoned entries.
func (ix *Index) compact() {
	if len(ix.tables[0].delta) == 0 && len(ix.dead) == 0 {
		return
	}
	dead := make([]slot, 0, len(ix.dead))
	for ti := range ix.tables {
		t := &ix.tables[ti]
		dead = dead[:0]
		for e := range ix.dead {
			dead = append(dead, slot{t.key(e.Fingerprint), e.ID})
		}
		slices.SortFunc(dead, cmpSlot) // map order does not leak: sorted here
		t.remove(dead)
		t.merge(t.delta, false)
		t.delta = t.delta[:0]
	}
	clear(ix.dead)
	ix.merges++
}

// Query returns every stored entry within Hamming distance k of fp, sorted by
// distance, then fingerprint, then id. k must be in 0..MaxDistance(); otherwise
// the error wraps ErrQueryDistance. The returned slice is new and belongs to
// the caller. The cost does not fall for k below MaxDistance: every table is
// probed.
func (ix *Index) Query(fp uint64, k int) ([]Match, error) {
	return ix.AppendQuery(nil, fp, k)
}

// AppendQuery is Query appending the matches, sorted, to dst and returning the
// extended slice; dst's existing elements are left alone.
func (ix *Index) AppendQuery(dst []Match, fp uint64, k int) ([]Match, error) {
	if k < 0 || k > ix.k {
		return dst, fmt.Errorf("%w: k = %d (want 0..%d)", ErrQueryDistance, k, ix.k)
	}
	start := len(dst)
	var cands int
	ix.mu.RLock()
	for ti := range ix.tables {
		t := &ix.tables[ti]
		q := t.key(fp)
		lo, hi := t.baseRange(q)
		cands += hi - lo
		for _, s := range t.base[lo:hi] {
			if d := bits.OnesCount64(s.key ^ q); d <= k {
				dst = ix.report(dst, ti, t, fp, s, d, true)
			}
		}
		lo, hi = t.deltaRange(q)
		cands += hi - lo
		for _, s := range t.delta[lo:hi] {
			if d := bits.OnesCount64(s.key ^ q); d <= k {
				dst = ix.report(dst, ti, t, fp, s, d, false)
			}
		}
	}
	ix.mu.RUnlock()
	slices.SortFunc(dst[start:], cmpMatch)
	ix.queries.Add(1)
	ix.probes.Add(uint64(len(ix.tables)))
	ix.candidates.Add(uint64(cands))
	ix.matches.Add(uint64(len(dst) - start))
	return dst, nil
}

// report appends the match s found in table ti, unless a lower-numbered table
// also finds it or it is a tombstone.
func (ix *Index) report(dst []Match, ti int, t *table, fp uint64, s slot, d int, inBase bool) []Match {
	mfp := t.fingerprint(s.key)
	x := fp ^ mfp
	var z uint32
	for j, b := range ix.blocks {
		if x&b.mask == 0 {
			z |= 1 << j
		}
	}
	if int(ix.first[z]) != ti {
		return dst
	}
	if inBase && len(ix.dead) > 0 {
		if _, gone := ix.dead[Entry{mfp, s.id}]; gone {
			return dst
		}
	}
	return append(dst, Match{ID: s.id, Fingerprint: mfp, Distance: d})
}

// AppendEntries appends every stored entry to dst, sorted by fingerprint then
// id, and returns the extended slice.
func (ix *Index) AppendEntries(dst []Entry) []Entry {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	t0 := &ix.tables[0] // the identity table: keys are fingerprints
	base, delta := t0.base, t0.delta
	for len(base) > 0 || len(delta) > 0 {
		var s slot
		if len(delta) == 0 || (len(base) > 0 && cmpSlot(base[0], delta[0]) < 0) {
			s, base = base[0], base[1:]
			if _, gone := ix.dead[Entry{s.key, s.id}]; gone {
				continue
			}
		} else {
			s, delta = delta[0], delta[1:]
		}
		dst = append(dst, Entry{s.key, s.id})
	}
	return dst
}
