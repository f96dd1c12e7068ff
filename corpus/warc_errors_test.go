package corpus

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// damage is a way to spoil a WARC file built from testCrawl.
type damage struct {
	name    string
	gzipped bool
	// spoil returns the damaged file and the offset and 1-based number of
	// the record reported bad.
	spoil func(f warcFile, recs []testRecord) (data []byte, off int64, recNo int64)
	why   string // a fragment of the reason
	// lost is the 1-based record number of the document the damage costs,
	// or 0 when the bad record was not a document.
	lost int64
}

// The records that damages spoil: record 5 is a document (chunked, gzip),
// record 4 is not (metadata).
const damagedDoc, damagedOther = 5, 4

func withRecord(recs []testRecord, i int, fn func(r *testRecord)) []testRecord {
	out := slices.Clone(recs)
	fn(&out[i-1])
	return out
}

var damages = []damage{
	{
		name: "corrupt gzip member", gzipped: true, lost: damagedDoc, why: "corrupt gzip member",
		spoil: func(f warcFile, _ []testRecord) ([]byte, int64, int64) {
			data := slices.Clone(f.data)
			off := f.offsets[damagedDoc-1]
			for i := off + 20; i < off+40; i++ {
				data[i] ^= 0x55
			}
			return data, off, damagedDoc
		},
	},
	{
		name: "bad gzip CRC", gzipped: true, lost: damagedDoc, why: "checksum",
		spoil: func(f warcFile, _ []testRecord) ([]byte, int64, int64) {
			data := slices.Clone(f.data)
			off := f.offsets[damagedDoc-1]
			data[off+int64(len(f.stored[damagedDoc-1]))-6] ^= 1 // in the CRC-32 of the trailer
			return data, off, damagedDoc
		},
	},
	{
		name: "junk between members", gzipped: true, why: "corrupt gzip member",
		spoil: func(f warcFile, _ []testRecord) ([]byte, int64, int64) {
			off := f.offsets[damagedOther-1]
			junk := append([]byte("junk\x1f\x8b\x08 not a member "), bytes.Repeat([]byte{0x1f, 0x8b}, 50)...)
			return slices.Concat(f.data[:off], junk, f.data[off:]), off, damagedOther
		},
	},
	{
		name: "truncated file", gzipped: true, lost: 16, why: "corrupt gzip member: unexpected EOF",
		spoil: func(f warcFile, _ []testRecord) ([]byte, int64, int64) {
			last := len(f.offsets) - 1
			return f.data[:f.offsets[last]+int64(len(f.stored[last])/2)], f.offsets[last], int64(last + 1)
		},
	},
	{
		name: "member not a WARC record", gzipped: true, why: "does not start with a WARC version line",
		spoil: func(f warcFile, _ []testRecord) ([]byte, int64, int64) {
			off := f.offsets[damagedOther-1]
			return slices.Concat(f.data[:off], gzipMember([]byte("hello, world")), f.data[off:]), off, damagedOther
		},
	},
	{
		name: "Content-Length too large in a member", gzipped: true, lost: damagedDoc, why: "truncated record: Content-Length says",
		spoil: func(f warcFile, recs []testRecord) ([]byte, int64, int64) {
			return spoilRecord(f, recs, damagedDoc, true, func(r *testRecord) { r.length = len(r.block) + 10 })
		},
	},
	{
		name: "Content-Length too small in a member", gzipped: true, lost: damagedDoc, why: "bytes after the block",
		spoil: func(f warcFile, recs []testRecord) ([]byte, int64, int64) {
			return spoilRecord(f, recs, damagedDoc, true, func(r *testRecord) { r.length = len(r.block) - 10 })
		},
	},
	{
		name: "two records in a member", gzipped: true, why: "more than one record per member",
		spoil: func(f warcFile, recs []testRecord) ([]byte, int64, int64) {
			off := f.offsets[damagedOther-1]
			two := gzipMember(slices.Concat(recs[damagedOther-1].bytes(), recs[damagedOther-1].bytes()))
			return slices.Concat(f.data[:off], two, f.data[off+int64(len(f.stored[damagedOther-1])):]), off, damagedOther
		},
	},
	{
		name: "no Content-Length in a member", gzipped: true, why: "no Content-Length",
		spoil: func(f warcFile, recs []testRecord) ([]byte, int64, int64) {
			return spoilRecord(f, recs, damagedOther, true, func(r *testRecord) { r.length = -1 })
		},
	},
	{
		name: "Content-Length too small", lost: damagedDoc, why: "not by a line break",
		spoil: func(f warcFile, recs []testRecord) ([]byte, int64, int64) {
			return spoilRecord(f, recs, damagedDoc, false, func(r *testRecord) { r.length = len(r.block) - 10 })
		},
	},
	{
		name: "Content-Length too large", lost: damagedDoc, why: "not by a line break",
		spoil: func(f warcFile, recs []testRecord) ([]byte, int64, int64) {
			return spoilRecord(f, recs, damagedDoc, false, func(r *testRecord) { r.length = len(r.block) + 100 })
		},
	},
	{
		name: "bad Content-Length", why: `bad Content-Length "12x"`,
		spoil: func(f warcFile, recs []testRecord) ([]byte, int64, int64) {
			return spoilRecord(f, recs, damagedOther, false, func(r *testRecord) {
				r.length = -1
				r.extra = append(r.extra, "Content-Length: 12x")
			})
		},
	},
	{
		name: "junk between records", why: "does not start with a WARC version line",
		spoil: func(f warcFile, _ []testRecord) ([]byte, int64, int64) {
			off := f.offsets[damagedOther-1]
			return slices.Concat(f.data[:off], []byte("garbage line\r\nWARC/9.9 more\r\n\r\n"), f.data[off:]), off, damagedOther
		},
	},
	{
		name: "truncated plain file", lost: 16, why: "truncated record",
		spoil: func(f warcFile, _ []testRecord) ([]byte, int64, int64) {
			last := len(f.offsets) - 1
			return f.data[:f.offsets[last]+int64(len(f.stored[last])-30)], f.offsets[last], int64(last + 1)
		},
	},
	{
		name: "header cut off", lost: 16, why: "ends inside the record header",
		spoil: func(f warcFile, _ []testRecord) ([]byte, int64, int64) {
			last := len(f.offsets) - 1
			return f.data[:f.offsets[last]+40], f.offsets[last], int64(last + 1)
		},
	},
}

