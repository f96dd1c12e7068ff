package server

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	rtmetrics "runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestRetry: a check-and-insert repeated after it stored its document (a
// client retrying after a timeout) is answered as the first was: 200 "new",
// nothing stored again; the same id with another text or meta stays 409. A
// retried batch answers line for line as the first did; a repeat of an id
// within one batch stays an error. On every backend.
func TestRetry(t *testing.T) {
	for _, backend := range []string{"pebble", "redis", "redis-cluster"} {
		t.Run(backend, func(t *testing.T) { testRetry(t, backend) })
	}
}

func testRetry(t *testing.T, backend string) {
	ts := newTestServer(t, openIndex(t, backend, nil), nil)
	g := newTextGen(9)
	doc := Document{ID: "d1", Text: g.text(100), Meta: []byte(`{"src":"crawl"}`)}
	first := ts.post("/v1/documents", doc)
	if first.status != http.StatusCreated {
		t.Fatalf("first insert: %d %s", first.status, first.body)
	}
	before := ts.state()
	again := ts.post("/v1/documents", doc)
	if again.status != http.StatusOK || !bytes.Equal(again.body, first.body) || again.header.Get("Location") != first.header.Get("Location") {
		t.Errorf("retried insert: %d %s (Location %q); want 200 and the first answer %s (Location %q)",
			again.status, again.body, again.header.Get("Location"), first.body, first.header.Get("Location"))
	}
	if after := ts.state(); after != before {
		t.Errorf("the retry changed the index: %+v → %+v", before, after)
	}
	for _, other := range []Document{
		{ID: "d1", Text: g.text(100), Meta: doc.Meta},
		{ID: "d1", Text: doc.Text, Meta: []byte(`{"src":"other"}`)},
		{ID: "d1", Text: doc.Text},
	} {
		if r := ts.post("/v1/documents", other); r.status != http.StatusConflict || r.errorCode() != CodeDuplicateID {
			t.Errorf("same id, other text or meta (%.20s…, %s): %d %s; want 409 duplicate_id", other.Text, other.Meta, r.status, r.body)
		}
	}

	// A batch: new, a near copy of it (duplicate), new, and a repeat of the
	// first id within the batch (an error).
	a, b := g.text(100), g.text(100)
	lines := []Document{{ID: "b1", Text: a}, {ID: "b2", Text: g.variant(a, 1)}, {ID: "b3", Text: b}, {ID: "b1", Text: a}}
	var body bytes.Buffer
	for _, d := range lines {
		fmt.Fprintf(&body, `{"id":%q,"text":%q}`+"\n", d.ID, d.Text)
	}
	firstBatch := ts.call(http.MethodPost, "/v1/documents:batch", typeNDJSON, body.Bytes())
	want := []string{StatusNew, StatusDuplicate, StatusNew, StatusError}
	if got := batchStatuses(t, firstBatch); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("first batch: %v; want %v\n%s", got, want, firstBatch.body)
	}
	before = ts.state()
	retried := ts.call(http.MethodPost, "/v1/documents:batch", typeNDJSON, body.Bytes())
	if retried.status != http.StatusOK || !bytes.Equal(retried.body, firstBatch.body) {
		t.Errorf("retried batch:\n%s\nwant the first answer:\n%s", retried.body, firstBatch.body)
	}
	if after := ts.state(); after != before {
		t.Errorf("the retried batch changed the index: %+v → %+v", before, after)
	}
	if v, _ := gathered(t, ts.s.Registry(), "neardup_documents_retried_total"); v != 3 {
		t.Errorf("neardup_documents_retried_total %v; want 3 (one insert, two batch lines)", v)
	}
}

// batchStatuses returns the status of each line of a batch answer.
func batchStatuses(t *testing.T, r response) []string {
	t.Helper()
	var out []string
	for _, line := range bytes.Split(bytes.TrimSpace(r.body), []byte("\n")) {
		var res CheckResult
		r := response{body: line}
		r.decode(t, &res)
		out = append(out, res.Status)
	}
	return out
}

