package dedup

import (
	"cmp"
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/neardup/neardup/internal/dupid"
	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/internal/radix"
)

// The exact-duplicate pass.
//
// Each worker hashes a document's normalised text (sketch.TextHasher, after
// boilerplate lines are dropped) before it signs it. Two documents with the
// same hash have the same features, so the same signature, the same band
// keys and similarity 1 under every verification: the later one is a copy
// of the earliest, and need not be signed. Which document is the earliest
// is decided by the collector, in input order: the first document of a hash
// goes into a table, every later one is a copy of it. The workers read the
// table to skip signing documents whose hash is already there (and those
// whose hash an earlier document of their own batch has); a document they
// signed that the collector then finds to be a copy (its first was still in
// flight) has its signature and band keys dropped. The table holds up to a
// share of the memory budget; the documents that arrive once it is full
// and whose hash is not in it go to an exact detector that spills
// (internal/dupid), which finds their copies after the sign stage; those
// copies were signed, and their band-key entries are skipped when buckets
// are formed. So every copy is found, whatever the budget.
//
// Copies cost no signature (mostly), band entries or verification. Their
// pairs are written as the run without the pass finds them (expander):
// all pairs of a group of copies at similarity 1, and for every verified
// pair (a, b) of first documents, the pairs of a's copies with b's, with
// (a, b)'s verdict — what buckets holding both groups pair, in full when
// they are within the bucket cap, else linked to the first document. So the
// outputs are those of a run without the pass whenever no bucket that holds
// a copy is over the cap (the pass takes copies out of the buckets, so it
// caps fewer).

// exactPass is the state of the exact-duplicate pass of one run.
type exactPass struct {
	table *hashTable // the collector writes it; workers read it (see hashTable)
	limit int        // entries the table may hold
	// The fields above are what the workers read (get, fetch), those
	// below the collector's, which it writes: a cache line apart, so
	// that its stores do not take the line from the workers' caches.
	_ [cacheLine]byte

	late    *dupid.Detector // documents resolved after the sign stage
	lateOpt dupid.Options
	hash    [16]byte

	touched uint64 // what prefetch read (kept, so that its reads are made)

	copies     []uint64 // copy<<32 | first, by copy ascending
	lateCopies bool     // some copies were found after the sign stage (and banded)

	// standIns are the groups whose first document was made bad after the
	// sign stage (dropBad), first<<32 | heir: the first stands in for the
	// group's first good copy, its heir, until the edges are known
	// (the expander), ascending; base is the first input document's number
	// (after the reference documents), for the statuses.
	standIns []uint64
	base     uint32
}

// newExactPass returns the pass of a run of the given budget, an eighth of
// which it takes: the table's array grows to a twelfth (while it grows, the
// arrays of half and all of that: an eighth), and once the table is full the
// late detector has a 24th.
func newExactPass(memory int64, tmp string) *exactPass {
	return &exactPass{
		table:   newBoundedHashTable(memory / 12),
		limit:   hashTableLimit(memory / 12),
		lateOpt: dupid.Options{Memory: memory / 24, TempDir: tmp},
	}
}

// presize sizes the table, before the first document is resolved, for the
// documents a run is expected to have (docs, an estimate, its error
// included: see expectedDocs; 0 or less, unknown), within the table's
// share of the budget: the table then grows by doubling only if the
// estimate fell short (hashTable.reserve). Which documents are copies does
// not depend on it (the table's limit is the budget's, whatever its size).
// The collector calls it once, with the first batch (see collect).
func (e *exactPass) presize(docs int64) {
	if docs <= 0 {
		return
	}
	e.table.reserve(int(min(docs, int64(e.limit))))
}

// has reports whether a document with hash k is already first of its
// group (for the workers, at any time during the sign stage). It may miss
// a first the collector has just added, never report one it has not.
func (e *exactPass) has(k [2]uint64) bool {
	_, ok := e.table.get(k[0], k[1])
	return ok
}

// fetch starts bringing the table's slot for key k into the processor's
// caches, for a worker's has(k) a document later (see signer.document).
func (e *exactPass) fetch(k [2]uint64) {
	e.table.prefetch(k[0], k[1])
}

