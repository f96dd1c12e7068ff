package dedup

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/neardup/neardup/internal/dupid"
	"github.com/neardup/neardup/internal/jobspec"
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
// pairs are written as the run without the pass finds them (expandExact):
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

	late    *dupid.Detector // documents resolved after the sign stage
	lateOpt dupid.Options
	hash    [16]byte

	copies     []uint64 // copy<<32 | first, by copy ascending
	lateCopies bool     // some copies were found after the sign stage (and banded)

	// standIns are the groups whose first document was made bad after the
	// sign stage (dropBad), first<<32 | heir: the first stands in for the
	// group's first good copy, its heir, until the edges are known
	// (expandExact), ascending; base is the first input document's number
	// (after the reference documents), for the statuses.
	standIns []uint64
	base     uint32
}

// newExactPass returns the pass of a run of the given budget, a sixteenth
// of which the table may take.
func newExactPass(memory int64, tmp string) *exactPass {
	return &exactPass{
		table:   newHashTable(1 << 12),
		limit:   hashTableLimit(memory / 16),
		lateOpt: dupid.Options{Memory: memory / 16, TempDir: tmp},
	}
}

// has reports whether a document with hash k is already first of its
// group (for the workers, at any time during the sign stage). It may miss
// a first the collector has just added, never report one it has not.
func (e *exactPass) has(k [2]uint64) bool {
	_, ok := e.table.get(k[0], k[1])
	return ok
}

// resolve is the collector's decision on document doc of hash k, in input
// order: it returns the document doc is a copy of, or −1 when doc is the
// first of its hash so far (or, once the table is full, left to finish).
func (e *exactPass) resolve(k [2]uint64, doc uint32) (int64, error) {
	full := e.table.len() >= e.limit
	if f, ok := e.table.getOrPut(k[0], k[1], doc, !full); ok {
		e.copies = append(e.copies, uint64(doc)<<32|uint64(f))
		return int64(f), nil
	}
	if !full {
		return -1, nil
	}
	if e.late == nil {
		var err error
		if e.late, err = dupid.New(&e.lateOpt); err != nil {
			return -1, err
		}
	}
	binary.LittleEndian.PutUint64(e.hash[:], k[0])
	binary.LittleEndian.PutUint64(e.hash[8:], k[1])
	return -1, e.late.Add(e.hash[:], dupid.Position{Index: int64(doc)})
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
// and c bad until expandExact gives f's edges to c and makes f bad again,
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

// handOver ends the stand-ins of dropBad: each bad first's edges go to its
// heir, the first is bad again and the heir good. It reports whether it
// changed any edge (which then needs sorting again).
func (e *exactPass) handOver(status []uint8, edges []edge) bool {
	if len(e.standIns) == 0 {
		return false
	}
	changed := false
	for i := range edges {
		a, b := e.heirOf(edges[i].a), e.heirOf(edges[i].b)
		if a != edges[i].a || b != edges[i].b {
			edges[i].a, edges[i].b = min(a, b), max(a, b)
			changed = true
		}
	}
	for _, s := range e.standIns {
		status[uint32(s>>32)-e.base], status[uint32(s)-e.base] = docBad, docOK
	}
	e.standIns = nil
	return changed
}

// expandExact adds the verified pairs that involve copies, as a run without
// the pass finds them (see above), and sorts the edges by (a, b).
func (r *run) expandExact() error {
	e := r.exact
	if e == nil {
		return nil
	}
	if e.handOver(r.docs.status, r.edges) && len(e.copies) == 0 {
		sortEdges(r.edges)
		return nil
	}
	if len(e.copies) == 0 {
		return nil
	}
	groups := map[uint32][]uint32{} // first → its members, first included, ascending
	for _, c := range e.copies {
		f := uint32(c)
		if groups[f] == nil {
			groups[f] = []uint32{f}
		}
		groups[f] = append(groups[f], uint32(c>>32))
	}
	limit := r.job.BucketCap
	group := func(d uint32) []uint32 {
		if g := groups[d]; g != nil {
			return g
		}
		return []uint32{d}
	}
	edges := r.edges
	for _, ed := range r.edges {
		A, B := group(ed.a), group(ed.b)
		if len(A) == 1 && len(B) == 1 {
			continue
		}
		if len(A)+len(B) <= limit {
			for _, x := range A {
				for _, y := range B {
					if x != ed.a || y != ed.b {
						edges = append(edges, edge{a: min(x, y), b: max(x, y), Verdict: ed.Verdict})
					}
				}
			}
		} else { // a bucket over the cap links its members to its first, a
			for _, y := range B[1:] {
				edges = append(edges, edge{a: ed.a, b: y, Verdict: ed.Verdict})
			}
		}
	}
	firsts := make([]uint32, 0, len(groups))
	for f := range groups {
		firsts = append(firsts, f)
	}
	slices.Sort(firsts)
	// The verdict of two documents with the same features: the estimate of
	// equal signatures, and exact similarity 1. The estimate of a
	// signature against itself depends on the estimator only, not on the
	// signature (every slot matches), so any one stands for them: under
	// exact verification the run keeps no signatures to read.
	same := make([]uint64, r.sketch.Words())
	for _, f := range firsts {
		G := groups[f]
		v := jobspec.Verdict{Est: r.sketch.Similarity(same, same), Exact: -1}
		if r.job.Verify == VerifyExact {
			v.Exact = 1
		}
		if len(G) <= limit {
			for i, x := range G {
				for _, y := range G[i+1:] {
					edges = append(edges, edge{a: x, b: y, Verdict: v})
				}
			}
		} else {
			for _, y := range G[1:] {
				edges = append(edges, edge{a: f, b: y, Verdict: v})
			}
		}
	}
	sortEdges(edges)
	r.edges = edges
	return nil
}

// sortEdges sorts edges by (a, b).
func sortEdges(edges []edge) {
	slices.SortFunc(edges, func(x, y edge) int {
		if c := cmp.Compare(x.a, y.a); c != 0 {
			return c
		}
		return cmp.Compare(x.b, y.b)
	})
}
