package simhash

import (
	"fmt"
	"strings"
)

// Metrics describes an Index's layout, size and work done. It is a plain
// snapshot: its fields do not change after Metrics returns.
type Metrics struct {
	// Layout.
	MaxDistance   int // K
	Blocks        int // B
	Tables        int // C(B, K)
	MinPrefixBits int // shortest table key prefix, in bits
	MaxPrefixBits int // longest table key prefix, in bits

	// Size.
	Entries      int   // live entries (Len)
	BaseEntries  int   // entries per table in the sorted main arrays, tombstones included
	DeltaEntries int   // entries per table awaiting a merge into the main arrays
	Tombstones   int   // removed entries still in the main arrays
	MemoryBytes  int64 // approximate bytes held by tables, directories and tombstones

	// Work, counted since NewIndex.
	Inserts    uint64 // entries added (Insert, InsertBatch, Build)
	Removes    uint64 // entries removed
	Merges     uint64 // merges of the deltas and tombstones into the main arrays
	Queries    uint64 // queries answered (not counting rejected ones)
	Probes     uint64 // table probes: Tables per query
	Candidates uint64 // entries whose prefix matched a probe and whose distance was checked
	Matches    uint64 // matches returned
}

// Metrics returns a snapshot of the index's metrics.
func (ix *Index) Metrics() Metrics {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	m := Metrics{
		MaxDistance:   ix.k,
		Blocks:        len(ix.blocks),
		Tables:        len(ix.tables),
		MinPrefixBits: 64,
		Entries:       ix.n,
		BaseEntries:   len(ix.tables[0].base),
		DeltaEntries:  len(ix.tables[0].delta),
		Tombstones:    len(ix.dead),
		Inserts:       ix.inserts,
		Removes:       ix.removes,
		Merges:        ix.merges,
		Queries:       ix.queries.Load(),
		Probes:        ix.probes.Load(),
		Candidates:    ix.candidates.Load(),
		Matches:       ix.matches.Load(),
	}
	const slotBytes, tombstoneBytes = 16, 48 // a map entry of 16 bytes plus overhead
	for ti := range ix.tables {
		t := &ix.tables[ti]
		m.MinPrefixBits = min(m.MinPrefixBits, int(t.prefix))
		m.MaxPrefixBits = max(m.MaxPrefixBits, int(t.prefix))
		m.MemoryBytes += int64(cap(t.base)+cap(t.delta))*slotBytes + int64(cap(t.dir))*4
	}
	m.MemoryBytes += int64(len(ix.dead))*tombstoneBytes + int64(len(ix.first))*2
	return m
}

// CandidatesPerQuery returns the mean number of entries checked per query.
func (m Metrics) CandidatesPerQuery() float64 { return ratio(m.Candidates, m.Queries) }

// MatchesPerQuery returns the mean number of matches per query.
func (m Metrics) MatchesPerQuery() float64 { return ratio(m.Matches, m.Queries) }

// BytesPerEntry returns MemoryBytes divided by Entries.
func (m Metrics) BytesPerEntry() float64 { return ratio(uint64(m.MemoryBytes), uint64(m.Entries)) }

func ratio(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// String formats the metrics as a small table.
func (m Metrics) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "layout   K=%d blocks=%d tables=%d prefix=%d..%d bits\n",
		m.MaxDistance, m.Blocks, m.Tables, m.MinPrefixBits, m.MaxPrefixBits)
	fmt.Fprintf(&b, "entries  %d (base %d, delta %d, tombstones %d)\n",
		m.Entries, m.BaseEntries, m.DeltaEntries, m.Tombstones)
	fmt.Fprintf(&b, "memory   %d bytes (%.1f per entry)\n", m.MemoryBytes, m.BytesPerEntry())
	fmt.Fprintf(&b, "changes  inserts=%d removes=%d merges=%d\n", m.Inserts, m.Removes, m.Merges)
	fmt.Fprintf(&b, "queries  %d (probes %d, %.1f candidates and %.2f matches per query)\n",
		m.Queries, m.Probes, m.CandidatesPerQuery(), m.MatchesPerQuery())
	return b.String()
}
