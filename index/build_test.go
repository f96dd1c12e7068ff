package index

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

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
		o.BucketCap = opts.BucketCap
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
// spilling to disk.
func TestBuildMatchesInsert(t *testing.T) {
	for _, spill := range []bool{false, true} {
		t.Run(fmt.Sprintf("spill=%v", spill), func(t *testing.T) {
			ref := openTemp(t, &Options{BucketCap: 5})
			built := openTemp(t, &Options{BucketCap: 5})
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
				b.post = extsort.New(b.tmp, "postings", 1024)
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
		})
	}
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
