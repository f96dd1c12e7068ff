package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/neardup/neardup/index"
)

// The bundled sample as index documents, for the tests of the index
// commands that compare an index's answers before and after a change
// (repack, migrate, the key width of a build).

// sampleDocs signs the bundled sample under c: its documents with shingles,
// in input order.
func sampleDocs(t *testing.T, c index.Config) []index.Doc {
	t.Helper()
	signer, err := c.NewSigner()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	var docs []index.Doc
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec struct{ ID, Text string }
		jsonUnmarshal(t, line, &rec)
		if sig, empty := signer.Sign(nil, []byte(rec.Text)); !empty {
			docs = append(docs, index.Doc{ID: rec.ID, Sig: sig})
		}
	}
	return docs
}

// signSample signs the bundled sample under the configuration of the index
// at dir.
func signSample(t *testing.T, dir string) []index.Doc {
	t.Helper()
	x, err := index.Open(dir, &index.Options{CacheSize: 8 << 20, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	return sampleDocs(t, x.Config())
}

// fillOnline stores the bundled sample in a new index at dir, made with the
// bucket cap and key width of o (zero: the defaults, as the service makes
// one), by Insert one document at a time (postings of their own, as the
// service writes them), and returns the sample's documents.
func fillOnline(t *testing.T, dir string, o index.Options) []index.Doc {
	t.Helper()
	x, err := index.Open(dir, &index.Options{CacheSize: 8 << 20, NoSync: true, BucketCap: o.BucketCap, BucketKeyBytes: o.BucketKeyBytes})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	docs := sampleDocs(t, x.Config())
	for _, d := range docs {
		if err := x.Insert(context.Background(), []index.Doc{d}); err != nil {
			t.Fatal(err)
		}
	}
	return docs
}

// queryAll returns the answers of the index at dir to every document.
func queryAll(t *testing.T, dir string, docs []index.Doc) string {
	t.Helper()
	x, err := index.Open(dir, &index.Options{CacheSize: 8 << 20, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	for _, d := range docs {
		ms, err := x.Query(context.Background(), d.Sig, &index.QueryOptions{Threshold: 0.3, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		enc.Encode(ms)
	}
	return out.String()
}

// keyBytes returns the bucket-key width that index stats reports for the
// index at dir.
func keyBytes(t *testing.T, dir string) int {
	t.Helper()
	var st struct {
		BucketKeyBytes int `json:"bucket_key_bytes"`
	}
	jsonUnmarshal(t, mustRun(t, "index", "stats", "--data", dir), &st)
	return st.BucketKeyBytes
}
