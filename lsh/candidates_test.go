package lsh

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestDocBits(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want uint
	}{
		{0, 1}, {1, 1}, {2, 1}, {3, 2}, {4, 2}, {5, 3}, {1 << 20, 20}, {1<<20 + 1, 21}, {1 << 32, 32},
	} {
		if got := DocBits(tt.n); got != tt.want {
			t.Errorf("DocBits(%d) = %d; want %d", tt.n, got, tt.want)
		}
	}
}

func TestPacking(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for range 1000 {
		docBits := uint(1 + rng.IntN(32))
		key := rng.Uint64()
		doc := uint32(rng.Uint64() & (1<<docBits - 1))
		e := PackEntry(key, doc, docBits)
		if EntryDoc(e, docBits) != doc || EntryKey(e, docBits) != key>>docBits<<docBits {
			t.Fatalf("PackEntry(%#x, %d, %d) = %#x unpacks to (%#x, %d)", key, doc, docBits, e, EntryKey(e, docBits), EntryDoc(e, docBits))
		}
		a, b := uint32(rng.Uint64()), uint32(rng.Uint64())
		if x, y := UnpackPair(PackPair(a, b)); x != a || y != b {
			t.Fatalf("UnpackPair(PackPair(%d, %d)) = %d, %d", a, b, x, y)
		}
	}
	got := AppendEntries([]uint64{1}, []uint64{0xffff_0000_0000_0000, 0x1234_5678_9abc_def0}, 5, 8)
	want := []uint64{1, 0xffff_0000_0000_0005, 0x1234_5678_9abc_de05}
	if !slices.Equal(got, want) {
		t.Errorf("AppendEntries = %x; want %x", got, want)
	}
}

// refCandidates is a map-based reference for Candidates.
func refCandidates(entries []uint64, docBits uint, capacity, largest int) ([]uint64, CandidateMetrics) {
	var m CandidateMetrics
	m.Entries = int64(len(entries))
	buckets := map[uint64]map[uint32]bool{}
	for _, e := range entries {
		k := EntryKey(e, docBits)
		if buckets[k] == nil {
			buckets[k] = map[uint32]bool{}
		}
		buckets[k][EntryDoc(e, docBits)] = true
	}
	distinct := map[uint64]bool{}
	for _, e := range entries {
		distinct[e] = true
	}
	m.DuplicateEntries = int64(len(entries) - len(distinct))
	pairs := map[uint64]bool{}
	for k, set := range buckets {
		m.Buckets++
		docs := make([]uint32, 0, len(set))
		for d := range set {
			docs = append(docs, d)
		}
		slices.Sort(docs)
		s := len(docs)
		if s >= 2 {
			m.SharedBuckets++
		}
		if s > capacity {
			m.CappedBuckets++
			m.CappedMembers += int64(s)
			m.Largest = append(m.Largest, Bucket{Key: k, Size: s, First: docs[0]})
			for _, d := range docs[1:] {
				pairs[PackPair(docs[0], d)] = true
			}
			m.Pairs += int64(s - 1)
			continue
		}
		for x := range docs {
			for y := x + 1; y < s; y++ {
				pairs[PackPair(docs[x], docs[y])] = true
			}
		}
		m.Pairs += int64(s * (s - 1) / 2)
	}
	slices.SortFunc(m.Largest, func(a, b Bucket) int {
		return cmp.Or(cmp.Compare(b.Size, a.Size), cmp.Compare(a.Key, b.Key))
	})
	if len(m.Largest) > largest {
		m.Largest = m.Largest[:largest]
	}
	if len(m.Largest) == 0 {
		m.Largest = nil
	}
	out := make([]uint64, 0, len(pairs))
	for p := range pairs {
		out = append(out, p)
	}
	slices.Sort(out)
	m.UniquePairs = int64(len(out))
	return out, m
}

// randomEntries makes entries for docs documents with keysPerDoc keys each,
// drawn from a key space small enough to form buckets of every size,
// including a few "boilerplate" keys shared by many documents, plus some
// exact duplicate entries; shuffled.
func randomEntries(rng *rand.Rand, docs, keysPerDoc, keySpace int, docBits uint) []uint64 {
	var entries []uint64
	for d := range docs {
		for range keysPerDoc {
			var k uint64
			switch x := rng.IntN(100); {
			case x < 3:
				k = uint64(rng.IntN(3)) // boilerplate
			case x < 60:
				k = uint64(3 + rng.IntN(keySpace))
			default:
				k = rng.Uint64() >> docBits // unique
			}
			entries = append(entries, PackEntry(k*prime1, uint32(d), docBits))
		}
		if rng.IntN(10) == 0 && len(entries) > 0 {
			entries = append(entries, entries[len(entries)-1]) // duplicate entry
		}
	}
	rng.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
	return entries
}

func TestCandidatesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, tt := range []struct {
		docs, keysPerDoc, keySpace, capacity, largest int
	}{
		{0, 4, 10, 5, 3},
		{1, 4, 10, 5, 3},
		{50, 4, 20, 5, 3},
		{300, 8, 200, 10, 4},
		{2000, 16, 3000, 30, 2},
		{2000, 16, 3000, 30, NoLargest},
		{5000, 4, 100, 1000, 10},
		{20000, 16, 30000, 30, 5}, // more entries than radix.LSDMax: the parallel sort path
	} {
		t.Run(fmt.Sprintf("%+v", tt), func(t *testing.T) {
			docBits := DocBits(tt.docs)
			entries := randomEntries(rng, tt.docs, tt.keysPerDoc, tt.keySpace, docBits)
			wantPairs, wantM := refCandidates(entries, docBits, tt.capacity, max(tt.largest, 0))
			for _, workers := range []int{1, 3} {
				opts := &CandidateOptions{Cap: tt.capacity, Largest: tt.largest, Workers: workers}
				prefix := []uint64{42}
				got, m, err := Candidates(slices.Clone(prefix), slices.Clone(entries), docBits, opts)
				if err != nil {
					t.Fatal(err)
				}
				if got[0] != 42 {
					t.Fatalf("Candidates overwrote dst's prefix")
				}
				if !slices.Equal(got[1:], wantPairs) {
					t.Fatalf("Candidates (workers %d): got %d pairs; want %d (reference)", workers, len(got)-1, len(wantPairs))
				}
				if fmt.Sprint(m) != fmt.Sprint(wantM) {
					t.Fatalf("metrics (workers %d):\n%v\nwant:\n%v", workers, m, wantM)
				}
			}
			if tt.docs > 1000 && wantM.CappedBuckets == 0 && tt.capacity < 100 {
				t.Fatalf("test data produced no capped bucket")
			}
		})
	}
}

// TestStreamingMatchesCandidates runs the streaming pipeline of the package
// doc — sorted entry runs, a merge, a Grouper fed in chunks, sorted pair
// runs and a unique merge — and checks it yields what Candidates does.
func TestStreamingMatchesCandidates(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	const docs = 3000
	docBits := DocBits(docs)
	entries := randomEntries(rng, docs, 12, 2000, docBits)
	opts := &CandidateOptions{Cap: 20}
	want, wantM, err := Candidates(nil, slices.Clone(entries), docBits, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ entryRun, chunk, pairRun int }{
		{len(entries), len(entries), 1 << 30}, {1000, 1, 100}, {777, 3, 1000}, {5000, 64, 50_000}, {1, 7, 10},
	} {
		t.Run(fmt.Sprintf("%+v", tt), func(t *testing.T) {
			// 1. Sorted entry runs.
			var runs []Run
			var scratch []uint64
			for lo := 0; lo < len(entries); lo += tt.entryRun {
				run := slices.Clone(entries[lo:min(lo+tt.entryRun, len(entries))])
				scratch = SortEntries(run, scratch, docBits)
				runs = append(runs, SliceRun(run))
			}
			// 2.–3. Merge, group in chunks, spill sorted unique pair runs.
			merged := NewMerger(runs, false)
			g, err := NewGrouper(docBits, opts)
			if err != nil {
				t.Fatal(err)
			}
			var pairRuns []Run
			var buf, chunk []uint64
			spill := func() {
				var u []uint64
				u, scratch = SortUnique(buf, scratch)
				pairRuns = append(pairRuns, SliceRun(slices.Clone(u)))
				buf = buf[:0]
			}
			for {
				var err error
				chunk, err = merged.Append(chunk[:0], tt.chunk)
				if err != nil && err != io.EOF {
					t.Fatal(err)
				}
				buf, _ = g.Append(buf, chunk)
				if len(buf) >= tt.pairRun {
					spill()
				}
				if err == io.EOF {
					break
				}
			}
			buf = g.Flush(buf)
			spill()
			// 4. Unique merge of the pair runs.
			var got []uint64
			final := NewMerger(pairRuns, true)
			for {
				var err error
				got, err = final.Append(got, 1000)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("streaming gave %d pairs; Candidates %d", len(got), len(want))
			}
			m := g.Metrics()
			m.UniquePairs = int64(len(got))
			if fmt.Sprint(m) != fmt.Sprint(wantM) {
				t.Fatalf("streaming metrics:\n%v\nCandidates metrics:\n%v", m, wantM)
			}
		})
	}
}

