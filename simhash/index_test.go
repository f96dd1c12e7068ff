package simhash

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// bruteForce returns the entries within distance k of fp, sorted as Query
// sorts them, by scanning everything.
func bruteForce(entries []Entry, fp uint64, k int) []Match {
	var ms []Match
	for _, e := range entries {
		if d := Distance(e.Fingerprint, fp); d <= k {
			ms = append(ms, Match{ID: e.ID, Fingerprint: e.Fingerprint, Distance: d})
		}
	}
	slices.SortFunc(ms, cmpMatch)
	return ms
}

// flipBits returns fp with d distinct random bits flipped.
func flipBits(r *rand.Rand, fp uint64, d int) uint64 {
	for _, i := range r.Perm(64)[:d] {
		fp ^= 1 << i
	}
	return fp
}

// plantedSet returns n random entries, plus, for each of q query
// fingerprints, entries planted at distances 0..5 from it (two at distance 0:
// an exact duplicate under another id), and the queries.
func plantedSet(r *rand.Rand, n, q int) (entries []Entry, queries []uint64) {
	id := uint64(0)
	for range n {
		entries = append(entries, Entry{r.Uint64(), id})
		id++
	}
	for range q {
		fp := r.Uint64()
		if r.IntN(2) == 0 { // half the queries are near a stored entry
			fp = flipBits(r, entries[r.IntN(n)].Fingerprint, r.IntN(4))
		}
		queries = append(queries, fp)
		for d := 0; d <= 5; d++ {
			entries = append(entries, Entry{flipBits(r, fp, d), id})
			id++
		}
		entries = append(entries, Entry{fp, id})
		id++
	}
	return entries, queries
}

// checkQueries compares Query with a scan of want for every query and every
// k in 0..MaxDistance, and returns the number of matches seen.
func checkQueries(t *testing.T, ix *Index, want []Entry, queries []uint64) int {
	t.Helper()
	total := 0
	for qi, q := range queries {
		all := bruteForce(want, q, ix.MaxDistance())
		for k := 0; k <= ix.MaxDistance(); k++ {
			got, err := ix.Query(q, k)
			if err != nil {
				t.Fatal(err)
			}
			exp := all[:0:0]
			for _, m := range all {
				if m.Distance <= k {
					exp = append(exp, m)
				}
			}
			if !slices.Equal(got, exp) {
				t.Fatalf("query %d (%#x) k=%d: got %d matches %v; want %d %v",
					qi, q, k, len(got), head(got), len(exp), head(exp))
			}
			total += len(got)
		}
	}
	return total
}

// checkInvariants checks the index's internal structure: sorted tables, a
// directory equal to a fresh rebuild, the same entries in every table, and
// tombstones only for entries in the sorted arrays.
func checkInvariants(t testing.TB, ix *Index) {
	t.Helper()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	entriesOf := func(tb *table, s []slot) []Entry {
		es := make([]Entry, len(s))
		for i, x := range s {
			es[i] = Entry{tb.fingerprint(x.key), x.id}
		}
		slices.SortFunc(es, cmpEntry)
		return es
	}
	var base0, delta0 []Entry
	for ti := range ix.tables {
		tb := &ix.tables[ti]
		for _, s := range [][]slot{tb.base, tb.delta} {
			for i := 1; i < len(s); i++ {
				if cmpSlot(s[i-1], s[i]) >= 0 {
					t.Fatalf("table %d: slots %d and %d out of order", ti, i-1, i)
				}
			}
		}
		fresh := table{prefix: tb.prefix, base: tb.base}
		fresh.buildDir()
		if fresh.dirBits != tb.dirBits || !slices.Equal(fresh.dir, tb.dir) {
			t.Fatalf("table %d: directory (%d bits) differs from a rebuild (%d bits)", ti, tb.dirBits, fresh.dirBits)
		}
		b, d := entriesOf(tb, tb.base), entriesOf(tb, tb.delta)
		if ti == 0 {
			base0, delta0 = b, d
		} else if !slices.Equal(b, base0) || !slices.Equal(d, delta0) {
			t.Fatalf("table %d holds other entries than table 0", ti)
		}
	}
	for e := range ix.dead {
		if _, ok := slices.BinarySearchFunc(base0, e, cmpEntry); !ok {
			t.Fatalf("tombstone %v not in the sorted arrays", e)
		}
		if _, ok := slices.BinarySearchFunc(delta0, e, cmpEntry); ok {
			t.Fatalf("tombstone %v also in the delta", e)
		}
	}
	if want := len(base0) - len(ix.dead) + len(delta0); ix.n != want {
		t.Fatalf("n = %d; want %d", ix.n, want)
	}
}

