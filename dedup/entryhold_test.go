package dedup

import (
	"testing"
)

// TestEntryHoldGrows: when the budget leaves the band-key entries more
// room than their share (entryHold), an uncompressed input's entries spill
// less than under the share alone, a gzipped input's (whose document count
// the first batch cannot tell) as much, and the outputs are the same.
func TestEntryHoldGrows(t *testing.T) {
	plain, zipped := plainAndGzipped(t, plantedCopies(20000, 2000))
	opts := func() *Options { return &Options{Workers: 2, Memory: 16 << 20} }

	// Under 16 MiB the fixed reserve leaves nothing more.
	shareOut, share := runDedup(t, []string{plain}, opts())
	if share.Spill.EntryBytes == 0 {
		t.Fatal("no band-key entries spilled under 16 MiB: the corpus is too small for this test")
	}
	_, zshare := runDedup(t, []string{zipped}, opts())

	defer func(r int64) { entryReserve = r }(entryReserve)
	entryReserve = 0
	grownOut, grown := runDedup(t, []string{plain}, opts())
	if grown.Spill.EntryBytes >= share.Spill.EntryBytes/2 {
		t.Errorf("with the budget's room: %d bytes of entries spilled; under the share alone %d", grown.Spill.EntryBytes, share.Spill.EntryBytes)
	}
	sameOutputs(t, shareOut, grownOut)
	zgrownOut, zgrown := runDedup(t, []string{zipped}, opts())
	if zgrown.Spill.EntryBytes != zshare.Spill.EntryBytes {
		t.Errorf("gzipped input: %d bytes of entries spilled, %d without the room: want the same", zgrown.Spill.EntryBytes, zshare.Spill.EntryBytes)
	}
	sameOutputs(t, shareOut, zgrownOut)
}

// TestEntryHold: the room entryHold gives the entries shrinks as the
// documents expected grow, is none for an unknown count or a budget the
// shares and the reserve take whole, and is smaller for texts kept whole
// than for texts kept by location, by at most the texts' share.
func TestEntryHold(t *testing.T) {
	const gib = 1 << 30
	r := &run{opts: &Options{Memory: gib}, exact: &exactPass{}, texts: &textStore{}}
	r.job.Verify = VerifyExact
	batch := func(ids, texts int) *signed {
		s := &signed{docs: make([]docRes, 100), ids: make([]byte, 100*ids), texts: make([]byte, 100*texts)}
		return s
	}
	located := batch(10, 0)
	base := int64(gib) / 4 * 3 / 4 // NewPartitioned's hold of the entries' quarter
	if h := r.entryHold(5_000_000, located); h <= base || h > gib/2 {
		t.Errorf("1 GiB, 5M documents: hold %d MiB; want more than the share's %d MiB, at most half the budget", h>>20, base>>20)
	}
	prev := int64(gib)
	for _, n := range []int64{1, 1e6, 5e6, 10e6, 20e6, 40e6} {
		h := r.entryHold(n, located)
		if h > prev || h < 0 {
			t.Errorf("%d documents: hold %d after %d for fewer", n, h, prev)
		}
		prev = h
	}
	if prev != 0 {
		t.Errorf("40M documents under 1 GiB: hold %d; want 0", prev)
	}
	if h := r.entryHold(0, located); h != 0 {
		t.Errorf("unknown count: hold %d; want 0", h)
	}
	whole := batch(10, 300)
	hl, hw := r.entryHold(2e6, located), r.entryHold(2e6, whole)
	if hw >= hl || hl-hw > gib/8+gib/16 {
		t.Errorf("2M documents: hold %d MiB with texts kept whole, %d by location", hw>>20, hl>>20)
	}
	small := &run{opts: &Options{Memory: 16 << 20}, exact: &exactPass{}, texts: &textStore{}}
	if h := small.entryHold(20000, located); h != 0 {
		t.Errorf("16 MiB: hold %d; want 0 (the reserve takes it)", h)
	}
}