// spoilRecord rebuilds the file with record i changed by fn.
func spoilRecord(f warcFile, recs []testRecord, i int, gzipped bool, fn func(r *testRecord)) ([]byte, int64, int64) {
	g := buildWARC(withRecord(recs, i, fn), gzipped)
	return g.data, g.offsets[i-1], int64(i)
}

// TestReadWARCDamaged checks that each kind of damage is reported with the
// file, the record's number and offset and the reason, after the documents
// before it; and that under SkipBad the bad record is counted and every
// other document is still read: nothing is dropped silently.
func TestReadWARCDamaged(t *testing.T) {
	c := testCrawl(t)
	dir := t.TempDir()
	for i, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			f := buildWARC(c.recs, d.gzipped)
			data, off, recNo := d.spoil(f, c.recs)
			path := filepath.Join(dir, fmt.Sprintf("%d.warc", i))
			if d.gzipped {
				path += ".gz"
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}

			docs, _, _, err := readWARCDocs(t, []string{path}, nil)
			wantErr(t, err, ErrBadWARC, path, d.why)
			gotNo, gotOff := errOffset(t, err)
			if gotNo != recNo || gotOff != off {
				t.Errorf("got record %d at byte %d; want record %d at byte %d", gotNo, gotOff, recNo, off)
			}
			var before int
			for _, w := range c.docs {
				if w.Line < recNo {
					before++
				}
			}
			if len(docs) != before {
				t.Errorf("got %d documents before the error; want %d", len(docs), before)
			}

			docs, _, st, err := readWARCDocs(t, []string{path}, &Options{SkipBad: true})
			if err != nil {
				t.Fatalf("SkipBad: %v", err)
			}
			var want []string
			for _, w := range c.docs {
				if w.Line != d.lost {
					want = append(want, w.ID)
				}
			}
			var got []string
			for _, g := range docs {
				got = append(got, g.ID)
			}
			if !slices.Equal(got, want) {
				t.Errorf("SkipBad: got documents %v;\nwant %v", got, want)
			}
			if st.Bad != 1 || st.Records != int64(len(want))+1 {
				t.Errorf("SkipBad: got %d records, %d bad; want %d, 1", st.Records, st.Bad, len(want)+1)
			}
		})
	}
}

// TestReadWARCStdinDamaged checks that a bad record of standard input is an
// error even under SkipBad, which cannot look for the next record there.
func TestReadWARCStdinDamaged(t *testing.T) {
	c := testCrawl(t)
	f := buildWARC(c.recs, true)
	data, off, _ := damages[0].spoil(f, c.recs)
	_, _, _, err := readWARCDocs(t, []string{"-"}, &Options{Format: FormatWARC, SkipBad: true, Stdin: bytes.NewReader(data)})
	wantErr(t, err, ErrBadWARC, "corrupt gzip member", "Spool")
	if _, gotOff := errOffset(t, err); gotOff != off {
		t.Errorf("got offset %d; want %d", gotOff, off)
	}
}

