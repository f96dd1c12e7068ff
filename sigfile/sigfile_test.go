package sigfile_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
)

// record is a test record, owning its slices.
type record struct {
	id  []byte
	sig []uint64
}

// randomRecords returns n records of h with random ids of 0..maxID bytes and
// random signatures whose bits past the last slot are zero.
func randomRecords(rng *rand.Rand, h sigfile.Header, n, maxID int) []record {
	words, bits := h.Words(), h.Slots()*h.SlotBits()
	recs := make([]record, n)
	for i := range recs {
		id := make([]byte, rng.IntN(maxID+1))
		for j := range id {
			id[j] = byte(rng.Uint32())
		}
		sig := make([]uint64, words)
		for j := range sig {
			sig[j] = rng.Uint64()
		}
		if pad := words*64 - bits; pad > 0 {
			sig[words-1] &= ^uint64(0) >> pad
		}
		recs[i] = record{id, sig}
	}
	return recs
}

func encode(t testing.TB, h sigfile.Header, recs []record) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := sigfile.NewWriter(&buf, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Add(r.id, r.sig); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readAll reads every record of data; it returns the records read before
// an error too.
func readAll(data []byte, name string, opts *sigfile.ReadOptions) (sigfile.Header, []record, error) {
	r, err := sigfile.NewReader(bytes.NewReader(data), name, opts)
	if err != nil {
		return sigfile.Header{}, nil, err
	}
	return drain(r)
}

func drain(r *sigfile.Reader) (sigfile.Header, []record, error) {
	defer r.Close()
	var recs []record
	var rec sigfile.Record
	for {
		err := r.Next(&rec)
		if err == io.EOF {
			return r.Header(), recs, nil
		}
		if err != nil {
			return r.Header(), recs, err
		}
		recs = append(recs, record{slices.Clone(rec.ID), slices.Clone(rec.Sig)})
	}
}

func equalRecords(t *testing.T, got, want []record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records; want %d", len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i].id, want[i].id) || !slices.Equal(got[i].sig, want[i].sig) {
			t.Fatalf("record %d: got id %q sig %x; want id %q sig %x", i, got[i].id, got[i].sig, want[i].id, want[i].sig)
		}
	}
}

