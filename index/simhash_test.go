package index

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
	"github.com/neardup/neardup/simhash"
)

// simFingerprints returns n fingerprints in families: a random one and
// copies of it with 0 to k+2 bits flipped, so that pairs lie at every
// distance around k, and unrelated families 32 ± 4 bits apart.
func simFingerprints(n, k int, seed uint64) []uint64 {
	r := rand.New(rand.NewPCG(seed, seed))
	var fps []uint64
	for len(fps) < n {
		base := r.Uint64()
		fps = append(fps, base)
		for range r.IntN(4) {
			fp := base
			for range r.IntN(k + 3) {
				fp ^= 1 << r.IntN(64)
			}
			fps = append(fps, fp)
		}
	}
	return fps[:n]
}

// bruteMatches returns, for fingerprint q, the ids of fps within distance k
// and their model similarities, as a query must list them (best first,
// ties by id).
func bruteMatches(fps []uint64, q uint64, k int) []Match {
	var ms []Match
	for i, fp := range fps {
		if d := bits.OnesCount64(q ^ fp); d <= k {
			ms = append(ms, Match{ID: fmt.Sprintf("f%05d", i), Similarity: simhash.ModelJaccard(d)})
		}
	}
	return sortMatches(ms, len(ms))
}

// openSimTemp opens a new Pebble index with opts in a temporary directory.
func openSimTemp(t *testing.T, opts *Options) *DB {
	t.Helper()
	o := *opts
	o.CacheSize, o.MemTableSize, o.NoSync = 8<<20, 4<<20, true
	x, err := Open(filepath.Join(t.TempDir(), "index"), &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

func simHashOptions(k, blocks int) *Options {
	return &Options{Sketch: sketch.SimHash, SimHash: SimHashOptions{Hamming: k, Blocks: blocks}, Threshold: 0.5, BucketCap: Unlimited}
}

// checkBruteForce queries every fingerprint of fps, all stored in x, and
// compares the answers with a comparison of all pairs.
func checkBruteForce(t *testing.T, x Index, fps []uint64, k int) {
	t.Helper()
	for i, fp := range fps {
		got, err := x.Query(ctx, minhash.Signature{fp}, &QueryOptions{Threshold: 0.5, Limit: MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		want := bruteMatches(fps, fp, k)
		if !slices.EqualFunc(got, want, func(a, b Match) bool { return a.ID == b.ID && a.Similarity == b.Similarity }) {
			t.Fatalf("query %d: %d matches %v; brute force %d %v", i, len(got), got, len(want), want)
		}
	}
}

// TestSimHashIndexBruteForce: a SimHash index answers every query with
// exactly the stored fingerprints within its Hamming distance (a comparison
// of all pairs), for several layouts, on every backend, whether the
// documents were inserted one by one, checked and inserted in batches, or
// bulk-built, and after a repack.
func TestSimHashIndexBruteForce(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 800
	}
	for _, l := range []struct{ k, blocks int }{{3, 4}, {6, 8}, {2, 5}} {
		fps := simFingerprints(n, l.k, uint64(l.k))
		docs := make([]Doc, len(fps))
		for i, fp := range fps {
			docs[i] = Doc{ID: fmt.Sprintf("f%05d", i), Sig: minhash.Signature{fp}}
		}
		for _, b := range []backend{pebbleBackend(1 << 20), memoryBackend(), redisBackend(false)} {
			t.Run(fmt.Sprintf("k%d-B%d-%s", l.k, l.blocks, b.name), func(t *testing.T) {
				x, _ := b.open(t, simHashOptions(l.k, l.blocks))
				c := x.Config()
				if c.Sketch != sketch.SimHash || c.SimHash.K != l.k || c.SimHash.Blocks != l.blocks || c.Params.Words() != 1 {
					t.Fatalf("config %v", c)
				}
				for i := 0; i < len(docs); i += 50 {
					if err := x.Insert(ctx, docs[i:min(i+50, len(docs))]); err != nil {
						t.Fatal(err)
					}
				}
				checkBruteForce(t, x, fps, l.k)
				mustCheck(t, x)
			})
		}
		t.Run(fmt.Sprintf("k%d-B%d-check-and-insert", l.k, l.blocks), func(t *testing.T) {
			x := openSimTemp(t, simHashOptions(l.k, l.blocks))
			res, err := x.CheckAndInsert(ctx, docs, &QueryOptions{Threshold: 0.5, Limit: MaxLimit})
			if err != nil {
				t.Fatal(err)
			}
			// Each document is checked against the new ones before it (a
			// duplicate is not stored).
			var stored []int
			for i, r := range res {
				var want []string
				for _, j := range stored {
					if bits.OnesCount64(fps[i]^fps[j]) <= l.k {
						want = append(want, docs[j].ID)
					}
				}
				var got []string
				for _, m := range r.Matches {
					got = append(got, m.ID)
				}
				slices.Sort(got)
				if (r.Status == Duplicate) != (len(want) > 0) || !slices.Equal(got, want) {
					t.Fatalf("document %d: %v, matches %v; brute force finds %v", i, r.Status, got, want)
				}
				if r.Status == New {
					stored = append(stored, i)
				}
			}
			mustCheck(t, x)
		})
		t.Run(fmt.Sprintf("k%d-B%d-built-repacked", l.k, l.blocks), func(t *testing.T) {
			x := openSimTemp(t, &Options{Sketch: sketch.SimHash, SimHash: SimHashOptions{Hamming: l.k, Blocks: l.blocks}, BucketCap: Unlimited, ForBuild: true})
			bl, err := x.NewBuilder(nil)
			if err != nil {
				t.Fatal(err)
			}
			half := len(docs) / 2
			for _, d := range docs[:half] {
				if err := bl.Add(d); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := bl.Finish(ctx); err != nil {
				t.Fatal(err)
			}
			if err := x.Insert(ctx, docs[half:]); err != nil {
				t.Fatal(err)
			}
			checkBruteForce(t, x, fps, l.k)
			if _, err := x.Repack(ctx, nil); err != nil {
				t.Fatal(err)
			}
			checkBruteForce(t, x, fps, l.k)
			mustCheck(t, x)
		})
	}
}

// TestSimHashIndexConfig: the meta record keeps the sketch, its params and
// layout; an open with other SimHash settings, or as MinHash options of
// their own, is refused; the storage is 8 bytes a record.
func TestSimHashIndexConfig(t *testing.T) {
	x, reopen := pebbleBackend(1<<20).open(t, &Options{Sketch: sketch.SimHash, SimHash: SimHashOptions{Hamming: 4}})
	c := x.Config()
	if c.SimHash.K != 4 || c.SimHash.Blocks != 5 || c.Tables() != 5 || c.SimHash.Params.Weighting != sigfile.TF || c.Params.Bytes() != 8 || c.Bands.Bands != 0 {
		t.Fatalf("config %+v", c)
	}
	if s := c.String(); !strings.Contains(s, "simhash") || !strings.Contains(s, "Hamming distance 4, 5 blocks (5 tables)") {
		t.Errorf("String() = %q", s)
	}
	x.Close()
	y, err := reopen(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := y.Config(); got.Sketch != sketch.SimHash || got.SimHash != c.SimHash || got.Params != c.Params {
		t.Errorf("reopened: %+v; want %+v", got, c)
	}
	y.Close()
	for _, o := range []*Options{
		{Sketch: sketch.SimHash, SimHash: SimHashOptions{Hamming: 3}},
		{Sketch: sketch.SimHash, SimHash: SimHashOptions{Blocks: 6}},
		{Sketch: sketch.SimHash, SimHash: SimHashOptions{Weight: sigfile.TFIDF}},
		{Params: minhash.Params{K: 64}},
	} {
		if z, err := reopen(o); !errors.Is(err, ErrParamsMismatch) && !errors.Is(err, ErrBandsMismatch) {
			t.Errorf("reopen with %+v: %v; want a mismatch", o, err)
			if z != nil {
				z.Close()
			}
		}
	}
	// Options that make no SimHash index.
	for _, o := range []Options{
		{Sketch: sketch.SimHash, Params: minhash.Params{K: 64}},
		{Sketch: sketch.SimHash, SimHash: SimHashOptions{Hamming: 9}},
		{Sketch: sketch.SimHash, SimHash: SimHashOptions{Hamming: 3, Blocks: 3}},
		{Sketch: sketch.SimHash, SimHash: SimHashOptions{Weight: sigfile.TFIDF}},
		{SimHash: SimHashOptions{Hamming: 3}},
		{Sketch: 5},
	} {
		if err := o.Validate(); err == nil {
			if z, err := Open(t.TempDir(), &o); err == nil {
				z.Close()
				t.Errorf("%+v: opened; want an error", o)
			}
		}
	}
}

// TestSimHashIndexTFIDF: a TF-IDF index stores its document-frequency table
// with the meta record, every open weighs by it (the signer's fingerprints
// are the library's under the table's weights), and a damaged table is
// refused.
func TestSimHashIndexTFIDF(t *testing.T) {
	g := newTextGen(9)
	var texts []string
	for range 200 {
		texts = append(texts, g.text(60))
	}
	table, _ := simhash.NewDFTable(simhash.DFOptions{LogWidth: 12})
	sh := shingle.MustNew(shingle.Prose)
	for _, s := range texts {
		table.AddText(sh, []byte(s))
	}
	h := simhash.NewHasher(table.IDF())
	for _, b := range []backend{pebbleBackend(1 << 20), memoryBackend(), redisBackend(false)} {
		t.Run(b.name, func(t *testing.T) {
			x, reopen := b.open(t, &Options{Sketch: sketch.SimHash, SimHash: SimHashOptions{Weight: sigfile.TFIDF, DF: table}})
			want := sigfile.SimHashParams{Weighting: sigfile.TFIDF, DFFingerprint: table.Fingerprint()}
			if got := x.Config().SimHash.Params; got != want {
				t.Fatalf("params %v; want %v", got, want)
			}
			if err := x.Insert(ctx, []Doc{docOf(t, x.Config(), "a", texts[0])}); err != nil {
				t.Fatal(err)
			}
			x.Close()
			y, err := reopen(nil)
			if err != nil {
				t.Fatal(err)
			}
			defer y.Close()
			c := y.Config()
			if c.SimHash.IDF == nil || c.SimHash.IDF.Fingerprint() != table.Fingerprint() {
				t.Fatalf("reopened without the table's weights: %+v", c.SimHash)
			}
			for _, s := range texts[:20] {
				if got := signOf(t, c, s); got[0] != h.FingerprintText(sh, []byte(s)) {
					t.Fatalf("signer %x; want the TF-IDF fingerprint %x", got, h.FingerprintText(sh, []byte(s)))
				}
			}
			ms, err := y.Query(ctx, signOf(t, c, texts[0]), nil)
			if err != nil || len(ms) != 1 || ms[0].ID != "a" || ms[0].Similarity != 1 {
				t.Errorf("query: %+v, %v", ms, err)
			}
		})
	}
}
