package corpus_test

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strconv"

	"github.com/neardup/neardup/corpus"
)

// Extract the visible text of a page: one line a block, without the
// navigation, the scripts and the hidden parts.
func ExampleAppendHTMLText() {
	page := `<html><head><title>Site | Page</title><script>track()</script></head>
<body><nav><a href="/">Home</a> <a href="/news">News</a></nav>
<article><h1>A  headline</h1><p>First&nbsp;paragraph, <b>bold</b> words.</p>
<p hidden>A hidden note.</p><ul><li>one</li><li>two</li></ul></article>
<footer>&copy; 2024 Site</footer></body></html>`
	fmt.Println(string(corpus.AppendHTMLText(nil, []byte(page))))
	// Output:
	// A headline
	// First paragraph, bold words.
	// one
	// two
}

// warcRecord renders one WARC record.
func warcRecord(typ, id, uri, block string) string {
	return "WARC/1.1\r\nWARC-Type: " + typ + "\r\nWARC-Record-ID: <urn:uuid:" + id + ">\r\n" +
		"WARC-Target-URI: " + uri + "\r\nContent-Length: " + strconv.Itoa(len(block)) + "\r\n\r\n" + block + "\r\n\r\n"
}

// Read the HTML pages of a WARC file as documents, identified by their URI.
// Records that are not HTML responses are counted as skipped.
func ExampleNewReader_warc() {
	dir, err := os.MkdirTemp("", "corpus-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "crawl.warc") // or crawl.warc.gz, gzip per record
	warc := warcRecord("warcinfo", "1", "", "software: example\r\n") +
		warcRecord("request", "2", "https://example.com/", "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n") +
		warcRecord("response", "3", "https://example.com/", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<h1>Hello</h1><p>World.</p>") +
		warcRecord("response", "4", "https://example.com/logo.png", "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n\x89PNG")
	if err := os.WriteFile(path, []byte(warc), 0o644); err != nil {
		log.Fatal(err)
	}

	opts := &corpus.Options{IDField: corpus.IDFieldURI}
	r, err := corpus.NewReader([]string{path}, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	p, err := corpus.NewParser(opts)
	if err != nil {
		log.Fatal(err)
	}
	var (
		batch corpus.Batch
		doc   corpus.Document
	)
	for {
		if err := r.Next(&batch); err == io.EOF {
			break
		} else if err != nil {
			log.Fatal(err)
		}
		for i := range batch.Records {
			rec := &batch.Records[i]
			if err := p.Parse(rec, &doc); err != nil {
				log.Fatal(err)
			}
			fmt.Printf("#%d record %d at byte %d: %s %q\n", doc.Index, rec.Line, rec.Offset, doc.ID, doc.Text)
		}
	}
	st := r.Stats()
	fmt.Println(st.Records, "document,", st.Skipped, "records skipped")
	fmt.Println(must(corpus.KeptExtension([]string{path}, opts))) // the kept records of WARC input
	// Output:
	// #0 record 3 at byte 287: https://example.com/ "Hello\nWorld."
	// 1 document, 3 records skipped
	// .warc.gz
}

func must(s string, err error) string {
	if err != nil {
		log.Fatal(err)
	}
	return s
}