// headers covers both sketches, every slot width, slot counts whose last
// word and last byte are partial, and block sizes from the least up.
func headers() []sigfile.Header {
	var hs []sigfile.Header
	for _, p := range []minhash.Params{{}, {K: 1, Bits: 1}, {K: 3, Bits: 4}, {K: 5, Bits: 2}, {K: 9, Bits: 8},
		{K: 7, Bits: 16, Scheme: minhash.KHash, Seed: 1 << 63}, {K: 100, Bits: 64, Seed: 42}, {K: 64, Bits: 32}} {
		hs = append(hs, sigfile.MinHashHeader(shingle.Prose, p))
	}
	hs = append(hs, sigfile.SimHashHeader(shingle.Web, sigfile.SimHashParams{}),
		sigfile.SimHashHeader(shingle.CJK, sigfile.SimHashParams{Weighting: sigfile.TFIDF, DFFingerprint: 0xfeedface}))
	var out []sigfile.Header
	for _, bb := range []int{sigfile.MinBlockBytes, 300, 0} {
		for _, h := range hs {
			h.BlockBytes = bb
			out = append(out, h)
		}
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, h := range headers() {
		for _, n := range []int{0, 1, 2, 7, 300} {
			t.Run(fmt.Sprintf("%s/%s/block=%d/n=%d", h.Sketch, h.Params(), h.BlockBytes, n), func(t *testing.T) {
				recs := randomRecords(rng, h, n, 40)
				data := encode(t, h, recs)
				got, gotRecs, err := readAll(data, "x.sig", nil)
				if err != nil {
					t.Fatal(err)
				}
				want := h
				want.Version = sigfile.Version
				if want.BlockBytes == 0 {
					want.BlockBytes = sigfile.DefaultBlockBytes
				}
				if got != want {
					t.Fatalf("header: got %+v; want %+v", got, want)
				}
				equalRecords(t, gotRecs, recs)
			})
		}
	}
}

// TestLongIDs writes ids of every length class of the uvarint (1, 2 and 3
// bytes) up to the limit, and records larger than a block.
func TestLongIDs(t *testing.T) {
	h := sigfile.MinHashHeader(shingle.Prose, minhash.Params{K: 16, Bits: 8})
	h.BlockBytes = sigfile.MinBlockBytes
	var recs []record
	for _, n := range []int{0, 127, 128, 16383, 16384, sigfile.MaxIDLen - 1} {
		recs = append(recs, record{bytes.Repeat([]byte{'a' + byte(n%26)}, n), make([]uint64, h.Words())})
	}
	_, got, err := readAll(encode(t, h, recs), "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	equalRecords(t, got, recs)
}

func TestWriterRefuses(t *testing.T) {
	h := sigfile.MinHashHeader(shingle.Prose, minhash.Params{K: 3, Bits: 4})
	w, err := sigfile.NewWriter(io.Discard, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		id   []byte
		sig  []uint64
	}{
		{"id too long", make([]byte, sigfile.MaxIDLen), []uint64{0}},
		{"too many words", nil, []uint64{0, 0}},
		{"no words", nil, nil},
		{"padding bits", nil, []uint64{1 << 12}},
	} {
		if err := w.Add(c.id, c.sig); !errors.Is(err, sigfile.ErrInvalidRecord) {
			t.Errorf("%s: got %v; want ErrInvalidRecord", c.name, err)
		}
	}
	if err := w.Add([]byte("ok"), []uint64{0xfff}); err != nil {
		t.Fatalf("a valid record after invalid ones: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(nil, []uint64{0}); !errors.Is(err, sigfile.ErrClosed) {
		t.Errorf("Add after Close: got %v; want ErrClosed", err)
	}
	if err := w.Close(); !errors.Is(err, sigfile.ErrClosed) {
		t.Errorf("second Close: got %v; want ErrClosed", err)
	}

	bad := []sigfile.Header{
		{Sketch: 3, Spec: shingle.Prose.String()},
		{Sketch: sigfile.MinHash, Spec: "prose"},
		{Sketch: sigfile.MinHash, Spec: shingle.Prose.String(), MinHash: minhash.Params{K: 3, Bits: 5}},
		{Sketch: sigfile.MinHash, Spec: shingle.Prose.String(), SimHash: sigfile.SimHashParams{Weighting: sigfile.TF}},
		{Sketch: sigfile.SimHash, Spec: shingle.Prose.String(), SimHash: sigfile.SimHashParams{Weighting: sigfile.TFIDF}},
		{Sketch: sigfile.SimHash, Spec: shingle.Prose.String(), MinHash: minhash.Params{K: 3}},
		{Sketch: sigfile.SimHash, Spec: shingle.Prose.String(), Shard: 2, Shards: 2},
		{Sketch: sigfile.SimHash, Spec: shingle.Prose.String(), Shard: 1},
		{Sketch: sigfile.SimHash, Spec: shingle.Prose.String(), BlockBytes: sigfile.MaxBlockBytes + 1},
		{Sketch: sigfile.SimHash, Spec: shingle.Prose.String(), BlockBytes: 1},
	}
	for _, h := range bad {
		var buf bytes.Buffer
		if _, err := sigfile.NewWriter(&buf, h); !errors.Is(err, sigfile.ErrInvalidHeader) {
			t.Errorf("header %+v: got %v; want ErrInvalidHeader", h, err)
		}
		if buf.Len() != 0 {
			t.Errorf("header %+v: %d bytes written for an invalid header", h, buf.Len())
		}
	}
}

// errWriter fails after n bytes.
type errWriter struct{ n int }

func (w *errWriter) Write(b []byte) (int, error) {
	if len(b) > w.n {
		k := w.n
		w.n = 0
		return k, errors.New("disk full")
	}
	w.n -= len(b)
	return len(b), nil
}

func TestWriteErrorSticks(t *testing.T) {
	h := sigfile.SimHashHeader(shingle.Prose, sigfile.SimHashParams{})
	h.BlockBytes = sigfile.MinBlockBytes
	w, err := sigfile.NewWriter(&errWriter{n: 200}, h)
	if err != nil {
		t.Fatal(err)
	}
	var first error
	for i := range 100 {
		if err := w.Add([]byte("doc"), []uint64{uint64(i)}); err != nil {
			first = err
			break
		}
	}
	if first == nil || !strings.Contains(first.Error(), "disk full") {
		t.Fatalf("got %v; want the write error", first)
	}
	if err := w.Add(nil, []uint64{0}); err != first {
		t.Errorf("Add after a write error: got %v; want %v", err, first)
	}
	if err := w.Close(); err != first {
		t.Errorf("Close after a write error: got %v; want %v", err, first)
	}
}

func TestCreateCommitsOnClose(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sigs.ndsf")
	h := sigfile.MinHashHeader(shingle.Prose, minhash.Params{K: 8, Bits: 16})
	recs := randomRecords(rand.New(rand.NewPCG(3, 4)), h, 50, 10)
	w, err := sigfile.Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Add(r.id, r.sig); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("before Close: stat %s: %v; want not exist", path, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := sigfile.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, got, err := drain(r)
	if err != nil {
		t.Fatal(err)
	}
	equalRecords(t, got, recs)
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("%d files in the directory; want 1", len(ents))
	}

	// Abort leaves the existing file as it was and no temporary file.
	w, err = sigfile.Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	w.Add([]byte("x"), make([]uint64, h.Words()))
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("after Abort: %d files in the directory; want 1", len(ents))
	}
	r, _ = sigfile.Open(path, nil)
	if _, got, err := drain(r); err != nil || len(got) != len(recs) {
		t.Fatalf("after Abort: %d records, %v; want the %d of the first file", len(got), err, len(recs))
	}
}

func TestNextDoesNotAllocate(t *testing.T) {
	h := sigfile.MinHashHeader(shingle.Prose, minhash.Params{})
	data := encode(t, h, randomRecords(rand.New(rand.NewPCG(5, 6)), h, 2000, 30))
	r, err := sigfile.NewReader(bytes.NewReader(data), "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := sigfile.Record{ID: make([]byte, 0, 64), Sig: make([]uint64, 0, h.Words())}
	r.Next(&rec) // the first block allocates the block buffer
	allocs := testing.AllocsPerRun(1000, func() {
		if err := r.Next(&rec); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Next: %v allocations per record; want 0", allocs)
	}
}

func TestCheck(t *testing.T) {
	p := minhash.Params{K: 64, Seed: 7}
	h := sigfile.MinHashHeader(shingle.Prose, p)
	if err := h.CheckMinHash(shingle.Prose, p); err != nil {
		t.Fatalf("same spec and params: %v", err)
	}
	other := p
	other.Seed = 8
	err := h.CheckMinHash(shingle.Prose, other)
	if !errors.Is(err, sigfile.ErrParamsMismatch) {
		t.Fatalf("other seed: got %v; want ErrParamsMismatch", err)
	}
	p.EnsureDefaults()
	other.EnsureDefaults()
	for _, s := range []string{p.String(), other.String(), fmt.Sprintf("%016x", p.Fingerprint()), fmt.Sprintf("%016x", other.Fingerprint())} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %s", err, s)
		}
	}
	err = h.CheckMinHash(shingle.Code, p)
	if !errors.Is(err, sigfile.ErrSpecMismatch) {
		t.Fatalf("other spec: got %v; want ErrSpecMismatch", err)
	}
	for _, s := range []string{shingle.Prose.String(), shingle.Code.String(), fmt.Sprintf("%016x", shingle.Code.Fingerprint())} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %s", err, s)
		}
	}
	if err := h.CheckSimHash(shingle.Prose, sigfile.SimHashParams{}); !errors.Is(err, sigfile.ErrSketchMismatch) {
		t.Fatalf("simhash against minhash: got %v; want ErrSketchMismatch", err)
	}
	sh := sigfile.SimHashHeader(shingle.Prose, sigfile.SimHashParams{})
	if err := sh.CheckSimHash(shingle.Prose, sigfile.SimHashParams{Weighting: sigfile.TF}); err != nil {
		t.Fatalf("simhash tf: %v", err)
	}
	if err := sh.CheckSimHash(shingle.Prose, sigfile.SimHashParams{Weighting: sigfile.TFIDF, DFFingerprint: 1}); !errors.Is(err, sigfile.ErrParamsMismatch) {
		t.Fatalf("simhash tfidf against tf: got %v; want ErrParamsMismatch", err)
	}
	if got, want := h.ParamsFingerprint(), p.Fingerprint(); got != want {
		t.Errorf("ParamsFingerprint %016x; want minhash's %016x", got, want)
	}
	if got, want := h.SpecFingerprint(), shingle.Prose.Fingerprint(); got != want {
		t.Errorf("SpecFingerprint %016x; want shingle's %016x", got, want)
	}
}