func TestGrouper(t *testing.T) {
	const docBits = 8
	e := func(key uint64, doc uint32) uint64 { return PackEntry(key<<docBits, doc, docBits) }
	g, err := NewGrouper(docBits, &CandidateOptions{Cap: 3, Largest: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Bucket 1: {1, 2, 3} (a duplicate entry of 2); bucket 2: {5}; bucket 3: {0, 4, 6, 7} capped.
	dst, err := g.Append(nil, []uint64{e(1, 1), e(1, 2), e(1, 2), e(1, 3), e(2, 5), e(3, 0), e(3, 4)})
	if err != nil {
		t.Fatal(err)
	}
	want := []uint64{PackPair(1, 2), PackPair(1, 3), PackPair(2, 3)}
	if !slices.Equal(dst, want) {
		t.Fatalf("after first Append got %x; want %x (bucket 3 still open)", dst, want)
	}
	dst, err = g.Append(dst, []uint64{e(3, 6), e(3, 7)})
	if err != nil {
		t.Fatal(err)
	}
	// Outgrowing the cap emits the links to the first member at once.
	want = append(want, PackPair(0, 4), PackPair(0, 6), PackPair(0, 7))
	if !slices.Equal(dst, want) {
		t.Fatalf("after capping got %x; want %x", dst, want)
	}
	if _, err := g.Append(dst, []uint64{e(2, 9)}); !errors.Is(err, ErrUnsorted) {
		t.Fatalf("Append of a smaller entry: error %v; want ErrUnsorted", err)
	}
	dst = g.Flush(dst)
	m := g.Metrics()
	wantM := CandidateMetrics{
		Entries: 9, DuplicateEntries: 1, Buckets: 3, SharedBuckets: 2, Pairs: 6, CappedBuckets: 1, CappedMembers: 4,
		Largest: []Bucket{{Key: 3 << docBits, Size: 4, First: 0}},
	}
	if fmt.Sprint(m) != fmt.Sprint(wantM) {
		t.Fatalf("metrics:\n%v\nwant:\n%v", m, wantM)
	}
	// After Flush a new stream may start anywhere.
	dst, err = g.Append(dst[:0], []uint64{e(0, 1), e(0, 2)})
	if err != nil {
		t.Fatalf("Append after Flush: %v", err)
	}
	if dst = g.Flush(dst); !slices.Equal(dst, []uint64{PackPair(1, 2)}) {
		t.Fatalf("second stream got %x", dst)
	}
}

func TestLargestBounded(t *testing.T) {
	const docBits = 12
	var entries []uint64
	// Buckets of sizes 5..14 under keys in a scrambled order; two of size 9.
	sizes := map[uint64]int{7: 5, 3: 14, 9: 9, 1: 9, 4: 12, 8: 6, 2: 13, 6: 7, 5: 11, 0: 10}
	for k, s := range sizes {
		for d := range s {
			entries = append(entries, PackEntry(k<<docBits, uint32(d*3+int(k)), docBits))
		}
	}
	_, m, err := Candidates(nil, entries, docBits, &CandidateOptions{Cap: 8, Largest: 4})
	if err != nil {
		t.Fatal(err)
	}
	want := []Bucket{{3 << docBits, 14, 3}, {2 << docBits, 13, 2}, {4 << docBits, 12, 4}, {5 << docBits, 11, 5}}
	if !slices.Equal(m.Largest, want) {
		t.Errorf("Largest = %v; want %v", m.Largest, want)
	}
	if m.CappedBuckets != 7 {
		t.Errorf("CappedBuckets = %d; want 7 (sizes 9, 9, 10, 11, 12, 13, 14)", m.CappedBuckets)
	}
	_, m, _ = Candidates(nil, entries, docBits, &CandidateOptions{Cap: 8, Largest: 7})
	if m.Largest[4] != (Bucket{0, 10, 0}) || m.Largest[5] != (Bucket{1 << docBits, 9, 1}) || m.Largest[6] != (Bucket{9 << docBits, 9, 9}) {
		t.Errorf("Largest tail = %v; want sizes 10, 9, 9 with the equal sizes by key", m.Largest[4:])
	}
}

func TestCandidateOptions(t *testing.T) {
	var nilOpts *CandidateOptions
	if d := nilOpts.EnsureDefaults(); d.Cap != DefaultCap || d.Largest != DefaultLargest {
		t.Errorf("nil EnsureDefaults = %+v", d)
	}
	if err := nilOpts.Validate(); err != nil {
		t.Errorf("nil Validate = %v", err)
	}
	for _, o := range []CandidateOptions{{Cap: 1}, {Cap: -3}, {Cap: MaxCap + 1}, {Largest: -2}, {Workers: -1}} {
		if err := o.Validate(); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%+v.Validate() = %v; want ErrInvalidOptions", o, err)
		}
		if _, err := NewGrouper(8, &o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("NewGrouper(%+v) error = %v; want ErrInvalidOptions", o, err)
		}
	}
	for _, bits := range []uint{0, 33} {
		if _, _, err := Candidates(nil, nil, bits, nil); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Candidates(docBits=%d) error = %v; want ErrInvalidArgument", bits, err)
		}
	}
}

