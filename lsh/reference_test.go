package lsh

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestReferenceDocuments checks CandidateOptions.Reference against its
// definition: the pairs are exactly those without it that have a member at
// or above Reference, whatever the cap (capped buckets included: their
// first member is the lowest, a reference document whenever they hold one),
// and the bucket counts are unchanged.
func TestReferenceDocuments(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	const docs = 2000
	docBits := DocBits(docs)
	entries := randomEntries(rng, docs, 12, 1500, docBits)
	for _, cap := range []int{2, 5, 40, DefaultCap} {
		base, baseM, err := Candidates(nil, slices.Clone(entries), docBits, &CandidateOptions{Cap: cap})
		if err != nil {
			t.Fatal(err)
		}
		for _, ref := range []uint32{0, 1, 7, docs / 2, docs - 1, docs} {
			t.Run(fmt.Sprintf("cap=%d/ref=%d", cap, ref), func(t *testing.T) {
				got, m, err := Candidates(nil, slices.Clone(entries), docBits, &CandidateOptions{Cap: cap, Reference: ref})
				if err != nil {
					t.Fatal(err)
				}
				var want []uint64
				for _, p := range base {
					if _, b := UnpackPair(p); b >= ref {
						want = append(want, p)
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("got %d pairs; want %d (the pairs without Reference that have a member ≥ %d)", len(got), len(want), ref)
				}
				if ref == 0 && fmt.Sprint(m) != fmt.Sprint(baseM) {
					t.Fatalf("Reference 0 metrics:\n%v\nwant:\n%v", m, baseM)
				}
				if m.Buckets != baseM.Buckets || m.SharedBuckets != baseM.SharedBuckets || m.CappedBuckets != baseM.CappedBuckets ||
					m.CappedMembers != baseM.CappedMembers || fmt.Sprint(m.Largest) != fmt.Sprint(baseM.Largest) {
					t.Fatalf("bucket counts changed:\n%v\nwithout Reference:\n%v", m, baseM)
				}
				if m.Pairs > baseM.Pairs || m.Pairs < int64(len(got)) {
					t.Fatalf("Pairs = %d; want between the %d unique pairs and %d (without Reference)", m.Pairs, len(got), baseM.Pairs)
				}
			})
		}
	}
}

// TestGrouperReferenceEmits checks by hand that pairs of reference documents
// are not emitted, not only deduplicated away: Pairs counts what was emitted.
func TestGrouperReferenceEmits(t *testing.T) {
	const docBits = 8
	e := func(key uint64, doc uint32) uint64 { return PackEntry(key<<docBits, doc, docBits) }
	g, err := NewGrouper(docBits, &CandidateOptions{Cap: 3, Reference: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Bucket 1: reference documents only; bucket 2: {1, 2, 5}; bucket 3:
	// {0, 1, 2, 6, 7}, capped: 6 and 7 link to 0.
	dst, err := g.Append(nil, []uint64{e(1, 0), e(1, 1), e(1, 2), e(2, 1), e(2, 2), e(2, 5), e(3, 0), e(3, 1), e(3, 2), e(3, 6), e(3, 7)})
	if err != nil {
		t.Fatal(err)
	}
	dst = g.Flush(dst)
	want := []uint64{PackPair(1, 5), PackPair(2, 5), PackPair(0, 6), PackPair(0, 7)}
	if !slices.Equal(dst, want) {
		t.Fatalf("got %x; want %x", dst, want)
	}
	if m := g.Metrics(); m.Pairs != 4 || m.SharedBuckets != 3 || m.CappedBuckets != 1 {
		t.Fatalf("metrics %+v; want 4 pairs, 3 shared buckets, 1 capped", m)
	}
}
