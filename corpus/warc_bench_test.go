package corpus

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/internal/cputime"
)

// benchCrawl lays the site pages of benchPages out as a crawler does: for
// each page a request, an HTML response and a metadata record, as in a
// Common Crawl WARC file. It returns the records and their size uncompressed.
func benchCrawl(b *testing.B) ([]testRecord, int64) {
	b.Helper()
	var site []byte
	for _, p := range benchPages(b) {
		if p.name == "site" {
			site = p.html
		}
	}
	if site == nil {
		b.Skip("no site pages")
	}
	var recs []testRecord
	var size int64
	for i, page := range splitPages(site) {
		uri := fmt.Sprintf("https://news.example.com/world/story-%d", i)
		for _, r := range []testRecord{
			{typ: "request", id: uuid(3 * i), uri: uri, ctype: "application/http; msgtype=request",
				block: []byte("GET /world/story HTTP/1.1\r\nHost: news.example.com\r\nUser-Agent: CCBot/2.0\r\nAccept: text/html\r\n\r\n")},
			{typ: "response", id: uuid(3*i + 1), uri: uri, ctype: "application/http; msgtype=response",
				extra: []string{"WARC-Identified-Payload-Type: text/html", "WARC-IP-Address: 192.0.2.1"},
				block: httpResponse("200 OK", []string{"Date: Wed, 01 May 2024 08:00:00 GMT", "Server: nginx", "Content-Type: text/html; charset=utf-8",
					"Cache-Control: max-age=60", "Set-Cookie: session=abc123; Path=/; HttpOnly"}, page)},
			{typ: "metadata", id: uuid(3*i + 2), uri: uri, ctype: "application/warc-fields",
				block: []byte("fetchTimeMs: 120\r\ncharset-detected: UTF-8\r\nlanguages-cld2: {\"reliable\":true,\"languages\":[{\"code\":\"en\"}]}\r\n")},
		} {
			recs = append(recs, r)
			size += int64(len(r.bytes()))
		}
	}
	return recs, size
}

// BenchmarkReadWARC measures reading WARC files of HTML pages, in bytes of
// uncompressed WARC a second: the Reader alone (framing, gzip, telling
// documents from other records) and the Reader and a Parser on one
// goroutine (also the HTTP decoding and the HTML extraction), for gzip per
// record and plain files.
func BenchmarkReadWARC(b *testing.B) {
	recs, size := benchCrawl(b)
	dir := b.TempDir()
	for _, layout := range []string{"gzip", "plain"} {
		path := filepath.Join(dir, "crawl.warc")
		if layout == "gzip" {
			path += ".gz"
		}
		if err := os.WriteFile(path, buildWARC(recs, layout == "gzip").data, 0o644); err != nil {
			b.Fatal(err)
		}
		for _, stage := range []string{"reader", "parse"} {
			b.Run(layout+"/"+stage, func(b *testing.B) {
				p, _ := NewParser(nil)
				var batch Batch
				var doc Document
				b.SetBytes(size)
				b.ReportAllocs()
				c0 := cputime.Process()
				for b.Loop() {
					r, err := NewReader([]string{path}, nil)
					if err != nil {
						b.Fatal(err)
					}
					for {
						err := r.Next(&batch)
						if err == io.EOF {
							break
						}
						if err != nil {
							b.Fatal(err)
						}
						if stage == "parse" {
							for i := range batch.Records {
								if err := p.Parse(&batch.Records[i], &doc); err != nil {
									b.Fatal(err)
								}
							}
						}
					}
					r.Close()
				}
				cputime.ReportThroughput(b, size, cputime.Process()-c0)
			})
		}
	}
}
