package corpus

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

func TestReadWARC(t *testing.T) {
	c := testCrawl(t)
	for _, gzipped := range []bool{true, false} {
		f := buildWARC(c.recs, gzipped)
		name := "crawl.warc"
		if gzipped {
			name += ".gz"
		}
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, f.data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, idField := range []string{"", IDFieldRecordID, IDFieldURI} {
			t.Run(name+"/"+idField, func(t *testing.T) {
				opts := &Options{IDField: idField}
				docs, recs, st, err := readWARCDocs(t, []string{path}, opts)
				if err != nil {
					t.Fatal(err)
				}
				if len(docs) != len(c.docs) {
					t.Fatalf("got %d documents; want %d", len(docs), len(c.docs))
				}
				for i, d := range docs {
					want := c.docs[i]
					want.File, want.Index = path, int64(i)
					if idField == IDFieldURI {
						want.ID = c.uris[i]
					}
					if d != want {
						t.Errorf("document %d:\n got %+v\nwant %+v", i, d, want)
					}
					r := recs[i]
					if r.Format != FormatWARC || r.Offset != f.offsets[r.Line-1] {
						t.Errorf("record %d: got format %s offset %d; want warc, %d", i, r.Format, r.Offset, f.offsets[r.Line-1])
					}
					if wantRaw := c.recs[r.Line-1].bytes(); !bytes.Equal(r.Raw, wantRaw) {
						t.Errorf("record %d: Raw is not the record's bytes:\n got %q\nwant %q", i, clip(r.Raw, 200), clip(wantRaw, 200))
					}
				}
				wantSt := Stats{Files: 1, Records: int64(len(c.docs)), Skipped: int64(len(c.recs) - len(c.docs))}
				wantSt.Bytes = st.Bytes
				if st != wantSt {
					t.Errorf("got stats %+v; want %+v", st, wantSt)
				}
				var plain int64
				for _, r := range c.recs {
					plain += int64(len(r.bytes()))
				}
				if st.Bytes != plain {
					t.Errorf("got Bytes %d; want %d, the size of the records", st.Bytes, plain)
				}
			})
		}
	}
}

// TestReadWARCBatchSizes checks that the records do not depend on how they
// are cut into batches.
func TestReadWARCBatchSizes(t *testing.T) {
	c := testCrawl(t)
	dir := t.TempDir()
	gz := filepath.Join(dir, "a.warc.gz")
	plain := filepath.Join(dir, "b.warc")
	os.WriteFile(gz, buildWARC(c.recs, true).data, 0o644)
	os.WriteFile(plain, buildWARC(c.recs, false).data, 0o644)
	want, _, _, err := readWARCDocs(t, []string{gz, plain}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, bb := range []int{1, 100, 5000, 1 << 20} {
		got, _, _, err := readWARCDocs(t, []string{gz, plain}, &Options{BatchBytes: bb})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("BatchBytes %d: documents differ", bb)
		}
	}
	if len(want) != 2*len(c.docs) || want[len(c.docs)].Index != int64(len(c.docs)) {
		t.Errorf("got %d documents; want %d with indices running on across files", len(want), 2*len(c.docs))
	}
}