// TestBearerScheme: the scheme of Authorization is case-insensitive (RFC
// 7235); other schemes, a glued token and an empty one are refused.
// /metrics is open, unless MetricsAuth; MetricsAuth without tokens is
// invalid.
func TestBearerScheme(t *testing.T) {
	for _, tc := range []struct {
		header string
		ok     bool
	}{
		{"Bearer s3cret", true}, {"bearer s3cret", true}, {"BEARER s3cret", true}, {"bEaReR   s3cret ", true},
		{"Bearers3cret", false}, {"Bearer", false}, {"Bearer ", false}, {"Basic s3cret", false}, {"s3cret", false},
	} {
		token, ok := bearerToken(tc.header)
		if ok != tc.ok || ok && token != "s3cret" {
			t.Errorf("bearerToken(%q) = %q, %v; want s3cret, %v", tc.header, token, ok, tc.ok)
		}
	}
	for _, metricsAuth := range []bool{false, true} {
		ts := newTestServer(t, openIndex(t, "pebble", nil), &Options{Tokens: []string{"s3cret"}, MetricsAuth: metricsAuth})
		doc := Document{ID: "x", Text: newTextGen(1).text(40)}
		if r := ts.post("/v1/documents", doc, "Authorization", "bearer s3cret"); r.status != http.StatusCreated {
			t.Errorf("lower-case bearer: %d %s; want 201", r.status, r.body)
		}
		r := ts.call(http.MethodGet, "/metrics", "", nil)
		if want := map[bool]int{false: 200, true: 401}[metricsAuth]; r.status != want {
			t.Errorf("MetricsAuth %v: /metrics without a token: %d; want %d", metricsAuth, r.status, want)
		}
		if r := ts.call(http.MethodGet, "/metrics", "", nil, "Authorization", "BEARER s3cret"); r.status != http.StatusOK {
			t.Errorf("MetricsAuth %v: /metrics with the token: %d; want 200", metricsAuth, r.status)
		}
		if r := ts.call(http.MethodGet, "/readyz", "", nil); r.status != http.StatusOK {
			t.Errorf("/readyz needs no token: %d", r.status)
		}
	}
	if err := (&Options{MetricsAuth: true}).Validate(); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("MetricsAuth without tokens: %v; want ErrInvalidOptions", err)
	}
}

// TestLineReader: lines come out whole whatever the read sizes, the last
// may lack its newline, and a line over the limit is skipped (the next
// comes out) without being held in memory.
func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 3*lineBufSize)
	input := "a\n\n" + long + "\nb" + strings.Repeat("y", lineBufSize) + "\n" + long + "z\nlast"
	for _, chunk := range []int{1, 7, 4096, len(input)} {
		lr := newLineReader(&chunkReader{s: input, n: chunk}, len(long))
		var got []string
		for {
			l, err := lr.next()
			if errors.Is(err, io.EOF) {
				break
			}
			switch {
			case errors.Is(err, errLineTooLong):
				got = append(got, "<too long>")
			case err != nil:
				t.Fatal(err)
			default:
				got = append(got, fmt.Sprintf("%.1s%d", l, len(l)))
			}
		}
		want := []string{"a1", "0", fmt.Sprintf("x%d", len(long)), fmt.Sprintf("b%d", lineBufSize+1), "<too long>", "l4"}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("chunks of %d: %v; want %v", chunk, got, want)
		}
		if cap(lr.line) > len(long)+2*lineBufSize {
			t.Errorf("chunks of %d: a line buffer of %d bytes for a limit of %d", chunk, cap(lr.line), len(long))
		}
	}
}

// chunkReader reads s n bytes at a time.
type chunkReader struct {
	s string
	n int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.s) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.n)], r.s)
	r.s = r.s[n:]
	return n, nil
}