func cmpEntry(a, b Entry) int {
	return cmpSlot(slot{a.Fingerprint, a.ID}, slot{b.Fingerprint, b.ID})
}

func head(ms []Match) []Match {
	return ms[:min(len(ms), 8)]
}

// TestIndexMatchesBruteForce is the main exactness test: at least 100,000 live
// random fingerprints plus planted neighbours, loaded by Build, Insert and
// Remove so
// the sorted arrays, the deltas and the tombstones all hold entries, then 250
// queries at every k in 0..4 against a scan.
func TestIndexMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	nq := 250
	if raceEnabled {
		nq = 60
	}
	entries, queries := plantedSet(r, 107_000, nq) // 1 in 17 is removed below
	r.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })

	ix, err := NewIndex(Options{MaxDistance: 4})
	if err != nil {
		t.Fatal(err)
	}
	split := len(entries) - 5000
	ix.Build(entries[:split])
	for _, e := range entries[split:] {
		if !ix.Insert(e.Fingerprint, e.ID) {
			t.Fatalf("Insert(%#x, %d) = false; want true", e.Fingerprint, e.ID)
		}
	}
	// Remove some entries of each origin; leave the rest as the model.
	var live []Entry
	for i, e := range entries {
		if i%17 == 0 {
			if !ix.Remove(e.Fingerprint, e.ID) {
				t.Fatalf("Remove(%#x, %d) = false; want true", e.Fingerprint, e.ID)
			}
			continue
		}
		live = append(live, e)
	}
	if got, want := ix.Len(), len(live); got != want {
		t.Fatalf("Len = %d; want %d", got, want)
	}
	if len(live) < 100_000 {
		t.Fatalf("%d live fingerprints; the test wants at least 100,000", len(live))
	}
	m := ix.Metrics()
	if m.Tombstones == 0 && m.DeltaEntries == 0 {
		t.Logf("note: no pending delta or tombstones left to exercise: %+v", m)
	}
	checkInvariants(t, ix)
	matches := checkQueries(t, ix, live, queries)
	if matches < len(queries)*5*3 {
		t.Errorf("only %d matches over all queries; the planted neighbours should give more", matches)
	}
	m = ix.Metrics()
	t.Logf("\n%s", m)
	if m.Merges == 0 {
		t.Errorf("Merges = 0; want the inserts and removes to have forced merges")
	}
}

// TestIndexLayouts runs the exactness check on every kind of layout: exact
// match, the minimum and larger block counts, and the largest K.
func TestIndexLayouts(t *testing.T) {
	for _, o := range []Options{
		{MaxDistance: ExactMatch},
		{MaxDistance: ExactMatch, Blocks: 3},
		{MaxDistance: 1},
		{MaxDistance: 1, Blocks: 5},
		{MaxDistance: 2, Blocks: 4},
		{}, // K=3, B=4
		{MaxDistance: 3, Blocks: 5},
		{MaxDistance: 3, Blocks: 6},
		{MaxDistance: 5, Blocks: 7},
		{MaxDistance: 6, Blocks: 10}, // unequal prefixes: 24..28 bits
		{MaxDistance: 8, Blocks: 9},
		{MaxDistance: 8, Blocks: 11},
	} {
		d := o
		d.EnsureDefaults()
		t.Run(fmt.Sprintf("K=%d,B=%d", d.k(), d.Blocks), func(t *testing.T) {
			r := rand.New(rand.NewPCG(23, uint64(o.MaxDistance*100+o.Blocks)))
			n, inserts := 20_000, 3000
			if raceEnabled || testing.Short() {
				n, inserts = 5000, 600
			}
			entries, queries := plantedSet(r, n, 60)
			ix, err := NewIndex(o)
			if err != nil {
				t.Fatal(err)
			}
			split := len(entries) - inserts
			ix.Build(entries[:split])
			for _, e := range entries[split:] {
				ix.Insert(e.Fingerprint, e.ID)
			}
			checkInvariants(t, ix)
			checkQueries(t, ix, entries, queries)
		})
	}
}

