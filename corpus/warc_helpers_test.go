package corpus

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"golang.org/x/text/encoding/japanese"
)

// A small WARC writer for tests: records are built from their parts as a
// crawler would write them, so tests know every byte and offset.

// testRecord is one WARC record to write.
type testRecord struct {
	typ    string   // WARC-Type
	id     string   // WARC-Record-ID, without brackets; "" for none
	uri    string   // WARC-Target-URI; "" for none
	ctype  string   // Content-Type of the block; "" for none
	extra  []string // more header lines, "Name: value"
	block  []byte
	length int // Content-Length to write when not len(block)+0; -1 for none
}

// bytes renders the record: version line, header, block, CRLF CRLF.
func (r testRecord) bytes() []byte {
	var b bytes.Buffer
	b.WriteString("WARC/1.1\r\n")
	fmt.Fprintf(&b, "WARC-Type: %s\r\n", r.typ)
	if r.id != "" {
		fmt.Fprintf(&b, "WARC-Record-ID: <urn:uuid:%s>\r\n", r.id)
	}
	b.WriteString("WARC-Date: 2024-05-01T08:00:00Z\r\n")
	if r.uri != "" {
		fmt.Fprintf(&b, "WARC-Target-URI: %s\r\n", r.uri)
	}
	if r.ctype != "" {
		fmt.Fprintf(&b, "Content-Type: %s\r\n", r.ctype)
	}
	for _, e := range r.extra {
		b.WriteString(e + "\r\n")
	}
	switch {
	case r.length < 0:
	case r.length > 0:
		fmt.Fprintf(&b, "Content-Length: %d\r\n", r.length)
	default:
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(r.block))
	}
	b.WriteString("\r\n")
	b.Write(r.block)
	b.WriteString("\r\n\r\n")
	return b.Bytes()
}