// prefetch brings the table's slots for the keys of hashes (two words a
// key: a batch's, before the collector resolves them in turn) into the
// processor's caches, all at once (hashTable.touch).
func (e *exactPass) prefetch(hashes []uint64) {
	e.touched += e.table.touch(hashes)
}

// resolve is the collector's decision on document doc of hash k, in input
// order: it returns the document doc is a copy of, or −1 when doc is the
// first of its hash so far (or, once the table is full, left to finish).
func (e *exactPass) resolve(k [2]uint64, doc uint32) (int64, error) {
	f, _, err := e.resolveLate(k, doc)
	return f, err
}

// resolveLate is resolve, and whether doc went to the late detector (the
// table full, its hash not in it).
func (e *exactPass) resolveLate(k [2]uint64, doc uint32) (int64, bool, error) {
	full := e.table.len() >= e.limit
	if f, ok := e.table.getOrPut(k[0], k[1], doc, !full); ok {
		return e.copyOf(doc, f), false, nil
	}
	if !full {
		return -1, false, nil
	}
	return -1, true, e.addLate(k, doc)
}

// resolveAbsent is resolveLate for a document whose worker found its hash
// absent from the table, its probe ending at empty slot slot of array gen
// (hashTable.lookup): when the hash is absent still and would go to that
// slot (hashTable.absentAt), the decision is made without the table's
// probe, and is the one the probe would make; else it probes.
func (e *exactPass) resolveAbsent(k [2]uint64, doc uint32, slot uint64, gen uint32) (int64, bool, error) {
	if !e.table.absentAt(slot, gen) {
		return e.resolveLate(k, doc)
	}
	if e.table.len() >= e.limit {
		return -1, true, e.addLate(k, doc)
	}
	e.table.putAt(k[0], k[1], doc, slot)
	return -1, false, nil
}

// lookup is get, with where a hash not found would go (hashTable.lookup),
// for resolveAbsent.
func (e *exactPass) lookup(k [2]uint64) (doc uint32, ok bool, slot uint64, gen uint32) {
	return e.table.lookup(k[0], k[1])
}

// copyOf records doc as a copy of f, whose hash (doc's) the table holds:
// resolve's decision once its probe found f. The collector calls it
// without the probe for a document whose worker found f in the table: the
// table never drops a key nor changes its document while the sign stage
// runs, so the probe would find f again.
func (e *exactPass) copyOf(doc, f uint32) int64 {
	e.copies = append(e.copies, uint64(doc)<<32|uint64(f))
	return int64(f)
}

// addLate hands document doc of hash k, which the full table does not
// hold, to the late detector: resolve's decision then.
func (e *exactPass) addLate(k [2]uint64, doc uint32) error {
	if e.late == nil {
		var err error
		if e.late, err = dupid.New(&e.lateOpt); err != nil {
			return err
		}
	}
	binary.LittleEndian.PutUint64(e.hash[:], k[0])
	binary.LittleEndian.PutUint64(e.hash[8:], k[1])
	return e.late.Add(e.hash[:], dupid.Position{Index: int64(doc)})
}

// get returns the document the table holds for hash k, if any (for the
// workers, at any time during the sign stage, as has).
func (e *exactPass) get(k [2]uint64) (uint32, bool) {
	return e.table.get(k[0], k[1])
}

// finish finds the copies among the documents the table could not hold and
// calls mark for each (copy, first); it drops the table.
func (e *exactPass) finish(mark func(copy, first uint32)) error {
	e.table = nil
	if e.late == nil {
		return nil
	}
	defer e.late.Close()
	err := e.late.All(func(d *dupid.Duplicate) error {
		c, f := uint32(d.Second.Index), uint32(d.First.Index)
		e.copies = append(e.copies, uint64(c)<<32|uint64(f))
		e.lateCopies = true
		mark(c, f)
		return nil
	})
	slices.Sort(e.copies)
	return err
}

