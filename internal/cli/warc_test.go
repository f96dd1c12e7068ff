package cli

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/shingle"
)

// A WARC writer for the end-to-end tests: Common Crawl's layout, one gzip
// member a record, with a warcinfo record and, for each page, a request,
// its response and a metadata record.

// warcRecord renders one WARC/1.1 record.
func warcRecord(typ, id, uri, ctype string, block []byte, extra ...string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "WARC/1.1\r\nWARC-Type: %s\r\nWARC-Record-ID: <urn:uuid:%s>\r\nWARC-Date: 2024-05-01T08:00:00Z\r\n", typ, id)
	if uri != "" {
		fmt.Fprintf(&b, "WARC-Target-URI: %s\r\n", uri)
	}
	for _, e := range extra {
		b.WriteString(e + "\r\n")
	}
	fmt.Fprintf(&b, "Content-Type: %s\r\nContent-Length: %d\r\n\r\n", ctype, len(block))
	b.Write(block)
	b.WriteString("\r\n\r\n")
	return b.Bytes()
}

// member compresses one record as a gzip member of its own.
func member(rec []byte) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(rec)
	w.Close()
	return b.Bytes()
}

// crawlPage is one page of the test crawl: its URI, the paragraphs of its
// own text, and whether the server gzips it.
type crawlPage struct {
	uri   string
	paras []string
	gzip  bool
}