func TestIndexLarge(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("large index: skipped in -short mode and under the race detector")
	}
	r := rand.New(rand.NewPCG(25, 26))
	entries, queries := plantedSet(r, 1_000_000, 200)
	ix, err := NewIndex(Options{})
	if err != nil {
		t.Fatal(err)
	}
	ix.Build(entries)
	checkQueries(t, ix, entries, queries)
	t.Logf("\n%s", ix.Metrics())
}

// TestTableLayout checks the permutations: table 0 is the identity, every key
// permutation is undone by fingerprint, and each table's key leads with its
// blocks.
func TestTableLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	for _, o := range []Options{{}, {MaxDistance: 3, Blocks: 6}, {MaxDistance: 6, Blocks: 10}, {MaxDistance: 8, Blocks: 11}} {
		ix, err := NewIndex(o)
		if err != nil {
			t.Fatal(err)
		}
		if want := binomial(len(ix.blocks), ix.k); len(ix.tables) != want {
			t.Errorf("%+v: %d tables; want %d", o, len(ix.tables), want)
		}
		for range 200 {
			fp := r.Uint64()
			if got := ix.tables[0].key(fp); got != fp {
				t.Fatalf("%+v: table 0 key(%#x) = %#x; want identity", o, fp, got)
			}
			for ti := range ix.tables {
				tb := &ix.tables[ti]
				key := tb.key(fp)
				if got := tb.fingerprint(key); got != fp {
					t.Fatalf("%+v table %d: fingerprint(key(%#x)) = %#x", o, ti, fp, got)
				}
				if bits.OnesCount64(key) != bits.OnesCount64(fp) {
					t.Fatalf("%+v table %d: key changes popcount", o, ti)
				}
				// Flipping a bit outside the table's blocks keeps the prefix.
				var outside uint64
				for j, b := range ix.blocks {
					if tb.set&(1<<j) == 0 {
						outside |= b.mask
					}
				}
				other := fp ^ (outside & r.Uint64())
				if tb.key(other)>>(64-tb.prefix) != key>>(64-tb.prefix) {
					t.Fatalf("%+v table %d: prefix depends on bits outside its blocks", o, ti)
				}
			}
		}
	}
}

func TestIndexSetSemantics(t *testing.T) {
	ix, err := NewIndex(Options{})
	if err != nil {
		t.Fatal(err)
	}
	const fp, fp2 = 0xDEADBEEF_00000000, 0xDEADBEEF_00000007 // 3 bits apart
	steps := []struct {
		op     string
		fp, id uint64
		want   bool
		len    int
	}{
		{"insert", fp, 1, true, 1},
		{"insert", fp, 1, false, 1}, // the same pair: no-op
		{"insert", fp, 2, true, 2},  // same fingerprint, new id
		{"insert", fp2, 1, true, 3}, // same id, new fingerprint
		{"remove", fp, 3, false, 3},
		{"remove", fp2, 2, false, 3},
		{"remove", fp, 1, true, 2},
		{"remove", fp, 1, false, 2},
		{"insert", fp, 1, true, 3},
	}
	check := func(phase string) {
		for i, s := range steps {
			var got bool
			if s.op == "insert" {
				got = ix.Insert(s.fp, s.id)
			} else {
				got = ix.Remove(s.fp, s.id)
			}
			if got != s.want || ix.Len() != s.len {
				t.Fatalf("%s step %d: %s(%#x, %d) = %v, Len %d; want %v, Len %d",
					phase, i, s.op, s.fp, s.id, got, ix.Len(), s.want, s.len)
			}
		}
		got, _ := ix.Query(fp, 3)
		want := []Match{{1, fp, 0}, {2, fp, 0}, {1, fp2, 3}}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: Query = %v; want %v", phase, got, want)
		}
		if got := ix.AppendEntries(nil); !slices.Equal(got, []Entry{{fp, 1}, {fp, 2}, {fp2, 1}}) {
			t.Fatalf("%s: AppendEntries = %v", phase, got)
		}
	}
	// In the delta (fresh inserts) ...
	check("delta")
	// ... and in the sorted arrays with tombstones: Build the entries, then
	// remove and reinsert them there.
	ix.Build(nil)
	if ix.Len() != 0 {
		t.Fatalf("Build(nil): Len = %d; want 0", ix.Len())
	}
	check("delta again")
	ix.Build([]Entry{})
	steps = steps[4:] // start from the three entries, built in bulk
	steps[0].len, steps[1].len = 3, 3
	ix.Build([]Entry{{fp2, 1}, {fp, 2}, {fp, 1}, {fp, 2}}) // duplicates stored once
	if ix.Len() != 3 {
		t.Fatalf("Build with a duplicate: Len = %d; want 3", ix.Len())
	}
	check("base")
	if m := ix.Metrics(); m.BaseEntries != 3 {
		t.Fatalf("expected the entries to stay in the sorted arrays: %+v", m)
	}
	if n := ix.InsertBatch([]Entry{{fp, 1}, {fp, 9}, {fp, 9}}); n != 1 {
		t.Fatalf("InsertBatch = %d; want 1", n)
	}
}