// dropBad takes the documents made bad after the sign stage (their id
// repeats an earlier document's, under SkipBad) out of the groups of
// copies: a copy is left out, as a run without the pass leaves it. A group's
// first document f made bad is skipped as well, but its first good copy c,
// which a run without the pass signs in its place, was not signed: f, whose
// signature, bucket keys and text are c's (they have the same features),
// stands in for c through candidates and verification. So f is made good
// and c bad until the expander gives f's edges to c and makes f bad again,
// and c the group's first; the others of the group become copies of c.
// Statuses are swapped, not added, so that the documents counted while f
// stands in (SimHash's blocks) are those of a run without the pass. The
// pass numbers documents from base on (after the reference documents);
// status takes a document's position among the inputs. It never fails: the
// error and id (a document's id) are those of the caller's contract, from
// when a bad first failed the run with ErrExactPassBad.
func (e *exactPass) dropBad(status []uint8, base uint32, _ func(uint32) []byte) error {
	kept := e.copies[:0]
	for _, c := range e.copies {
		if status[uint32(c>>32)-base] != docBad {
			kept = append(kept, c)
		}
	}
	e.copies = kept
	e.base = base
	heirs := map[uint32]uint32{} // bad first → its heir
	for _, c := range e.copies { // by copy ascending: the first seen is the heir
		f, cp := uint32(c), uint32(c>>32)
		if _, ok := heirs[f]; !ok && status[f-base] == docBad {
			heirs[f] = cp
			e.standIns = append(e.standIns, uint64(f)<<32|uint64(cp))
			status[f-base], status[cp-base] = docOK, docBad
		}
	}
	if len(heirs) == 0 {
		return nil
	}
	slices.Sort(e.standIns)
	kept = e.copies[:0]
	for _, c := range e.copies {
		f, cp := uint32(c), uint32(c>>32)
		if h, ok := heirs[f]; ok {
			if cp == h {
				continue
			}
			c = uint64(cp)<<32 | uint64(h)
		}
		kept = append(kept, c)
	}
	e.copies = kept
	return nil
}

// heirOf returns the document d stood in for (dropBad), or d.
func (e *exactPass) heirOf(d uint32) uint32 {
	i, ok := slices.BinarySearchFunc(e.standIns, d, func(s uint64, d uint32) int { return cmp.Compare(uint32(s>>32), d) })
	if !ok {
		return d
	}
	return uint32(e.standIns[i])
}

// handOver ends the stand-ins of dropBad once the edges are known: each
// bad first is bad again and its heir good (the expander gave the first's
// edges to its heir, heirOf, as they came).
func (e *exactPass) handOver(status []uint8) {
	for _, s := range e.standIns {
		status[uint32(s>>32)-e.base], status[uint32(s)-e.base] = docBad, docOK
	}
	e.standIns = nil
}

// expander adds the verified pairs to the run's edge store as verify finds
// them, with those that involve copies, as a run without the pass finds
// them (see above), streamed, so that no pair is held.
type expander struct {
	r      *run
	e      *exactPass // nil: no pass
	groups copyGroups
	limit  int // the bucket cap
}

// copyGroups are the groups of copies, by first document: a bitmap of the
// first documents with the count of firsts before each word (rank), so
// that a document's group is found in constant time without a map (a map
// of 0.5M groups at 5M short documents took 0.14 s to build, alone, and
// its look-ups as much again), and the groups' members one after another.
type copyGroups struct {
	firsts  []uint64 // bit d: document d is the first of a group
	rank    []uint32 // firsts set in the words before word w
	start   []uint32 // group i is members[start[i]:start[i+1]]
	members []uint32 // each group's first, then its copies, ascending
}

// newCopyGroups returns the groups of copies (copy<<32 | first, any order).
func newCopyGroups(copies []uint64) copyGroups {
	var g copyGroups
	if len(copies) == 0 {
		return g
	}
	// By first, then copy.
	byFirst := make([]uint64, len(copies))
	maxFirst := uint32(0)
	for i, c := range copies {
		byFirst[i] = c<<32 | c>>32
		maxFirst = max(maxFirst, uint32(c))
	}
	radix.Sort(byFirst, nil)
	g.firsts = make([]uint64, int(maxFirst)/64+1)
	g.members = make([]uint32, 0, len(copies)+len(copies)/2)
	last := int64(-1)
	for _, c := range byFirst {
		f := c >> 32
		if int64(f) != last {
			g.firsts[f/64] |= 1 << (f % 64)
			g.start = append(g.start, uint32(len(g.members)))
			g.members = append(g.members, uint32(f))
			last = int64(f)
		}
		g.members = append(g.members, uint32(c))
	}
	g.start = append(g.start, uint32(len(g.members)))
	g.rank = make([]uint32, len(g.firsts))
	n := uint32(0)
	for w, b := range g.firsts {
		g.rank[w] = n
		n += uint32(bits.OnesCount64(b))
	}
	return g
}

