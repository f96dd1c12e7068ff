package job_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/beam/job"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/internal/boilerplate"
	"github.com/neardup/neardup/internal/sitetemplate"
)

// articles returns the ids and texts of the first n bundled articles (all
// for n ≤ 0).
func articles(t *testing.T, n int) (ids, texts []string) {
	t.Helper()
	data, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var d struct{ ID, Text string }
		if err := json.Unmarshal(l, &d); err != nil {
			t.Fatal(err)
		}
		ids, texts = append(ids, d.ID), append(texts, d.Text)
		if len(ids) == n {
			break
		}
	}
	return ids, texts
}

// writeJSONL writes documents {"id", "text"} to path.
func writeJSONL(t *testing.T, path string, ids, texts []string) {
	t.Helper()
	var lines [][]byte
	for i := range ids {
		b, err := json.Marshal(map[string]string{"id": ids[i], "text": texts[i]})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, b)
	}
	writeLines(t, path, lines)
}

// TestExactPassOutputs: neardup dedup with its exact-duplicate pass (the
// default) and the Beam job, which has none and signs every document, write
// the same pairs, clusters and kept records.
func TestExactPassOutputs(t *testing.T) {
	good, _ := mixed(t)
	ctx := context.Background()
	want, got := t.TempDir(), t.TempDir()
	rep, err := dedup.Run(ctx, good, want, &dedup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Counts.ExactDuplicates < 25 || !rep.Config.ExactPass {
		t.Fatalf("neardup dedup found %d exact duplicates (pass %v); want at least the 25 planted copies", rep.Counts.ExactDuplicates, rep.Config.ExactPass)
	}
	grep, err := job.Run(ctx, good, got, &job.Options{Dedup: &dedup.Options{}, Run: runPrism, SingleFile: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range outputs {
		if w, g := read(t, want, name), read(t, got, name); !bytes.Equal(w, g) {
			t.Errorf("%s differs from neardup dedup's with the exact pass:\n%s", name, firstDiff(w, g))
		}
	}
	if grep.Config.ExactPass || grep.Counts.ExactDuplicates != 0 {
		t.Errorf("the Beam job reports exact_pass %v, %d exact duplicates; want false, 0", grep.Config.ExactPass, grep.Counts.ExactDuplicates)
	}
}

// TestBoilerplateLines: the bundled articles wrapped in one site template.
// neardup dedup --boilerplate auto finds the template's lines and writes
// boilerplate.tsv; the Beam job given that file with --boilerplate-lines
// drops the same lines and writes the same outputs and report as neardup
// dedup given it, and the same pairs and clusters as the auto run: the 10
// labelled pairs. --boilerplate auto or N is refused with a message
// pointing to the lines file.
func TestBoilerplateLines(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 pages of 4 kB: about 10 s")
	}
	ids, texts := articles(t, 0)
	for i := range texts {
		texts[i] = sitetemplate.Wrap(texts[i])
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "site.jsonl")
	writeJSONL(t, in, ids, texts)
	ctx := context.Background()
	auto := t.TempDir()
	autoRep, err := dedup.Run(ctx, []string{in}, auto, &dedup.Options{Threshold: 0.5, Boilerplate: dedup.BoilerplateAuto})
	if err != nil {
		t.Fatal(err)
	}
	if c := autoRep.Counts; c.VerifiedPairs != 10 || autoRep.Boilerplate == nil || autoRep.Boilerplate.Lines == 0 {
		t.Fatalf("neardup dedup --boilerplate auto: %d pairs, boilerplate %+v; want the 10 labelled pairs and the template's lines", c.VerifiedPairs, autoRep.Boilerplate)
	}
	lines := filepath.Join(auto, boilerplate.FileName)
	want, got, wr, gr := run(t, []string{in}, &dedup.Options{Threshold: 0.5, BoilerplateLines: lines}, job.Options{ShardLines: 4, Partitions: 4})
	compare(t, want, got, wr, gr)
	if gr.Config.Spec != autoRep.Config.Spec || gr.Boilerplate == nil || gr.Boilerplate.Lines != autoRep.Boilerplate.Lines {
		t.Errorf("the Beam job's spec %q, boilerplate %+v; want %q and the %d lines of the auto run", gr.Config.Spec, gr.Boilerplate, autoRep.Config.Spec, autoRep.Boilerplate.Lines)
	}
	for _, name := range []string{dedup.PairsFile, dedup.ClustersFile} {
		if w, g := read(t, auto, name), read(t, got, name); !bytes.Equal(w, g) {
			t.Errorf("%s differs from that of neardup dedup --boilerplate auto:\n%s", name, firstDiff(w, g))
		}
	}

	for _, mode := range []dedup.BoilerplateMode{dedup.BoilerplateAuto, 3} {
		o := job.Options{Dedup: &dedup.Options{Boilerplate: mode}, Run: runPrism}
		_, err := job.Run(ctx, []string{in}, t.TempDir(), &o)
		if !errors.Is(err, dedup.ErrInvalidOptions) || !strings.Contains(err.Error(), "--boilerplate-lines") {
			t.Errorf("--boilerplate %s: err = %v; want ErrInvalidOptions pointing to --boilerplate-lines", mode, err)
		}
	}
}

// warcRecord renders one WARC/1.1 record.
func warcRecord(typ, id, uri, ctype string, block []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "WARC/1.1\r\nWARC-Type: %s\r\nWARC-Record-ID: <urn:uuid:%s>\r\nWARC-Date: 2024-05-01T08:00:00Z\r\n", typ, id)
	if uri != "" {
		fmt.Fprintf(&b, "WARC-Target-URI: %s\r\n", uri)
	}
	fmt.Fprintf(&b, "Content-Type: %s\r\nContent-Length: %d\r\n\r\n", ctype, len(block))
	b.Write(block)
	b.WriteString("\r\n\r\n")
	return b.Bytes()
}

// member compresses one record as a gzip member of its own, as Common Crawl
// does.
func member(rec []byte) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(rec)
	w.Close()
	return b.Bytes()
}