// TestIndexRandomOps drives an index and a map through a long random sequence
// of operations over a small fingerprint space (so that collisions, exact
// duplicates and re-inserts are common), forcing merges, and compares them.
func TestIndexRandomOps(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	ix, err := NewIndex(Options{MaxDistance: 3, Blocks: 5})
	if err != nil {
		t.Fatal(err)
	}
	nops := 30_000
	if raceEnabled || testing.Short() {
		nops = 6000
	}
	runOps(t, ix, r, nops)
}

func runOps(t testing.TB, ix *Index, r *rand.Rand, nops int) {
	t.Helper()
	centers := make([]uint64, 64)
	for i := range centers {
		centers[i] = r.Uint64()
	}
	randEntry := func() Entry {
		return Entry{flipBits(r, centers[r.IntN(len(centers))], r.IntN(5)), uint64(r.IntN(8))}
	}
	model := make(map[Entry]bool)
	modelEntries := func() []Entry {
		var es []Entry
		for e := range model {
			es = append(es, e)
		}
		slices.SortFunc(es, cmpEntry)
		return es
	}
	for op := range nops {
		switch x := r.IntN(100); {
		case x < 50:
			e := randEntry()
			if got, want := ix.Insert(e.Fingerprint, e.ID), !model[e]; got != want {
				t.Fatalf("op %d: Insert(%v) = %v; want %v", op, e, got, want)
			}
			model[e] = true
		case x < 85:
			e := randEntry()
			if got, want := ix.Remove(e.Fingerprint, e.ID), model[e]; got != want {
				t.Fatalf("op %d: Remove(%v) = %v; want %v", op, e, got, want)
			}
			delete(model, e)
		case x < 87:
			batch := make([]Entry, r.IntN(300))
			want := 0
			for i := range batch {
				batch[i] = randEntry()
				if !model[batch[i]] {
					want++
				}
				model[batch[i]] = true
			}
			if got := ix.InsertBatch(batch); got != want {
				t.Fatalf("op %d: InsertBatch = %d; want %d", op, got, want)
			}
		case x < 88 && r.IntN(10) == 0:
			batch := make([]Entry, r.IntN(500))
			clear(model)
			for i := range batch {
				batch[i] = randEntry()
				model[batch[i]] = true
			}
			ix.Build(batch)
		default:
			q := randEntry().Fingerprint
			k := r.IntN(ix.MaxDistance() + 1)
			got, err := ix.Query(q, k)
			if err != nil {
				t.Fatal(err)
			}
			if want := bruteForce(modelEntries(), q, k); !slices.Equal(got, want) {
				t.Fatalf("op %d: Query(%#x, %d) = %v; want %v", op, q, k, got, want)
			}
		}
		if ix.Len() != len(model) {
			t.Fatalf("op %d: Len = %d; want %d", op, ix.Len(), len(model))
		}
		if op%1000 == 999 {
			checkInvariants(t, ix)
		}
	}
	checkInvariants(t, ix)
	if got, want := ix.AppendEntries(nil), modelEntries(); !slices.Equal(got, want) {
		t.Fatalf("AppendEntries = %d entries; want %d", len(got), len(want))
	}
}