// len is the number of groups.
func (g *copyGroups) len() int { return max(len(g.start)-1, 0) }

// at returns group i: its first, then its copies, ascending.
func (g *copyGroups) at(i int) []uint32 { return g.members[g.start[i]:g.start[i+1]] }

// of returns the group whose first is d, or nil when d is first of none.
func (g *copyGroups) of(d uint32) []uint32 {
	w := int(d / 64)
	if w >= len(g.firsts) {
		return nil
	}
	bit := uint64(1) << (d % 64)
	if g.firsts[w]&bit == 0 {
		return nil
	}
	return g.at(int(g.rank[w]) + bits.OnesCount64(g.firsts[w]&(bit-1)))
}

// newExpander returns the expander of the run's verified pairs.
// Its groups are made by addGroups, before the first add.
func (r *run) newExpander() *expander {
	return &expander{r: r, e: r.exact, limit: r.job.BucketCap}
}

// add adds verified pair ed, after giving a stand-in's edge to its heir,
// and the pairs of the copies of its documents.
func (x *expander) add(ed edge) error {
	store := x.r.edges
	if x.e == nil {
		return store.add(ed)
	}
	if len(x.e.standIns) > 0 {
		a, b := x.e.heirOf(ed.a), x.e.heirOf(ed.b)
		ed.a, ed.b = min(a, b), max(a, b)
	}
	if err := store.add(ed); err != nil {
		return err
	}
	A, B := x.groups.of(ed.a), x.groups.of(ed.b)
	if A == nil && B == nil {
		return nil
	}
	oneA, oneB := [1]uint32{ed.a}, [1]uint32{ed.b}
	if A == nil {
		A = oneA[:]
	}
	if B == nil {
		B = oneB[:]
	}
	if len(A)+len(B) <= x.limit {
		for _, a := range A {
			for _, b := range B {
				if a != ed.a || b != ed.b {
					if err := store.add(edge{a: min(a, b), b: max(a, b), Verdict: ed.Verdict}); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	// A bucket over the cap links its members to its first, a.
	for _, b := range B[1:] {
		if err := store.add(edge{a: ed.a, b: b, Verdict: ed.Verdict}); err != nil {
			return err
		}
	}
	return nil
}

// addGroups makes the groups of copies and adds the pairs within each: they
// depend on no verdict, so verify adds them while the feature sets are
// made, before any verified pair (the store sorts what it holds, so the
// order of adding is not seen). It must return before the first add.
func (x *expander) addGroups() error {
	r := x.r
	if x.e == nil {
		return nil
	}
	x.groups = newCopyGroups(x.e.copies)
	// The verdict of two documents with the same features: the
	// estimate of equal signatures, and exact similarity 1. The
	// estimate of a signature against itself depends on the estimator
	// only, not on the signature (every slot matches), so any one
	// stands for them: under exact verification the run keeps no
	// signatures to read.
	same := make([]uint64, r.sketch.Words())
	v := jobspec.Verdict{Est: r.sketch.Similarity(same, same), Exact: -1}
	if r.job.Verify == VerifyExact {
		v.Exact = 1
	}
	for i := range x.groups.len() {
		G := x.groups.at(i)
		if len(G) <= x.limit {
			for i, a := range G {
				for _, b := range G[i+1:] {
					if err := r.edges.addSame(a, b, v); err != nil {
						return err
					}
				}
			}
			continue
		}
		for _, b := range G[1:] {
			if err := r.edges.addSame(G[0], b, v); err != nil {
				return err
			}
		}
	}
	// Sorted here, while the feature sets are made, rather than at seal,
	// after the pair checks, with one core idle.
	r.edges.sortSame()
	return nil
}

// finish ends the stand-ins and seals the store (after addGroups and every
// add).
func (x *expander) finish() error {
	r := x.r
	if x.e != nil {
		x.e.handOver(r.docs.status)
	}
	if err := r.edges.seal(); err != nil {
		return err
	}
	r.rep.Spill.EdgeBytes += r.edges.bytes
	return nil
}
