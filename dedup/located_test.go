package dedup

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/corpus"
)

// TestExactReadsTextsBack: under exact verification the texts of an
// uncompressed input are kept as their records' locations and read back for
// the documents in candidate pairs, so on 20,000 documents under a 16 MiB
// budget no text spills (before, every text was kept and 4.7 MB spilled
// past the budget's share), while the same corpus gzipped, whose records
// cannot be read back, spills its texts as before; the outputs of both are
// the same.
func TestExactReadsTextsBack(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "in.jsonl")
	writeJSONL(t, plain, plantedCopies(20000, 50))
	data, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	zw.Close()
	zipped := filepath.Join(dir, "in.jsonl.gz")
	if err := os.WriteFile(zipped, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	opts := func() *Options { return &Options{Workers: 2, Memory: 16 << 20} }
	a, rep := runDedup(t, []string{plain}, opts())
	if rep.Counts.VerifiedPairs != 400 {
		t.Fatalf("%d verified pairs; want the 400 planted", rep.Counts.VerifiedPairs)
	}
	if rep.Spill.TextBytes != 0 {
		t.Errorf("an uncompressed input spilled %d bytes of texts; want 0", rep.Spill.TextBytes)
	}
	b, zrep := runDedup(t, []string{zipped}, opts())
	if zrep.Spill.TextBytes == 0 {
		t.Error("a gzipped input spilled no texts: the budget is too large for this test")
	}
	for _, f := range []string{PairsFile, ClustersFile, KeptFile} {
		x, _ := os.ReadFile(filepath.Join(a, f))
		y, _ := os.ReadFile(filepath.Join(b, f))
		if !bytes.Equal(x, y) || len(x) == 0 {
			t.Errorf("%s differs between the plain and the gzipped input (or is empty)", f)
		}
	}
}

// TestTextStoreInputChanged: a text read back from an input that changed
// since it was read fails with ErrInputChanged, naming the file, and texts
// kept whole and located ones come back in order.
func TestTextStoreInputChanged(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "in.jsonl")
	content := "{\"id\":\"a\",\"text\":\"one two\"}\n{\"id\":\"b\",\"text\":\"three\"}\n"
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	read := func() ([]string, error) {
		recs, err := corpus.NewReader([]string{p}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer recs.Close()
		var batch corpus.Batch
		if err := recs.Next(&batch); err != nil {
			t.Fatal(err)
		}
		ts := newTextStore(dir, 1<<20)
		defer ts.Close()
		for i := range batch.Records {
			l := locOf(&batch.Records[i])
			if err := ts.appendAt(&l); err != nil {
				t.Fatal(err)
			}
		}
		if err := ts.appendText([]byte("kept whole")); err != nil {
			t.Fatal(err)
		}
		if err := ts.appendText(nil); err != nil {
			t.Fatal(err)
		}
		tr, err := ts.newReader(nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		err = tr.each([]uint32{0, 1, 2, 3}, func(_ int, text []byte) error {
			got = append(got, string(text))
			return nil
		})
		return got, err
	}
	got, err := read()
	if want := []string{"one two", "three", "kept whole", ""}; err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}

	// Changed between the read and the read back: the store's stat of the
	// file is taken when its first record is appended.
	recs, err := corpus.NewReader([]string{p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var batch corpus.Batch
	if err := recs.Next(&batch); err != nil {
		t.Fatal(err)
	}
	recs.Close()
	ts := newTextStore(dir, 1<<20)
	defer ts.Close()
	l := locOf(&batch.Records[0])
	if err := ts.appendAt(&l); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.ToUpper(content)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p, time.Time{}, time.Now().Add(time.Hour))
	tr, err := ts.newReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	err = tr.each([]uint32{0}, func(int, []byte) error { return nil })
	if !errors.Is(err, ErrInputChanged) || !strings.Contains(err.Error(), p) {
		t.Errorf("got %v; want ErrInputChanged naming %s", err, p)
	}
}