// TestReadWARCTooLarge checks MaxRecordBytes: documents over it are bad,
// other records over it are skipped as usual.
func TestReadWARCTooLarge(t *testing.T) {
	c := testCrawl(t)
	big := testRecord{typ: "response", id: uuid(99), uri: "https://a.example/big.png", ctype: "application/http; msgtype=response",
		block: httpResponse("200 OK", []string{"Content-Type: image/png"}, bytes.Repeat([]byte("x"), 5000))}
	recs := append(slices.Clone(c.recs), big)
	const limit = 1000
	var small []string
	for _, d := range c.docs {
		if len(c.recs[d.Line-1].bytes()) <= limit {
			small = append(small, d.ID)
		}
	}
	if len(small) == 0 || len(small) == len(c.docs) {
		t.Fatalf("the limit keeps %d of %d documents; want some but not all", len(small), len(c.docs))
	}
	for _, gzipped := range []bool{true, false} {
		path := filepath.Join(t.TempDir(), "x.warc")
		os.WriteFile(path, buildWARC(recs, gzipped).data, 0o644)
		_, _, _, err := readWARCDocs(t, []string{path}, &Options{Format: FormatWARC, MaxRecordBytes: limit})
		wantErr(t, err, ErrTooLarge, "MaxRecordBytes (1000)")
		errOffset(t, err)
		docs, _, st, err := readWARCDocs(t, []string{path}, &Options{Format: FormatWARC, MaxRecordBytes: limit, SkipBad: true})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range docs {
			got = append(got, d.ID)
		}
		if !slices.Equal(got, small) || st.Bad != int64(len(c.docs)-len(small)) || st.Skipped != int64(len(recs)-len(c.docs)) {
			t.Errorf("gzipped %v: got %v, %+v; want %v with %d bad and %d skipped", gzipped, got, st, small, len(c.docs)-len(small), len(recs)-len(c.docs))
		}
	}
}

