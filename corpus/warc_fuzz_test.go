package corpus

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
)

// warcSeeds returns small WARC files, whole and damaged, for the fuzz
// targets' seed corpora.
func warcSeeds(t testing.TB) [][]byte {
	small := []testRecord{
		{typ: "warcinfo", id: uuid(1), block: []byte("a: b\r\n")},
		{typ: "response", id: uuid(2), uri: "u", block: httpResponse("200 OK", []string{"Content-Type: text/html"}, []byte("<p>x</p>"))},
		{typ: "conversion", id: uuid(3), uri: "u", block: []byte("text")},
		{typ: "response", id: uuid(4), uri: "v", block: httpResponse("200 OK", []string{"Content-Type: text/html", "Transfer-Encoding: chunked"}, chunked([]byte("<b>y</b>"), 3))},
	}
	plain, gz := buildWARC(small, false), buildWARC(small, true)
	seeds := [][]byte{
		plain.data, gz.data, nil, []byte("WARC/1.0\r\n\r\n"), []byte("WARC/1.1\nWARC-Type: response\nContent-Length: 3\n\nabc\n\n"),
		plain.data[:len(plain.data)/2], gz.data[:len(gz.data)-7], slices.Concat(gz.data[:30], []byte("junk"), gz.data[30:]),
		slices.Concat(plain.stored[0], []byte("\x00\x00junk\n"), plain.stored[1]),
	}
	bad := slices.Clone(gz.data)
	bad[gz.offsets[1]+15] ^= 0xff
	return append(seeds, bad)
}

// FuzzReadWARC reads any bytes as a WARC file, plain and (by its name) as
// gzip per record, and checks that the Reader never panics or hangs; that
// under SkipBad it never fails on a file and accounts for every record
// (documents and bad ones); that every record's Raw is its bytes in the file
// (plain) or its member's content (gzip), at its Offset, in order; that
// without SkipBad it returns a prefix of the same records and then an error
// with an offset; and that parsing the records never panics and fails only
// with a RecordError that has an offset.
func FuzzReadWARC(f *testing.F) {
	for _, s := range warcSeeds(f) {
		f.Add(s)
	}
	dir := f.TempDir()
	p, err := NewParser(&Options{MaxRecordBytes: 4096})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if bytes.HasPrefix(data, zstdMagic) {
			return // refused up front (TestWARCFormatOptions)
		}
		for _, name := range []string{"f.warc", "f.warc.gz"} {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			opts := &Options{SkipBad: true, MaxRecordBytes: 4096, BatchBytes: 512}
			recs, st, err := readRecords(t, []string{path}, opts)
			if err != nil {
				t.Fatalf("%s: SkipBad: %v", name, err)
			}
			if st.Records != int64(len(recs))+st.Bad {
				t.Fatalf("%s: %d records, %d bad, %d returned", name, st.Records, st.Bad, len(recs))
			}
			gzipped := bytes.HasPrefix(data, gzipMagic) || name == "f.warc.gz" && !bytes.HasPrefix(data, []byte("WARC"))
			var last int64 = -1
			for i := range recs {
				r := &recs[i]
				if r.Offset <= last || r.Offset >= int64(len(data)) {
					t.Fatalf("%s: record %d at offset %d after %d (file of %d bytes)", name, i, r.Offset, last, len(data))
				}
				last = r.Offset
				var h warcHeader
				if err := parseWARCHeader(r.Raw, &h); err != nil {
					t.Fatalf("%s: record %d: its Raw does not parse: %v", name, i, err)
				}
				stored := data[r.Offset:]
				if gzipped {
					zr, err := gzip.NewReader(bytes.NewReader(stored))
					if err != nil {
						t.Fatalf("%s: record %d: no gzip member at its offset: %v", name, i, err)
					}
					zr.Multistream(false)
					if stored, err = io.ReadAll(zr); err != nil {
						t.Fatalf("%s: record %d: %v", name, i, err)
					}
				}
				if !bytes.HasPrefix(stored, r.Raw) || gzipped && len(stored) != len(r.Raw) {
					t.Fatalf("%s: record %d: Raw is not what is stored at offset %d", name, i, r.Offset)
				}
				var doc Document
				if err := p.Parse(r, &doc); err != nil {
					var re *RecordError
					if !errors.As(err, &re) || !re.HasOffset || re.Offset != r.Offset {
						t.Fatalf("%s: record %d: got %v; want a RecordError at offset %d", name, i, err, r.Offset)
					}
				} else if r.Format == FormatWARC && !utf8.Valid(doc.Text) && utf8.Valid(r.Raw) {
					t.Fatalf("%s: record %d: valid UTF-8 in, invalid text out", name, i)
				}
			}

			strict, _, err := readRecords(t, []string{path}, &Options{MaxRecordBytes: 4096, BatchBytes: 512})
			if len(strict) > len(recs) {
				t.Fatalf("%s: %d records without SkipBad, %d with", name, len(strict), len(recs))
			}
			for i := range strict {
				if strict[i].Offset != recs[i].Offset || !bytes.Equal(strict[i].Raw, recs[i].Raw) {
					t.Fatalf("%s: record %d differs without SkipBad", name, i)
				}
			}
			if st.Bad > 0 {
				var re *RecordError
				if !errors.As(err, &re) || !re.HasOffset {
					t.Fatalf("%s: %d bad records; without SkipBad got %v, want a RecordError with an offset", name, st.Bad, err)
				}
			} else if err != nil {
				t.Fatalf("%s: no bad record under SkipBad, but %v without", name, err)
			}
		}
	})
}

