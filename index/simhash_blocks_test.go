package index

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/sigfile"
)

// TestSimHashExpectedDocsBlocks: a new SimHash index sized with ExpectedDocs
// takes the blocks the batch job's rule takes for that many documents
// (sketch.Config.Resolve), and on that many random fingerprints drops no
// posting at a bucket cap that the default layout (k+1 blocks) overflows.
// At k = 6 the default has 7 tables keyed by one block, 9 or 10 bits: n =
// 1.2·10^5 documents put about n/2^9.1 ≈ 220 in a bucket on average, past a
// cap of 100, so postings are dropped (asserted: the test shows the
// problem). The rule takes 8 blocks from 109,554 documents on: 28 tables
// keyed by two 8-bit blocks, n/2^16 ≈ 1.8 a bucket, and a Poisson(1.8)
// count reaches 101 with probability below 10^-100, so no posting of the
// 3.4·10^6 may be dropped.
func TestSimHashExpectedDocsBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("1.2·10^5 documents into two indexes; skipped under -short")
	}
	const (
		n   = 120_000
		k   = 6
		cap = 100
	)
	r := rand.New(rand.NewPCG(6, 6))
	docs := make([]Doc, n)
	for i := range docs {
		docs[i] = Doc{ID: fmt.Sprintf("d%06d", i), Sig: minhash.Signature{r.Uint64()}}
	}
	load := func(o SimHashOptions) (Config, Metrics) {
		t.Helper()
		x, err := NewMemory(&Options{Sketch: sketch.SimHash, SimHash: o, BucketCap: cap})
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		for i := 0; i < n; i += 10_000 {
			if err := x.Insert(ctx, docs[i:min(i+10_000, n)]); err != nil {
				t.Fatal(err)
			}
		}
		return x.Config(), x.Metrics()
	}

	c, m := load(SimHashOptions{Hamming: k})
	if c.SimHash.Blocks != k+1 || m.DroppedPostings == 0 {
		t.Fatalf("default layout: %d blocks, %d postings dropped; want %d blocks and some dropped (the cap overflowed)", c.SimHash.Blocks, m.DroppedPostings, k+1)
	}
	t.Logf("default layout: %d blocks, %d of %d postings dropped", c.SimHash.Blocks, m.DroppedPostings, n*c.Tables())

	want, err := sketch.Config{Kind: sketch.SimHash, SimHash: sketch.SimHashConfig{K: k}}.Resolve(n)
	if err != nil {
		t.Fatal(err)
	}
	c, m = load(SimHashOptions{Hamming: k, ExpectedDocs: n})
	if c.SimHash.Blocks != want.SimHash.Blocks || c.SimHash.Blocks != 8 {
		t.Errorf("sized for %d documents: %d blocks; want %d (the batch job's rule)", n, c.SimHash.Blocks, want.SimHash.Blocks)
	}
	if m.DroppedPostings != 0 {
		t.Errorf("sized for %d documents: %d postings dropped; want none", n, m.DroppedPostings)
	}

	// Blocks set wins; ExpectedDocs is ignored.
	x, err := NewMemory(&Options{Sketch: sketch.SimHash, SimHash: SimHashOptions{Hamming: k, Blocks: 7, ExpectedDocs: n}})
	if err != nil {
		t.Fatal(err)
	}
	if got := x.Config().SimHash.Blocks; got != 7 {
		t.Errorf("Blocks 7 with ExpectedDocs: %d blocks; want 7", got)
	}
	if err := (&Options{Sketch: sketch.SimHash, SimHash: SimHashOptions{ExpectedDocs: -1}}).Validate(); err == nil {
		t.Error("ExpectedDocs −1 validated; want an error")
	}
}

// TestSimHashMismatchNamesItsParams: opening a SimHash index with options
// it was not made with fails with a mismatch that names the SimHash
// parameters it has (weighting, Hamming distance, blocks), never "minhash
// params" or an LSH banding the index does not have.
func TestSimHashMismatchNamesItsParams(t *testing.T) {
	x, reopen := pebbleBackend(1<<20).open(t, &Options{Sketch: sketch.SimHash, SimHash: SimHashOptions{Hamming: 4}})
	x.Close()
	for _, c := range []struct {
		name string
		o    *Options
		want []string
	}{
		{"minhash params", &Options{Params: minhash.Params{K: 64}}, []string{"SimHash index", "Hamming distance 4", "5 blocks", "asked for MinHash params"}},
		{"bands", &Options{Bands: lsh.Params{Bands: 16, Rows: 8}}, []string{"SimHash index", "5 blocks", "asked for LSH bands"}},
		{"hamming", &Options{Sketch: sketch.SimHash, SimHash: SimHashOptions{Hamming: 3}}, []string{"SimHash index", "within 4 bits", "asked for 3"}},
		{"blocks", &Options{Sketch: sketch.SimHash, SimHash: SimHashOptions{Blocks: 6}}, []string{"SimHash index", "5 blocks", "asked for 6"}},
		{"weight", &Options{Sketch: sketch.SimHash, SimHash: SimHashOptions{Weight: sigfile.TFIDF}}, []string{"SimHash index", "weighs by tf"}},
	} {
		z, err := reopen(c.o)
		if err == nil {
			z.Close()
			t.Errorf("reopen with %s: opened; want a mismatch", c.name)
			continue
		}
		if !errors.Is(err, ErrParamsMismatch) && !errors.Is(err, ErrBandsMismatch) {
			t.Errorf("reopen with %s: %v; want a mismatch", c.name, err)
		}
		msg := err.Error()
		if strings.Contains(strings.ToLower(msg), "minhash params:") || strings.Contains(msg, "LSH banding") {
			t.Errorf("reopen with %s: %q names MinHash's params or an LSH banding", c.name, msg)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("reopen with %s: %q; want it to say %q", c.name, msg, w)
			}
		}
	}
}
