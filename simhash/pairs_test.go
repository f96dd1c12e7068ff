package simhash

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/extsort"
)

// plantedFingerprints returns n random fingerprints, then for each of c
// centres (random, or half of them a copy of an earlier fingerprint) one
// fingerprint at every distance 0..maxD from it, the centre included: many
// pairs at every distance up to maxD, and by the triangle inequality more
// between the planted ones.
func plantedFingerprints(r *rand.Rand, n, c, maxD int) []uint64 {
	fps := make([]uint64, 0, n+c*(maxD+2))
	for range n {
		fps = append(fps, r.Uint64())
	}
	for range c {
		centre := r.Uint64()
		if len(fps) > 0 && r.IntN(2) == 0 {
			centre = fps[r.IntN(len(fps))]
		}
		fps = append(fps, centre)
		for d := 0; d <= maxD; d++ {
			fps = append(fps, flipBits(r, centre, d))
		}
	}
	r.Shuffle(len(fps), func(i, j int) { fps[i], fps[j] = fps[j], fps[i] })
	return fps
}

// brutePairs returns every pair (a < b) of fps within distance k, packed as
// a<<32 | b, sorted.
func brutePairs(fps []uint64, k int) []uint64 {
	var ps []uint64
	for a := range fps {
		for b := a + 1; b < len(fps); b++ {
			if bits.OnesCount64(fps[a]^fps[b]) <= k {
				ps = append(ps, uint64(a)<<32|uint64(b))
			}
		}
	}
	return ps
}

// distanceCounts returns how many of the pairs are at each distance.
func distanceCounts(fps, pairs []uint64) map[int]int {
	c := make(map[int]int)
	for _, p := range pairs {
		c[Distance(fps[p>>32], fps[uint32(p)])]++
	}
	return c
}

func comparePairs(t *testing.T, what string, got, want []uint64) {
	t.Helper()
	if !slices.Equal(got, want) {
		missing, extra := 0, 0
		for _, p := range want {
			if _, ok := slices.BinarySearch(got, p); !ok {
				missing++
			}
		}
		for _, p := range got {
			if _, ok := slices.BinarySearch(want, p); !ok {
				extra++
			}
		}
		t.Fatalf("%s: got %d pairs; want %d (%d missing, %d extra)", what, len(got), len(want), missing, extra)
	}
}

// TestPairsMatchBruteForce checks that Layout.Pairs finds exactly the pairs
// within distance k that a comparison of all pairs finds, for every kind of
// layout and every k up to K, on random fingerprints with planted neighbours
// at every distance 0..K+2 (so pairs just beyond k are present and must not
// come out).
func TestPairsMatchBruteForce(t *testing.T) {
	for _, o := range []Options{
		{MaxDistance: ExactMatch},
		{MaxDistance: 1},
		{MaxDistance: 2, Blocks: 4},
		{}, // K=3, B=4
		{MaxDistance: 3, Blocks: 6},
		{MaxDistance: 4, Blocks: 6},
		{MaxDistance: 6, Blocks: 10},
		{MaxDistance: 8, Blocks: 9},
		{MaxDistance: 8, Blocks: 11},
	} {
		d := o
		d.EnsureDefaults()
		t.Run(fmt.Sprintf("K=%d,B=%d", d.k(), d.Blocks), func(t *testing.T) {
			l, err := NewLayout(o)
			if err != nil {
				t.Fatal(err)
			}
			K := l.MaxDistance()
			r := rand.New(rand.NewPCG(61, uint64(K*100+l.Blocks())))
			n, c := 3000, 150
			if raceEnabled || testing.Short() {
				n, c = 800, 40
			}
			fps := plantedFingerprints(r, n, c, K+2)
			all := brutePairs(fps, K+2)
			for k := 0; k <= K; k++ {
				var want []uint64
				for _, p := range all {
					if Distance(fps[p>>32], fps[uint32(p)]) <= k {
						want = append(want, p)
					}
				}
				got, m, err := l.Pairs(nil, fps, k, &PairOptions{Cap: NoCap})
				if err != nil {
					t.Fatal(err)
				}
				comparePairs(t, fmt.Sprintf("k=%d", k), got, want)
				if m.Pairs != int64(len(got)) {
					t.Errorf("k=%d: %d pairs emitted for %d distinct; want each once", k, m.Pairs, len(got))
				}
				if want := int64(len(fps) * l.Tables()); m.Entries != want {
					t.Errorf("k=%d: %d entries; want %d", k, m.Entries, want)
				}
			}
			// Every distance 0..K is represented, and K+1, K+2 exist but
			// were rightly left out.
			counts := distanceCounts(fps, all)
			for dist := 0; dist <= K+2; dist++ {
				if counts[dist] == 0 {
					t.Errorf("no pair at distance %d in the generated data", dist)
				}
			}
		})
	}
}

