package corpus

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
)

const sampleJSONL = `{"id":"a","text":"alpha beta"}
{"id":"b","text":"gamma \"delta\"\n"}

{"text":"no id here"}
{"id":42,"text":"numeric id","extra":{"nested":[1,2,{"x":null}]}}
`

// sampleDocs is what sampleJSONL parses to in a file named name.
func sampleDocs(name string) []rec {
	return []rec{
		{name, 1, 0, "a", "alpha beta"},
		{name, 2, 1, "b", "gamma \"delta\"\n"},
		{name, 4, 2, "4", "no id here"},
		{name, 5, 3, "42", "numeric id"},
	}
}

func TestReaderFormats(t *testing.T) {
	dir := t.TempDir()
	lines := "first line\n\nthird line\r\nlast line without newline"
	linesDocs := func(name string) []rec {
		return []rec{{name, 1, 0, "1", "first line"}, {name, 3, 1, "3", "third line"}, {name, 4, 2, "4", "last line without newline"}}
	}
	tests := []struct {
		name    string // file written
		content string
		format  Format
		want    []rec
	}{
		{"a.jsonl", sampleJSONL, FormatAuto, nil},
		{"a.ndjson", sampleJSONL, FormatAuto, nil},
		{"a.json", sampleJSONL, FormatAuto, nil},
		{"A.JSONL", sampleJSONL, FormatAuto, nil},
		{"a.jsonl.gz", sampleJSONL, FormatAuto, nil},
		{"a.jsonl.zst", sampleJSONL, FormatAuto, nil},
		{"a.jsonl.gz.zst", sampleJSONL, FormatAuto, nil},
		{"a.jsonl.zst.gz", sampleJSONL, FormatAuto, nil},
		{"noext", sampleJSONL, FormatJSONL, nil},
		{"noext.gz", sampleJSONL, FormatJSONL, nil},
		{"t.txt", lines, FormatAuto, linesDocs("")},
		{"t.txt.gz", lines, FormatAuto, linesDocs("")},
		{"t.txt.zst", lines, FormatAuto, linesDocs("")},
		{"t.jsonl", lines, FormatLines, linesDocs("")},
	}
	for _, tc := range tests {
		t.Run(tc.name+"/"+tc.format.String(), func(t *testing.T) {
			p := writeFile(t, dir, tc.name, tc.content)
			want := tc.want
			if want == nil {
				want = sampleDocs(p)
			}
			for i := range want {
				want[i].File = p
			}
			got, err := readDocs(t, []string{p}, &Options{Format: tc.format})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %+v; want %+v", got, want)
			}
		})
	}
}