func FuzzIndex(f *testing.F) {
	f.Add(uint64(1), uint16(500), uint8(3), uint8(4))
	f.Add(uint64(2), uint16(2000), uint8(0), uint8(0))
	f.Add(uint64(3), uint16(3000), uint8(8), uint8(10))
	f.Fuzz(func(t *testing.T, seed uint64, nops uint16, k, blocks uint8) {
		o := Options{MaxDistance: int(k % 9), Blocks: int(blocks % 17)}
		if o.MaxDistance == 0 {
			o.MaxDistance = ExactMatch
		}
		ix, err := NewIndex(o)
		if err != nil {
			if !errors.Is(err, ErrInvalidOptions) {
				t.Fatalf("NewIndex(%+v) error %v does not wrap ErrInvalidOptions", o, err)
			}
			return
		}
		n := int(nops % 4000)
		if raceEnabled {
			n /= 4
		}
		runOps(t, ix, rand.New(rand.NewPCG(seed, 31)), n)
	})
}

// TestIndexConcurrent runs inserts, removes and queries at once; run it with
// -race. Each writer owns a range of ids, so the final contents are known.
func TestIndexConcurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	ix, err := NewIndex(Options{})
	if err != nil {
		t.Fatal(err)
	}
	base := make([]Entry, 20_000)
	for i := range base {
		base[i] = Entry{r.Uint64(), uint64(i)}
	}
	ix.Build(base)
	const writers, perWriter = 4, 3000
	fps := make([]uint64, writers*perWriter)
	for i := range fps {
		fps[i] = r.Uint64()
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := w * perWriter; i < (w+1)*perWriter; i++ {
				id := uint64(1_000_000 + i)
				if !ix.Insert(fps[i], id) {
					t.Errorf("Insert(%#x, %d) = false", fps[i], id)
				}
				if i%3 == 0 && !ix.Remove(fps[i], id) {
					t.Errorf("Remove(%#x, %d) = false", fps[i], id)
				}
			}
		})
	}
	for q := range 4 {
		wg.Go(func() {
			qr := rand.New(rand.NewPCG(35, uint64(q)))
			for range 2000 {
				e := base[qr.IntN(len(base))]
				ms, err := ix.Query(flipBits(qr, e.Fingerprint, 2), 3)
				if err != nil {
					t.Error(err)
					return
				}
				if !slices.ContainsFunc(ms, func(m Match) bool { return m.ID == e.ID }) {
					t.Errorf("query near %v missed it: %v", e, ms)
					return
				}
				_ = ix.Metrics()
			}
		})
	}
	wg.Wait()
	checkInvariants(t, ix)
	want := slices.Clone(base)
	for i, fp := range fps {
		if i%3 != 0 {
			want = append(want, Entry{fp, uint64(1_000_000 + i)})
		}
	}
	slices.SortFunc(want, cmpEntry)
	if got := ix.AppendEntries(nil); !slices.Equal(got, want) {
		t.Fatalf("after concurrent writes: %d entries; want %d", len(got), len(want))
	}
}

// TestIndexDeterministic checks that the same set loaded in different orders
// and ways gives identical tables and answers.
func TestIndexDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 38))
	entries, queries := plantedSet(r, 5000, 20)
	a, _ := NewIndex(Options{})
	a.Build(entries)
	b, _ := NewIndex(Options{})
	for i := len(entries) - 1; i >= 0; i-- {
		b.Insert(entries[i].Fingerprint, entries[i].ID)
	}
	b.InsertBatch(entries) // all present already
	for ti := range a.tables {
		b.mu.Lock()
		b.compact()
		b.mu.Unlock()
		if !slices.Equal(a.tables[ti].base, b.tables[ti].base) {
			t.Fatalf("table %d differs between Build and reverse Insert", ti)
		}
	}
	for _, q := range queries {
		qa, _ := a.Query(q, 3)
		qb, _ := b.Query(q, 3)
		if !slices.Equal(qa, qb) {
			t.Fatalf("Query(%#x) differs: %v vs %v", q, qa, qb)
		}
	}
}