func TestShingleSpec(t *testing.T) {
	spec := shingle.Spec{Unit: shingle.Char, N: 4, FoldDigits: true, Seed: 99}
	got, err := sigfile.MinHashHeader(spec, minhash.Params{}).ShingleSpec(nil)
	if err != nil || got != spec {
		t.Fatalf("got %+v, %v; want %+v", got, err, spec)
	}
	key := &shingle.Key{1, 2, 3}
	keyed := shingle.Prose
	keyed.Key = key
	h := sigfile.MinHashHeader(keyed, minhash.Params{})
	if strings.Contains(h.Spec, string(key[:3])) {
		t.Fatalf("the header's spec %q shows the key", h.Spec)
	}
	if _, err := h.ShingleSpec(nil); !errors.Is(err, sigfile.ErrSpecMismatch) {
		t.Fatalf("keyed spec without its key: got %v; want ErrSpecMismatch", err)
	}
	if _, err := h.ShingleSpec(&shingle.Key{9}); !errors.Is(err, sigfile.ErrSpecMismatch) {
		t.Fatalf("keyed spec with another key: got %v; want ErrSpecMismatch", err)
	}
	got, err = h.ShingleSpec(&shingle.Key{1, 2, 3})
	if err != nil || got.Fingerprint() != keyed.Fingerprint() {
		t.Fatalf("keyed spec with its key: got %v, %v", got, err)
	}
}