// html renders the page inside a site's markup: a head, scripts and
// styles, a navigation menu, a header and a footer, which extraction drops.
func (p crawlPage) html() []byte {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><title>Ledger</title><style>body{margin:0}</style><script>var x = "<p>not text</p>";</script></head><body>`)
	b.WriteString(`<header><a href="/">The Daily Ledger</a></header><nav><ul><li>Home</li><li>World</li><li>Sport</li></ul></nav><main><article>`)
	for _, para := range p.paras {
		fmt.Fprintf(&b, "<p>%s</p>\n", para)
	}
	b.WriteString(`</article></main><footer>© The Daily Ledger · Privacy · Cookies</footer><script>track();</script></body></html>`)
	return []byte(b.String())
}

// response renders the page's HTTP response.
func (p crawlPage) response() []byte {
	body := p.html()
	headers := "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
	if p.gzip {
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		w.Write(body)
		w.Close()
		body = z.Bytes()
		headers += "Content-Encoding: gzip\r\n"
	}
	return append([]byte(headers+fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body))), body...)
}

// crawl is a WARC file and what each of its document records is.
type crawl struct {
	data     []byte
	members  [][]byte // every record's gzip member, in order
	docs     []int    // for each document (response), its record number (0-based)
	pages    []crawlPage
	warcinfo int
}

// writeCrawl lays pages out as Common Crawl does.
func writeCrawl(pages []crawlPage) *crawl {
	c := &crawl{pages: pages}
	add := func(rec []byte) {
		m := member(rec)
		c.members = append(c.members, m)
		c.data = append(c.data, m...)
	}
	add(warcRecord("warcinfo", "00000000-0000-4000-8000-000000000000", "", "application/warc-fields", []byte("software: neardup-test\r\n")))
	c.warcinfo = 1
	for i, p := range pages {
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1)
		add(warcRecord("request", "1"+id[1:], p.uri, "application/http; msgtype=request", []byte("GET / HTTP/1.1\r\nHost: example.org\r\n\r\n")))
		c.docs = append(c.docs, len(c.members))
		add(warcRecord("response", id, p.uri, "application/http; msgtype=response", p.response(), "WARC-Identified-Payload-Type: text/html"))
		add(warcRecord("metadata", "2"+id[1:], p.uri, "application/warc-fields", []byte("fetchTimeMs: 12\r\n")))
	}
	return c
}

// testCrawlPages are pages of articles: a near duplicate of page 0 (two
// words changed), an exact copy of page 1's text under another URI and
// other markup (gzipped), and distinct pages.
func testCrawlPages(t *testing.T) []crawlPage {
	arts := readArticles(t, 12)
	split := func(s string) []string { // three paragraphs
		w := strings.Fields(s)
		n := len(w) / 3
		return []string{strings.Join(w[:n], " "), strings.Join(w[n:2*n], " "), strings.Join(w[2*n:], " ")}
	}
	var pages []crawlPage
	for i, a := range arts {
		pages = append(pages, crawlPage{uri: fmt.Sprintf("https://example.org/news/%d", i), paras: split(a), gzip: i%3 == 0})
	}
	near := slices.Clone(pages[0].paras)
	near[1] = strings.Replace(near[1], " the ", " a ", 2)
	pages = append(pages,
		crawlPage{uri: "https://mirror.example.net/a/0", paras: near},
		crawlPage{uri: "https://mirror.example.net/a/1", paras: pages[1].paras, gzip: true})
	return pages
}

// readArticles returns the texts of the first n bundled articles.
func readArticles(t *testing.T, n int) []string {
	data, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.SplitN(string(data), "\n", n+1)[:n] {
		var d struct{ Text string }
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d.Text)
	}
	return out
}

// readWARCDocs reads the documents of a WARC file: ids and texts.
func readWARCDocs(t *testing.T, path, idField string) (ids, texts []string) {
	t.Helper()
	o := &corpus.Options{IDField: idField}
	r, err := corpus.NewReader([]string{path}, o)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := corpus.NewParser(o)
	if err != nil {
		t.Fatal(err)
	}
	var b corpus.Batch
	var d corpus.Document
	for {
		err := r.Next(&b)
		if errors.Is(err, io.EOF) {
			return ids, texts
		}
		if err != nil {
			t.Fatal(err)
		}
		for i := range b.Records {
			if err := p.Parse(&b.Records[i], &d); err != nil {
				t.Fatal(err)
			}
			ids, texts = append(ids, string(d.ID)), append(texts, string(d.Text))
		}
	}
}

// TestDedupWARC reads a Common Crawl-style .warc.gz end to end through
// neardup dedup: the responses are the documents, named by their URIs; the
// other records are counted as skipped; the texts are the pages' own
// paragraphs (the Jaccard similarity of the near-duplicate pair in
// pairs.tsv is that of the paragraphs alone); the exact copy under another
// URI is found by the exact pass; kept.warc.gz holds the kept responses'
// gzip members byte for byte.
func TestDedupWARC(t *testing.T) {
	pages := testCrawlPages(t)
	c := writeCrawl(pages)
	dir := t.TempDir()
	in := filepath.Join(dir, "crawl.warc.gz")
	if err := os.WriteFile(in, c.data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, "", "dedup", "-q", "--id-field", "uri", "--threshold", "0.7", "-o", out, in)
	if code != ExitOK {
		t.Fatalf("dedup: exit %d: %s", code, stderr)
	}
	n := len(pages)
	skipped := len(c.members) - n
	if want := fmt.Sprintf("documents %d (empty 0, bad 0, exact copies 1, %d WARC records not documents)", n, skipped); !strings.Contains(stdout, want) {
		t.Errorf("summary %q; want %q", stdout, want)
	}
	var rep struct {
		Counts struct {
			Documents, Skipped, ExactDuplicates, Removed, Kept int64
		} `json:"counts"`
	}
	data, _ := os.ReadFile(filepath.Join(out, "report.json"))
	if err := json.Unmarshal(bytes.ReplaceAll(data, []byte("exact_duplicates"), []byte("ExactDuplicates")), &rep); err != nil {
		t.Fatal(err)
	}
	if c := rep.Counts; c.Documents != int64(n) || c.Skipped != int64(skipped) || c.ExactDuplicates != 1 || c.Removed != 2 || c.Kept != int64(n-2) {
		t.Errorf("report counts %+v; want %d documents, %d skipped, 1 exact duplicate, 2 removed, %d kept", c, n, skipped, n-2)
	}

	// pairs.tsv: the URIs, and for the near duplicate the Jaccard
	// similarity of the paragraphs alone (the markup, scripts, navigation
	// and footer dropped; paragraphs one a line).
	pairs, _ := os.ReadFile(filepath.Join(out, "pairs.tsv"))
	set := func(paras []string) []uint64 {
		f := shingle.MustNew(shingle.Prose).AppendFeatures(nil, []byte(strings.Join(paras, "\n")))
		slices.Sort(f)
		return slices.Compact(f)
	}
	j := eval.Jaccard(set(pages[0].paras), set(pages[n-2].paras))
	want := fmt.Sprintf("https://example.org/news/0\thttps://mirror.example.net/a/0\t%s\t%.6f\n", "", j)
	wantCopy := "https://example.org/news/1\thttps://mirror.example.net/a/1\t1.000000\t1.000000\n"
	lines := strings.SplitAfter(string(pairs), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "https://example.org/news/0\thttps://mirror.example.net/a/0\t") ||
		!strings.HasSuffix(lines[0], want[strings.LastIndexByte(want[:len(want)-1], '\t'):]) || lines[1] != wantCopy {
		t.Errorf("pairs.tsv:\n%s\nwant the near duplicate at J = %.6f and the copy:\n%s", pairs, j, wantCopy)
	}

	// kept.warc.gz: the kept responses' members, byte for byte, in order.
	if _, err := os.Stat(filepath.Join(out, "kept.jsonl")); err == nil {
		t.Error("kept.jsonl written for WARC input")
	}
	kept, err := os.ReadFile(filepath.Join(out, "kept.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	var wantKept []byte
	for d, rec := range c.docs {
		if d != n-2 && d != n-1 { // the near duplicate and the copy are removed
			wantKept = append(wantKept, c.members[rec]...)
		}
	}
	if !bytes.Equal(kept, wantKept) {
		t.Errorf("kept.warc.gz: %d bytes; want the %d kept members, %d bytes", len(kept), n-2, len(wantKept))
	}
	// Read back, the kept records have the ids and texts of the originals.
	keptIDs, keptTexts := readWARCDocs(t, filepath.Join(out, "kept.warc.gz"), "uri")
	allIDs, allTexts := readWARCDocs(t, in, "uri")
	if !slices.Equal(keptIDs, allIDs[:n-2]) || !slices.Equal(keptTexts, allTexts[:n-2]) {
		t.Errorf("kept.warc.gz reads back to ids %q", keptIDs)
	}
	for i, text := range allTexts {
		if want := strings.Join(pages[i].paras, "\n"); strings.TrimSpace(text) != want {
			t.Errorf("page %d extracted as %q; want its paragraphs %q", i, trunc(text), trunc(want))
		}
	}
	// Record ids by default.
	if ids, _ := readWARCDocs(t, in, ""); !strings.HasPrefix(ids[0], "<urn:uuid:00000000-0000-4000-8000-") {
		t.Errorf("default id %q; want the WARC-Record-ID", ids[0])
	}
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// TestDedupWARCBadRecords: a corrupted gzip member and a record cut short
// at the end of the file fail the run, naming the file, the record and its
// byte offset; with --skip-bad they are counted as bad (in the summary and
// report.json), never dropped silently, and the rest is deduplicated.
func TestDedupWARCBadRecords(t *testing.T) {
	pages := testCrawlPages(t)
	c := writeCrawl(pages)
	// Corrupt the deflate data of the third page's response, and cut the
	// last member (the last page's metadata record) short.
	var data []byte
	var offset int
	bad := c.docs[2]
	for i, m := range c.members {
		m = slices.Clone(m)
		if i == bad {
			offset = len(data)
			for k := len(m) / 3; k < len(m)/3+8; k++ {
				m[k] ^= 0x55
			}
		}
		if i == len(c.members)-1 {
			m = m[:len(m)/2]
		}
		data = append(data, m...)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "bad.warc.gz")
	os.WriteFile(in, data, 0o644)

	code, _, stderr := runCLI(t, "", "dedup", "-q", "-o", filepath.Join(dir, "out1"), in)
	if code != ExitFailure || !strings.Contains(stderr, in) || !strings.Contains(stderr, fmt.Sprintf("record %d at byte %d", bad+1, offset)) {
		t.Errorf("without --skip-bad: exit %d, %q; want exit 1 naming %s, record %d at byte %d", code, stderr, in, bad+1, offset)
	}
	out := filepath.Join(dir, "out2")
	code, stdout, stderr := runCLI(t, "", "dedup", "-q", "--skip-bad", "--id-field", "uri", "-o", out, in)
	if code != ExitOK {
		t.Fatalf("with --skip-bad: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "bad 2,") {
		t.Errorf("summary %q; want 2 bad records", stdout)
	}
	data, _ = os.ReadFile(filepath.Join(out, "report.json"))
	var rep struct {
		Counts struct{ Documents, Bad, Removed int64 } `json:"counts"`
	}
	json.Unmarshal(data, &rep)
	if rep.Counts.Bad != 2 || rep.Counts.Removed != 2 {
		t.Errorf("report counts %+v; want 2 bad, the near duplicate and the copy removed", rep.Counts)
	}
}

// TestDedupWET: a Common Crawl WET file (conversion records of plain
// text) through neardup dedup: record ids, the texts as they are, the
// kept members byte for byte.
func TestDedupWET(t *testing.T) {
	arts := readArticles(t, 6)
	texts := append(slices.Clone(arts), strings.Replace(arts[2], " the ", " a ", 1), strings.ToUpper(arts[4]))
	var members [][]byte
	var data []byte
	add := func(rec []byte) {
		m := member(rec)
		members, data = append(members, m), append(data, m...)
	}
	add(warcRecord("warcinfo", "00000000-0000-4000-8000-000000000000", "", "application/warc-fields", []byte("isPartOf: test\r\n")))
	for i, text := range texts {
		add(warcRecord("conversion", fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1), fmt.Sprintf("https://example.org/%d", i),
			"text/plain", []byte(text), "WARC-Refers-To: <urn:uuid:1>"))
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "crawl.warc.wet.gz")
	os.WriteFile(in, data, 0o644)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, "", "dedup", "-q", "-o", out, in)
	if code != ExitOK || !strings.Contains(stdout, "documents 8 (empty 0, bad 0, exact copies 1, 1 WARC records not documents)") {
		t.Fatalf("dedup: exit %d\n%s%s", code, stdout, stderr)
	}
	pairs, _ := os.ReadFile(filepath.Join(out, "pairs.tsv"))
	want := "<urn:uuid:00000000-0000-4000-8000-000000000003>\t<urn:uuid:00000000-0000-4000-8000-000000000007>\t"
	wantCopy := "<urn:uuid:00000000-0000-4000-8000-000000000005>\t<urn:uuid:00000000-0000-4000-8000-000000000008>\t1.000000\t1.000000\n"
	if lines := strings.SplitAfter(string(pairs), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[0], want) || lines[1] != wantCopy {
		t.Errorf("pairs.tsv:\n%s", pairs)
	}
	// kept.warc.wet.gz, so that it reads back as WET.
	kept, _ := os.ReadFile(filepath.Join(out, "kept.warc.wet.gz"))
	if want := bytes.Join(members[1:7], nil); !bytes.Equal(kept, want) {
		t.Errorf("kept.warc.wet.gz: %d bytes; want the 6 first conversion members, %d bytes", len(kept), len(want))
	}
	if _, keptTexts := readWARCDocs(t, filepath.Join(out, "kept.warc.wet.gz"), ""); !slices.Equal(keptTexts, texts[:6]) {
		t.Error("kept.warc.wet.gz does not read back to the kept texts")
	}
}
