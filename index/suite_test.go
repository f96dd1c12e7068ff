package index

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
)

// backend opens indexes of one kind for the behavioural suite: open makes a
// new, empty index with opts; the returned reopen closes nothing and opens
// the same index again with other options.
type backend struct {
	name string
	open func(t *testing.T, opts *Options) (x Index, reopen func(opts *Options) (Index, error))
}

// runSuite runs the behavioural tests every backend must pass.
func runSuite(t *testing.T, b backend) {
	t.Run("CheckAndInsert", func(t *testing.T) { testCheckAndInsert(t, b) })
	t.Run("Batch", func(t *testing.T) { testBatch(t, b) })
	t.Run("DuplicateID", func(t *testing.T) { testDuplicateID(t, b) })
	t.Run("InvalidDocument", func(t *testing.T) { testInvalidDocument(t, b) })
	t.Run("QueryOptions", func(t *testing.T) { testQueryOptions(t, b) })
	t.Run("Delete", func(t *testing.T) { testDelete(t, b) })
	t.Run("BucketCap", func(t *testing.T) { testBucketCap(t, b) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, b) })
	t.Run("Reopen", func(t *testing.T) { testReopen(t, b) })
	t.Run("RandomOps", func(t *testing.T) { testRandomOps(t, b) })
}

var ctx = context.Background()

func mustCheck(t *testing.T, x Index) CheckReport {
	t.Helper()
	r, err := x.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() {
		t.Fatalf("index inconsistent: %s", r)
	}
	return r
}

func count(t *testing.T, x Index) int64 {
	t.Helper()
	st, err := x.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return st.Documents
}

