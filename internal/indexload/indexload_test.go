package indexload

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/dupid"
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
		st, err := Build(ctx, db, []string{in}, &Options{Corpus: corpus.Options{SkipBad: true}, Workers: workers})
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
	_, err = Build(ctx, db, []string{in}, &Options{Workers: 2})
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

// TestBuildRepeatedIDs: a repeated id fails the build with an error naming
// the file and line of both occurrences (before, the builder's check named
// the id only) and leaves the index empty; under SkipBad the later records
// are skipped as bad and listed in the BadLog, after the records that did
// not parse, and the index holds the first occurrence of each id, whatever
// the workers.
func TestBuildRepeatedIDs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	first := readDocs(t, sample)[119] // line 120, t1064
	if first.id != "t1064" {
		t.Fatalf("line 120 is %s; want t1064", first.id)
	}
	lines[149] = `{"id":"t1064","text":"a second t1064, which is not the first of the two texts"}` // line 150
	lines[179] = lines[119]                                                                        // line 180: line 120 again
	lines[899] = `{"id":"t126","text":"another text again, long enough to have shingles"}`         // line 900: line 7's id
	in := filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644)

	db, err := index.Open(filepath.Join(dir, "fail"), &index.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = Build(ctx, db, []string{in}, &Options{Workers: 2})
	var re *corpus.RecordError
	if !errors.As(err, &re) || !errors.Is(err, dupid.ErrDuplicate) ||
		err.Error() != in+`:150: dupid: duplicate id "t1064", first at `+in+":120" {
		t.Fatalf("err = %v; want a duplicate id error naming in.jsonl:150 and in.jsonl:120", err)
	}
	if st, _ := db.Stats(ctx); st.Documents != 0 {
		t.Errorf("%d documents after a failed build; want 0", st.Documents)
	}

	lines[4] = `{bad` // line 5: does not parse
	os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	for _, workers := range []int{1, 3} {
		db, err := index.Open(filepath.Join(dir, "skip", strconv.Itoa(workers)), &index.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var log bytes.Buffer
		bl := corpus.NewBadLog(&log)
		// A small budget: the check of repeated ids gets 4 MiB of it.
		st, err := Build(ctx, db, []string{in}, &Options{Corpus: corpus.Options{SkipBad: true}, Workers: workers, BadLog: bl,
			Build: index.BuildOptions{Memory: 32 << 20}, TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		bl.Flush()
		if st.Records != 1000 || st.Bad != 4 || st.Documents != 996 {
			t.Errorf("workers %d: stats %+v; want 1000 records, 4 bad, 996 documents", workers, st)
		}
		want := corpus.BadLogHeader +
			in + "\t5\t4\t-\tcorpus: not valid JSON: expected a key: 'b' at byte 1\n" +
			in + "\t150\t149\t-\tdupid: duplicate id \"t1064\", first at " + in + ":120\n" +
			in + "\t180\t179\t-\tdupid: duplicate id \"t1064\", first at " + in + ":120\n" +
			in + "\t900\t899\t-\tdupid: duplicate id \"t126\", first at " + in + ":7\n"
		if log.String() != want {
			t.Errorf("workers %d: bad-record log:\n%s\nwant\n%s", workers, log.String(), want)
		}
		// t1064 is the first occurrence: its text finds it, exactly.
		signer, _ := db.Config().NewSigner()
		sig, _ := signer.Sign(nil, []byte(first.text))
		got, err := db.Get(ctx, "t1064")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Sig, sig) {
			t.Errorf("workers %d: t1064's signature is not line 120's", workers)
		}
		if ist, _ := db.Stats(ctx); ist.Documents != 996 {
			t.Errorf("workers %d: index holds %d documents; want 996", workers, ist.Documents)
		}
	}
}