// FuzzParseWARCResponse parses any bytes as the HTTP block of a WARC
// response record (and the decoded body as HTML) and checks that the Parser
// never panics, fails only with a RecordError naming the record, and gives
// text of the documented shape.
func FuzzParseWARCResponse(f *testing.F) {
	gz := func(b []byte) []byte { return encode(f, "gzip", b) }
	for _, s := range [][]byte{
		httpResponse("200 OK", []string{"Content-Type: text/html; charset=utf-8"}, []byte("<p>a</p><p>b</p>")),
		httpResponse("200 OK", []string{"Content-Type: text/html", "Transfer-Encoding: chunked", "Content-Encoding: gzip"}, chunked(gz([]byte("<p>z</p>")), 5)),
		httpResponse("200 OK", []string{"Content-Type: text/html; charset=shift_jis"}, []byte("<p>\x93\xfa\x96\x7b</p>")),
		httpResponse("200 OK", []string{"Content-Type: text/html", "Content-Encoding: deflate, gzip"}, []byte("\x1f\x8b")),
		httpResponse("200 OK", []string{"Content-Type: text/html", "Transfer-Encoding: chunked"}, []byte("ffffffffffffff\r\n")),
		[]byte("HTTP/1.0 200\n\n<meta charset=utf-16><p>x"),
		[]byte("HTTP/1.1 200 OK\r\nContent-Encoding: br\r\n\r\n\xff\xff"),
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	p, err := NewParser(&Options{MaxRecordBytes: 1 << 16})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, block []byte, truncated bool) {
		r := testRecord{typ: "response", id: "x", uri: "u", block: block}
		if truncated {
			r.extra = []string{"WARC-Truncated: length"}
		}
		rec := Record{Raw: r.bytes(), File: "fuzz", Line: 2, Offset: 7, Format: FormatWARC}
		var doc Document
		if err := p.Parse(&rec, &doc); err != nil {
			var re *RecordError
			if !errors.As(err, &re) || re.File != "fuzz" || re.Line != 2 || re.Offset != 7 || !re.HasOffset {
				t.Fatalf("got %v; want a RecordError for fuzz record 2 at byte 7", err)
			}
			return
		}
		if string(doc.ID) != "<urn:uuid:x>" {
			t.Fatalf("got id %q", doc.ID)
		}
		for _, line := range bytes.Split(doc.Text, []byte{'\n'}) {
			if len(doc.Text) > 0 && (len(line) == 0 || isHTMLSpace(line[0]) || isHTMLSpace(line[len(line)-1])) {
				t.Fatalf("line %q of %q is empty or not trimmed", line, doc.Text)
			}
		}
	})
}
