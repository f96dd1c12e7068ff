package indexload

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/dupid"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
)

// writeSigs writes the signature file of docs that neardup sign writes
// (every document, one without features with the empty set's signature).
func writeSigs(t *testing.T, path string, docs []doc, params minhash.Params) {
	t.Helper()
	sh := shingle.MustNew(shingle.Prose)
	h := minhash.MustNewHasher(params)
	w, err := sigfile.Create(path, sigfile.MinHashHeader(shingle.Prose, params))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if err := w.Add([]byte(d.id), h.SignText(nil, sh, []byte(d.text))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// contents lists an index's documents in document-number order.
func contents(t *testing.T, db *index.DB) []index.Doc {
	t.Helper()
	var out []index.Doc
	err := db.EachDocument(context.Background(), func(id []byte, sig minhash.Signature) error {
		out = append(out, index.Doc{ID: string(id), Sig: slices.Clone(sig)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameContents(t *testing.T, what string, got, want []index.Doc) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d documents; want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i].ID != want[i].ID || !slices.Equal(got[i].Sig, want[i].Sig) {
			t.Fatalf("%s: document %d is %q; want %q (or another signature)", what, i, got[i].ID, want[i].ID)
		}
	}
}

func openIndex(t *testing.T, dir string, o index.Options) *index.DB {
	t.Helper()
	o.CacheSize, o.MemTableSize = 8<<20, 4<<20
	db, err := index.Open(dir, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// sampleWithEmpty is the bundled sample with two texts without features.
func sampleWithEmpty(t *testing.T) (string, []doc) {
	data, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, []byte("{\"id\":\"empty\",\"text\":\"\"}\n{\"id\":\"punct\",\"text\":\"?!\"}\n")...)
	in := filepath.Join(t.TempDir(), "in.jsonl")
	os.WriteFile(in, data, 0o644)
	return in, readDocs(t, in)
}

// TestBuildSignatures: an index filled from a corpus's signature file holds
// what one built from the corpus holds, in the same order (documents without
// features left out of both), from one file or from shards; signatures of
// other params are refused, naming both fingerprints, leaving it empty.
func TestBuildSignatures(t *testing.T) {
	ctx := context.Background()
	in, docs := sampleWithEmpty(t)
	dir := t.TempDir()
	fromText := openIndex(t, filepath.Join(dir, "text"), index.Options{NoSync: true})
	if _, err := Build(ctx, fromText, []string{in}, &Options{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	want := contents(t, fromText)
	if len(want) != len(docs)-2 {
		t.Fatalf("built from text: %d documents; want %d", len(want), len(docs)-2)
	}

	sigs := filepath.Join(dir, "all.ndsf")
	writeSigs(t, sigs, docs, minhash.Params{})
	shards := filepath.Join(dir, "shards")
	os.Mkdir(shards, 0o755)
	for i, part := range [][]doc{docs[:400], docs[400:401], docs[401:]} {
		p := filepath.Join(shards, sigfile.ShardName("part", i, 3))
		h := sigfile.MinHashHeader(shingle.Prose, minhash.Params{})
		h.Shard, h.Shards = i, 3
		w, _ := sigfile.Create(p, h)
		sh, mh := shingle.MustNew(shingle.Prose), minhash.MustNewHasher(minhash.Params{})
		for _, d := range part {
			w.Add([]byte(d.id), mh.SignText(nil, sh, []byte(d.text)))
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, src := range []string{sigs, shards} {
		db := openIndex(t, filepath.Join(t.TempDir(), "idx"), index.Options{NoSync: true})
		st, err := BuildSignatures(ctx, db, []string{src}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if st.Records != int64(len(docs)) || st.Empty != 2 || st.Documents != int64(len(docs)-2) {
			t.Errorf("%s: stats %+v; want %d records, 2 empty", src, st, len(docs))
		}
		sameContents(t, "from "+filepath.Base(src), contents(t, db), want)
	}

	seeded := filepath.Join(dir, "seed.ndsf")
	writeSigs(t, seeded, docs, minhash.Params{Seed: 5})
	db := openIndex(t, filepath.Join(t.TempDir(), "idx"), index.Options{NoSync: true})
	_, err := BuildSignatures(ctx, db, []string{seeded}, nil)
	if !errors.Is(err, ErrSignatures) || !errors.Is(err, sigfile.ErrParamsMismatch) || !strings.Contains(err.Error(), "seed=5") {
		t.Errorf("seed 5 into a seed 0 index: %v; want ErrSignatures naming both params", err)
	}
	if st, _ := db.Stats(ctx); st.Documents != 0 {
		t.Errorf("%d documents after a refused build; want 0", st.Documents)
	}
}

// TestAppend: appending the second half of a corpus to an index of the
// first, from signatures or from text, gives the index built from all of
// it, document for document and in order; the index checks clean; an
// append interrupted between batches leaves a consistent prefix, and
// running it again completes it, skipping what is present; an id stored
// with another signature is refused.
func TestAppend(t *testing.T) {
	ctx := context.Background()
	in, docs := sampleWithEmpty(t)
	dir := t.TempDir()
	all := openIndex(t, filepath.Join(dir, "all"), index.Options{NoSync: true})
	if _, err := Build(ctx, all, []string{in}, &Options{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	want := contents(t, all)
	first, second := docs[:300], docs[300:]
	sigs1, sigs2 := filepath.Join(dir, "1.ndsf"), filepath.Join(dir, "2.ndsf")
	writeSigs(t, sigs1, first, minhash.Params{})
	writeSigs(t, sigs2, second, minhash.Params{})
	in2 := filepath.Join(dir, "2.jsonl")
	var lines []string
	for _, d := range second {
		lines = append(lines, `{"id":`+quote(d.id)+`,"text":`+quote(d.text)+`}`)
	}
	os.WriteFile(in2, []byte(strings.Join(lines, "\n")+"\n"), 0o644)

	for _, fromText := range []bool{false, true} {
		db := openIndex(t, filepath.Join(t.TempDir(), "idx"), index.Options{})
		if _, err := BuildSignatures(ctx, db, []string{sigs1}, nil); err != nil {
			t.Fatal(err)
		}
		var st AppendStats
		var err error
		if fromText {
			st, err = Append(ctx, db, []string{in2}, nil, &Options{Workers: 2})
		} else {
			st, err = Append(ctx, db, nil, []string{sigs2}, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		if st.Inserted != int64(len(want)-300) || st.Present != 0 || st.Empty != 2 || st.Batches < 1 {
			t.Errorf("text %v: append stats %+v; want %d inserted, 2 empty", fromText, st, len(want)-300)
		}
		sameContents(t, "appended", contents(t, db), want)
		if rep, err := db.Check(ctx); err != nil || !rep.OK() {
			t.Fatalf("check after append: %v %v", rep, err)
		}
		// Again: everything is present, nothing written.
		st, err = Append(ctx, db, nil, []string{sigs2}, nil)
		if err != nil || st.Inserted != 0 || st.Present != int64(len(want)-300) {
			t.Errorf("append again: %+v, %v; want all %d present", st, err, len(want)-300)
		}
	}

	// Interrupted after the first batch: a consistent prefix, then completed.
	var big []doc // 6 copies: past the 4096 records after which progress is told
	for c := range 6 {
		for _, d := range docs {
			if c > 0 {
				d.id += "-" + string(rune('a'+c))
			}
			big = append(big, d)
		}
	}
	sigsBig := filepath.Join(dir, "big.ndsf")
	writeSigs(t, sigsBig, big, minhash.Params{})
	db := openIndex(t, filepath.Join(t.TempDir(), "idx"), index.Options{})
	if _, err := BuildSignatures(ctx, db, []string{sigs1}, nil); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	_, err := Append(cctx, db, nil, []string{sigsBig}, &Options{Progress: func(records, _ int64) {
		if records >= 4096 {
			cancel()
		}
	}})
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted append: %v; want context.Canceled", err)
	}
	mid := contents(t, db)
	if n := len(mid) - 300; n == 0 || n%AppendBatch != 0 {
		t.Errorf("interrupted append left %d new documents; want whole batches of %d", n, AppendBatch)
	}
	if rep, err := db.Check(ctx); err != nil || !rep.OK() {
		t.Fatalf("check after an interrupted append: %v %v", rep, err)
	}
	st, err := Append(ctx, db, nil, []string{sigsBig}, nil)
	if err != nil || st.Present != int64(len(mid)) || st.Inserted != int64(6*(len(docs)-2)-len(mid)) {
		t.Errorf("completing: %+v, %v; want %d present, %d inserted", st, err, len(mid), 6*(len(docs)-2)-len(mid))
	}

	// An id present with another signature.
	other := filepath.Join(dir, "other.ndsf")
	writeSigs(t, other, []doc{{first[0].id, "a different text about other things entirely, with words"}}, minhash.Params{})
	if _, err := Append(ctx, db, nil, []string{other}, nil); !errors.Is(err, index.ErrDuplicateID) || !strings.Contains(err.Error(), first[0].id) {
		t.Errorf("another signature under a stored id: %v; want ErrDuplicateID naming %s", err, first[0].id)
	}
}

func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				continue
			}
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// TestAppendRepeatedIDs: an id repeated within Append's INPUT is refused as
// Build refuses it, naming the file and line of both occurrences, before
// anything is appended (before, the later record was taken as present when
// its signature was the same, or refused naming only the id otherwise, after
// the batches before it had been written); under SkipBad it is a bad record
// (listed in BadLog) and the rest is appended.
func TestAppendRepeatedIDs(t *testing.T) {
	ctx := context.Background()
	_, docs := sampleWithEmpty(t)
	dir := t.TempDir()
	sigs1 := filepath.Join(dir, "1.ndsf")
	writeSigs(t, sigs1, docs[:300], minhash.Params{})
	var lines []string
	for _, d := range docs[300:] {
		lines = append(lines, `{"id":`+quote(d.id)+`,"text":`+quote(d.text)+`}`)
	}
	// Line 500 repeats line 3's id with line 3's text: the same signature.
	lines = slices.Insert(lines, 499, lines[2])
	in2 := filepath.Join(dir, "2.jsonl")
	os.WriteFile(in2, []byte(strings.Join(lines, "\n")+"\n"), 0o644)

	db := openIndex(t, filepath.Join(t.TempDir(), "idx"), index.Options{})
	if _, err := BuildSignatures(ctx, db, []string{sigs1}, nil); err != nil {
		t.Fatal(err)
	}
	before := contents(t, db)
	_, err := Append(ctx, db, []string{in2}, nil, &Options{Workers: 2, TempDir: dir})
	if !errors.Is(err, dupid.ErrDuplicate) || !strings.Contains(err.Error(), "2.jsonl:500") || !strings.Contains(err.Error(), "2.jsonl:3") {
		t.Fatalf("repeated id in INPUT: %v; want %v naming 2.jsonl:500 and 2.jsonl:3", err, dupid.ErrDuplicate)
	}
	sameContents(t, "after the refused append", contents(t, db), before)

	var bad bytes.Buffer
	log := corpus.NewBadLog(&bad)
	st, err := Append(ctx, db, []string{in2}, nil, &Options{Workers: 2, Corpus: corpus.Options{SkipBad: true}, BadLog: log, TempDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	log.Flush()
	if st.Bad != 1 || st.Present != 0 || st.Inserted != int64(len(docs)-300-2) {
		t.Errorf("under SkipBad: %+v; want 1 bad, %d inserted", st, len(docs)-300-2)
	}
	if !strings.Contains(bad.String(), "2.jsonl\t500\t") {
		t.Errorf("bad log %q does not name 2.jsonl line 500", bad.String())
	}
}
