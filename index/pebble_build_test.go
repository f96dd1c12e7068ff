package index

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/neardup/neardup/internal/extsort"
)

// buildDocs makes n documents: mostly distinct, some exact copies (to fill
// buckets past a small cap) and some near copies.
func buildDocs(t *testing.T, c Config, n int) []Doc {
	g := newTextGen(11)
	var docs []Doc
	var texts []string
	for i := range n {
		var text string
		switch {
		case i%10 == 3 && len(texts) > 0:
			text = texts[0] // a hot bucket
		case i%10 == 7 && len(texts) > 0:
			text = g.variant(texts[g.rng.IntN(len(texts))], 1)
		default:
			text = g.text(80)
		}
		texts = append(texts, text)
		d := docOf(t, c, fmt.Sprintf("doc%05d", i), text)
		if i%4 == 0 {
			d.Meta = []byte(fmt.Sprintf(`{"n":%d}`, i))
		}
		docs = append(docs, d)
	}
	return docs
}

func openTemp(t *testing.T, opts *Options) *DB {
	t.Helper()
	o := Options{CacheSize: 8 << 20, MemTableSize: 4 << 20, NoSync: true}
	if opts != nil {
		o.BucketCap, o.BucketKeyBytes = opts.BucketCap, opts.BucketKeyBytes
	}
	x, err := Open(filepath.Join(t.TempDir(), "index"), &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

// TestBuildMatchesInsert checks that a bulk build answers every query as
// inserting the same documents in the same order does, with and without
// spilling to disk, and keeps the index's bucket-key width: 8 bytes (the
// default) or 4.
func TestBuildMatchesInsert(t *testing.T) {
	for _, keyBytes := range []int{0, NarrowKeyBytes} {
		for _, spill := range []bool{false, true} {
			t.Run(fmt.Sprintf("keys=%d/spill=%v", keyBytes, spill), func(t *testing.T) { testBuildMatchesInsert(t, keyBytes, spill) })
		}
	}
}

func testBuildMatchesInsert(t *testing.T, keyBytes int, spill bool) {
	ref := openTemp(t, &Options{BucketCap: 5, BucketKeyBytes: keyBytes})
	built := openTemp(t, &Options{BucketCap: 5, BucketKeyBytes: keyBytes})
	want := keyBytes
	if want == 0 {
		want = WideKeyBytes
	}
	docs := buildDocs(t, ref.Config(), 400)
	for _, d := range docs {
		if err := ref.Insert(ctx, []Doc{d}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := built.NewBuilder(nil)
	if err != nil {
		t.Fatal(err)
	}
	if spill {
		b.ids.limit = 2000
		if b.wide != nil {
			b.wide = extsort.NewWide(b.tmp, "postings", 1024)
		} else {
			b.post = extsort.New(b.tmp, "postings", 1024)
		}
	}
	if err := built.Insert(ctx, docs[:1]); err == nil {
		t.Error("Insert during a build succeeded")
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
	if spill && st.SpilledBytes == 0 {
		t.Error("nothing spilled")
	}
	if st.Documents != int64(len(docs)) || st.DroppedPostings == 0 || int64(ref.Metrics().DroppedPostings) != st.DroppedPostings {
		t.Errorf("stats %+v; want %d documents and %d dropped postings", st, len(docs), ref.Metrics().DroppedPostings)
	}
	for _, x := range []*DB{ref, built} {
		if w, m := x.Config().BucketKeyBytes, storedMeta(t, x); w != want || m.BucketKeyBytes != want {
			t.Errorf("%d-byte keys, %d in the meta record; want %d", w, m.BucketKeyBytes, want)
		}
	}
	if b.wide != nil && (b.post != nil || want != WideKeyBytes) || b.wide == nil && want == WideKeyBytes {
		t.Errorf("a build of %d-byte keys sorted them with the sorter of the other width", want)
	}
	mustCheck(t, built)
	for _, d := range docs {
		want, _ := ref.Query(ctx, d.Sig, &QueryOptions{Threshold: 0.5, Limit: 100})
		got, err := built.Query(ctx, d.Sig, &QueryOptions{Threshold: 0.5, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, want, func(a, b Match) bool {
			return a.ID == b.ID && a.Similarity == b.Similarity && string(a.Meta) == string(b.Meta)
		}) {
			t.Fatalf("query %s: built %+v; inserted %+v", d.ID, got, want)
		}
	}
	// The built index takes writes and deletes like any other.
	if err := built.Delete(ctx, docs[3].ID); err != nil {
		t.Fatal(err)
	}
	res, err := built.CheckAndInsert(ctx, []Doc{{ID: "late", Sig: docs[0].Sig}}, nil)
	if err != nil || res[0].Status != Duplicate {
		t.Fatalf("check after build: %+v, %v", res, err)
	}
	mustCheck(t, built)
	if n := count(t, built); n != int64(len(docs)-1) {
		t.Errorf("documents %d; want %d", n, len(docs)-1)
	}
}

// storedMeta reads the meta record of x.
func storedMeta(t *testing.T, x *DB) metaRecord {
	t.Helper()
	v, closer, err := x.db.Get(metaKey)
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	var m metaRecord
	if err := json.Unmarshal(v, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestBuildErrors(t *testing.T) {
	x := openTemp(t, nil)
	c := x.Config()
	b, err := x.NewBuilder(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.NewBuilder(nil); err == nil {
		t.Error("second builder at once succeeded")
	}
	for _, d := range []Doc{docOf(t, c, "a", "one two three four five six"), docOf(t, c, "b", "seven eight nine ten eleven"), docOf(t, c, "a", "x y z w v u")} {
		if err := b.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Add(Doc{ID: "", Sig: signOf(t, c, "some text here and there")}); !errors.Is(err, ErrInvalidDocument) {
		t.Errorf("Add with an empty id: %v; want ErrInvalidDocument", err)
	}
	if _, err := b.Finish(ctx); !errors.Is(err, ErrDuplicateID) {
		t.Fatalf("Finish with a repeated id: %v; want ErrDuplicateID", err)
	}
	if n := count(t, x); n != 0 {
		t.Fatalf("documents after a failed build: %d; want 0", n)
	}
	if err := x.Insert(ctx, []Doc{docOf(t, c, "a", "one two three four five six")}); err != nil {
		t.Fatal(err)
	}
	if _, err := x.NewBuilder(nil); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("NewBuilder of a non-empty index: %v; want ErrNotEmpty", err)
	}
	mustCheck(t, x)
}

// TestBuildPacked checks that a built index (packed postings) and one made
// by inserts (postings of their own) stay equivalent through inserts into
// full buckets, concurrent deletes of documents whose postings share packed
// values, more inserts, and a reopen; Check agrees throughout. With the
// default bucket filters, none, and ones so small that every bit is set.
func TestBuildPacked(t *testing.T) {
	for _, filter := range []int{0, -1, 8} {
		t.Run(fmt.Sprintf("filter=%d", filter), func(t *testing.T) { testBuildPacked(t, filter) })
	}
}

func testBuildPacked(t *testing.T, filterBytes int) {
	dir := filepath.Join(t.TempDir(), "built")
	opts := &Options{CacheSize: 8 << 20, MemTableSize: 4 << 20, NoSync: true, BucketCap: 5, FilterBytes: filterBytes}
	built, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { built.Close() }()
	ref := openTemp(t, &Options{BucketCap: 5})
	n := 700
	if testing.Short() {
		n = 280 // the same shares of each stage; buckets fill all the same (a hot text every 10th document)
	}
	docs := buildDocs(t, ref.Config(), n)
	initial, later, last := docs[:n*4/7], docs[n*4/7:n*5/7], docs[n*5/7:]
	b, err := built.NewBuilder(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range initial {
		if err := ref.Insert(ctx, []Doc{d}); err != nil {
			t.Fatal(err)
		}
		if err := b.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	st, err := b.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	g := packedGroupBits(int64(len(initial) * built.Config().Bands.Bands))
	if st.PackedGroups == 0 || st.PackedGroups > 1<<g || built.packedBits.Load() != int32(g) {
		t.Fatalf("stats %+v, group bits %d; want values in at most 2^%d groups", st, built.packedBits.Load(), g)
	}
	compare := func(stage string) {
		t.Helper()
		mustCheck(t, built)
		for _, d := range docs {
			want, _ := ref.Query(ctx, d.Sig, &QueryOptions{Threshold: 0.5, Limit: 100})
			got, err := built.Query(ctx, d.Sig, &QueryOptions{Threshold: 0.5, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, want, func(a, b Match) bool { return a.ID == b.ID && a.Similarity == b.Similarity }) {
				t.Fatalf("%s: query %s: built %+v; inserted %+v", stage, d.ID, got, want)
			}
		}
		if got, want := built.Metrics().DroppedPostings, ref.Metrics().DroppedPostings; got != want {
			t.Fatalf("%s: %d postings dropped at full buckets; by inserts %d", stage, got, want)
		}
	}
	compare("built")
	if ref.Metrics().DroppedPostings == 0 {
		t.Fatalf("no posting dropped at a full bucket among %d documents: the test does not reach full buckets", len(initial))
	}

	insert := func(ds []Doc) {
		t.Helper()
		for _, d := range ds {
			for _, x := range []*DB{ref, built} {
				if err := x.Insert(ctx, []Doc{d}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	insert(later)
	compare("inserts after the build")

	// Deletes of every other built document, concurrently: they share
	// packed values, which each rewrites.
	var wg sync.WaitGroup
	errs := make(chan error, len(initial))
	for i := 0; i < len(initial); i += 2 {
		if err := ref.Delete(ctx, initial[i].ID); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- built.Delete(ctx, initial[i].ID)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	compare("deletes")
	insert(last)
	compare("inserts after the deletes")

	// Reopen: the filters are filled from the packed values.
	if err := built.Close(); err != nil {
		t.Fatal(err)
	}
	if built, err = Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	built.m.droppedPost.Store(ref.Metrics().DroppedPostings) // counted since open
	compare("reopened")

	// Deleting every document leaves no packed value, and the index can be
	// built again (under other group bits).
	for _, d := range docs[1:] {
		if _, err := built.Get(ctx, d.ID); err == nil {
			if err := built.Delete(ctx, d.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := built.Delete(ctx, docs[0].ID); err != nil && !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	it, err := built.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixPacked}, UpperBound: []byte{prefixPacked + 1}})
	if err != nil {
		t.Fatal(err)
	}
	if it.First() {
		t.Errorf("a packed value %x is left after every document was deleted", it.Key())
	}
	it.Close()
	if b, err = built.NewBuilder(nil); err != nil {
		t.Fatal(err)
	}
	for _, d := range docs[:50] {
		if err := b.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	if got := built.packedBits.Load(); got != int32(packedGroupBits(int64(50*built.Config().Bands.Bands))) {
		t.Errorf("group bits after a rebuild %d", got)
	}
	mustCheck(t, built)
	ms, err := built.Query(ctx, docs[7].Sig, nil)
	if err != nil || len(ms) == 0 {
		t.Errorf("query after a rebuild: %v, %v", ms, err)
	}
}

// TestCheckPacked damages packed values and checks that Check reports each
// kind of damage, with bucket keys of either width.
func TestCheckPacked(t *testing.T) {
	for _, w := range []int{WideKeyBytes, NarrowKeyBytes} {
		t.Run(fmt.Sprintf("keys=%d", w), func(t *testing.T) { testCheckPacked(t, w) })
	}
}

func testCheckPacked(t *testing.T, keyBytes int) {
	x := openTemp(t, &Options{BucketKeyBytes: keyBytes})
	docs := buildDocs(t, x.Config(), 100)
	b, err := x.NewBuilder(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if err := b.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, x)
	g := uint(x.packedBits.Load())
	it, err := x.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixPacked}, UpperBound: []byte{prefixPacked + 1}})
	if err != nil {
		t.Fatal(err)
	}
	it.First()
	key := slices.Clone(it.Key())
	ps, err := decodePacked(it.Value(), packedLowBits(keyBytes, g))
	it.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		value []byte
		want  string
	}{
		{"a posting removed", appendPacked(nil, ps[1:]), "lacks its posting"},
		{"a stray posting", appendPacked(nil, append(slices.Clone(ps), posting{ps[len(ps)-1].low + 1, ps[0].doc})), "whose signature has no such key"},
		{"a posting of no document", appendPacked(nil, append(slices.Clone(ps), posting{ps[len(ps)-1].low + 1, 99999})), "which has no record"},
		{"undecodable", []byte{0, 40, 1, 0}, "packed postings of group"},
	} {
		if err := x.db.Set(key, tc.value, pebble.NoSync); err != nil {
			t.Fatal(err)
		}
		r, err := x.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.OK() || !strings.Contains(r.String(), tc.want) {
			t.Errorf("%s: Check found %s; want a problem saying %q", tc.name, r, tc.want)
		}
	}
}

// TestLayoutVersions: a new MinHash index is layout version 3 (8-byte keys)
// and stays so when built; one of 4-byte keys is version 1 (no packed
// postings, so older builds read it), built version 2; a later version,
// 8-byte keys claimed by versions 1 and 2, 4-byte ones by version 3, or
// packed postings claimed by version 1, do not open.
func TestLayoutVersions(t *testing.T) {
	t.Run("keys=8", func(t *testing.T) { testLayoutVersions(t, WideKeyBytes) })
	t.Run("keys=4", func(t *testing.T) { testLayoutVersions(t, NarrowKeyBytes) })
}

func testLayoutVersions(t *testing.T, keyBytes int) {
	dir := filepath.Join(t.TempDir(), "index")
	open := func() (*DB, error) {
		return Open(dir, &Options{CacheSize: 8 << 20, NoSync: true, BucketKeyBytes: keyBytes})
	}
	meta := func(x *DB) metaRecord { t.Helper(); return storedMeta(t, x) }
	setMeta := func(x *DB, m metaRecord) {
		t.Helper()
		v, _ := json.Marshal(m)
		if err := x.db.Set(metaKey, v, pebble.Sync); err != nil {
			t.Fatal(err)
		}
	}
	x, err := open()
	if err != nil {
		t.Fatal(err)
	}
	newFormat, builtFormat, otherWidth := 1, 2, WideKeyBytes
	if keyBytes == WideKeyBytes {
		newFormat, builtFormat, otherWidth = 3, 3, NarrowKeyBytes
	}
	if m := meta(x); m.Format != newFormat || m.PackedGroupBits != 0 || m.BucketKeyBytes != keyBytes {
		t.Errorf("a new index has layout version %d, packed group bits %d, %d-byte keys; want %d, 0, %d", m.Format, m.PackedGroupBits, m.BucketKeyBytes, newFormat, keyBytes)
	}
	b, _ := x.NewBuilder(nil)
	b.Add(docOf(t, x.Config(), "a", "one two three four five six seven"))
	if _, err := b.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	m := meta(x)
	if m.Format != builtFormat || m.PackedGroupBits != 1 || m.BucketKeyBytes != keyBytes {
		t.Errorf("a built index has layout version %d, packed group bits %d, %d-byte keys; want %d, 1, %d", m.Format, m.PackedGroupBits, m.BucketKeyBytes, builtFormat, keyBytes)
	}
	// The other width under this version, a version that has the other
	// width, packed postings in version 1, too many group bits, version 4.
	for _, tc := range []struct {
		format, bits, width int
	}{{builtFormat, 1, otherWidth}, {5 - builtFormat, 1, keyBytes}, {1, 1, NarrowKeyBytes}, {2, 25, NarrowKeyBytes}, {3, 25, WideKeyBytes}, {4, 0, keyBytes}} {
		bad := m
		bad.Format, bad.PackedGroupBits, bad.BucketKeyBytes = tc.format, tc.bits, tc.width
		setMeta(x, bad)
		x.Close()
		if _, err := open(); !errors.Is(err, ErrCorrupt) {
			t.Errorf("layout version %d with group bits %d and %d-byte keys opened: %v; want ErrCorrupt", tc.format, tc.bits, tc.width, err)
		}
		if x, err = Open(dir, &Options{CacheSize: 8 << 20, NoSync: true}); err == nil {
			t.Fatal("reopened")
		}
		// Put the good record back through Pebble directly.
		pdb, err := pebble.Open(dir, &pebble.Options{Logger: pebbleLogger{newHealth(nil)}})
		if err != nil {
			t.Fatal(err)
		}
		v, _ := json.Marshal(m)
		pdb.Set(metaKey, v, pebble.Sync)
		pdb.Close()
		if x, err = open(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := x.Get(ctx, "a"); err != nil {
		t.Error(err)
	}
	x.Close()
}
