package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/sitetemplate"
	"github.com/neardup/neardup/server"
	"github.com/neardup/neardup/shingle"
)

// TestBoilerplateStripped: an index built under a spec that drops the site
// template's lines stores them, and the service over it — opened without a
// spec, as neardup serve opens it — drops them from every request: a page
// wrapped in the template matches its article alone with similarity 1, and
// two unrelated wrapped pages do not match, though the template alone makes
// them near duplicates (J = 0.51 under prose, as the same service over an
// index without the set shows: at t = 0.4, the estimate from 128 slots,
// of standard deviation √(J(1−J)/128) ≈ 0.044, is 2.4 of them above).
func TestBoilerplateStripped(t *testing.T) {
	arts := bundledArticles(t, 2)
	sh := shingle.MustNew(shingle.Prose)
	var hs []uint64
	for _, l := range sitetemplate.Lines() {
		for _, ln := range sh.AppendLines(nil, []byte(l)) {
			hs = append(hs, ln.Hash)
		}
	}
	spec := shingle.Prose
	spec.Boilerplate = shingle.NewBoilerplate(hs)
	ctx := context.Background()
	for _, strip := range []bool{true, false} {
		dir := filepath.Join(t.TempDir(), "idx")
		o := &index.Options{Spec: shingle.Prose, Threshold: 0.4, CacheSize: 8 << 20, NoSync: true}
		if strip {
			o.Spec = spec
		}
		idx, err := index.Open(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		idx.Close()
		idx, err = index.Open(dir, &index.Options{CacheSize: 8 << 20, NoSync: true}) // as neardup serve reopens it
		if err != nil {
			t.Fatal(err)
		}
		s, err := server.New(idx, &server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(s.Handler())
		c := server.NewClient(hs.URL, "", nil)
		r, err := c.Insert(ctx, server.Document{ID: "a", Text: sitetemplate.Wrap(arts[0])}, server.Query{})
		if err != nil || r.Status != "new" {
			t.Fatalf("strip=%v: insert: %+v, %v", strip, r, err)
		}
		other, err := c.Check(ctx, server.Document{Text: sitetemplate.Wrap(arts[1])}, server.Query{})
		if err != nil {
			t.Fatal(err)
		}
		alone, err := c.Check(ctx, server.Document{Text: arts[0]}, server.Query{})
		if err != nil {
			t.Fatal(err)
		}
		if strip {
			if other.Status != "new" {
				t.Errorf("an unrelated page in the template: %s (%+v); want new, the template dropped", other.Status, other.Duplicates)
			}
			if alone.Status != "duplicate" || alone.Duplicates[0].ID != "a" || alone.Duplicates[0].Similarity != 1 {
				t.Errorf("the article alone: %s %+v; want a duplicate of a with similarity 1", alone.Status, alone.Duplicates)
			}
		} else if other.Status != "duplicate" {
			t.Errorf("without the set, an unrelated page in the template: %s; want duplicate (the template alone is J = 0.51)", other.Status)
		}
		hs.Close()
		idx.Close()
	}
}

// bundledArticles returns the texts of the first n bundled articles.
func bundledArticles(t *testing.T, n int) []string {
	t.Helper()
	data, err := os.ReadFile("../testdata/articles_1000.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.SplitN(string(data), "\n", n+1)[:n] {
		var d struct{ Text string }
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d.Text)
	}
	return out
}