func TestReaderRecordFields(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "a.jsonl", "\xef\xbb\xbf{\"text\":\"bom\"}\r\n  \t\r\n\r\n{\"text\":\"crlf\"}\r\n{\"text\":\"end\"}")
	recs, st, err := readRecords(t, []string{p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Record{
		{Raw: []byte(`{"text":"bom"}`), File: p, Line: 1, Index: 0, Format: FormatJSONL, Source: p, SourceOffset: 3},
		{Raw: []byte(`{"text":"crlf"}`), File: p, Line: 4, Index: 1, Format: FormatJSONL, Source: p, SourceOffset: 26},
		{Raw: []byte(`{"text":"end"}`), File: p, Line: 5, Index: 2, Format: FormatJSONL, Source: p, SourceOffset: 43},
	}
	if !reflect.DeepEqual(recs, want) {
		t.Errorf("got %+v; want %+v", recs, want)
	}
	fi, _ := os.Stat(p)
	if want := (Stats{Files: 1, Records: 3, Bytes: fi.Size()}); st != want {
		t.Errorf("got stats %+v; want %+v", st, want)
	}
}

func TestReaderManyInputs(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.jsonl", sampleJSONL)
	b := writeFile(t, dir, "b.txt.gz", "x\ny\n")
	c := writeFile(t, dir, "c.jsonl.zst", sampleJSONL)
	got, err := readDocs(t, []string{a, b, c}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := sampleDocs(a)
	want = append(want, rec{b, 1, 4, "1", "x"}, rec{b, 2, 5, "2", "y"})
	for _, d := range sampleDocs(c) {
		d.Index += 6
		want = append(want, d)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v; want %+v", got, want)
	}
}

// TestReaderBatchSizes checks that how records are cut into batches, and how
// the input is cut into reads, never changes the records.
func TestReaderBatchSizes(t *testing.T) {
	var sb strings.Builder
	for i := range 300 {
		if i%17 == 0 {
			sb.WriteString("\n")
		}
		fmt.Fprintf(&sb, `{"id":"r%d","text":"%s"}`+"\r\n", i, strings.Repeat("w ", i%50))
	}
	content := sb.String()
	dir := t.TempDir()
	paths := []string{writeFile(t, dir, "a.jsonl", content), writeFile(t, dir, "b.jsonl.gz", content)}
	want, _, err := readRecords(t, paths, &Options{BatchBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 600 {
		t.Fatalf("got %d records; want 600", len(want))
	}
	for _, bs := range []int{1, 2, 7, 64, 100, 1000, 4096} {
		got, _, err := readRecords(t, paths, &Options{BatchBytes: bs})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("BatchBytes %d: records differ from one big batch", bs)
		}
	}
	// Standard input delivering one byte per Read.
	for _, bs := range []int{3, 1 << 20} {
		got, _, err := readRecords(t, []string{"-"}, &Options{BatchBytes: bs, Stdin: iotest.OneByteReader(strings.NewReader(content))})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 300 {
			t.Fatalf("got %d records; want 300", len(got))
		}
		for i := range got {
			w := want[i]
			w.File, w.Source, w.SourceOffset = StdinName, "", 0 // standard input read directly is not stored
			if !reflect.DeepEqual(got[i], w) {
				t.Fatalf("one-byte stdin, BatchBytes %d, record %d: got %+v; want %+v", bs, i, got[i], w)
			}
		}
	}
}

func TestReaderStdin(t *testing.T) {
	for _, tc := range []struct {
		name    string // compression suffixes for the content
		format  Format
		content string
		want    []rec
	}{
		{"plain", FormatAuto, sampleJSONL, sampleDocs(StdinName)},
		{"x.gz", FormatAuto, sampleJSONL, sampleDocs(StdinName)},
		{"x.zst", FormatJSONL, sampleJSONL, sampleDocs(StdinName)},
		{"x.gz.zst", FormatAuto, sampleJSONL, sampleDocs(StdinName)},
		{"lines", FormatLines, "one\ntwo\n", []rec{{StdinName, 1, 0, "1", "one"}, {StdinName, 2, 1, "2", "two"}}},
		{"empty", FormatAuto, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := bytes.NewReader(compressBytes(t, tc.name, []byte(tc.content)))
			opts := &Options{Format: tc.format, Stdin: in}
			got, err := readDocs(t, []string{"-"}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v; want %+v", got, tc.want)
			}
			r, _ := NewReader([]string{"-"}, opts)
			if got := r.Progress().Total; got != -1 {
				t.Errorf("got Progress.Total %d for stdin; want -1", got)
			}
		})
	}
}

func TestReaderTooLarge(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x", 5000)
	content := `{"text":"ok 1"}` + "\n" +
		`{"text":"` + long + `"}` + "\n" +
		`{"text":"ok 3"}` + "\r\n" +
		`{"text":"` + long[:95] + `"}` + "\n" + // 106 bytes: may be whole in the buffer, still too long
		`{"text":"ok 5"}` + "\n" +
		`{"text":"` + long + `"}` // last, without newline
	fits := `{"text":"` + long[:90] + `"}` // 102 bytes: over BatchBytes, under the limit
	for _, name := range []string{"big.jsonl", "big.jsonl.gz"} {
		p := writeFile(t, dir, name, content)
		for _, bs := range []int{16, 1 << 20} {
			t.Run(fmt.Sprintf("%s/batch%d", name, bs), func(t *testing.T) {
				opts := &Options{MaxRecordBytes: 100, BatchBytes: bs}
				recs, _, err := readRecords(t, []string{p}, opts)
				wantErr(t, err, ErrTooLarge, p+":2:", "MaxRecordBytes (100)")
				var re *RecordError
				if !errors.As(err, &re) || re.Line != 2 || re.Index != 1 {
					t.Errorf("got %#v; want a *RecordError for line 2, index 1", err)
				}
				if len(recs) != 1 || string(recs[0].Raw) != `{"text":"ok 1"}` {
					t.Errorf("got records %+v before the error; want the first line only", recs)
				}

				opts.SkipBad = true
				recs, skipped, st, err := readSkipped(t, []string{p}, opts)
				if err != nil {
					t.Fatal(err)
				}
				// The skipped records are in the batches, in input order.
				var gotSkipped []string
				for _, e := range skipped {
					if !errors.Is(&e, ErrTooLarge) || e.File != p {
						t.Errorf("skipped %v; want ErrTooLarge in %s", &e, p)
					}
					gotSkipped = append(gotSkipped, fmt.Sprintf("%d/%d", e.Line, e.Index))
				}
				if want := []string{"2/1", "4/3", "6/5"}; !reflect.DeepEqual(gotSkipped, want) {
					t.Errorf("got skipped line/index %q; want %q", gotSkipped, want)
				}
				var got []string
				for _, r := range recs {
					got = append(got, fmt.Sprintf("%d/%d:%s", r.Line, r.Index, r.Raw))
				}
				want := []string{`1/0:{"text":"ok 1"}`, `3/2:{"text":"ok 3"}`, `5/4:{"text":"ok 5"}`}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("got %q; want %q", got, want)
				}
				if st.Records != 6 || st.Bad != 3 || st.Good() != 3 {
					t.Errorf("got stats %+v; want 6 records, 3 bad", st)
				}
			})
		}
	}
	// A line longer than the batch but within the limit is read whole.
	p := writeFile(t, dir, "fits.jsonl", "{\"text\":\"a\"}\n"+fits+"\n{\"text\":\"b\"}\n")
	recs, _, err := readRecords(t, []string{p}, &Options{MaxRecordBytes: 102, BatchBytes: 8})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || string(recs[1].Raw) != fits {
		t.Errorf("got %+v; want the long line whole", recs)
	}
	// Exactly at the limit, with a CRLF terminator.
	p = writeFile(t, dir, "edge.jsonl", fits+"\r\n")
	if _, _, err := readRecords(t, []string{p}, &Options{MaxRecordBytes: len(fits), BatchBytes: 4}); err != nil {
		t.Errorf("a record of exactly MaxRecordBytes: %v", err)
	}
	if _, _, err := readRecords(t, []string{p}, &Options{MaxRecordBytes: len(fits) - 1, BatchBytes: 4}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a record of MaxRecordBytes+1: got %v; want ErrTooLarge", err)
	}
}

func TestReaderDir(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"b.txt":          "bee",
		"a/z.md":         "zed\nwith two lines\n",
		"a.txt":          "ay",
		"a/y/deep.html":  "<p>deep</p>",
		"c.txt.gz":       "compressed text",
		".hidden":        "skip me",
		".git/config":    "skip me too",
		"a/.DS_Store":    "and me",
		"empty.txt":      "",
		"sub/file.jsonl": `{"text":"a jsonl file is one document here"}`,
	}
	for name, content := range files {
		writeFile(t, root, name, content)
	}
	if err := os.Symlink(filepath.Join(root, "b.txt"), filepath.Join(root, "link.txt")); err != nil {
		t.Skip("symlinks unsupported:", err)
	}
	got, err := readDocs(t, []string{root}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids, texts []string
	for _, d := range got {
		ids = append(ids, d.ID)
		texts = append(texts, d.Text)
		if want := filepath.Join(root, filepath.FromSlash(d.ID)); d.File != want || d.Line != 1 {
			t.Errorf("got File %q Line %d; want %q, 1", d.File, d.Line, want)
		}
	}
	// Lexical order of the '/'-separated relative path: "a.txt" < "a/..." as '.' < '/'.
	wantIDs := []string{"a.txt", "a/y/deep.html", "a/z.md", "b.txt", "c.txt.gz", "empty.txt", "link.txt", "sub/file.jsonl"}
	wantTexts := []string{"ay", "<p>deep</p>", "zed\nwith two lines\n", "bee", "compressed text", "", "bee", `{"text":"a jsonl file is one document here"}`}
	if !reflect.DeepEqual(ids, wantIDs) {
		t.Errorf("got ids %q; want %q", ids, wantIDs)
	}
	if !reflect.DeepEqual(texts, wantTexts) {
		t.Errorf("got texts %q; want %q", texts, wantTexts)
	}

	// Too large a file.
	_, _, err = readRecords(t, []string{root}, &Options{MaxRecordBytes: 10})
	wantErr(t, err, ErrTooLarge, filepath.Join(root, "a", "y", "deep.html"))
	recs, skipped, st, err := readSkipped(t, []string{root}, &Options{MaxRecordBytes: 10, SkipBad: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 || st.Bad != 4 || st.Records != 8 || st.Files != 8 {
		t.Errorf("got %d records and stats %+v; want 4 good and 4 bad of 8", len(recs), st)
	}
	var skippedFiles []string
	for _, e := range skipped {
		rel, _ := filepath.Rel(root, e.File)
		skippedFiles = append(skippedFiles, fmt.Sprintf("%s:%d#%d", filepath.ToSlash(rel), e.Line, e.Index))
	}
	if want := []string{"a/y/deep.html:0#1", "a/z.md:0#2", "c.txt.gz:0#4", "sub/file.jsonl:0#7"}; !reflect.DeepEqual(skippedFiles, want) {
		t.Errorf("got skipped %q; want %q", skippedFiles, want)
	}

	// A file given with FormatDir is one document named by its base name.
	got, err = readDocs(t, []string{filepath.Join(root, "a", "z.md")}, &Options{Format: FormatDir})
	if err != nil || len(got) != 1 || got[0].ID != "z.md" || got[0].Text != "zed\nwith two lines\n" {
		t.Errorf("got %+v, %v; want one document z.md", got, err)
	}
}

// TestReaderShards reads a directory of JSON Lines shards with an explicit
// format.
func TestReaderShards(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "part-1.jsonl.gz", `{"id":"p1","text":"one"}`+"\n")
	writeFile(t, root, "part-0.jsonl", `{"id":"p0","text":"zero"}`+"\n"+`{"id":"p0b","text":"zero b"}`)
	writeFile(t, root, "_SUCCESS", "not json: Hadoop marker, skipped")
	writeFile(t, root, ".part-0.jsonl.crc", "garbage")
	got, err := readDocs(t, []string{root}, &Options{Format: FormatJSONL})
	if err != nil {
		t.Fatal(err)
	}
	want := []rec{
		{filepath.Join(root, "part-0.jsonl"), 1, 0, "p0", "zero"},
		{filepath.Join(root, "part-0.jsonl"), 2, 1, "p0b", "zero b"},
		{filepath.Join(root, "part-1.jsonl.gz"), 1, 2, "p1", "one"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v; want %+v", got, want)
	}
}

func TestReaderOpenErrors(t *testing.T) {
	dir := t.TempDir()
	unknown := writeFile(t, dir, "data.csv", "a,b\n")
	pq := writeFile(t, dir, "x.parquet.gz", "whatever")
	ok := writeFile(t, dir, "ok.jsonl", sampleJSONL)
	tests := []struct {
		name   string
		inputs []string
		opts   *Options
		target error
		frag   string
	}{
		{"none", nil, nil, ErrNoInput, ""},
		{"missing", []string{filepath.Join(dir, "nope.jsonl")}, nil, os.ErrNotExist, "nope.jsonl"},
		{"unknown extension", []string{ok, unknown}, nil, ErrUnknownFormat, "data.csv"},
		{"compressed parquet", []string{pq}, nil, ErrUnsupported, "x.parquet.gz"},
		{"stdin twice", []string{"-", ok, "-"}, nil, ErrUnsupported, "twice"},
		{"parquet stdin", []string{"-"}, &Options{Format: FormatParquet}, ErrUnsupported, "Spool"},
		{"dir stdin", []string{"-"}, &Options{Format: FormatDir}, ErrUnsupported, "directory"},
		{"bad options", []string{ok}, &Options{MaxRecordBytes: -1}, ErrBadOptions, "MaxRecordBytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewReader(tc.inputs, tc.opts)
			wantErr(t, err, tc.target, tc.frag)
		})
	}
}

func TestReaderReadErrors(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	x := uint64(1)
	for range 5000 {
		x = x*6364136223846793005 + 1442695040888963407
		fmt.Fprintf(&sb, `{"text":"%x"}`+"\n", x)
	}
	good := compressBytes(t, "x.gz", []byte(sb.String()))
	trunc := filepath.Join(dir, "trunc.jsonl.gz")
	if err := os.WriteFile(trunc, good[:len(good)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	notgz := filepath.Join(dir, "notgz.jsonl.gz")
	if err := os.WriteFile(notgz, []byte("plain text"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path   string
		target error
	}{{trunc, io.ErrUnexpectedEOF}, {notgz, nil}} {
		recs, _, err := readRecords(t, []string{tc.path}, &Options{BatchBytes: 1 << 16})
		if err == nil || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("%s: got error %v; want one naming the file", tc.path, err)
		}
		if tc.target != nil && !errors.Is(err, tc.target) {
			t.Errorf("%s: got error %v; want one wrapping %v", tc.path, err, tc.target)
		}
		if tc.path == trunc && len(recs) == 0 {
			t.Errorf("%s: got no records before the error; want those before the cut", tc.path)
		}
	}
}

// TestReaderStickyError checks that records before an error come first, then
// the error, on every later call.
func TestReaderStickyError(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "a.jsonl", "{}\n{}\n"+strings.Repeat("x", 50)+"\n{}\n")
	r, err := NewReader([]string{p}, &Options{MaxRecordBytes: 10})
	if err != nil {
		t.Fatal(err)
	}
	var b Batch
	if err := r.Next(&b); err != nil || len(b.Records) != 2 {
		t.Fatalf("got %d records, %v; want 2, nil", len(b.Records), err)
	}
	for range 2 {
		if err := r.Next(&b); !errors.Is(err, ErrTooLarge) || len(b.Records) != 0 {
			t.Fatalf("got %d records, %v; want 0, ErrTooLarge", len(b.Records), err)
		}
	}
	r.Close()
	if err := r.Next(&b); err == nil {
		t.Errorf("Next after Close: got nil error")
	}
}

func TestReaderProgress(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	var total int64
	for i, name := range []string{"a.jsonl", "b.jsonl.gz", "c.txt.zst"} {
		p := writeFile(t, dir, name, strings.Repeat(`{"text":"line `+strconv.Itoa(i)+`"}`+"\n", 5000))
		fi, _ := os.Stat(p)
		total += fi.Size()
		paths = append(paths, p)
	}
	r, err := NewReader(paths, &Options{BatchBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := r.Progress(); got != (Progress{0, total}) {
		t.Errorf("before reading: got %+v; want {0 %d}", got, total)
	}
	var b Batch
	last := int64(0)
	for {
		err := r.Next(&b)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := r.Progress()
		if p.Read < last || p.Read > total {
			t.Fatalf("got Progress.Read %d after %d; want non-decreasing within [0, %d]", p.Read, last, total)
		}
		last = p.Read
	}
	if got := r.Progress(); got != (Progress{total, total}) || got.Fraction() != 1 {
		t.Errorf("at the end: got %+v; want {%d %d}", got, total, total)
	}
	if st := r.Stats(); st.Files != 3 || st.Records != 15000 {
		t.Errorf("got stats %+v; want 3 files, 15000 records", st)
	}
}

func TestProgressFraction(t *testing.T) {
	for _, tc := range []struct {
		p    Progress
		want float64
	}{{Progress{0, -1}, -1}, {Progress{0, 0}, 1}, {Progress{25, 100}, 0.25}, {Progress{200, 100}, 1}} {
		if got := tc.p.Fraction(); got != tc.want {
			t.Errorf("%+v.Fraction(): got %v; want %v", tc.p, got, tc.want)
		}
	}
}

func TestStats(t *testing.T) {
	a := Stats{Files: 1, Records: 10, Bad: 1, Bytes: 100, Keep: 4}
	b := Stats{Bad: 2, Keep: 3}
	s := a.Add(b)
	if want := (Stats{Files: 1, Records: 10, Bad: 3, Bytes: 100, Keep: 7}); s != want || s.Good() != 7 || s.BadRatio() != 0.3 {
		t.Errorf("got %+v good %d ratio %v; want %+v good 7 ratio 0.3", s, s.Good(), s.BadRatio(), want)
	}
	if (Stats{}).BadRatio() != 0 {
		t.Errorf("empty BadRatio: got %v; want 0", (Stats{}).BadRatio())
	}
	if str := s.String(); !strings.Contains(str, "bad      3 (30.00%)") {
		t.Errorf("String() = %q; want a bad line with 30.00%%", str)
	}
}

// TestReaderConcurrentUse runs the pipeline the dedup driver runs — one
// goroutine reading batches, several parsing them, one polling Progress and
// Stats — and checks (under -race) that it yields exactly the sequential
// result whatever the number of workers.
func TestReaderConcurrentUse(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&sb, `{"id":"d%d","text":"text \u00e9 %d %s"}`+"\n", i, i, strings.Repeat("z", i%97))
	}
	paths := []string{writeFile(t, dir, "a.jsonl.zst", sb.String()), writeFile(t, dir, "b.jsonl", sb.String())}
	want, err := readDocs(t, paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2, 5} {
		r, err := NewReader(paths, &Options{BatchBytes: 8 << 10})
		if err != nil {
			t.Fatal(err)
		}
		got := make([]rec, len(want))
		full := make(chan *Batch)
		free := make(chan *Batch, workers+2)
		for range workers + 2 {
			free <- new(Batch)
		}
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // a progress bar
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
					if p, s := r.Progress(), r.Stats(); p.Read > p.Total || s.Bad != 0 {
						t.Errorf("got progress %+v stats %+v", p, s)
					}
				}
			}
		}()
		var pw sync.WaitGroup
		for range workers {
			pw.Add(1)
			go func() {
				defer pw.Done()
				p, _ := NewParser(nil)
				var d Document
				for b := range full {
					for i := range b.Records {
						x := &b.Records[i]
						if err := p.Parse(x, &d); err != nil {
							t.Error(err)
							continue
						}
						got[d.Index] = rec{x.File, x.Line, d.Index, string(d.ID), string(d.Text)}
					}
					free <- b
				}
			}()
		}
		for {
			b := <-free
			err := r.Next(b)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			full <- b
		}
		close(full)
		pw.Wait()
		close(done)
		wg.Wait()
		r.Close()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%d workers: results differ from a sequential read", workers)
		}
	}
}

// TestReaderArticles reads the evaluation data converted to JSON Lines (by
// encoding/json, gzip-compressed) and checks every id and text against the
// source lines.
func TestReaderArticles(t *testing.T) {
	data := articlesJSONL(t)
	src, err := os.ReadFile(articlesPath)
	if err != nil {
		t.Fatal(err)
	}
	p := writeFile(t, t.TempDir(), "articles.jsonl.gz", string(data))
	got, err := readDocs(t, []string{p}, &Options{BatchBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(src), "\n"), "\n")
	if len(got) != len(lines) {
		t.Fatalf("got %d documents; want %d", len(got), len(lines))
	}
	for i, l := range lines {
		id, text, _ := strings.Cut(l, " ")
		if got[i].ID != id || got[i].Text != text || got[i].Line != int64(i+1) {
			t.Fatalf("document %d: got %q line %d; want %q line %d", i, got[i].ID, got[i].Line, id, i+1)
		}
	}
}