func TestReadWET(t *testing.T) {
	recs := []testRecord{
		{typ: "warcinfo", id: uuid(1), ctype: "application/warc-fields", block: []byte("isPartOf: CC-MAIN-2024-18\r\n")},
		{typ: "conversion", id: uuid(2), uri: "https://a.example/1", ctype: "text/plain", extra: []string{"WARC-Refers-To: <urn:uuid:" + uuid(9) + ">"}, block: []byte("Page one\nFirst line.\nSecond line.")},
		{typ: "conversion", id: uuid(3), uri: "<https://a.example/2>", ctype: "text/plain", block: []byte("Page two, ünïcode.")},
		{typ: "response", id: uuid(4), uri: "https://a.example/3", ctype: "application/http; msgtype=response", block: httpResponse("200 OK", []string{"Content-Type: text/html"}, []byte("<p>not in a WET</p>"))},
	}
	path := filepath.Join(t.TempDir(), "CC-MAIN-x.warc.wet.gz")
	os.WriteFile(path, buildWARC(recs, true).data, 0o644)
	for _, idField := range []string{IDFieldRecordID, IDFieldURI} {
		docs, _, st, err := readWARCDocs(t, []string{path}, &Options{IDField: idField})
		if err != nil {
			t.Fatal(err)
		}
		want := []rec{
			{File: path, Line: 2, Index: 0, ID: "<urn:uuid:" + uuid(2) + ">", Text: "Page one\nFirst line.\nSecond line."},
			{File: path, Line: 3, Index: 1, ID: "<urn:uuid:" + uuid(3) + ">", Text: "Page two, ünïcode."},
		}
		if idField == IDFieldURI {
			want[0].ID, want[1].ID = "https://a.example/1", "https://a.example/2"
		}
		if !slices.Equal(docs, want) {
			t.Errorf("IDField %q:\n got %+v\nwant %+v", idField, docs, want)
		}
		if st.Records != 2 || st.Skipped != 2 || st.Bad != 0 {
			t.Errorf("got stats %+v; want 2 records, 2 skipped", st)
		}
		if !strings.Contains(st.String(), "skipped  2 ") {
			t.Errorf("String() = %q; want a skipped line", st.String())
		}
	}
	// Kept records of WET input are named so that they read back as WET
	// (as .warc.gz they read as WARC, which has no conversion documents).
	if ext, err := KeptExtension([]string{path}, nil); ext != ".warc.wet.gz" || err != nil {
		t.Errorf("KeptExtension of WET: got %q, %v; want .warc.wet.gz", ext, err)
	}
	w := filepath.Join(t.TempDir(), "a.warc")
	os.WriteFile(w, buildWARC(testCrawl(t).recs, false).data, 0o644)
	if ext, err := KeptExtension([]string{path, w}, nil); ext != ".warc.gz" || err != nil {
		t.Errorf("KeptExtension of WET and WARC: got %q, %v; want .warc.gz", ext, err)
	}
}

// TestCopyKeptWARC checks that kept records round-trip: the output is a
// WARC file of gzip members, each kept member byte for byte as stored (or,
// from a plain WARC, the record's bytes), and reading it back gives the
// kept documents.
func TestCopyKeptWARC(t *testing.T) {
	c := testCrawl(t)
	dir := t.TempDir()
	gzf, plainf := buildWARC(c.recs, true), buildWARC(c.recs, false)
	gz := filepath.Join(dir, "a.warc.gz")
	plain := filepath.Join(dir, "b.warc")
	os.WriteFile(gz, gzf.data, 0o644)
	os.WriteFile(plain, plainf.data, 0o644)
	inputs := []string{gz, plain}
	all, recs, _, err := readWARCDocs(t, inputs, nil)
	if err != nil {
		t.Fatal(err)
	}
	keep := Indices{0, 2, 3, int64(len(c.docs)), int64(len(c.docs) + 4), int64(len(all) - 1)}

	ext, err := KeptExtension(inputs, nil)
	if err != nil || ext != ".warc.gz" {
		t.Fatalf("KeptExtension: got %q, %v; want .warc.gz", ext, err)
	}
	var out bytes.Buffer
	n, err := CopyKept(context.Background(), &out, inputs, nil, keep)
	if err != nil || n != int64(len(keep)) {
		t.Fatalf("CopyKept: got %d, %v; want %d", n, err, len(keep))
	}

	// Walk the output member by member: a kept record of the .warc.gz is its
	// stored member byte for byte; one of the plain .warc is a member that
	// decompresses to the record's bytes.
	rest := bytes.NewReader(out.Bytes())
	for i, k := range keep {
		r := recs[k]
		if r.File == gz {
			member := gzf.stored[r.Line-1]
			got := make([]byte, len(member))
			if _, err := io.ReadFull(rest, got); err != nil || !bytes.Equal(got, member) {
				t.Fatalf("kept record %d: not the stored member byte for byte", i)
			}
			continue
		}
		zr, err := gzip.NewReader(rest) // a bytes.Reader: no read past the member
		if err != nil {
			t.Fatalf("kept record %d: %v", i, err)
		}
		zr.Multistream(false)
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, plainf.stored[r.Line-1]) {
			t.Fatalf("kept record %d: the member does not decompress to the record (%v)", i, err)
		}
	}
	if rest.Len() != 0 {
		t.Errorf("%d bytes after the kept records", rest.Len())
	}

	// Read the kept file back: the kept documents, in order.
	kept := filepath.Join(dir, "kept"+ext)
	os.WriteFile(kept, out.Bytes(), 0o644)
	back, _, st, err := readWARCDocs(t, []string{kept}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(keep) || st.Skipped != 0 {
		t.Fatalf("read back %d documents (%d skipped); want %d", len(back), st.Skipped, len(keep))
	}
	for i, k := range keep {
		if back[i].ID != all[k].ID || back[i].Text != all[k].Text {
			t.Errorf("kept document %d: got %q; want %q", i, back[i].ID, all[k].ID)
		}
	}
}