// groupSorted feeds a Grouper from a sorted stream in chunks of chunk entries
// and returns the pairs sorted, and the number emitted.
func groupSorted(t *testing.T, g *Grouper, next func() (uint64, bool), chunk int) ([]uint64, int) {
	t.Helper()
	var pairs, buf []uint64
	var err error
	for {
		v, ok := next()
		if ok {
			buf = append(buf, v)
		}
		if len(buf) == chunk || (!ok && len(buf) > 0) {
			if pairs, err = g.Append(pairs, buf); err != nil {
				t.Fatal(err)
			}
			buf = buf[:0]
		}
		if !ok {
			break
		}
	}
	pairs = g.Flush(pairs)
	emitted := len(pairs)
	slices.Sort(pairs)
	return slices.Compact(pairs), emitted
}

// TestPairsThroughExtsort runs the batch pipeline a driver runs: entries
// into an external sorter (held in memory, and spilled in runs of 1024
// entries), the merged stream through a Grouper in chunks, and checks the
// pairs against the brute-force search. Each pair must come out once, with
// no deduplication pass.
func TestPairsThroughExtsort(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 64))
	n, c := 4000, 200
	if raceEnabled || testing.Short() {
		n, c = 1500, 60
	}
	for _, o := range []Options{{}, {MaxDistance: 5, Blocks: 7}} {
		l, err := NewLayout(o)
		if err != nil {
			t.Fatal(err)
		}
		K := l.MaxDistance()
		fps := plantedFingerprints(r, n, c, K+2)
		docBits := uint(bits.Len(uint(len(fps) - 1)))
		for _, limit := range []int{1 << 30, 1024} {
			for _, k := range []int{K, K - 1} {
				name := fmt.Sprintf("K=%d/limit=%d/k=%d", K, limit, k)
				s := extsort.New(t.TempDir(), "simhash", limit)
				var es []uint64
				for i, fp := range fps {
					es = l.AppendEntries(es[:0], fp, uint32(i), docBits)
					if err := s.Add(es...); err != nil {
						t.Fatal(err)
					}
				}
				if limit == 1024 && s.Runs() < 5 {
					t.Fatalf("%s: %d runs spilled; want several", name, s.Runs())
				}
				if limit > 1024 && s.Runs() != 0 {
					t.Fatalf("%s: %d runs spilled; want none", name, s.Runs())
				}
				it, err := s.Iter(false)
				if err != nil {
					t.Fatal(err)
				}
				g, err := l.NewGrouper(fps, docBits, k, &PairOptions{Cap: NoCap})
				if err != nil {
					t.Fatal(err)
				}
				got, emitted := groupSorted(t, g, it.Next, 777)
				if err := it.Err(); err != nil {
					t.Fatal(err)
				}
				if err := it.Close(); err != nil {
					t.Fatal(err)
				}
				comparePairs(t, name, got, brutePairs(fps, k))
				if emitted != len(got) {
					t.Errorf("%s: %d pairs emitted for %d distinct; want each once", name, emitted, len(got))
				}
				if m := g.Metrics(); m.Pairs != int64(emitted) || m.Entries != int64(len(fps)*l.Tables()) {
					t.Errorf("%s: metrics %+v; want %d pairs and %d entries", name, m, emitted, len(fps)*l.Tables())
				}
			}
		}
	}
}