// linesBody is an endless chunked request body of batch lines of about
// size bytes, each a new document; it counts the bytes read from it.
type linesBody struct {
	g    *textGen
	size int
	n    int
	buf  []byte
	read atomic.Int64
}

func (b *linesBody) Read(p []byte) (int, error) {
	if len(b.buf) == 0 {
		b.n++
		b.buf = fmt.Appendf(b.buf[:0], `{"id":"big-%d","text":%q}`+"\n", b.n, b.g.text(b.size/6))
	}
	n := copy(p, b.buf)
	b.buf = b.buf[n:]
	b.read.Add(int64(n))
	return n, nil
}

// TestBatchStreams sends a chunked batch of 100 MiB (lines of 100 KB) to a
// server with the default 64 MiB batch limit: it answers 413 body_too_large
// having stored nothing, and while it reads, the live heap stays far below
// the body (it read the whole body into memory, up to the limit, before:
// the live heap then grew by 64 MiB and more).
func TestBatchStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 64 MiB")
	}
	ts := newTestServer(t, openIndex(t, "pebble", nil), &Options{MaxBatchDocs: 100000})
	before := ts.state()
	body := &linesBody{g: newTextGen(4), size: 100 << 10}
	// The live heap as of the last collection, sampled while the server
	// reads: garbage does not count, what a request holds does.
	live := func() uint64 {
		sample := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
		rtmetrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	runtime.GC()
	base := live()
	var peak atomic.Uint64
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		for {
			if v := live(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
	req, err := http.NewRequest(http.MethodPost, ts.url+"/v1/documents:batch", io.LimitReader(body, 100<<20))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", typeNDJSON)
	resp, err := http.DefaultClient.Do(req)
	close(stop)
	sampler.Wait()
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	r := response{status: resp.StatusCode, header: resp.Header, body: data}
	ts.validate(req, r)
	if r.status != http.StatusRequestEntityTooLarge || r.errorCode() != CodeBodyTooLarge || !strings.Contains(string(r.body), "nothing was stored") {
		t.Errorf("100 MiB batch: %d %s; want 413 body_too_large, nothing stored", r.status, r.body)
	}
	if after := ts.state(); after != before {
		t.Errorf("the index changed: %+v → %+v", before, after)
	}
	grew := int64(peak.Load()) - int64(base)
	t.Logf("read %d MiB of the body; the live heap grew by %d MiB at most (from %d MiB)", body.read.Load()>>20, grew>>20, base>>20)
	if grew > 16<<20 {
		t.Errorf("the live heap grew by %d MiB while the server read a 64 MiB batch; want it bounded by a line, well under 16 MiB", grew>>20)
	}
}

// TestBatchLongLine: a line longer than MaxBodyBytes is an error of its
// own; the lines around it are processed.
func TestBatchLongLine(t *testing.T) {
	ts := newTestServer(t, openIndex(t, "pebble", nil), &Options{MaxBodyBytes: 4096, MaxTextBytes: 4096})
	g := newTextGen(6)
	var body bytes.Buffer
	fmt.Fprintf(&body, `{"id":"a","text":%q}`+"\n", g.text(50))
	fmt.Fprintf(&body, `{"id":"long","text":%q}`+"\n", strings.Repeat("word ", 2000))
	fmt.Fprintf(&body, `{"id":"b","text":%q}`, g.text(50))
	r := ts.call(http.MethodPost, "/v1/documents:batch", typeNDJSON, body.Bytes())
	sc := bufio.NewScanner(bytes.NewReader(r.body))
	var got []string
	for sc.Scan() {
		var res CheckResult
		(&response{body: sc.Bytes()}).decode(t, &res)
		s := res.Status
		if res.Error != nil {
			s += ":" + res.Error.Code + fmt.Sprintf("@%d", res.Line)
		}
		got = append(got, s)
	}
	if want := "new error:body_too_large@2 new"; r.status != 200 || strings.Join(got, " ") != want {
		t.Errorf("batch with a long line: %d %v; want %s", r.status, got, want)
	}
}