// TestParseWARCErrors checks the errors of the Parser on responses the
// Reader passes but whose payload cannot be decoded, and what truncated
// payloads give.
func TestParseWARCErrors(t *testing.T) {
	html := []byte("<p>Hello, world.</p>")
	gz := encode(t, "gzip", html)
	resp := func(i int, http []byte, extra ...string) testRecord {
		return testRecord{typ: "response", id: uuid(i), uri: fmt.Sprintf("https://b.example/%d", i), ctype: "application/http; msgtype=response", extra: extra, block: http}
	}
	for _, c := range []struct {
		name   string
		rec    testRecord
		target error
		field  string
		why    string
		text   string // when it parses
	}{
		{"bad chunk size", resp(1, httpResponse("200 OK", []string{"Content-Type: text/html", "Transfer-Encoding: chunked"}, []byte("zz\r\nabc\r\n0\r\n\r\n"))), ErrBadHTTP, "", `bad chunk size "zz"`, ""},
		{"chunk cut short", resp(2, httpResponse("200 OK", []string{"Content-Type: text/html", "Transfer-Encoding: chunked"}, []byte("100\r\n<p>short</p>"))), ErrBadHTTP, "", "a chunk of 256 bytes, only 12 follow", ""},
		{"chunk cut short, truncated", resp(3, httpResponse("200 OK", []string{"Content-Type: text/html", "Transfer-Encoding: chunked"}, []byte("100\r\n<p>short</p>")), "WARC-Truncated: length"), nil, "", "", "short"},
		{"chunks end early", resp(4, httpResponse("200 OK", []string{"Content-Type: text/html", "Transfer-Encoding: chunked"}, []byte("5\r\n<p>ok\r\n"))), nil, "", "", "ok"},
		{"unsupported coding", resp(5, httpResponse("200 OK", []string{"Content-Type: text/html", "Content-Encoding: compress"}, html)), ErrBadHTTP, "", `unsupported Content-Encoding "compress"`, ""},
		{"corrupt gzip body", resp(6, httpResponse("200 OK", []string{"Content-Type: text/html", "Content-Encoding: gzip"}, html)), ErrBadHTTP, "", "Content-Encoding gzip", ""},
		{"gzip body cut", resp(7, httpResponse("200 OK", []string{"Content-Type: text/html", "Content-Encoding: gzip"}, gz[:len(gz)-10])), ErrBadHTTP, "", "unexpected EOF", ""},
		{"gzip body cut, truncated", resp(8, httpResponse("200 OK", []string{"Content-Type: text/html", "Content-Encoding: gzip"}, gz[:len(gz)-10]), "WARC-Truncated: length"), nil, "", "", "Hello, world."},
		{"two codings", resp(9, httpResponse("200 OK", []string{"Content-Type: text/html", "Content-Encoding: gzip", "Content-Encoding: br"}, encode(t, "br", gz))), nil, "", "", "Hello, world."},
		{"undecodable charset", resp(10, httpResponse("200 OK", []string{"Content-Type: text/html; charset=iso-2022-kr"}, []byte("<p>\x1b$)C\x0eabc</p>"))), ErrBadHTTP, "", "cannot be decoded", ""},
		{"no record id", testRecord{typ: "response", uri: "https://b.example/x", block: httpResponse("200 OK", []string{"Content-Type: text/html"}, html)}, ErrMissingField, "WARC-Record-ID", "", ""},
		{"HTTP header does not end", resp(11, []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n")), ErrBadHTTP, "", "does not end", ""},
		{"body over the limit", resp(12, httpResponse("200 OK", []string{"Content-Type: text/html", "Content-Encoding: gzip"}, encode(t, "gzip", bytes.Repeat([]byte("<p>x</p>"), 1000)))), ErrTooLarge, "", "decoded body over MaxRecordBytes", ""},
		{"empty body with a coding", resp(18, httpResponse("304 Not Modified", []string{"Content-Type: text/html", "Content-Encoding: gzip", "Transfer-Encoding: chunked"}, nil)), nil, "", "", ""},
		{"mislabelled UTF-8", resp(13, httpResponse("200 OK", []string{"Content-Type: text/html; charset=iso-8859-1"}, []byte("<p>Café</p>"))), nil, "", "", "Café"},
		{"UTF-8 byte order mark", resp(14, httpResponse("200 OK", []string{"Content-Type: text/html"}, []byte("\ufeff<p>bom</p>"))), nil, "", "", "bom"},
		{"UTF-16", resp(15, httpResponse("200 OK", []string{"Content-Type: text/html"}, []byte("\xff\xfe<\x00p\x00>\x00h\x00i\x00"))), nil, "", "", "hi"},
		{"ISO-2022-JP", resp(16, httpResponse("200 OK", []string{"Content-Type: text/html; charset=ISO-2022-JP"}, []byte("<p>\x1b$BF|K\\\x1b(B</p>"))), nil, "", "", "日本"},
		{"undeclared windows-1252", resp(17, httpResponse("200 OK", []string{"Content-Type: text/html"}, []byte("<p>na\xefve</p>"))), nil, "", "", "naïve"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.warc.gz")
			f := buildWARC([]testRecord{c.rec}, true)
			os.WriteFile(path, f.data, 0o644)
			opts := &Options{MaxRecordBytes: 4000}
			docs, recs, _, err := readWARCDocs(t, []string{path}, opts)
			if len(recs) != 1 {
				t.Fatalf("the Reader gave %d records (%v); want 1", len(recs), err)
			}
			if c.target == nil {
				if err != nil || len(docs) != 1 || docs[0].Text != c.text {
					t.Fatalf("got %+v, %v; want text %q", docs, err, c.text)
				}
				return
			}
			wantErr(t, err, c.target, c.why)
			errOffset(t, err)
			var re *RecordError
			if errors.As(err, &re); re.Field != c.field {
				t.Errorf("got field %q; want %q", re.Field, c.field)
			}
		})
	}
}

// TestHTMLOption checks Options.HTML on JSON Lines, text lines and the files
// of a directory (decoded from their charset).
func TestHTMLOption(t *testing.T) {
	dir := t.TempDir()
	jsonl := writeFile(t, dir, "a.jsonl", `{"id":"j","text":"<p>One &amp; two</p><script>x</script><p>three</p>"}`+"\n")
	lines := writeFile(t, dir, "b.txt", "<b>bold</b> <nav>menu</nav>text\n")
	site := filepath.Join(dir, "site")
	writeFile(t, site, "utf8.html", "<html><body><h1>Titre</h1><p>Été</p></body></html>")
	writeFile(t, site, "latin1.html", "<meta charset=iso-8859-1><p>\xc9t\xe9</p>")
	writeFile(t, site, "sub/page.html.gz", "<p>compressed</p>")
	for _, c := range []struct {
		inputs []string
		want   []string
	}{
		{[]string{jsonl}, []string{"One & two\nthree"}},
		{[]string{lines}, []string{"bold text"}},
		{[]string{site}, []string{"Été", "compressed", "Titre\nÉté"}},
	} {
		docs, err := readDocs(t, c.inputs, &Options{HTML: true})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range docs {
			got = append(got, d.Text)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%v: got %q; want %q", c.inputs, got, c.want)
		}
		docs, err = readDocs(t, c.inputs, nil)
		if err != nil || !strings.Contains(docs[0].Text, "<") {
			t.Errorf("%v without HTML: got %+v, %v; want the markup", c.inputs, docs, err)
		}
	}
}