// TestCopyKeptWARCSpooled copies kept records of a WARC read from standard
// input, through Spool.
func TestCopyKeptWARCSpooled(t *testing.T) {
	c := testCrawl(t)
	f := buildWARC(c.recs, true)
	path, cleanup, err := Spool(bytes.NewReader(f.data), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	opts := &Options{Format: FormatWARC}
	var out bytes.Buffer
	if _, err := CopyKept(context.Background(), &out, []string{path}, opts, Indices{1}); err != nil {
		t.Fatal(err)
	}
	_, recs, _, err := readWARCDocs(t, []string{path}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := f.stored[recs[1].Line-1]; !bytes.Equal(out.Bytes(), want) {
		t.Errorf("got %d bytes; want the stored member of %d bytes", out.Len(), len(want))
	}
	if recs[0].File != StdinName {
		t.Errorf("got file %q; want %q", recs[0].File, StdinName)
	}
}

func TestCopyKeptWARCMixed(t *testing.T) {
	dir := t.TempDir()
	w := filepath.Join(dir, "a.warc")
	os.WriteFile(w, buildWARC(testCrawl(t).recs, false).data, 0o644)
	j := writeFile(t, dir, "b.jsonl", `{"id":"x","text":"y"}`+"\n")
	if _, err := CopyKept(context.Background(), io.Discard, []string{w, j}, nil, Indices{0}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("got %v; want ErrUnsupported", err)
	}
	if _, err := KeptExtension([]string{w, j}, nil); !errors.Is(err, ErrUnsupported) {
		t.Errorf("KeptExtension: got %v; want ErrUnsupported", err)
	}
	if ext, err := KeptExtension([]string{j}, nil); ext != ".jsonl" || err != nil {
		t.Errorf("KeptExtension: got %q, %v; want .jsonl", ext, err)
	}
	var rec Record
	rec.Format = FormatWARC
	wr, _ := NewWriter(io.Discard, nil)
	if err := wr.Write(&rec); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Writer.Write of a WARC record: got %v; want ErrUnsupported", err)
	}
}

func TestWARCFormatOptions(t *testing.T) {
	for _, c := range []struct {
		name string
		want Format
	}{
		{"a.warc", FormatWARC}, {"a.warc.gz", FormatWARC}, {"a.WARC.GZ", FormatWARC}, {"CC-MAIN-1.warc.wet.gz", FormatWET},
		{"a.wet", FormatWET}, {"a.warc.wat.gz", ""},
	} {
		base, _ := peelCompression(c.name)
		if got := formatByName(base); got != c.want {
			t.Errorf("formatByName(%q) = %q; want %q", c.name, got, c.want)
		}
	}
	var f Format
	for _, s := range []string{"warc", "WET"} {
		if err := f.Set(s); err != nil || f.String() != strings.ToLower(s) {
			t.Errorf("Set(%q): got %v, %v", s, f, err)
		}
	}
	for _, o := range []Options{{Format: FormatWARC}, {Format: FormatWET, IDField: "uri"}, {Format: FormatWARC, IDField: "record-id"}, {Format: FormatWARC, HTML: true}} {
		if err := o.Validate(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
	for _, o := range []Options{{Format: FormatWARC, IDField: "url"}, {Format: FormatWET, KeepField: "score"}} {
		if err := o.Validate(); !errors.Is(err, ErrBadOptions) {
			t.Errorf("%+v: got %v; want ErrBadOptions", o, err)
		}
	}
	// Under FormatAuto the rule applies to the inputs that are WARC.
	dir := t.TempDir()
	w := filepath.Join(dir, "a.warc")
	os.WriteFile(w, nil, 0o644)
	j := writeFile(t, dir, "b.jsonl", `{"url":"x","text":"y"}`+"\n")
	if _, err := NewReader([]string{j, w}, &Options{IDField: "url"}); !errors.Is(err, ErrBadOptions) || !strings.Contains(err.Error(), w) {
		t.Errorf("got %v; want ErrBadOptions naming %s", err, w)
	}
	if _, err := NewReader([]string{j}, &Options{IDField: "url"}); err != nil {
		t.Errorf("JSON Lines alone: %v", err)
	}
	zst := writeFile(t, dir, "c.warc.zst", "WARC/1.1\r\n")
	if _, _, err := readRecords(t, []string{zst}, nil); !errors.Is(err, ErrUnsupported) {
		t.Errorf("zstd WARC: got %v; want ErrUnsupported", err)
	}
}

// TestReadWARCMisnamed checks that the content, not the name, tells plain
// from gzip, and that standard input is read too.
func TestReadWARCMisnamed(t *testing.T) {
	c := testCrawl(t)
	dir := t.TempDir()
	plainAsGz := filepath.Join(dir, "a.warc.gz")
	os.WriteFile(plainAsGz, buildWARC(c.recs, false).data, 0o644)
	gzNoExt := filepath.Join(dir, "crawl")
	os.WriteFile(gzNoExt, buildWARC(c.recs, true).data, 0o644)
	for _, in := range []string{plainAsGz, gzNoExt} {
		docs, _, _, err := readWARCDocs(t, []string{in}, &Options{Format: FormatWARC})
		if err != nil || len(docs) != len(c.docs) {
			t.Errorf("%s: got %d documents, %v; want %d", in, len(docs), err, len(c.docs))
		}
	}
	docs, _, _, err := readWARCDocs(t, []string{"-"}, &Options{Format: FormatWARC, Stdin: bytes.NewReader(buildWARC(c.recs, true).data)})
	if err != nil || len(docs) != len(c.docs) {
		t.Errorf("stdin: got %d documents, %v; want %d", len(docs), err, len(c.docs))
	}
}

// TestKeptExtensionOf: the extension from file names alone (remote files),
// as KeptExtension finds it from the opened inputs.
func TestKeptExtensionOf(t *testing.T) {
	for _, c := range []struct {
		files  []string
		format Format
		want   string
	}{
		{[]string{"gs://b/CC-1.warc.gz", "gs://b/CC-2.warc.gz"}, FormatAuto, ".warc.gz"},
		{[]string{"gs://b/CC-1.warc.wet.gz"}, FormatAuto, ".warc.wet.gz"},
		{[]string{"a.warc", "b.wet.zst"}, FormatAuto, ".warc.gz"},
		{[]string{"a.jsonl.gz", "b.parquet"}, FormatAuto, ".jsonl"},
		{[]string{"gs://b/part-0", "gs://b/part-1"}, FormatWET, ".warc.wet.gz"},
		{[]string{"a.data"}, FormatJSONL, ".jsonl"},
	} {
		if got, err := KeptExtensionOf(c.files, c.format); got != c.want || err != nil {
			t.Errorf("%q as %s: got %q, %v; want %q", c.files, c.format, got, err, c.want)
		}
	}
	if _, err := KeptExtensionOf([]string{"a.warc.gz", "b.jsonl"}, FormatAuto); !errors.Is(err, ErrUnsupported) {
		t.Errorf("mixed: %v; want ErrUnsupported", err)
	}
	if _, err := KeptExtensionOf([]string{"a.data"}, FormatAuto); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("unknown name: %v; want ErrUnknownFormat", err)
	}
}
