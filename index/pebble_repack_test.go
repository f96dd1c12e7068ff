package index

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// postingSpace is what the postings of an index take.
type postingSpace struct {
	own, packed int64 // postings of their own, packed postings
	values      int64 // packed values
	logical     int64 // bytes of their keys and values
	disk        int64 // Pebble's estimate of their bytes on disk
}

func (s postingSpace) String() string {
	n := float64(s.own + s.packed)
	return fmt.Sprintf("%d own + %d packed in %d values: %.2f logical, %.2f on disk bytes/posting",
		s.own, s.packed, s.values, float64(s.logical)/n, float64(s.disk)/n)
}

func measurePostings(t *testing.T, x *DB) postingSpace {
	t.Helper()
	var s postingSpace
	g := uint(x.packedBits.Load())
	it, err := x.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixPosting}, UpperBound: []byte{prefixPacked + 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var pi packedIter
	for ok := it.First(); ok; ok = it.Next() {
		s.logical += int64(len(it.Key()) + len(it.Value()))
		if it.Key()[0] == prefixPosting {
			s.own++
			continue
		}
		if err := pi.init(it.Value(), packedLowBits(x.cfg.BucketKeyBytes, g)); err != nil {
			t.Fatal(err)
		}
		s.values++
		s.packed += int64(pi.left)
	}
	d, err := x.db.EstimateDiskUsage([]byte{prefixPosting}, []byte{prefixPacked + 1})
	if err != nil {
		t.Fatal(err)
	}
	s.disk = int64(d)
	return s
}

var repackQuery = &QueryOptions{Threshold: 0.5, Limit: 100}

// repackDocs is the number of documents of the larger tests: a few
// thousand, fewer under -short (which CI runs with -race).
func repackDocs() int {
	if testing.Short() {
		return 1200
	}
	return 3000
}

// answers returns the answers of x to the queries of docs.
func answers(t *testing.T, x *DB, docs []Doc) [][]Match {
	t.Helper()
	out := make([][]Match, len(docs))
	for i, d := range docs {
		ms, err := x.Query(ctx, d.Sig, repackQuery)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = ms
	}
	return out
}

func sameAnswers(t *testing.T, stage string, x *DB, docs []Doc, want [][]Match) {
	t.Helper()
	got := answers(t, x, docs)
	for i := range docs {
		if !slices.EqualFunc(got[i], want[i], func(a, b Match) bool {
			return a.ID == b.ID && a.Similarity == b.Similarity && string(a.Meta) == string(b.Meta)
		}) {
			t.Fatalf("%s: query %s: got %+v; want %+v", stage, docs[i].ID, got[i], want[i])
		}
	}
}