// TestSortSlots checks the radix sort against slices.SortFunc on keys that
// exercise skipped passes (constant bytes), odd and even pass counts, and runs
// of equal keys ordered by id.
func TestSortSlots(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, tc := range []struct {
		name string
		mask uint64 // bits of the key left random
		dups int    // distinct keys, 0 for all random
	}{
		{"random", ^uint64(0), 0},
		{"one byte varies", 0xFF << 16, 0},
		{"top byte constant", ^uint64(0) >> 8, 0},
		{"three bytes vary", 0x00FF_0000_FF00_00FF, 0},
		{"few keys", ^uint64(0), 37},
		{"all equal", 0, 0},
	} {
		for _, n := range []int{0, 1, 255, 256, 5000} {
			a := make([]slot, n)
			keys := make([]uint64, max(tc.dups, 1))
			for i := range keys {
				keys[i] = r.Uint64()
			}
			for i := range a {
				k := r.Uint64()&tc.mask | 0x5A5A_5A5A_5A5A_5A5A&^tc.mask
				if tc.dups > 0 {
					k = keys[r.IntN(tc.dups)]
				}
				a[i] = slot{k, r.Uint64()}
			}
			want := slices.Clone(a)
			slices.SortFunc(want, cmpSlot)
			sortSlots(a, make([]slot, n))
			if !slices.Equal(a, want) {
				t.Errorf("%s, n=%d: sortSlots differs from slices.SortFunc", tc.name, n)
			}
		}
	}
}

// TestIndexShrinks removes most entries one by one and checks that memory is
// given back and the answers stay exact.
func TestIndexShrinks(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	entries, queries := plantedSet(r, 20_000, 30)
	ix, _ := NewIndex(Options{})
	ix.Build(entries)
	before := ix.Metrics().MemoryBytes
	keep := entries[:0:0]
	for i, e := range entries {
		if i%10 != 0 {
			ix.Remove(e.Fingerprint, e.ID)
		} else {
			keep = append(keep, e)
		}
	}
	checkInvariants(t, ix)
	// Without giving memory back the arrays would keep their capacity and
	// MemoryBytes would not fall. A table's capacity is cut to its length
	// when it exceeds 2·length + 1024, so it ends within about twice the
	// live entries: under half of the start.
	if after := ix.Metrics().MemoryBytes; after > before/2 {
		t.Errorf("MemoryBytes after removing 90%%: %d; want under half of %d", after, before)
	}
	checkQueries(t, ix, keep, queries)
}