func testCheckAndInsert(t *testing.T, b backend) {
	x, _ := b.open(t, nil)
	c := x.Config()
	g := newTextGen(1)
	a := g.text(200)
	res, err := x.CheckAndInsert(ctx, []Doc{{ID: "a", Sig: signOf(t, c, a), Meta: []byte(`{"url":"http://a"}`)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Status != New || len(res[0].Matches) != 0 || res[0].ID != "a" {
		t.Fatalf("first insert: got %+v; want new", res[0])
	}
	// A near duplicate is reported with a's metadata and is not stored.
	res, err = x.CheckAndInsert(ctx, []Doc{docOf(t, c, "a2", g.variant(a, 1))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := res[0]
	if r.Status != Duplicate || len(r.Matches) != 1 || r.Matches[0].ID != "a" || string(r.Matches[0].Meta) != `{"url":"http://a"}` {
		t.Fatalf("near duplicate: got %+v; want duplicate of a with its meta", r)
	}
	if s := r.Matches[0].Similarity; s < 0.85 || s > 1 {
		t.Errorf("similarity %v; want about 0.95", s)
	}
	if _, err := x.Get(ctx, "a2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(a2) after duplicate: err %v; want ErrNotFound", err)
	}
	// An unrelated document is new.
	res, err = x.CheckAndInsert(ctx, []Doc{docOf(t, c, "b", g.text(200))}, nil)
	if err != nil || res[0].Status != New {
		t.Fatalf("unrelated: got %+v, %v; want new", res, err)
	}
	d, err := x.Get(ctx, "a")
	if err != nil || d.ID != "a" || string(d.Meta) != `{"url":"http://a"}` || !slices.Equal(d.Sig, signOf(t, c, a)) {
		t.Fatalf("Get(a) = %+v, %v", d, err)
	}
	ms, err := x.Query(ctx, signOf(t, c, a), nil)
	if err != nil || len(ms) != 1 || ms[0].ID != "a" || ms[0].Similarity != 1 {
		t.Fatalf("Query(a) = %+v, %v; want a at 1", ms, err)
	}
	if n := count(t, x); n != 2 {
		t.Errorf("documents %d; want 2", n)
	}
	m := x.Metrics()
	if m.Inserts != 2 || m.Duplicates != 1 || m.Queries < 4 {
		t.Errorf("metrics %+v; want 2 inserts, 1 duplicate, at least 4 queries", m)
	}
	mustCheck(t, x)
}

func testBatch(t *testing.T, b backend) {
	x, _ := b.open(t, nil)
	c := x.Config()
	g := newTextGen(2)
	a, bb := g.text(150), g.text(150)
	docs := []Doc{docOf(t, c, "a", a), docOf(t, c, "a-copy", g.variant(a, 1)), docOf(t, c, "b", bb), docOf(t, c, "a", g.text(150)), docOf(t, c, "b-copy", bb)}
	res, err := x.CheckAndInsert(ctx, docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"new", "duplicate", "new", "failed", "duplicate"}
	for i, r := range res {
		if r.Status.String() != want[i] {
			t.Errorf("doc %d (%s): %v (%v); want %s", i, r.ID, r.Status, r.Err, want[i])
		}
	}
	if !errors.Is(res[3].Err, ErrDuplicateID) {
		t.Errorf("repeated id in a batch: err %v; want ErrDuplicateID", res[3].Err)
	}
	if res[1].Matches[0].ID != "a" || res[4].Matches[0].ID != "b" || res[4].Matches[0].Similarity != 1 {
		t.Errorf("batch matches %+v / %+v", res[1].Matches, res[4].Matches)
	}
	if n := count(t, x); n != 2 {
		t.Errorf("documents %d; want 2", n)
	}
	mustCheck(t, x)
}

func testDuplicateID(t *testing.T, b backend) {
	x, _ := b.open(t, nil)
	c := x.Config()
	g := newTextGen(3)
	if err := x.Insert(ctx, []Doc{docOf(t, c, "a", g.text(100))}); err != nil {
		t.Fatal(err)
	}
	// All or nothing: "b" is not stored because "a" exists.
	err := x.Insert(ctx, []Doc{docOf(t, c, "b", g.text(100)), docOf(t, c, "a", g.text(100))})
	if !errors.Is(err, ErrDuplicateID) {
		t.Fatalf("Insert of an existing id: %v; want ErrDuplicateID", err)
	}
	err = x.Insert(ctx, []Doc{docOf(t, c, "c", g.text(100)), docOf(t, c, "c", g.text(100))})
	if !errors.Is(err, ErrDuplicateID) {
		t.Fatalf("Insert of a repeated id: %v; want ErrDuplicateID", err)
	}
	res, err := x.CheckAndInsert(ctx, []Doc{docOf(t, c, "a", g.text(100))}, nil)
	if err != nil || !errors.Is(res[0].Err, ErrDuplicateID) || res[0].Status != Failed {
		t.Fatalf("CheckAndInsert of an existing id: %+v, %v; want ErrDuplicateID", res, err)
	}
	for _, id := range []string{"b", "c"} {
		if _, err := x.Get(ctx, id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get(%s): %v; want ErrNotFound", id, err)
		}
	}
	if n := count(t, x); n != 1 {
		t.Errorf("documents %d; want 1", n)
	}
	mustCheck(t, x)
}

func testInvalidDocument(t *testing.T, b backend) {
	x, _ := b.open(t, nil)
	c := x.Config()
	sig := signOf(t, c, "some words of a document here")
	long := string(make([]byte, MaxIDLen+1))
	for _, d := range []Doc{{ID: "", Sig: sig}, {ID: long, Sig: sig}, {ID: "short-sig", Sig: sig[:3]}} {
		if err := x.Insert(ctx, []Doc{d}); !errors.Is(err, ErrInvalidDocument) {
			t.Errorf("Insert(id %.10q, %d words): %v; want ErrInvalidDocument", d.ID, len(d.Sig), err)
		}
		res, err := x.CheckAndInsert(ctx, []Doc{d}, nil)
		if err != nil || !errors.Is(res[0].Err, ErrInvalidDocument) {
			t.Errorf("CheckAndInsert(id %.10q): %+v, %v; want ErrInvalidDocument", d.ID, res, err)
		}
	}
	if _, err := x.Query(ctx, sig[:1], nil); !errors.Is(err, ErrInvalidDocument) {
		t.Errorf("Query with a short signature: %v; want ErrInvalidDocument", err)
	}
	for _, q := range []QueryOptions{{Threshold: 1.5}, {Threshold: -1}, {Limit: -1}, {Limit: MaxLimit + 1}} {
		if _, err := x.Query(ctx, sig, &q); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("Query(%+v): %v; want ErrInvalidOptions", q, err)
		}
	}
	if n := count(t, x); n != 0 {
		t.Errorf("documents %d; want 0", n)
	}
}

func testQueryOptions(t *testing.T, b backend) {
	x, _ := b.open(t, nil)
	c := x.Config()
	g := newTextGen(4)
	base := g.text(300)
	// Variants at decreasing similarity, inserted without checks.
	var docs []Doc
	for i, changes := range []int{0, 2, 5, 9, 14} {
		docs = append(docs, docOf(t, c, fmt.Sprintf("v%d", i), g.variant(base, changes)))
	}
	if err := x.Insert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	q := signOf(t, c, base)
	all, err := x.Query(ctx, q, &QueryOptions{Threshold: 0.5, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 4 || all[0].ID != "v0" || all[0].Similarity != 1 {
		t.Fatalf("Query at 0.5: %+v; want at least 4, v0 first", all)
	}
	for i := 1; i < len(all); i++ {
		if all[i].Similarity > all[i-1].Similarity {
			t.Errorf("matches not best first: %+v", all)
		}
	}
	top, _ := x.Query(ctx, q, &QueryOptions{Threshold: 0.5, Limit: 2})
	if len(top) != 2 || top[0].ID != all[0].ID || top[1].ID != all[1].ID {
		t.Errorf("limit 2: %+v; want the first two of %+v", top, all)
	}
	strict, _ := x.Query(ctx, q, &QueryOptions{Threshold: 1})
	if len(strict) != 1 || strict[0].ID != "v0" {
		t.Errorf("threshold 1: %+v; want v0 only", strict)
	}
	ex, _ := x.Query(ctx, q, &QueryOptions{Threshold: 1, Exclude: "v0"})
	if len(ex) != 0 {
		t.Errorf("threshold 1 excluding v0: %+v; want none", ex)
	}
}

func testDelete(t *testing.T, b backend) {
	x, _ := b.open(t, nil)
	c := x.Config()
	g := newTextGen(5)
	a := g.text(120)
	if err := x.Insert(ctx, []Doc{docOf(t, c, "a", a), docOf(t, c, "b", g.text(120))}); err != nil {
		t.Fatal(err)
	}
	if err := x.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := x.Delete(ctx, "a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Delete: %v; want ErrNotFound", err)
	}
	if err := x.Delete(ctx, "never"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Delete of an unknown id: %v; want ErrNotFound", err)
	}
	if ms, _ := x.Query(ctx, signOf(t, c, a), nil); len(ms) != 0 {
		t.Errorf("Query after Delete: %+v; want none", ms)
	}
	// The id can be used again, and the text is new again.
	res, err := x.CheckAndInsert(ctx, []Doc{docOf(t, c, "a", a)}, nil)
	if err != nil || res[0].Status != New {
		t.Fatalf("reinsert: %+v, %v; want new", res, err)
	}
	if n := count(t, x); n != 2 {
		t.Errorf("documents %d; want 2", n)
	}
	mustCheck(t, x)
}

func testBucketCap(t *testing.T, b backend) {
	x, _ := b.open(t, &Options{BucketCap: 2})
	c := x.Config()
	g := newTextGen(6)
	text := g.text(80)
	var docs []Doc
	for i := range 5 {
		docs = append(docs, docOf(t, c, fmt.Sprintf("d%d", i), text))
	}
	if err := x.Insert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	m := x.Metrics()
	keys := int64(c.Bands.KeysPerDoc())
	if m.DroppedPostings != uint64(3*keys) {
		t.Errorf("dropped postings %d; want %d (3 documents × %d buckets)", m.DroppedPostings, 3*keys, keys)
	}
	ms, err := x.Query(ctx, docs[0].Sig, nil)
	if err != nil || len(ms) != 2 || ms[0].ID != "d0" || ms[1].ID != "d1" {
		t.Errorf("Query of a full bucket: %+v, %v; want d0, d1", ms, err)
	}
	if x.Metrics().FullBuckets == 0 {
		t.Error("full buckets not counted")
	}
	r := mustCheck(t, x)
	if r.CappedPostings != 3*keys {
		t.Errorf("Check: capped postings %d; want %d", r.CappedPostings, 3*keys)
	}
	// Deleting a document whose postings were dropped works too.
	if err := x.Delete(ctx, "d4"); err != nil {
		t.Fatal(err)
	}
	if err := x.Delete(ctx, "d0"); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, x)
}

// testConcurrent submits groups of near-identical documents from many
// goroutines at once: exactly one per group may be new.
func testConcurrent(t *testing.T, b backend) {
	x, _ := b.open(t, nil)
	concurrentGroups(t, []Index{x})
}

// concurrentGroups races near-identical documents through the handles xs
// (one index; several handles stand for several processes).
func concurrentGroups(t *testing.T, xs []Index) {
	x := xs[0]
	c := x.Config()
	g := newTextGen(7)
	groups, per := 12, 8
	if testing.Short() {
		groups, per = 6, 6
	}
	type job struct {
		group int
		doc   Doc
	}
	var jobs []job
	// Members differ from the group's base in at most one word of 400, so
	// any two are about 0.95 similar: far above the threshold, whatever the
	// estimation noise, and far from every other group.
	for gi := range groups {
		base := g.text(400)
		for j := range per {
			jobs = append(jobs, job{gi, docOf(t, c, fmt.Sprintf("g%d-%d", gi, j), g.variant(base, j%2))})
		}
	}
	// Interleave the groups so that members of one group race.
	g.rng.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
	results := make([]Result, len(jobs))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			res, err := xs[i%len(xs)].CheckAndInsert(ctx, []Doc{jobs[i].doc}, nil)
			if err != nil {
				t.Error(err)
				return
			}
			results[i] = res[0]
		}()
	}
	close(start)
	wg.Wait()
	newPer := make([]int, groups)
	for i, r := range results {
		switch r.Status {
		case New:
			newPer[jobs[i].group]++
		case Duplicate:
			for _, m := range r.Matches {
				if m.ID[:len(fmt.Sprintf("g%d-", jobs[i].group))] != fmt.Sprintf("g%d-", jobs[i].group) {
					t.Errorf("%s matched %s of another group", r.ID, m.ID)
				}
			}
		default:
			t.Errorf("%s: %v", r.ID, r.Err)
		}
	}
	for gi, n := range newPer {
		if n != 1 {
			t.Errorf("group %d: %d new documents; want exactly 1", gi, n)
			for i, r := range results {
				if jobs[i].group == gi {
					t.Logf("  %s: %v %+v", r.ID, r.Status, r.Matches)
				}
			}
		}
	}
	if n := count(t, x); n != int64(groups) {
		t.Errorf("documents %d; want %d", n, groups)
	}
	mustCheck(t, x)
}

func testReopen(t *testing.T, b backend) {
	x, reopen := b.open(t, &Options{Spec: shingle.CJK, Params: minhash.Params{K: 64, Bits: 16}, Threshold: 0.7})
	c := x.Config()
	if c.Spec != shingle.CJK || c.Params.K != 64 || c.Params.Bits != 16 || c.Threshold != 0.7 {
		t.Fatalf("config %s", c)
	}
	g := newTextGen(8)
	text := g.text(100)
	if err := x.Insert(ctx, []Doc{docOf(t, c, "a", text)}); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		opts Options
		want error
	}{
		{Options{Spec: shingle.Prose}, ErrSpecMismatch},
		{Options{Params: minhash.Params{K: 128}}, ErrParamsMismatch},
		{Options{Params: minhash.Params{K: 64, Bits: 16, Seed: 1}}, ErrParamsMismatch},
		{Options{Bands: lsh.Params{Bands: 2, Rows: 2}}, ErrBandsMismatch},
	} {
		y, err := reopen(&tc.opts)
		if !errors.Is(err, tc.want) {
			t.Errorf("reopen with %+v: %v; want %v", tc.opts, err, tc.want)
		}
		if y != nil {
			y.Close()
		}
	}
	// Zero options take the stored configuration.
	y, err := reopen(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	if y.Config() != c {
		t.Errorf("reopened config %s; want %s", y.Config(), c)
	}
	ms, err := y.Query(ctx, signOf(t, c, text), nil)
	if err != nil || len(ms) != 1 || ms[0].ID != "a" {
		t.Fatalf("Query after reopen: %+v, %v", ms, err)
	}
	if n := count(t, y); n != 1 {
		t.Errorf("documents after reopen %d; want 1", n)
	}
}

// testRandomOps mixes inserts, check-and-inserts and deletes and compares
// the index with a model.
func testRandomOps(t *testing.T, b backend) {
	x, _ := b.open(t, nil)
	c := x.Config()
	g := newTextGen(9)
	model := map[string]bool{}
	var texts []string
	for i := range 300 {
		switch op := g.rng.IntN(10); {
		case op < 5 || len(model) == 0:
			text := g.text(60)
			if len(texts) > 0 && g.rng.IntN(3) == 0 {
				text = g.variant(texts[g.rng.IntN(len(texts))], 1)
			}
			id := fmt.Sprintf("r%d", i)
			res, err := x.CheckAndInsert(ctx, []Doc{docOf(t, c, id, text)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res[0].Status == New {
				model[id] = true
				texts = append(texts, text)
			}
		case op < 7:
			id := fmt.Sprintf("r%d", i)
			if err := x.Insert(ctx, []Doc{docOf(t, c, id, g.text(60))}); err != nil {
				t.Fatal(err)
			}
			model[id] = true
		default:
			var ids []string
			for id := range model {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			id := ids[g.rng.IntN(len(ids))]
			if err := x.Delete(ctx, id); err != nil {
				t.Fatal(err)
			}
			delete(model, id)
		}
	}
	if n := count(t, x); n != int64(len(model)) {
		t.Errorf("documents %d; want %d", n, len(model))
	}
	for id := range model {
		if _, err := x.Get(ctx, id); err != nil {
			t.Errorf("Get(%s): %v", id, err)
		}
	}
	r := mustCheck(t, x)
	if r.Documents != int64(len(model)) {
		t.Errorf("Check counted %d documents; want %d", r.Documents, len(model))
	}
}
