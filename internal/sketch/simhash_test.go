package sketch

import (
	"encoding/json"
	"errors"
	"math/bits"
	"slices"
	"testing"

	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
	"github.com/neardup/neardup/simhash"
)

func simHashConfig(k, blocks int) Config {
	return Config{Spec: shingle.Prose, Kind: SimHash, SimHash: SimHashConfig{Params: sigfile.SimHashParams{Weighting: sigfile.TF}, K: k, Blocks: blocks}}
}

// TestSketchIsSimHash: the SimHash sketch signs as simhash.Hasher, tells
// texts without features, bands as the high BucketKeyBits of
// simhash.Layout's entries with EntryDocBits document bits (so PackEntry
// gives the Layout's entry), estimates by the model at the distance, and
// Config.AppendBucketKeys agrees with the Sketcher.
func TestSketchIsSimHash(t *testing.T) {
	for _, c := range []Config{simHashConfig(6, 8), simHashConfig(3, 4), simHashConfig(0, 1), simHashConfig(8, 11)} {
		sk, err := c.New()
		if err != nil {
			t.Fatal(err)
		}
		s, _ := sk.NewSketcher()
		sh := shingle.MustNew(c.Spec)
		l, err := simhash.NewLayout(c.SimHash.layoutOptions())
		if err != nil {
			t.Fatal(err)
		}
		if sk.Words() != 1 || !sk.GroupsBySignature() || c.Tables() != l.Tables() {
			t.Fatalf("%+v: Words %d, GroupsBySignature %v, Tables %d", c.SimHash, sk.Words(), sk.GroupsBySignature(), c.Tables())
		}
		var fps []uint64
		for i, text := range texts {
			got, empty := s.Sign([]uint64{42}, []byte(text))
			fs := sh.AppendFeatures(nil, []byte(text))
			if want := simhash.Fingerprint(fs); len(got) != 2 || got[0] != 42 || got[1] != want || empty != (len(fs) == 0) {
				t.Fatalf("text %d: Sign = %x, %v; want [42 %x], %v", i, got, empty, want, len(fs) == 0)
			}
			fps = append(fps, got[1])
			keys := s.AppendBucketKeys([]uint64{7}, got[1:])
			entries := l.AppendEntries(nil, got[1], uint32(i), EntryDocBits)
			if len(keys) != 1+l.Tables() || keys[0] != 7 {
				t.Fatalf("text %d: %d keys; want 7 and %d", i, len(keys), l.Tables())
			}
			fromConfig, _ := c.AppendBucketKeys(nil, nil, got[1:])
			if !slices.Equal(fromConfig, keys[1:]) {
				t.Errorf("text %d: Config.AppendBucketKeys differs from the Sketcher's", i)
			}
			for j, k := range keys[1:] {
				if k >= 1<<BucketKeyBits || PackEntry(k, uint32(i)) != entries[j] {
					t.Errorf("text %d table %d: key %x packs to %x; want the layout's entry %x", i, j, k, PackEntry(k, uint32(i)), entries[j])
				}
			}
		}
		if got, want := sk.Similarity(fps[0:1], fps[1:2]), simhash.ModelJaccard(bits.OnesCount64(fps[0]^fps[1])); got != want {
			t.Errorf("Similarity %v; want %v", got, want)
		}
		if m := s.Metrics(); m.Signatures != int64(len(texts)) || m.EmptySets != 2 || m.Features == 0 {
			t.Errorf("Metrics %+v; want %d signatures, 2 empty", m, len(texts))
		}
	}
}

// TestSimHashGrouper: the sketch's Grouper emits the pairs within distance
// K, each once, as Layout.Pairs does, with lsh's metrics; the largest capped
// buckets are listed by size.
func TestSimHashGrouper(t *testing.T) {
	c := simHashConfig(3, 5)
	sk, _ := c.New()
	l, _ := simhash.NewLayout(c.SimHash.layoutOptions())
	// Fingerprints in families of near copies, and 300 equal ones (one
	// bucket per table, capped at 100).
	var fps []uint64
	x := uint64(0x9e3779b97f4a7c15)
	for i := range 400 {
		x = x*6364136223846793005 + 1442695040888963407
		fp := x
		fps = append(fps, fp, fp^1<<(i%64), fp^3<<(i%60))
	}
	for range 300 {
		fps = append(fps, 0xdeadbeef)
	}
	var entries, keys, scratch []uint64
	for d, fp := range fps {
		keys, scratch = sk.AppendBucketKeys(keys[:0], scratch, []uint64{fp})
		entries = AppendEntries(entries, keys, uint32(d))
	}
	slices.Sort(entries)
	for _, cap := range []int{100000, 100} {
		g, err := sk.NewGrouper(fps, cap, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []uint64
		for i := 0; i < len(entries); i += 1000 {
			if got, err = g.Append(got, entries[i:min(i+1000, len(entries))]); err != nil {
				t.Fatal(err)
			}
		}
		got = g.Flush(got)
		m := g.Metrics()
		slices.Sort(got)
		if cap == 100000 {
			want, _, err := l.Pairs(nil, fps, 3, &simhash.PairOptions{Cap: simhash.NoCap})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) || m.Pairs != int64(len(want)) || m.CappedBuckets != 0 || len(m.Largest) != 0 {
				t.Errorf("uncapped: %d pairs (metrics %+v); want %d", len(got), m, len(want))
			}
			continue
		}
		if m.CappedBuckets != int64(l.Tables()) || len(m.Largest) != l.Tables() || m.Entries != int64(len(entries)) {
			t.Fatalf("capped: metrics %+v; want %d capped buckets listed", m, l.Tables())
		}
		for i, b := range m.Largest {
			if b.Size != 300 || b.First != 1200 || i > 0 && b.Key <= m.Largest[i-1].Key {
				t.Errorf("largest %d: %+v; want 300 documents from 1200, keys ascending", i, b)
			}
		}
	}
}