func TestQueryErrors(t *testing.T) {
	ix, err := NewIndex(Options{MaxDistance: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{-1, 3, 64} {
		ms, err := ix.Query(0, k)
		if !errors.Is(err, ErrQueryDistance) || ms != nil {
			t.Errorf("Query(0, %d) = %v, %v; want nil, ErrQueryDistance", k, ms, err)
		}
	}
	dst := []Match{{ID: 7}}
	got, err := ix.AppendQuery(dst, 0, 2)
	if err != nil || !slices.Equal(got, dst) {
		t.Errorf("AppendQuery on empty index = %v, %v; want dst unchanged", got, err)
	}
}

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		o          Options
		wantErr    bool
		k, blocks  int
		wantTables int
	}{
		{Options{}, false, 3, 4, 4},
		{Options{MaxDistance: ExactMatch}, false, 0, 1, 1},
		{Options{MaxDistance: 1}, false, 1, 2, 2},
		{Options{MaxDistance: 8}, false, 8, 9, 9},
		{Options{MaxDistance: 3, Blocks: 6}, false, 3, 6, 20},
		{Options{MaxDistance: 8, Blocks: 12}, false, 8, 12, 495},
		{Options{MaxDistance: 9}, true, 0, 0, 0},
		{Options{MaxDistance: -2}, true, 0, 0, 0},
		{Options{MaxDistance: 3, Blocks: 3}, true, 0, 0, 0},  // fewer blocks than K+1
		{Options{MaxDistance: 3, Blocks: 17}, true, 0, 0, 0}, // more than MaxBlocks
		{Options{MaxDistance: 3, Blocks: -1}, true, 0, 0, 0},
		{Options{MaxDistance: 8, Blocks: 13}, true, 0, 0, 0}, // 1287 tables
	} {
		err := tc.o.Validate()
		if (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, ErrInvalidOptions)) {
			t.Errorf("%+v: Validate = %v; want error %v", tc.o, err, tc.wantErr)
			continue
		}
		ix, err := NewIndex(tc.o)
		if tc.wantErr {
			if !errors.Is(err, ErrInvalidOptions) || ix != nil {
				t.Errorf("%+v: NewIndex = %v, %v; want ErrInvalidOptions", tc.o, ix, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%+v: %v", tc.o, err)
		}
		m := ix.Metrics()
		if ix.MaxDistance() != tc.k || m.Blocks != tc.blocks || m.Tables != tc.wantTables {
			t.Errorf("%+v: K=%d blocks=%d tables=%d; want %d, %d, %d",
				tc.o, ix.MaxDistance(), m.Blocks, m.Tables, tc.k, tc.blocks, tc.wantTables)
		}
	}
	var nilOpts *Options
	d := nilOpts.EnsureDefaults()
	if d.MaxDistance != DefaultMaxDistance || d.Blocks != DefaultMaxDistance+1 {
		t.Errorf("nil EnsureDefaults = %+v", d)
	}
	e := Options{MaxDistance: ExactMatch}
	e.EnsureDefaults()
	e2 := e
	e2.EnsureDefaults()
	if e != e2 || e.MaxDistance != ExactMatch || e.Blocks != 1 {
		t.Errorf("EnsureDefaults not idempotent for ExactMatch: %+v then %+v", e, e2)
	}
}

func TestMetrics(t *testing.T) {
	r := rand.New(rand.NewPCG(39, 40))
	entries, queries := plantedSet(r, 50_000, 10)
	ix, _ := NewIndex(Options{})
	ix.Build(entries)
	ix.Remove(entries[0].Fingerprint, entries[0].ID)
	ix.Insert(1, 2)
	var matches int
	for _, q := range queries {
		ms, _ := ix.Query(q, 3)
		matches += len(ms)
	}
	m := ix.Metrics()
	if m.Entries != ix.Len() || m.Entries != len(entries) {
		t.Errorf("Entries = %d; want %d", m.Entries, len(entries))
	}
	if m.Queries != uint64(len(queries)) || m.Probes != uint64(len(queries)*m.Tables) || m.Matches != uint64(matches) {
		t.Errorf("Queries, Probes, Matches = %d, %d, %d; want %d, %d, %d",
			m.Queries, m.Probes, m.Matches, len(queries), len(queries)*m.Tables, matches)
	}
	// Random fingerprints share a 16-bit prefix with n/65536 entries per
	// table; the planted neighbours add a few. Expect 4·n/65536 ≈ 3 per query
	// plus the planted ones, far from the n of a scan.
	if c := m.CandidatesPerQuery(); c < float64(m.MatchesPerQuery()) || c > 100 {
		t.Errorf("CandidatesPerQuery = %.1f; want between the matches (%.1f) and 100", c, m.MatchesPerQuery())
	}
	if m.Tombstones != 1 || m.DeltaEntries != 1 || m.Inserts != uint64(len(entries)+1) || m.Removes != 1 {
		t.Errorf("Tombstones, DeltaEntries, Inserts, Removes = %d, %d, %d, %d; want 1, 1, %d, 1",
			m.Tombstones, m.DeltaEntries, m.Inserts, m.Removes, len(entries)+1)
	}
	if b := m.BytesPerEntry(); b < 64 || b > 70 {
		t.Errorf("BytesPerEntry = %.1f; want 64 (4 tables × 16) plus a little directory", b)
	}
	if s := m.String(); !strings.Contains(s, "tables=4") || !strings.Contains(s, fmt.Sprint(m.Entries)) {
		t.Errorf("String() = %q", s)
	}
}