// page renders text (paragraphs a line) as an HTML page with a head, a
// script, navigation and a footer, which extraction drops.
func page(text string) []byte {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><title>Ledger</title><script>var x = "<p>no</p>";</script></head><body>`)
	b.WriteString(`<nav><ul><li>Home</li><li>World</li></ul></nav><main>`)
	for _, p := range strings.Split(text, "\n") {
		fmt.Fprintf(&b, "<p>%s</p>\n", p)
	}
	b.WriteString(`</main><footer>© The Daily Ledger</footer></body></html>`)
	return []byte(b.String())
}

// crawlTexts returns n documents' ids (URIs) and texts: articles, near
// duplicates (a few words changed) and exact copies of some of them.
func crawlTexts(t *testing.T, n int) (uris, texts []string) {
	t.Helper()
	_, arts := articles(t, n)
	for i, a := range arts {
		uris, texts = append(uris, fmt.Sprintf("https://example.org/news/%d", i)), append(texts, a)
		switch i % 7 {
		case 2:
			uris, texts = append(uris, fmt.Sprintf("https://mirror.example.net/near/%d", i)), append(texts, strings.Replace(a, " the ", " a ", 2))
		case 4:
			uris, texts = append(uris, fmt.Sprintf("https://mirror.example.net/copy/%d", i)), append(texts, a)
		}
	}
	return uris, texts
}

// writeWARC writes documents as Common Crawl lays them out: a warcinfo
// record, then for each a request, a response of HTML (or, for wet, a
// conversion record of the text) and a metadata record, one gzip member a
// record. With truncated, the file ends in the first half of one more
// record's member.
func writeWARC(t *testing.T, path string, uris, texts []string, first int, wet, truncated bool) {
	t.Helper()
	var data []byte
	data = append(data, member(warcRecord("warcinfo", fmt.Sprintf("00000000-0000-4000-8000-%012d", first), "", "application/warc-fields", []byte("software: neardup-test\r\n")))...)
	for i := range uris {
		id := fmt.Sprintf("00000000-0000-4000-8001-%012d", first+i)
		if wet {
			data = append(data, member(warcRecord("conversion", id, uris[i], "text/plain", []byte(texts[i])))...)
			continue
		}
		data = append(data, member(warcRecord("request", "1"+id[1:], uris[i], "application/http; msgtype=request", []byte("GET / HTTP/1.1\r\n\r\n")))...)
		body := page(texts[i])
		resp := append([]byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n\r\n", len(body))), body...)
		data = append(data, member(warcRecord("response", id, uris[i], "application/http; msgtype=response", resp))...)
		data = append(data, member(warcRecord("metadata", "2"+id[1:], uris[i], "application/warc-fields", []byte("fetchTimeMs: 12\r\n")))...)
	}
	if truncated {
		m := member(warcRecord("response", "ffffffff-0000-4000-8000-000000000000", "https://example.org/cut", "application/http; msgtype=response", page(texts[0])))
		data = append(data, m[:len(m)/2]...)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWARCSplits: Common Crawl-style .warc.gz and .wet.gz files as splits.
// The Beam job reads responses (their extracted text) or conversion
// records, names them by URI or record id, counts the other records as
// skipped and a truncated last record as bad (under --skip-bad), and writes
// kept.warc.gz (kept.warc.wet.gz) — the kept records' gzip members byte for
// byte — with the same pairs, clusters and report as neardup dedup, as
// single files and as shards.
func TestWARCSplits(t *testing.T) {
	uris, texts := crawlTexts(t, 60)
	dir := t.TempDir()
	half := len(uris) / 2
	warcs := []string{filepath.Join(dir, "a.warc.gz"), filepath.Join(dir, "b.warc.gz")}
	writeWARC(t, warcs[0], uris[:half], texts[:half], 0, false, true)
	writeWARC(t, warcs[1], uris[half:], texts[half:], half, false, true)
	wet := filepath.Join(dir, "c.wet.gz")
	writeWARC(t, wet, uris, texts, 0, true, false)
	cases := []struct {
		name   string
		inputs []string
		kept   string
		opts   dedup.Options
		o      job.Options
	}{
		{"warc-uri-single", warcs, "kept.warc.gz", dedup.Options{Corpus: corpus.Options{IDField: "uri", SkipBad: true}}, job.Options{SingleFile: true}},
		{"warc-record-id-sharded", warcs, "kept.warc.gz", dedup.Options{Corpus: corpus.Options{SkipBad: true}, Threshold: 0.7}, job.Options{ShardLines: 2, Partitions: 2}},
		{"wet-uri-sharded", []string{wet}, "kept.warc.wet.gz", dedup.Options{Corpus: corpus.Options{IDField: "uri"}}, job.Options{ShardLines: 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, got, wr, gr := run(t, c.inputs, &c.opts, c.o)
			compare(t, want, got, wr, gr)
			if _, err := os.Stat(filepath.Join(want, c.kept)); err != nil {
				t.Errorf("neardup dedup wrote no %s: %v", c.kept, err)
			}
			if _, err := os.Stat(filepath.Join(got, dedup.KeptFile)); err == nil {
				t.Errorf("%s written for WARC input", dedup.KeptFile)
			}
			cnt := gr.Counts
			wantBad := int64(0)
			if c.opts.Corpus.SkipBad {
				wantBad = 2 // the truncated record of each file
			}
			if cnt.Removed == 0 || cnt.Bad != wantBad || cnt.Documents != int64(len(uris))+wantBad {
				t.Errorf("counts %+v; want %d documents, %d bad, some removed", cnt, len(uris), wantBad)
			}
			if strings.HasPrefix(c.name, "warc") && cnt.Skipped != int64(2*len(uris)+2) {
				t.Errorf("%d records skipped; want the %d requests and metadata records and 2 warcinfo", cnt.Skipped, 2*len(uris)+2)
			}
		})
	}
}

// TestHTML: --html on JSONL whose texts are HTML pages: the Beam job
// shingles the visible text as neardup dedup does (the same outputs), and
// finds the near duplicates and copies of the plain texts.
func TestHTML(t *testing.T) {
	uris, texts := crawlTexts(t, 60)
	var pages []string
	for _, s := range texts {
		pages = append(pages, string(page(s)))
	}
	dir := t.TempDir()
	html, plain := filepath.Join(dir, "pages.jsonl"), filepath.Join(dir, "plain.jsonl")
	writeJSONL(t, html, uris, pages)
	writeJSONL(t, plain, uris, texts)
	want, got, wr, gr := run(t, []string{html}, &dedup.Options{Corpus: corpus.Options{HTML: true}}, job.Options{SingleFile: true})
	compare(t, want, got, wr, gr)
	// The pairs of the pages are those of their texts.
	plainOut := t.TempDir()
	if _, err := dedup.Run(context.Background(), []string{plain}, plainOut, &dedup.Options{}); err != nil {
		t.Fatal(err)
	}
	if w, g := read(t, plainOut, dedup.PairsFile), read(t, got, dedup.PairsFile); !bytes.Equal(w, g) || len(g) == 0 {
		t.Errorf("pairs of the HTML pages:\n%s\nwant those of their texts:\n%s", g, w)
	}
}