func TestMerger(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, unique := range []bool{false, true} {
		var runs []Run
		var all []uint64
		for i := range 7 {
			n := rng.IntN(200)
			if i == 3 {
				n = 0 // an empty run
			}
			run := make([]uint64, n)
			for j := range run {
				run[j] = rng.Uint64N(300)
			}
			slices.Sort(run)
			all = append(all, run...)
			runs = append(runs, SliceRun(run))
		}
		slices.Sort(all)
		if unique {
			all = slices.Compact(all)
		}
		var got []uint64
		m := NewMerger(runs, unique)
		for {
			v, err := m.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, v)
		}
		if !slices.Equal(got, all) {
			t.Errorf("unique=%v: merge of %d values differs from sorting the concatenation", unique, len(all))
		}
		if _, err := m.Next(); err != io.EOF {
			t.Errorf("Next after the end = %v; want io.EOF", err)
		}
	}
	if _, err := NewMerger(nil, true).Next(); err != io.EOF {
		t.Errorf("empty merge Next = %v; want io.EOF", err)
	}
}

type failingRun struct {
	vals []uint64
	err  error
}

func (r *failingRun) Next() (uint64, error) {
	if len(r.vals) == 0 {
		return 0, r.err
	}
	v := r.vals[0]
	r.vals = r.vals[1:]
	return v, nil
}

func TestMergerErrors(t *testing.T) {
	m := NewMerger([]Run{SliceRun([]uint64{1, 5, 3}), SliceRun([]uint64{2})}, false)
	var err error
	for err == nil {
		_, err = m.Next()
	}
	if !errors.Is(err, ErrUnsorted) {
		t.Errorf("merge of an unsorted run: error %v; want ErrUnsorted", err)
	}
	if _, err2 := m.Next(); err2 != err {
		t.Errorf("Next after a failure = %v; want the same error %v", err2, err)
	}

	boom := errors.New("disk on fire")
	m = NewMerger([]Run{&failingRun{vals: []uint64{1, 2}, err: boom}, SliceRun([]uint64{0, 9})}, true)
	got, err := m.Append(nil, 100)
	if !errors.Is(err, boom) {
		t.Errorf("merge with a failing run: error %v; want %v", err, boom)
	}
	if !slices.Equal(got, []uint64{0, 1}) {
		t.Errorf("values before the failure = %v; want [0 1]", got)
	}
	m = NewMerger([]Run{&failingRun{err: boom}}, true)
	if _, err := m.Next(); !errors.Is(err, boom) {
		t.Errorf("merge with a run failing at once: error %v; want %v", err, boom)
	}
}

func TestSortEntriesAndUnique(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	const docBits = 20
	entries := randomEntries(rng, 5000, 8, 500, docBits)
	want := slices.Sorted(slices.Values(entries))
	SortEntries(entries, nil, docBits)
	if !slices.Equal(entries, want) {
		t.Fatalf("SortEntries differs from a full sort")
	}
	vals := []uint64{5, 1, 5, 3, 1, 1}
	if u, _ := SortUnique(vals, nil); !slices.Equal(u, []uint64{1, 3, 5}) {
		t.Errorf("SortUnique = %v; want [1 3 5]", u)
	}
}
