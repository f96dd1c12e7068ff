package indexload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/minhash"
)

const sample = "../../testdata/articles_1000.jsonl"

// TestBuildSameAsInsert: a bulk load answers as inserting the same
// documents one by one, signed by the index's own signer, does; the counts
// add up; the result does not depend on the workers.
func TestBuildSameAsInsert(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	data, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	// An empty text and a bad line among the articles.
	data = append(data, []byte("{\"id\":\"empty\",\"text\":\"\"}\n{bad\n")...)
	os.WriteFile(in, data, 0o644)

	var stats []index.Stats
	for _, workers := range []int{1, 3} {
		db, err := index.Open(filepath.Join(dir, "bulk", string(rune('0'+workers))), &index.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		st, err := Build(ctx, db, []string{in}, &corpus.Options{SkipBad: true}, nil, workers, nil)
		if err != nil {
			t.Fatal(err)
		}
		if st.Records != 1002 || st.Empty != 1 || st.Bad != 1 || st.Documents != 1000 {
			t.Errorf("workers %d: stats %+v; want 1002 records, 1 empty, 1 bad, 1000 documents", workers, st)
		}
		ist, err := db.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		stats = append(stats, ist)
		// Every article finds itself, as an inserted one would.
		signer, _ := db.Config().NewSigner()
		for _, d := range readDocs(t, sample)[:50] {
			sig, _ := signer.Sign(nil, []byte(d.text))
			ms, err := db.Query(ctx, minhash.Signature(sig), nil)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, m := range ms {
				found = found || m.ID == d.id
			}
			if !found {
				t.Errorf("workers %d: %s does not find itself", workers, d.id)
			}
		}
		db.Close()
	}
	if stats[0].Documents != stats[1].Documents {
		t.Errorf("documents %d with 1 worker, %d with 3", stats[0].Documents, stats[1].Documents)
	}
}

// TestBuildBadID: an id the index cannot hold fails the build, naming the
// file and line, and leaves the index empty.
func TestBuildBadID(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, []byte("{\"id\":\"a\",\"text\":\"one two three four five six\"}\n{\"id\":\"\",\"text\":\"seven eight nine ten eleven\"}\n"), 0o644)
	db, err := index.Open(filepath.Join(dir, "idx"), &index.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = Build(ctx, db, []string{in}, nil, nil, 2, nil)
	if !errors.Is(err, index.ErrInvalidDocument) || !strings.Contains(err.Error(), "in.jsonl:2") {
		t.Errorf("err = %v; want ErrInvalidDocument naming in.jsonl:2", err)
	}
	if st, _ := db.Stats(ctx); st.Documents != 0 {
		t.Errorf("%d documents after a failed build; want 0", st.Documents)
	}
}

type doc struct{ id, text string }

func readDocs(t *testing.T, path string) []doc {
	t.Helper()
	r, err := corpus.NewReader([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, _ := corpus.NewParser(nil)
	var out []doc
	var b corpus.Batch
	for r.Next(&b) == nil {
		for i := range b.Records {
			var d corpus.Document
			if err := p.Parse(&b.Records[i], &d); err != nil {
				t.Fatal(err)
			}
			out = append(out, doc{string(d.ID), string(d.Text)})
		}
	}
	return out
}