// httpResponse renders an HTTP/1.1 response.
func httpResponse(status string, headers []string, body []byte) []byte {
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 " + status + "\r\n")
	for _, h := range headers {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

// chunked encodes body in chunks of at most size bytes, with a chunk
// extension and a trailer, as HTTP/1.1 allows.
func chunked(body []byte, size int) []byte {
	var b bytes.Buffer
	for len(body) > 0 {
		n := min(size, len(body))
		fmt.Fprintf(&b, "%X;ext=1\r\n", n)
		b.Write(body[:n])
		b.WriteString("\r\n")
		body = body[n:]
	}
	b.WriteString("0\r\nX-Trailer: t\r\n\r\n")
	return b.Bytes()
}

// encode compresses b with an HTTP content coding.
func encode(t testing.TB, coding string, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	switch coding {
	case "gzip":
		w := gzip.NewWriter(&buf)
		w.Write(b)
		w.Close()
	case "deflate": // raw deflate, as some servers send it
		w, _ := flate.NewWriter(&buf, 5)
		w.Write(b)
		w.Close()
	case "br":
		w := brotli.NewWriter(&buf)
		w.Write(b)
		w.Close()
	case "zstd":
		w, _ := zstd.NewWriter(&buf)
		w.Write(b)
		w.Close()
	default:
		t.Fatalf("unknown coding %q", coding)
	}
	return buf.Bytes()
}

// gzipMember compresses one record as a gzip member of its own.
func gzipMember(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// warcFile is a WARC file built by a test, with the stored offset and bytes
// of each record.
type warcFile struct {
	data    []byte
	offsets []int64
	stored  [][]byte // each record's stored bytes (a member, or the plain record)
}

// buildWARC renders records plainly or as one gzip member each.
func buildWARC(recs []testRecord, gzipped bool) warcFile {
	var f warcFile
	for _, r := range recs {
		b := r.bytes()
		if gzipped {
			b = gzipMember(b)
		}
		f.offsets = append(f.offsets, int64(len(f.data)))
		f.stored = append(f.stored, b)
		f.data = append(f.data, b...)
	}
	return f
}

// pageHTML is a page in the site template, with a paragraph per text.
func pageHTML(title string, paras ...string) string {
	var b strings.Builder
	b.WriteString("<h1>" + title + "</h1>")
	for _, p := range paras {
		b.WriteString("<p>" + p + "</p>")
	}
	return sitePage(b.String(), len(title))
}

// crawl is a WARC file's worth of records of every kind, with the documents
// expected from it.
type crawl struct {
	recs []testRecord
	docs []rec // expected documents: ID (record id), Text; Line is the record number
	uris []string
}

func uuid(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }

// testCrawl builds the records: a warcinfo, requests, metadata, a revisit,
// non-HTML and non-HTTP responses, and HTML responses plain, chunked,
// compressed in each content coding, in windows-1252 and Shift_JIS, and
// labelled only by WARC-Identified-Payload-Type.
func testCrawl(t testing.TB) crawl {
	var c crawl
	add := func(r testRecord, doc bool, text string) {
		c.recs = append(c.recs, r)
		if doc {
			c.docs = append(c.docs, rec{Line: int64(len(c.recs)), ID: "<urn:uuid:" + r.id + ">", Text: text})
			c.uris = append(c.uris, r.uri)
		}
	}
	page := func(n int) (string, string) {
		h := pageHTML(fmt.Sprintf("Page %d", n), fmt.Sprintf("First paragraph of page %d &amp; more.", n), "Second paragraph, the same everywhere.")
		return h, string(AppendHTMLText(nil, []byte(h)))
	}
	resp := func(i int, uri string, http []byte, extra ...string) testRecord {
		return testRecord{typ: "response", id: uuid(i), uri: uri, ctype: "application/http; msgtype=response", extra: extra, block: http}
	}
	add(testRecord{typ: "warcinfo", id: uuid(1), ctype: "application/warc-fields", block: []byte("software: test\r\nformat: WARC File Format 1.1\r\n")}, false, "")
	add(testRecord{typ: "request", id: uuid(2), uri: "https://a.example/1", ctype: "application/http; msgtype=request", block: []byte("GET /1 HTTP/1.1\r\nHost: a.example\r\n\r\n")}, false, "")

	h, txt := page(1)
	add(resp(3, "https://a.example/1", httpResponse("200 OK", []string{"Content-Type: text/html; charset=utf-8"}, []byte(h))), true, txt)
	add(testRecord{typ: "metadata", id: uuid(4), uri: "https://a.example/1", ctype: "application/warc-fields", block: []byte("fetchTimeMs: 12\r\n")}, false, "")

	h, txt = page(2)
	add(resp(5, "https://a.example/2", httpResponse("200 OK", []string{"Content-Type: text/html", "Content-Encoding: gzip", "Transfer-Encoding: chunked"}, chunked(encode(t, "gzip", []byte(h)), 100))), true, txt)
	add(resp(6, "https://a.example/logo.png", httpResponse("200 OK", []string{"Content-Type: image/png"}, []byte("\x89PNG\r\n\x1a\n\x00\x00binary"))), false, "")

	// windows-1252, declared as ISO-8859-1 (which WHATWG maps to it).
	latin := "<p>Caf\xe9 cr\xe8me \x93quoted\x94 \x80 5</p>"
	add(resp(7, "https://a.example/fr", httpResponse("200 OK", []string{"Content-Type: text/html; charset=ISO-8859-1"}, []byte(latin))), true, "Café crème “quoted” € 5")

	// Shift_JIS, declared only in a <meta>.
	sjis, err := japanese.ShiftJIS.NewEncoder().Bytes([]byte("<html><head><meta charset=\"shift_jis\"></head><body><p>日本語のテキスト</p></body></html>"))
	if err != nil {
		t.Fatal(err)
	}
	add(resp(8, "https://a.example/ja", httpResponse("200 OK", []string{"Content-Type: text/html"}, sjis)), true, "日本語のテキスト")

	add(testRecord{typ: "revisit", id: uuid(9), uri: "https://a.example/1", ctype: "message/http", extra: []string{"WARC-Profile: http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"}, block: []byte("HTTP/1.1 200 OK\r\n\r\n")}, false, "")

	// No HTTP Content-Type: Common Crawl's detected type decides.
	h, txt = page(3)
	add(resp(10, "https://a.example/3", httpResponse("200 OK", []string{"Server: x"}, []byte(h)), "WARC-Identified-Payload-Type: text/html"), true, txt)
	add(resp(11, "dns:a.example", []byte("20240501080000\r\na.example. 300 IN A 192.0.2.1\r\n")), false, "")

	for i, coding := range []string{"br", "zstd", "deflate"} {
		h, txt = page(4 + i)
		add(resp(12+i, fmt.Sprintf("https://a.example/%d", 4+i), httpResponse("200 OK", []string{"Content-Type: application/xhtml+xml; charset=utf-8", "Content-Encoding: " + coding}, encode(t, coding, []byte(h)))), true, txt)
	}
	add(resp(15, "https://a.example/data.json", httpResponse("200 OK", []string{"Content-Type: application/json"}, []byte(`{"html":"<p>no</p>"}`))), false, "")
	// A 404 page is HTML too: statuses are not looked at.
	add(resp(16, "https://a.example/missing", httpResponse("404 Not Found", []string{"content-type: TEXT/HTML"}, []byte("<title>404</title><p>Not found</p>"))), true, "Not found")
	return c
}

// readWARCDocs reads and parses every document of the inputs: those before
// a read error too, which it returns after them.
func readWARCDocs(t testing.TB, inputs []string, opts *Options) ([]rec, []Record, Stats, error) {
	t.Helper()
	recs, st, rerr := readRecords(t, inputs, opts)
	p, err := NewParser(opts)
	if err != nil {
		t.Fatal(err)
	}
	var docs []rec
	var d Document
	for i := range recs {
		if err := p.Parse(&recs[i], &d); err != nil {
			return docs, recs, st, err
		}
		docs = append(docs, rec{File: recs[i].File, Line: recs[i].Line, Index: d.Index, ID: string(d.ID), Text: string(d.Text)})
	}
	return docs, recs, st.Add(p.Stats()), rerr
}

// errOffset extracts the offset of a RecordError, failing if err is not one
// with an offset.
func errOffset(t testing.TB, err error) (int64, int64) {
	t.Helper()
	re, ok := err.(*RecordError)
	if !ok || !re.HasOffset {
		t.Fatalf("got %v (%T); want a *RecordError with an offset", err, err)
	}
	if want := "record " + strconv.FormatInt(re.Line, 10) + " at byte " + strconv.FormatInt(re.Offset, 10); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	return re.Line, re.Offset
}