// TestPairsShortKeys checks a layout whose prefixes do not fit beside 32
// document bits (K = 3, B = 6: 31–33 prefix bits, 5 table bits, so 27 key
// bits): buckets grow but the pairs stay exact.
func TestPairsShortKeys(t *testing.T) {
	l, err := NewLayout(Options{MaxDistance: 3, Blocks: 6})
	if err != nil {
		t.Fatal(err)
	}
	const docBits = 32
	for ti := range l.Tables() {
		if got, want := l.KeyBits(ti, docBits), min(l.PrefixBits(ti), 64-5-32); got != want {
			t.Fatalf("KeyBits(%d, 32) = %d; want %d", ti, got, want)
		}
	}
	r := rand.New(rand.NewPCG(65, 66))
	// Fingerprints agreeing on their top 40 bits share every truncated key
	// of the tables whose blocks lie there, but most are far apart.
	fps := plantedFingerprints(r, 1500, 60, 5)
	for i := range 300 {
		fps[i] = fps[i]&^(1<<24-1) | r.Uint64()>>40
	}
	var es []uint64
	for i, fp := range fps {
		es = l.AppendEntries(es, fp, uint32(i), docBits)
	}
	slices.Sort(es)
	g, err := l.NewGrouper(fps, docBits, 3, &PairOptions{Cap: NoCap})
	if err != nil {
		t.Fatal(err)
	}
	pos := 0
	got, emitted := groupSorted(t, g, func() (uint64, bool) {
		if pos == len(es) {
			return 0, false
		}
		pos++
		return es[pos-1], true
	}, 1000)
	comparePairs(t, "docBits=32", got, brutePairs(fps, 3))
	if emitted != len(got) {
		t.Errorf("%d pairs emitted for %d distinct; want each once", emitted, len(got))
	}
}

// TestEntryPacking checks the packing against its definition: table number
// on top, then the first KeyBits bits of the permuted fingerprint, zeros,
// and the document.
func TestEntryPacking(t *testing.T) {
	r := rand.New(rand.NewPCG(67, 68))
	for _, o := range []Options{{MaxDistance: ExactMatch}, {}, {MaxDistance: 3, Blocks: 6}, {MaxDistance: 8, Blocks: 11}} {
		l, err := NewLayout(o)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := l.TableBits(), bits.Len(uint(l.Tables()-1)); got != want {
			t.Errorf("%+v: TableBits = %d; want %d", o, got, want)
		}
		for _, docBits := range []uint{1, 17, 32} {
			for range 50 {
				fp := r.Uint64()
				doc := uint32(r.Uint64() >> (64 - docBits))
				es := l.AppendEntries(nil, fp, doc, docBits)
				if len(es) != l.Tables() {
					t.Fatalf("%d entries; want %d", len(es), l.Tables())
				}
				for ti, e := range es {
					tb, kb := l.TableBits(), l.KeyBits(ti, docBits)
					wantKey := l.tables[ti].key(fp) >> (64 - kb)
					var gotTable uint64
					if tb > 0 {
						gotTable = e >> (64 - tb)
					}
					gotKey := e << tb >> (64 - kb)
					middle := e << (tb + kb) >> (uint(tb+kb) + docBits) // bits between key and doc
					if gotTable != uint64(ti) || gotKey != wantKey || middle != 0 || uint32(e&(1<<docBits-1)) != doc {
						t.Fatalf("%+v docBits=%d table %d: entry %#x = table %d key %#x middle %#x; want table %d key %#x doc %d",
							o, docBits, ti, e, gotTable, gotKey, middle, ti, wantKey, doc)
					}
				}
			}
		}
	}
}

