package index

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/neardup/neardup/minhash"
)

// TestEachDocument: every stored document comes back once, in the order it
// was stored (a bulk build's, then online inserts'), with its signature, on
// an index opened read-only; a deleted document does not; fn's error stops
// the scan.
func TestEachDocument(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	x, err := Open(dir, &Options{CacheSize: 8 << 20, MemTableSize: 4 << 20, NoSync: true, BucketCap: 3})
	if err != nil {
		t.Fatal(err)
	}
	docs := buildDocs(t, x.Config(), 300)
	b, err := x.NewBuilder(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs[:200] {
		if err := b.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Finish(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := x.Insert(ctx, docs[200:]); err != nil {
		t.Fatal(err)
	}
	if err := x.Delete(ctx, docs[7].ID); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(dir, &Options{ReadOnly: true, FilterBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	want := slices.Delete(slices.Clone(docs), 7, 8)
	var got []Doc
	if err := ro.EachDocument(ctx, func(id []byte, sig minhash.Signature) error {
		got = append(got, Doc{ID: string(id), Sig: slices.Clone(sig)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d documents; want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].ID != want[i].ID || !slices.Equal(got[i].Sig, want[i].Sig) {
			t.Fatalf("document %d: got %q %x; want %q %x", i, got[i].ID, got[i].Sig[:2], want[i].ID, want[i].Sig[:2])
		}
	}
	stop := errors.New("stop")
	n := 0
	err = ro.EachDocument(ctx, func([]byte, minhash.Signature) error {
		if n++; n == 5 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 5 {
		t.Fatalf("after fn's error at document 5: %v after %d documents; want stop after 5", err, n)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := ro.EachDocument(cctx, func([]byte, minhash.Signature) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v; want context.Canceled", err)
	}
}