func TestSimHashParams(t *testing.T) {
	for _, c := range []struct {
		p    sigfile.SimHashParams
		want string
	}{
		{sigfile.SimHashParams{Weighting: sigfile.TF}, "v1/simhash/bits=64/weight=tf"},
		{sigfile.SimHashParams{Weighting: sigfile.TFIDF, DFFingerprint: 0xab}, "v1/simhash/bits=64/weight=tfidf/df=00000000000000ab"},
	} {
		if got := c.p.String(); got != c.want {
			t.Errorf("String: got %q; want %q", got, c.want)
		}
		if got, err := sigfile.ParseSimHashParams(c.want); err != nil || got != c.p {
			t.Errorf("Parse(%q): got %+v, %v; want %+v", c.want, got, err, c.p)
		}
	}
	for _, s := range []string{"", "v1/simhash/bits=32/weight=tf", "v1/simhash/bits=64/weight=idf", "v1/simhash/bits=64/weight=tfidf/df=00000000000000AB",
		"v1/simhash/bits=64/weight=tfidf/df=0000000000000000", "v1/simhash/bits=64/weight=tf/df=00000000000000ab"} {
		if _, err := sigfile.ParseSimHashParams(s); !errors.Is(err, sigfile.ErrInvalidHeader) {
			t.Errorf("Parse(%q): got %v; want ErrInvalidHeader", s, err)
		}
	}
}