// fillOnline stores docs by Insert (in batches of 7) and CheckAndInsert (one
// by one: near duplicates of stored documents are not stored), then deletes
// every 9th document.
func fillOnline(t *testing.T, x *DB, docs []Doc) {
	t.Helper()
	half := len(docs) / 2
	for i := 0; i < half; i += 7 {
		if err := x.Insert(ctx, docs[i:min(i+7, half)]); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range docs[half:] {
		if _, err := x.CheckAndInsert(ctx, []Doc{d}, &QueryOptions{Threshold: 0.95}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < len(docs); i += 9 {
		if err := x.Delete(ctx, docs[i].ID); err != nil && !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
	}
}

// sampleOf returns every third document, and a few texts not in the index.
func sampleOf(t *testing.T, x *DB, docs []Doc) []Doc {
	var s []Doc
	for i := 0; i < len(docs); i += 3 {
		s = append(s, docs[i])
	}
	g := newTextGen(99)
	for i := range 20 {
		s = append(s, docOf(t, x.Config(), fmt.Sprintf("new%d", i), g.text(80)))
	}
	return s
}

// TestRepack fills an index online (near duplicates, a hot bucket over a cap
// of 5, deletes), repacks it in many small batches and checks that it stays
// consistent, answers every query as before, holds no posting of its own,
// takes less space, has its packed filter set, and reopens and takes
// writes as before. With the default bucket filters, none, and ones so
// small that every bit is set.
func TestRepack(t *testing.T) {
	filters := []int{0, -1, 8}
	if testing.Short() {
		filters = filters[:1]
	}
	for _, filter := range filters {
		t.Run(fmt.Sprintf("filter=%d", filter), func(t *testing.T) { testRepack(t, filter, NarrowKeyBytes) })
	}
	t.Run("keys=8", func(t *testing.T) { testRepack(t, 0, WideKeyBytes) })
}

func testRepack(t *testing.T, filterBytes, keyBytes int) {
	dir := filepath.Join(t.TempDir(), "index")
	opts := &Options{CacheSize: 8 << 20, MemTableSize: 4 << 20, NoSync: true, BucketKeyBytes: keyBytes, BucketCap: 5, FilterBytes: filterBytes}
	x, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { x.Close() }()
	docs := buildDocs(t, x.Config(), repackDocs())
	fillOnline(t, x, docs)
	rep := mustCheck(t, x)
	if rep.CappedPostings == 0 || rep.Documents < int64(len(docs))*2/3 {
		t.Fatalf("%s; want postings dropped at full buckets and over 2/3 of %d documents", rep, len(docs))
	}
	sample := sampleOf(t, x, docs)
	want := answers(t, x, sample)
	if err := x.Flush(ctx, true); err != nil { // settled, to compare sizes like with like
		t.Fatal(err)
	}
	before := measurePostings(t, x)
	if before.own != rep.Postings || before.packed != 0 {
		t.Fatalf("before: %s; want %d postings of their own", before, rep.Postings)
	}

	var calls, lastDone, lastTotal int64
	st, err := x.repack(ctx, func(done, total int64) {
		if calls == 0 && done != 0 || done < lastDone || calls > 0 && total != lastTotal {
			t.Errorf("progress(%d, %d) after (%d, %d)", done, total, lastDone, lastTotal)
		}
		calls++
		lastDone, lastTotal = done, total
	}, repackTuning{batchBytes: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", st)
	g := packedGroupBits(before.own)
	switch {
	case st.Own != before.own || st.Packed != 0 || st.Postings != before.own || st.Unpacked != 0:
		t.Errorf("stats %+v; want %d postings of their own, all moved", st, before.own)
	case st.OldGroupBits != 0 || st.GroupBits != g || x.packedBits.Load() != int32(g):
		t.Errorf("group bits %d → %d (in memory %d); want 0 → %d", st.OldGroupBits, st.GroupBits, x.packedBits.Load(), g)
	case st.Batches < 3 || calls != st.Batches+1 || lastDone != lastTotal || lastTotal != before.own:
		t.Errorf("%d batches, %d progress calls, last (%d, %d); want several batches, a call before and after each", st.Batches, calls, lastDone, lastTotal)
	case st.Groups == 0 || st.Groups > 1<<g:
		t.Errorf("%d groups written; want 1 to 2^%d", st.Groups, g)
	}
	rep2 := mustCheck(t, x)
	if rep2.Postings != rep.Postings || rep2.CappedPostings != rep.CappedPostings || rep2.Documents != rep.Documents {
		t.Errorf("after: %s; before: %s", rep2, rep)
	}
	after := measurePostings(t, x)
	t.Logf("before: %s\nafter:  %s", before, after)
	if after.own != 0 || after.packed != before.own || after.values != st.Groups {
		t.Errorf("after: %s; want every posting packed in %d values", after, st.Groups)
	}
	// Packed: about 4 bytes a posting against 7.6 (Pebble's estimates are
	// coarse on an index this small, and move with its background
	// compactions: allow some slack).
	// With 8-byte keys a packed posting keeps 64 − G − log2(32) bits of
	// key gap where a 4-byte one keeps 32 − G − 5, against 13 bytes of key
	// for a posting of its own: about 7.7 bytes at G = 10.
	logical, disk := 0.6, 0.75
	if keyBytes == WideKeyBytes {
		logical, disk = 0.7, 0.85
	}
	if float64(after.logical) > logical*float64(before.logical) {
		t.Errorf("postings take %d bytes of keys and values after, %d before; want well under %v", after.logical, before.logical, logical)
	}
	if float64(st.PostingBytesAfter) > disk*float64(st.PostingBytesBefore) || st.TableBytesAfter >= st.TableBytesBefore-(st.PostingBytesBefore-st.PostingBytesAfter)/2 {
		t.Errorf("stats: sstables %d → %d bytes, postings %d → %d; want the postings well under 3/4, and the tables smaller by most of the difference",
			st.TableBytesBefore, st.TableBytesAfter, st.PostingBytesBefore, st.PostingBytesAfter)
	}
	sameAnswers(t, "repacked", x, sample, want)
	if x.packed != nil {
		snap := x.db.NewSnapshot()
		_, err := x.eachPacked(ctx, snap, uint(g), nil, func(bk uint64, num uint32) error {
			if !x.packed.mayHold(bk) {
				return fmt.Errorf("the packed filter misses bucket %08x", bk)
			}
			return nil
		})
		snap.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if m := x.Metrics(); m.DroppedPostings == 0 {
		t.Error("no dropped postings counted")
	}

	// Reopened: the same answers.
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if x, err = Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	sameAnswers(t, "reopened", x, sample, want)

	// Writes go on: deletes rewrite the packed values, inserts add keys of
	// their own, and a delete of every document leaves no packed value.
	for i := 1; i < len(docs); i += 5 {
		if err := x.Delete(ctx, docs[i].ID); err != nil && !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
	}
	more := buildDocs(t, x.Config(), len(docs)+100)[len(docs):]
	for i := range more {
		more[i].ID = "more-" + more[i].ID
	}
	if err := x.Insert(ctx, more); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, x)
	for _, d := range slices.Concat(docs, more) {
		if err := x.Delete(ctx, d.ID); err != nil && !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
	}
	if s := measurePostings(t, x); s.own+s.packed+s.values != 0 || count(t, x) != 0 {
		t.Errorf("after deleting everything: %s, %d documents", s, count(t, x))
	}
	mustCheck(t, x)
}

// TestRepackTwice: a second repack with nothing new to pack writes
// nothing; after more inserts it moves only those, under the same group
// bits.
func TestRepackTwice(t *testing.T) {
	x := openTemp(t, &Options{BucketCap: 5, BucketKeyBytes: NarrowKeyBytes})
	docs := buildDocs(t, x.Config(), repackDocs()*2/5)
	first := len(docs) * 5 / 6
	fillOnline(t, x, docs[:first])
	st, err := x.Repack(ctx, nil)
	if err != nil || st.Postings == 0 {
		t.Fatalf("first repack: %+v, %v", st, err)
	}
	g := x.packedBits.Load()
	walBefore := x.db.Metrics().WAL.BytesIn
	st2, err := x.Repack(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st2.Own != 0 || st2.Postings != 0 || st2.Groups != 0 || st2.Batches != 0 || st2.Packed != st.Own || st2.GroupBits != int(g) || st2.OldGroupBits != int(g) {
		t.Errorf("second repack %+v; want nothing done, %d packed postings under %d group bits", st2, st.Own, g)
	}
	if w := x.db.Metrics().WAL.BytesIn; w != walBefore {
		t.Errorf("the second repack wrote %d bytes to the WAL", w-walBefore)
	}
	mustCheck(t, x)

	fillOnline(t, x, docs[first:])
	sample := sampleOf(t, x, docs)
	want := answers(t, x, sample)
	own := measurePostings(t, x).own
	st3, err := x.Repack(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st3.Own != own || st3.Postings != own || st3.Unpacked != 0 || st3.GroupBits != int(g) {
		t.Errorf("third repack %+v; want %d postings moved under %d group bits", st3, own, g)
	}
	mustCheck(t, x)
	sameAnswers(t, "third repack", x, sample, want)
	if s := measurePostings(t, x); s.own != 0 {
		t.Errorf("after the third repack: %s", s)
	}
}

// bulkBuild builds docs into the empty x.
func bulkBuild(t *testing.T, x *DB, docs []Doc) BuildStats {
	t.Helper()
	b, err := x.NewBuilder(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if err := b.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	st, err := b.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestRepackAfterBuild repacks a bulk-built index that then took inserts and
// deletes: under the build's group bits when they still fit, and under new
// ones (every packed posting moved out and packed again) when the inserts
// outgrew them.
func TestRepackAfterBuild(t *testing.T) {
	for _, tc := range []struct {
		built   int
		regroup bool
	}{{repackDocs() / 2, false}, {40, true}} {
		t.Run(fmt.Sprintf("built=%d", tc.built), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "index")
			opts := &Options{CacheSize: 8 << 20, MemTableSize: 4 << 20, NoSync: true, BucketKeyBytes: NarrowKeyBytes, BucketCap: 5}
			x, err := Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { x.Close() }()
			docs := buildDocs(t, x.Config(), repackDocs())
			bst := bulkBuild(t, x, docs[:tc.built])
			g0 := int(x.packedBits.Load())
			fillOnline(t, x, docs[tc.built:])
			for i := 1; i < tc.built; i += 4 { // deletes rewrite packed values
				if err := x.Delete(ctx, docs[i].ID); err != nil {
					t.Fatal(err)
				}
			}
			rep := mustCheck(t, x)
			sample := sampleOf(t, x, docs)
			want := answers(t, x, sample)
			before := measurePostings(t, x)
			if before.own == 0 || before.packed == 0 || before.packed >= bst.Postings {
				t.Fatalf("before: %s; want both kinds, fewer packed than the %d built", before, bst.Postings)
			}
			st, err := x.repack(ctx, nil, repackTuning{batchBytes: 8 << 10})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%+v", st)
			g := g0
			if tc.regroup {
				g = packedGroupBits(before.own + before.packed)
			}
			if (g > g0+1) != tc.regroup {
				t.Fatalf("group bits %d for %d postings, built with %d: regroup %v", g, before.own+before.packed, g0, !tc.regroup)
			}
			switch {
			case st.OldGroupBits != g0 || st.GroupBits != g || x.packedBits.Load() != int32(g):
				t.Errorf("group bits %d → %d (in memory %d); want %d → %d", st.OldGroupBits, st.GroupBits, x.packedBits.Load(), g0, g)
			case st.Own != before.own || st.Packed != before.packed:
				t.Errorf("stats %+v; want %d own and %d packed", st, before.own, before.packed)
			case tc.regroup && (st.Unpacked != before.packed || st.Postings != before.own+before.packed):
				t.Errorf("stats %+v; want %d unpacked and all packed again", st, before.packed)
			case !tc.regroup && (st.Unpacked != 0 || st.Postings != before.own):
				t.Errorf("stats %+v; want only the %d postings of their own moved", st, before.own)
			}
			rep2 := mustCheck(t, x)
			if rep2.Postings != rep.Postings || rep2.CappedPostings != rep.CappedPostings {
				t.Errorf("after: %s; before: %s", rep2, rep)
			}
			after := measurePostings(t, x)
			t.Logf("before: %s\nafter:  %s", before, after)
			if after.own != 0 || after.packed != before.own+before.packed {
				t.Errorf("after: %s", after)
			}
			sameAnswers(t, "repacked", x, sample, want)
			if err := x.Close(); err != nil {
				t.Fatal(err)
			}
			if x, err = Open(dir, opts); err != nil {
				t.Fatal(err)
			}
			sameAnswers(t, "reopened", x, sample, want)
			mustCheck(t, x)
		})
	}
}

var errCrash = errors.New("crash")

// TestRepackCrash stops a repack after each of its durable writes, takes
// what a crash of the machine at that moment would leave on disk (only
// synced data), and checks that the index it reopens to is consistent and
// answers as before, and that a second repack finishes the work. Two
// indexes: one filled online (the repack chooses the group bits), and one
// repacked, then grown online past its group bits (the repack moves the
// packed postings out, changes the group bits and packs everything).
func TestRepackCrash(t *testing.T) {
	for _, regroup := range []bool{false, true} {
		t.Run(fmt.Sprintf("regroup=%v", regroup), func(t *testing.T) { testRepackCrash(t, regroup) })
	}
}

func testRepackCrash(t *testing.T, regroup bool) {
	opts := &Options{CacheSize: 8 << 20, MemTableSize: 1 << 20, BucketCap: 5, BucketKeyBytes: NarrowKeyBytes}
	base := vfs.NewCrashableMem()
	x, err := open("idx", opts, base)
	if err != nil {
		t.Fatal(err)
	}
	docs := buildDocs(t, x.Config(), repackDocs()/2)
	if regroup {
		fillOnline(t, x, docs[:60])
		if _, err := x.Repack(ctx, nil); err != nil {
			t.Fatal(err)
		}
		fillOnline(t, x, docs[60:])
	} else {
		fillOnline(t, x, docs)
	}
	mustCheck(t, x)
	sample := sampleOf(t, x, docs)
	want := answers(t, x, sample)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	tu := repackTuning{batchBytes: 32 << 10}
	if regroup {
		tu.batchBytes = 4 << 10 // several batches of unpacking
	}

	// Count the writes of a whole repack.
	x, err = open("idx", opts, base.CrashClone(vfs.CrashCloneCfg{}))
	if err != nil {
		t.Fatal(err)
	}
	var writes, gChange int // the writes, and which one changed the group bits
	g0 := x.packedBits.Load()
	tu.afterWrite = func() error {
		if writes++; gChange == 0 && x.packedBits.Load() != g0 {
			gChange = writes
		}
		return nil
	}
	full, err := x.repack(ctx, nil, tu)
	if err != nil {
		t.Fatal(err)
	}
	x.Close()
	if regroup != (full.Unpacked > 0) || full.Batches < 4 {
		t.Fatalf("a whole repack: %+v", full)
	}
	t.Logf("%d writes, the group bits changed by write %d: %+v", writes, gChange, full)
	if gChange == 0 || regroup != (gChange > 1) {
		t.Fatalf("the group bits changed by write %d", gChange)
	}

	// Every write up to the first packing batch, then about 8 more, and
	// the last; under -short, the first, the change of the group bits and
	// the next, and the last.
	var ks []int
	stride := max(1, (writes-gChange)/8)
	for k := 1; k <= writes; k++ {
		if k <= gChange+1 || (k-gChange)%stride == 0 || k == writes {
			ks = append(ks, k)
		}
	}
	if testing.Short() {
		ks = slices.Compact([]int{1, gChange, gChange + 1, writes})
	}
	for _, k := range ks {
		fs := base.CrashClone(vfs.CrashCloneCfg{})
		x, err := open("idx", opts, fs)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		var crashed *vfs.MemFS
		tu.afterWrite = func() error {
			if n++; n == k {
				crashed = fs.CrashClone(vfs.CrashCloneCfg{})
				return errCrash
			}
			return nil
		}
		if _, err := x.repack(ctx, nil, tu); !errors.Is(err, errCrash) {
			t.Fatalf("write %d: repack: %v; want the crash", k, err)
		}
		x.Close()

		x, err = open("idx", opts, crashed)
		if err != nil {
			t.Fatalf("write %d: reopening after the crash: %v", k, err)
		}
		mustCheck(t, x)
		sameAnswers(t, fmt.Sprintf("crashed after write %d", k), x, sample, want)
		st, err := x.repack(ctx, nil, repackTuning{batchBytes: tu.batchBytes})
		if err != nil {
			t.Fatal(err)
		}
		if st.GroupBits != full.GroupBits {
			t.Errorf("write %d: finished under %d group bits; a whole repack chose %d", k, st.GroupBits, full.GroupBits)
		}
		mustCheck(t, x)
		sameAnswers(t, fmt.Sprintf("finished after a crash after write %d", k), x, sample, want)
		if s := measurePostings(t, x); s.own != 0 {
			t.Errorf("write %d: finished: %s", k, s)
		}
		x.Close()
	}
}

// TestRepackConcurrent repacks (changing the group bits, then packing in
// small batches) while writers insert, check-and-insert and delete and
// readers query; afterwards the index is consistent, every write took
// effect, every stored document finds itself, and a second repack packs the
// postings written meanwhile. Run with -race.
func TestRepackConcurrent(t *testing.T) {
	x := openTemp(t, &Options{BucketCap: 5, BucketKeyBytes: NarrowKeyBytes})
	docs := buildDocs(t, x.Config(), repackDocs())
	old := len(docs) * 2 / 3 // stored before the repack; the rest during it
	fillOnline(t, x, docs[:80])
	if _, err := x.Repack(ctx, nil); err != nil { // a small G, outgrown below
		t.Fatal(err)
	}
	fillOnline(t, x, docs[80:old])
	mustCheck(t, x)

	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	fail := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	var mu sync.Mutex
	stored := map[string]bool{}
	for i := range old {
		if _, err := x.Get(ctx, docs[i].ID); err == nil {
			stored[docs[i].ID] = true
		}
	}
	// Writers: each owns a slice of the new documents and a slice of the
	// old ones to delete.
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := old + w; i < len(docs) && !stop.Load(); i += 2 {
				d := docs[i]
				if rng.IntN(2) == 0 {
					if err := x.Insert(ctx, []Doc{d}); err != nil {
						fail(err)
						return
					}
					mu.Lock()
					stored[d.ID] = true
					mu.Unlock()
				} else {
					res, err := x.CheckAndInsert(ctx, []Doc{d}, nil)
					if err != nil {
						fail(err)
						return
					}
					if res[0].Status == New {
						mu.Lock()
						stored[d.ID] = true
						mu.Unlock()
					}
				}
				// Writer w deletes only ids ending in a digit of its
				// parity, so that the two never delete the same one.
				id := docs[rng.IntN(old)].ID
				mu.Lock()
				del := stored[id] && rng.IntN(3) == 0 && int(id[len(id)-1]-'0')%2 == w
				mu.Unlock()
				if del {
					if err := x.Delete(ctx, id); err != nil {
						fail(fmt.Errorf("delete %s: %w", id, err))
						return
					}
					mu.Lock()
					delete(stored, id)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // a reader
		defer wg.Done()
		for i := 0; !stop.Load(); i = (i + 1) % old {
			if _, err := x.Query(ctx, docs[i].Sig, nil); err != nil {
				fail(err)
				return
			}
		}
	}()
	st, err := x.repack(ctx, nil, repackTuning{batchBytes: 4 << 10})
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if st.Unpacked == 0 || st.GroupBits <= st.OldGroupBits {
		t.Errorf("stats %+v; want a change of group bits", st)
	}
	t.Logf("%+v", st)
	check := func(stage string) {
		t.Helper()
		mustCheck(t, x)
		if n := count(t, x); n != int64(len(stored)) {
			t.Errorf("%s: %d documents; want %d", stage, n, len(stored))
		}
		for _, d := range docs {
			_, err := x.Get(ctx, d.ID)
			if (err == nil) != stored[d.ID] {
				t.Fatalf("%s: Get %s: %v; stored %v", stage, d.ID, err, stored[d.ID])
			}
			if !stored[d.ID] {
				continue
			}
			// A document finds itself, or (if every posting of it was
			// dropped at full buckets) the copies that filled them.
			ms, err := x.Query(ctx, d.Sig, nil)
			if err != nil || len(ms) == 0 || ms[0].Similarity != 1 {
				t.Fatalf("%s: %s finds no copy of itself: %v, %v", stage, d.ID, ms, err)
			}
		}
	}
	check("after a concurrent repack")
	if _, err := x.Repack(ctx, nil); err != nil {
		t.Fatal(err)
	}
	check("after a second repack")
	if s := measurePostings(t, x); s.own != 0 {
		t.Errorf("after the second repack: %s", s)
	}
}

// TestRepackEmptyAndErrors: an empty index has nothing to repack and keeps
// no group bits; a read-only index and a bulk build refuse to repack.
func TestRepackEmptyAndErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	x, err := Open(dir, &Options{CacheSize: 8 << 20, NoSync: true, BucketKeyBytes: NarrowKeyBytes})
	if err != nil {
		t.Fatal(err)
	}
	st, err := x.Repack(ctx, nil)
	if err != nil || st.Own != 0 || st.Batches != 0 || st.GroupBits != 0 {
		t.Errorf("repack of an empty index: %+v, %v", st, err)
	}
	b, err := x.NewBuilder(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Repack(ctx, nil); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("repack during a build: %v; want ErrInvalidOptions", err)
	}
	b.Abort()
	if err := x.Insert(ctx, []Doc{docOf(t, x.Config(), "a", "one two three four five six seven")}); err != nil {
		t.Fatal(err)
	}
	x.Close()
	if _, err := x.Repack(ctx, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("repack of a closed index: %v; want ErrClosed", err)
	}
	ro, err := Open(dir, &Options{CacheSize: 8 << 20, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.Repack(ctx, nil); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("repack of a read-only index: %v; want ErrInvalidOptions", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ro.Repack(cctx, nil); err == nil {
		t.Error("repack with a cancelled context succeeded")
	}
}