// TestSimHashResolve: a config without blocks signs but makes no keys until
// Resolve chooses them (simhash.ChooseBlocks at the document count); the
// config round-trips through JSON, weights excepted.
func TestSimHashResolve(t *testing.T) {
	c := simHashConfig(6, 0)
	if c.Resolved() || c.Tables() != 0 {
		t.Fatal("a config without blocks is resolved")
	}
	sk, err := c.New()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := sk.NewSketcher()
	if sig, _ := s.Sign(nil, []byte(texts[0])); len(sig) != 1 {
		t.Fatal("no fingerprint")
	}
	if _, err := sk.NewGrouper(nil, 10, 0); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("NewGrouper before Resolve: %v; want ErrInvalidConfig", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("AppendBucketKeys before Resolve did not panic")
			}
		}()
		s.AppendBucketKeys(nil, []uint64{1})
	}()
	for _, n := range []int64{10, 1e6, 1e8} {
		r, err := c.Resolve(n)
		want, _ := simhash.ChooseBlocks(6, n, EntryDocBits, simhash.DefaultEntryCost)
		if err != nil || !r.Resolved() || r.SimHash.Blocks != want || c.SimHash.Blocks != 0 {
			t.Errorf("Resolve(%d): %+v, %v; want %d blocks (and c unchanged)", n, r.SimHash, err, want)
		}
		if again, _ := r.Resolve(5); again.SimHash.Blocks != want {
			t.Errorf("a resolved config re-resolved to %d blocks", again.SimHash.Blocks)
		}
	}
	mh := Config{Spec: shingle.Prose, Bands: lsh.Params{Bands: 4, Rows: 4}}
	if r, err := mh.Resolve(5); !mh.Resolved() || err != nil || r.Bands != mh.Bands {
		t.Error("Resolve changed a MinHash config")
	}
	r, _ := c.Resolve(1e6)
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Config
	if err := json.Unmarshal(data, &back); err != nil || back.Kind != SimHash || back.SimHash != r.SimHash || back.Spec.String() != r.Spec.String() {
		t.Errorf("JSON round trip: %+v, %v; want %+v", back, err, r)
	}
	// A MinHash config from before SimHash (no Kind) still means MinHash.
	var old Config
	if err := json.Unmarshal([]byte(`{"Params":{"K":128,"Bits":32}}`), &old); err != nil || old.Kind != MinHash {
		t.Errorf("old JSON: kind %v, %v", old.Kind, err)
	}
}

// TestSimHashConfigErrors: configs that cannot make a SimHash sketch.
func TestSimHashConfigErrors(t *testing.T) {
	table, _ := simhash.NewDFTable(simhash.DFOptions{LogWidth: 8})
	table.AddDocument([]uint64{1, 2, 3})
	idf := table.IDF()
	tfidf := sigfile.SimHashParams{Weighting: sigfile.TFIDF, DFFingerprint: idf.Fingerprint()}
	for _, c := range []Config{
		simHashConfig(9, 0),
		simHashConfig(-1, 0),
		simHashConfig(6, 6),
		simHashConfig(6, 17),
		simHashConfig(8, 16),
		{Kind: SimHash, SimHash: SimHashConfig{Params: sigfile.SimHashParams{Weighting: sigfile.TF}, K: 3}},
		{Spec: shingle.Prose, Kind: SimHash, SimHash: SimHashConfig{K: 3}},
		{Spec: shingle.Prose, Kind: SimHash, SimHash: SimHashConfig{Params: tfidf, K: 3}},
		{Spec: shingle.Prose, Kind: SimHash, SimHash: SimHashConfig{Params: sigfile.SimHashParams{Weighting: sigfile.TFIDF, DFFingerprint: 5}, K: 3, IDF: idf}},
		{Spec: shingle.Prose, Kind: SimHash, SimHash: SimHashConfig{Params: sigfile.SimHashParams{Weighting: sigfile.TF}, K: 3, IDF: idf}},
		{Spec: shingle.Prose, Kind: 7},
	} {
		if _, err := c.New(); err == nil {
			t.Errorf("%+v: made a sketch; want an error", c)
		}
	}
	c := Config{Spec: shingle.Prose, Kind: SimHash, SimHash: SimHashConfig{Params: tfidf, K: 3, IDF: idf}}
	if _, err := c.New(); err != nil {
		t.Errorf("TF-IDF with its table: %v", err)
	}
	if w := (Config{Kind: SimHash, SimHash: SimHashConfig{K: 3}}).WithDF(table); w.SimHash.Params != tfidf || w.SimHash.IDF.Fingerprint() != idf.Fingerprint() {
		t.Errorf("WithDF: %+v", w.SimHash)
	}
	for _, s := range []string{"minhash", "simhash"} {
		if k, err := ParseKind(s); err != nil || k.String() != s {
			t.Errorf("ParseKind(%q) = %v, %v", s, k, err)
		}
	}
	if _, err := ParseKind("lsh"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("ParseKind(lsh): %v", err)
	}
}