func TestLegacy(t *testing.T) {
	p := minhash.Params{K: 32, Bits: 16, Seed: 5}
	h := minhash.MustNewHasher(p)
	p = h.Params()
	sh := shingle.MustNew(shingle.Prose)
	var data []byte
	var want []record
	for i, text := range []string{"one two three four five six", "", "seven eight nine ten eleven twelve thirteen"} {
		sig := h.SignText(nil, sh, []byte(text))
		id := []byte(fmt.Sprint("doc", i))
		data = minhash.AppendBinary(data, p, shingle.Prose.Fingerprint(), id, sig)
		want = append(want, record{id, sig})
	}
	_, _, err := readAll(data, "old.bin", nil)
	if !errors.Is(err, sigfile.ErrLegacy) || !strings.Contains(err.Error(), "old.bin") || !strings.Contains(err.Error(), "re-run neardup sign") {
		t.Fatalf("without Legacy: got %v; want ErrLegacy naming the file and telling to re-run neardup sign", err)
	}
	hd, got, err := readAll(data, "old.bin", &sigfile.ReadOptions{Legacy: &sigfile.Legacy{Spec: shingle.Prose, Params: p}})
	if err != nil {
		t.Fatal(err)
	}
	equalRecords(t, got, want)
	if hd.Version != 0 || hd.CheckMinHash(shingle.Prose, p) != nil {
		t.Errorf("legacy header %+v; want version 0 and the params given", hd)
	}
	wrong := p
	wrong.Seed = 6
	if _, _, err := readAll(data, "old.bin", &sigfile.ReadOptions{Legacy: &sigfile.Legacy{Spec: shingle.Prose, Params: wrong}}); !errors.Is(err, sigfile.ErrParamsMismatch) {
		t.Fatalf("legacy under another seed: got %v; want ErrParamsMismatch", err)
	}
	if _, _, err := readAll(data, "old.bin", &sigfile.ReadOptions{Legacy: &sigfile.Legacy{Spec: shingle.Code, Params: p}}); !errors.Is(err, sigfile.ErrSpecMismatch) {
		t.Fatalf("legacy under another spec: got %v; want ErrSpecMismatch", err)
	}
	if _, _, err := readAll(data[:len(data)-1], "old.bin", &sigfile.ReadOptions{Legacy: &sigfile.Legacy{Spec: shingle.Prose, Params: p}}); !errors.Is(err, sigfile.ErrCorrupt) {
		t.Fatalf("legacy cut inside a record: got %v; want ErrCorrupt", err)
	}
}

// TestBoilerplateSpec: signatures made under a spec that drops boilerplate
// lines are written with its canonical form (the set's size and
// fingerprint), read back, and checked against the spec; the spec is
// rebuilt only with its set.
func TestBoilerplateSpec(t *testing.T) {
	spec := shingle.Web
	spec.Boilerplate = shingle.NewBoilerplate([]uint64{11, 22, 33})
	other := shingle.Web
	other.Boilerplate = shingle.NewBoilerplate([]uint64{11, 22})
	p := minhash.Params{K: 16}
	p.EnsureDefaults()
	path := filepath.Join(t.TempDir(), "bp.ndsf")
	w, err := sigfile.Create(path, sigfile.MinHashHeader(spec, p))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add([]byte("a"), make([]uint64, p.Words())); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := sigfile.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := r.Header()
	if h.Spec != spec.String() || !strings.Contains(h.Spec, "/boilerplate:1:3:") {
		t.Fatalf("header spec %q; want %q", h.Spec, spec)
	}
	if err := r.CheckMinHash(spec, p); err != nil {
		t.Errorf("check against its own spec: %v", err)
	}
	for _, s := range []shingle.Spec{shingle.Web, other} {
		if err := r.CheckMinHash(s, p); !errors.Is(err, sigfile.ErrSpecMismatch) {
			t.Errorf("check against %s: %v; want ErrSpecMismatch", s, err)
		}
	}
	if _, err := h.ShingleSpec(nil); !errors.Is(err, sigfile.ErrSpecMismatch) {
		t.Errorf("ShingleSpec without the set: %v; want ErrSpecMismatch", err)
	}
	if got, err := h.ShingleSpecLines(nil, spec.Boilerplate); err != nil || got.Fingerprint() != spec.Fingerprint() {
		t.Errorf("ShingleSpecLines with the set: %v, %v", got, err)
	}
	if _, err := h.ShingleSpecLines(nil, other.Boilerplate); !errors.Is(err, sigfile.ErrSpecMismatch) {
		t.Errorf("ShingleSpecLines with another set: %v; want ErrSpecMismatch", err)
	}
}
