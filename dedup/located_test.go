package dedup

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/corpus"
)

// textLocOf returns the location setTextLoc sets, for tests to compare.
func textLocOf(rec *corpus.Record, doc *corpus.Document) recordLoc {
	var l recordLoc
	setTextLoc(&l, rec, doc)
	return l
}

// TestExactReadsTextsBack: under exact verification the texts of an
// uncompressed input are kept as their records' locations and read back for
// the documents in candidate pairs, so on 20,000 documents under a 16 MiB
// budget no text spills (before, every text was kept and 4.7 MB spilled
// past the budget's share), while the same corpus gzipped, whose records
// cannot be read back, spills its texts as before; the outputs of both are
// the same.
func TestExactReadsTextsBack(t *testing.T) {
	plain, zipped := plainAndGzipped(t, plantedCopies(20000, 50))

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
		batch := firstBatch(t, p)
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
	batch := firstBatch(t, p)
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

// messyRecords returns n JSON Lines records (without line ends) whose texts
// need every treatment the parser gives: plain ASCII, raw UTF-8, escapes
// (quotes, backslashes, \n, \uXXXX and surrogate pairs), the text field
// before or after others, repeated (the last wins), with spaces around the
// colon, empty, and a nested object beside it; and whether each text is
// bytes of its record as they are (no escapes).
func messyRecords(rng *rand.Rand, n int) (recs []string, plain []bool) {
	words := []string{"alpha", "beta", "gamma", "déjà", "vu", "日本語", "🙂", "tab\there", "x"}
	for i := range n {
		var w []string
		for range 3 + rng.IntN(12) {
			w = append(w, words[rng.IntN(len(words))])
		}
		text := strings.Join(w, " ")
		enc := strings.ReplaceAll(text, "\t", " ") // raw: no escapes
		isPlain := true
		switch rng.IntN(6) {
		case 0:
			enc, isPlain = strings.ReplaceAll(text, "\t", `\t`)+` \"q\" \\ \n \u00e9 \ud83d\ude42`, false
		case 1:
			enc = ""
		}
		var rec string
		switch rng.IntN(4) {
		case 0:
			rec = fmt.Sprintf(`{"id":"d%d","text":"%s"}`, i, enc)
		case 1:
			rec = fmt.Sprintf(`{ "text" : "%s" , "id" : "d%d", "meta": {"text": "not this"} }`, enc, i)
		case 2:
			rec = fmt.Sprintf(`{"text":"first","id":%d,"text":"%s"}`, i, enc)
		default:
			rec = fmt.Sprintf(`{"n":[1,2,{"a":"b"}],"text":"%s","id":"d%d"}`, enc, i)
		}
		recs, plain = append(recs, rec), append(plain, isPlain && enc != "")
	}
	return recs, plain
}

// TestTextLocation: a text kept by its own location (textLocOf: the parser
// gave bytes of the record as they are) is read back without parsing, and
// equals the text of the record parsed again (locOf) and the text parsed
// while reading, on messy records (escapes, raw UTF-8, the field repeated,
// empty texts), with LF and CRLF line ends, blank lines and a byte-order
// mark, plain and gzipped (kept whole), and as plain text lines; every text
// without escapes takes the new way, none with.
func TestTextLocation(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	dir := t.TempDir()
	type input struct {
		name      string
		content   []byte
		gz        bool
		format    corpus.Format
		wantPlain int // texts that are bytes of their record (-1: all non-empty lines)
	}
	var inputs []input
	for _, style := range []struct {
		name string
		form lineForm
	}{
		{"lf", lineForm{}},
		{"crlf", lineForm{crlfEvery: 1}},
		{"blank", lineForm{blank: "\n", blankEvery: 97}},
		{"bom", lineForm{bom: true}},
	} {
		recs, plain := messyRecords(rng, 3000)
		content := []byte(joinLines(recs, style.form))
		n := 0
		for _, p := range plain {
			if p {
				n++
			}
		}
		inputs = append(inputs, input{name: style.name + ".jsonl", content: content, wantPlain: n})
		inputs = append(inputs, input{name: style.name + ".jsonl.gz", content: content, gz: true})
	}
	lines, _ := messyRecords(rng, 500)
	inputs = append(inputs, input{name: "lines.txt", content: []byte(strings.Join(lines, "\r\n") + "\n"), format: corpus.FormatLines, wantPlain: 500})
	for _, in := range inputs {
		p := writeInput(t, dir, in.name, in.content, in.gz)
		opts := &corpus.Options{Format: in.format, BatchBytes: 1 << 14}
		rd, err := corpus.NewReader([]string{p}, opts)
		if err != nil {
			t.Fatal(err)
		}
		parser, err := corpus.NewParser(opts)
		if err != nil {
			t.Fatal(err)
		}
		byText, byRecord := newTextStore(dir, 1<<12), newTextStore(dir, 1<<12) // small: both spill
		var want []string
		raw := 0
		var batch corpus.Batch
		for {
			err := rd.Next(&batch)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := range batch.Records {
				rec := &batch.Records[i]
				var doc corpus.Document
				if err := parser.Parse(rec, &doc); err != nil {
					t.Fatalf("%s: %v", in.name, err)
				}
				want = append(want, string(doc.Text))
				if rec.Source == "" {
					byText.appendText(doc.Text)
					byRecord.appendText(doc.Text)
					continue
				}
				lt, lr := textLocOf(rec, &doc), locOf(rec)
				if lt.text {
					raw++
				}
				if err := byText.appendAt(&lt); err != nil {
					t.Fatal(err)
				}
				if err := byRecord.appendAt(&lr); err != nil {
					t.Fatal(err)
				}
			}
		}
		rd.Close()
		if in.gz && raw != 0 || !in.gz && raw != in.wantPlain {
			t.Errorf("%s: %d texts kept by their own location, want %d", in.name, raw, in.wantPlain)
		}
		// Every document, then a random ascending subset.
		var all, some []uint32
		for d := range uint32(len(want)) {
			all = append(all, d)
			if rng.IntN(4) == 0 {
				some = append(some, d)
			}
		}
		for _, docs := range [][]uint32{all, some} {
			for _, ts := range []*textStore{byText, byRecord} {
				tr, err := ts.newReader(opts)
				if err != nil {
					t.Fatal(err)
				}
				for lo := 0; lo < len(docs); lo += 64 {
					chunk := docs[lo:min(lo+64, len(docs))]
					if err := tr.each(chunk, func(i int, text []byte) error {
						if w := want[chunk[i]]; string(text) != w {
							t.Fatalf("%s: document %d read back as %q, want %q", in.name, chunk[i], text, w)
						}
						return nil
					}); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		byText.Close()
		byRecord.Close()
	}
}

// TestTextLocRoundTrip: a location's record reads back as written, at the
// widths' edges, and is as short as its varints; records of other kinds
// (a text kept whole, none) and malformed ones (cut short, a byte too
// many, a length past int32) are not read as locations.
func TestTextLocRoundTrip(t *testing.T) {
	for _, c := range []struct {
		l    textLoc
		size int
	}{
		{textLoc{}, 4},
		{textLoc{file: 0, off: 1_280_000_000, n: 250, raw: true}, 1 + 1 + 5 + 2},
		{textLoc{file: 1<<32 - 1, off: 1<<63 - 1, n: 1<<31 - 1}, 1 + 5 + 9 + 5},
		{textLoc{file: 300, off: 127, n: 128, raw: true}, 1 + 2 + 1 + 2},
	} {
		b := appendTextLoc([]byte("x"), c.l)[1:]
		if len(b) != c.size {
			t.Errorf("%+v: %d bytes; want %d", c.l, len(b), c.size)
		}
		got, ok := parseTextLoc(b)
		if !ok || got != c.l {
			t.Errorf("%+v: read back as %+v, %v", c.l, got, ok)
		}
		for cut := range len(b) {
			if _, ok := parseTextLoc(b[:cut]); ok {
				t.Errorf("%+v: cut to %d bytes, still read as a location", c.l, cut)
			}
		}
		if _, ok := parseTextLoc(append(b[:len(b):len(b)], 0)); ok {
			t.Errorf("%+v: a byte too many, still read as a location", c.l)
		}
	}
	tooLong := binary.AppendUvarint([]byte{textAt, 0, 0}, 1<<31)
	for _, b := range [][]byte{nil, {textInline}, append([]byte{textInline}, "text"...), tooLong} {
		if l, ok := parseTextLoc(b); ok {
			t.Errorf("%q read as a location %+v", b, l)
		}
	}
}