// TestPairsCap checks a bucket over the cap: its members are compared with
// the first member only, the bucket is counted, and without a cap every
// pair comes out.
func TestPairsCap(t *testing.T) {
	l, err := NewLayout(Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(69, 70))
	fps := make([]uint64, 0, 60)
	for range 50 { // 50 identical fingerprints: one bucket in each table
		fps = append(fps, 0x0123456789ABCDEF)
	}
	for range 10 {
		fps = append(fps, r.Uint64())
	}
	got, m, err := l.Pairs(nil, fps, 3, &PairOptions{Cap: 10})
	if err != nil {
		t.Fatal(err)
	}
	if m.CappedBuckets != 4 || m.CappedMembers != 4*50 {
		t.Errorf("capped %d buckets, %d members; want 4 and 200", m.CappedBuckets, m.CappedMembers)
	}
	var want []uint64
	for b := 1; b < 50; b++ {
		want = append(want, uint64(b)) // (0, b)
	}
	comparePairs(t, "cap 10", got, want)
	if m.Pairs != 4*49 {
		t.Errorf("%d pairs emitted; want 4 × 49 (once per capped table)", m.Pairs)
	}

	got, m, err = l.Pairs(nil, fps, 3, &PairOptions{Cap: NoCap})
	if err != nil {
		t.Fatal(err)
	}
	if m.CappedBuckets != 0 {
		t.Errorf("NoCap: %d capped buckets", m.CappedBuckets)
	}
	comparePairs(t, "no cap", got, brutePairs(fps, 3))
	if len(got) < 50*49/2 {
		t.Errorf("no cap: %d pairs; want at least %d", len(got), 50*49/2)
	}

	// The default cap is far above this bucket.
	got2, _, err := l.Pairs(nil, fps, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	comparePairs(t, "default cap", got2, got)
}

func TestGrouperErrors(t *testing.T) {
	l, err := NewLayout(Options{})
	if err != nil {
		t.Fatal(err)
	}
	fps := []uint64{1, 2, 3}
	for _, c := range []struct {
		docBits uint
		k       int
		opts    *PairOptions
		want    error
	}{
		{0, 3, nil, ErrInvalidArgument},
		{33, 3, nil, ErrInvalidArgument},
		{2, -1, nil, ErrQueryDistance},
		{2, 4, nil, ErrQueryDistance},
		{2, 3, &PairOptions{Cap: 1}, ErrInvalidOptions},
		{2, 3, &PairOptions{Cap: -2}, ErrInvalidOptions},
	} {
		if _, err := l.NewGrouper(fps, c.docBits, c.k, c.opts); !errors.Is(err, c.want) {
			t.Errorf("NewGrouper(docBits %d, k %d, %+v) = %v; want %v", c.docBits, c.k, c.opts, err, c.want)
		}
	}
	g, err := l.NewGrouper(fps, 2, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	es := l.AppendEntries(nil, 5, 1, 2)
	slices.Sort(es)
	if _, err := g.Append(nil, []uint64{es[1], es[0]}); !errors.Is(err, ErrUnsorted) {
		t.Errorf("unsorted: %v; want ErrUnsorted", err)
	}
	g.Flush(nil)
	bad := l.AppendEntries(nil, 5, 3, 2) // document 3 has no fingerprint
	if _, err := g.Append(nil, bad[:1]); !errors.Is(err, ErrDocument) {
		t.Errorf("document 3 of 3: %v; want ErrDocument", err)
	}
	if m := g.Metrics(); m.Entries != 1 {
		t.Errorf("Entries = %d; want 1 (the entry before the unsorted one)", m.Entries)
	}
	if _, _, err := l.Pairs(nil, fps, 4, nil); !errors.Is(err, ErrQueryDistance) {
		t.Errorf("Pairs k=4: %v; want ErrQueryDistance", err)
	}
	for _, f := range []func(){
		func() { l.AppendEntries(nil, 1, 4, 2) },
		func() { l.AppendEntries(nil, 1, 0, 0) },
		func() { l.KeyBits(0, 33) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		}()
	}
}

// TestPairsDuplicateEntries checks that an entry given twice is ignored.
func TestPairsDuplicateEntries(t *testing.T) {
	l, err := NewLayout(Options{})
	if err != nil {
		t.Fatal(err)
	}
	fps := []uint64{0xF0, 0xF1, 1 << 40}
	var es []uint64
	for i, fp := range fps {
		es = l.AppendEntries(es, fp, uint32(i), 2)
		es = l.AppendEntries(es, fp, uint32(i), 2)
	}
	slices.Sort(es)
	g, err := l.NewGrouper(fps, 2, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := g.Append(nil, es)
	if err != nil {
		t.Fatal(err)
	}
	got = g.Flush(got)
	if !slices.Equal(got, []uint64{0<<32 | 1}) {
		t.Errorf("pairs %x; want [(0, 1)]", got)
	}
	if m := g.Metrics(); m.DuplicateEntries != int64(len(es)/2) {
		t.Errorf("DuplicateEntries = %d; want %d", m.DuplicateEntries, len(es)/2)
	}
}
