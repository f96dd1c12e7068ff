package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/minhash"
)

func TestAPI(t *testing.T) {
	for _, backend := range []string{"pebble", "redis", "redis-cluster"} {
		t.Run(backend, func(t *testing.T) { testAPI(t, backend) })
	}
}

func testAPI(t *testing.T, backend string) {
	ts := newTestServer(t, openIndex(t, backend, nil), nil)
	g := newTextGen(1)
	a := g.text(200)

	// A new document is stored: 201 with its location.
	r := ts.post("/v1/documents", Document{ID: "doc/a 1", Text: a, Meta: json.RawMessage(`{"url": "http://a", "n": 1}`)})
	var res CheckResult
	r.decode(t, &res)
	if r.status != http.StatusCreated || res.Status != StatusNew || len(res.Duplicates) != 0 || res.ID != "doc/a 1" {
		t.Fatalf("insert: %d %s; want 201 new", r.status, r.body)
	}
	if loc := r.header.Get("Location"); loc != "/v1/documents/doc%2Fa%201" {
		t.Errorf("Location %q", loc)
	}
	// A near copy: 200 duplicate, with the stored document's metadata.
	r = ts.post("/v1/documents", Document{ID: "b", Text: g.variant(a, 1)})
	r.decode(t, &res)
	if r.status != http.StatusOK || res.Status != StatusDuplicate || len(res.Duplicates) != 1 || res.Duplicates[0].ID != "doc/a 1" ||
		string(res.Duplicates[0].Meta) != `{"url":"http://a","n":1}` || res.Duplicates[0].Similarity < 0.85 {
		t.Fatalf("near copy: %d %s; want 200 duplicate of doc/a 1 with its meta", r.status, r.body)
	}
	// Check stores nothing, and never matches the document's own id.
	before := ts.state()
	r = ts.post("/v1/check", Document{Text: g.text(200)})
	r.decode(t, &res)
	if r.status != http.StatusOK || res.Status != StatusNew || res.Duplicates == nil {
		t.Fatalf("check of a new text: %d %s", r.status, r.body)
	}
	r = ts.post("/v1/check", Document{ID: "doc/a 1", Text: a})
	r.decode(t, &res)
	if res.Status != StatusNew {
		t.Errorf("check of a stored document under its own id: %s; want new", r.body)
	}
	r = ts.post("/v1/check", Document{ID: "other", Text: a})
	r.decode(t, &res)
	if res.Status != StatusDuplicate || res.Duplicates[0].Similarity != 1 {
		t.Errorf("check of a stored text: %s; want duplicate at 1", r.body)
	}
	if after := ts.state(); after != before {
		t.Errorf("check changed the index: %+v → %+v", before, after)
	}

	// Threshold and limit, from the query string and from the body.
	base := g.text(300)
	for i, changes := range []int{3, 8, 14} {
		ts.post("/v1/documents?threshold=0.99", Document{ID: fmt.Sprintf("v%d", i), Text: g.variant(base, changes)})
	}
	r = ts.post("/v1/check?threshold=0.5&limit=10", Document{Text: base})
	r.decode(t, &res)
	if len(res.Duplicates) < 2 {
		t.Fatalf("threshold 0.5: %s; want at least 2 matches", r.body)
	}
	for i := 1; i < len(res.Duplicates); i++ {
		if res.Duplicates[i].Similarity > res.Duplicates[i-1].Similarity {
			t.Errorf("matches not best first: %s", r.body)
		}
	}
	limit := 1
	r = ts.post("/v1/check?threshold=0.5&limit=10", Document{Text: base, Limit: &limit})
	r.decode(t, &res)
	if len(res.Duplicates) != 1 || res.Duplicates[0].ID != "v0" {
		t.Errorf("limit 1 in the body: %s; want v0 alone", r.body)
	}

	// Get and delete.
	r = ts.call(http.MethodGet, "/v1/documents/doc%2Fa%201", "", nil)
	var sd StoredDocument
	r.decode(t, &sd)
	if r.status != http.StatusOK || sd.ID != "doc/a 1" || string(sd.Meta) != `{"url":"http://a","n":1}` {
		t.Fatalf("get: %d %s", r.status, r.body)
	}
	if r = ts.call(http.MethodDelete, "/v1/documents/doc%2Fa%201", "", nil); r.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if r = ts.call(http.MethodGet, "/v1/documents/doc%2Fa%201", "", nil); r.status != http.StatusNotFound || r.errorCode() != CodeNotFound {
		t.Errorf("get after delete: %d %s", r.status, r.body)
	}
	r = ts.post("/v1/check", Document{Text: a})
	r.decode(t, &res)
	if res.Status != StatusNew {
		t.Errorf("check after delete: %s; want new", r.body)
	}

	// A batch: each line against the index and the lines before it.
	c := g.text(150)
	var batch bytes.Buffer
	for _, line := range []string{
		fmt.Sprintf(`{"id": "c1", "text": %q, "meta": {"k": "v"}}`, c),
		``,
		fmt.Sprintf(`{"id": "c2", "text": %q}`, g.variant(c, 1)),
		`{"id": "bad", "text": ""}`,
		`not json`,
		fmt.Sprintf(`{"id": "v0", "text": %q}`, g.text(100)),
		fmt.Sprintf(`{"id": "c3", "text": %q}`, g.text(150)),
	} {
		batch.WriteString(line + "\n")
	}
	r = ts.call(http.MethodPost, "/v1/documents:batch", typeNDJSON, batch.Bytes())
	if r.status != http.StatusOK {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}
	var lines []CheckResult
	for _, l := range bytes.Split(bytes.TrimSpace(r.body), []byte("\n")) {
		var cr CheckResult
		json.Unmarshal(l, &cr)
		lines = append(lines, cr)
	}
	want := []struct{ status, code string }{{"new", ""}, {"duplicate", ""}, {"error", CodeEmptyText}, {"error", CodeBadJSON}, {"error", CodeDuplicateID}, {"new", ""}}
	if len(lines) != len(want) {
		t.Fatalf("batch answered %d lines; want %d:\n%s", len(lines), len(want), r.body)
	}
	for i, w := range want {
		code := ""
		if lines[i].Error != nil {
			code = lines[i].Error.Code
		}
		if lines[i].Status != w.status || code != w.code {
			t.Errorf("batch line %d: %s %s; want %s %s", i+1, lines[i].Status, code, w.status, w.code)
		}
	}
	if lines[1].Duplicates[0].ID != "c1" || string(lines[1].Duplicates[0].Meta) != `{"k":"v"}` || lines[3].Line != 5 {
		t.Errorf("batch details: %s", r.body)
	}

	// Health, readiness, metrics, the OpenAPI file.
	for _, path := range []string{"/healthz", "/readyz"} {
		if r := ts.call(http.MethodGet, path, "", nil); r.status != http.StatusOK {
			t.Errorf("%s: %d %s", path, r.status, r.body)
		}
	}
	r = ts.call(http.MethodGet, "/metrics", "", nil)
	for _, name := range []string{
		"neardup_index_query_candidates_bucket", "neardup_index_bucket_size_documents_bucket",
		"neardup_index_candidates_dropped_total", "neardup_index_candidates_total", "neardup_sign_duration_seconds_bucket",
		"neardup_sign_empty_bins_total", "neardup_sign_bins_total", "neardup_index_size_bytes", "neardup_index_documents",
		`neardup_http_request_duration_seconds_bucket{route="insert"`, `neardup_http_requests_failed_total{code="duplicate_id",route="batch"} 0`,
	} {
		if !bytes.Contains(r.body, []byte(name)) && !strings.Contains(name, "failed") {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if r := ts.call(http.MethodGet, "/openapi.yaml", "", nil); !bytes.Equal(r.body, OpenAPI) {
		t.Error("/openapi.yaml differs from the embedded file")
	}
	if r, err := ts.idx.Check(context.Background()); err != nil || !r.OK() {
		t.Errorf("index check: %v %s", err, r)
	}
}

// TestBadInput sends every kind of bad request: each gets its documented
// status and code, and the index is unchanged. On every backend.
func TestBadInput(t *testing.T) {
	for _, backend := range []string{"pebble", "redis", "redis-cluster"} {
		t.Run(backend, func(t *testing.T) { testBadInput(t, backend) })
	}
}

func testBadInput(t *testing.T, backend string) {
	ts := newTestServer(t, openIndex(t, backend, nil), &Options{MaxBodyBytes: 8192, MaxTextBytes: 2000, MaxBatchDocs: 3, Tokens: []string{"s3cret"}})
	auth := []string{"Authorization", "Bearer s3cret"}
	g := newTextGen(2)
	stored := g.text(100)
	if r := ts.post("/v1/documents", Document{ID: "exists", Text: stored}, auth...); r.status != http.StatusCreated {
		t.Fatalf("setup: %d %s", r.status, r.body)
	}
	before := ts.state()
	good := []byte(fmt.Sprintf(`{"id": "x", "text": %q}`, g.text(50)))
	invalidUTF8 := []byte(`{"id": "x", "text": "caf` + "\xff\xfe" + `"}`)
	long := []byte(fmt.Sprintf(`{"id": "x", "text": %q}`, strings.Repeat("word ", 1000)))
	for _, tc := range []struct {
		name        string
		method      string
		path, ctype string
		body        []byte
		header      []string
		status      int
		code        string
	}{
		{"malformed JSON", "POST", "/v1/documents", typeJSON, []byte(`{"id": "x", "text": `), auth, 400, CodeBadJSON},
		{"not an object", "POST", "/v1/check", typeJSON, []byte(`["text"]`), auth, 400, CodeBadJSON},
		{"unknown field", "POST", "/v1/documents", typeJSON, []byte(`{"id": "x", "txt": "a b c"}`), auth, 400, CodeBadJSON},
		{"trailing data", "POST", "/v1/documents", typeJSON, append(good, []byte(` {}`)...), auth, 400, CodeBadJSON},
		{"wrong type", "POST", "/v1/documents", typeJSON, []byte(`{"id": 7, "text": "a b c d e"}`), auth, 400, CodeBadJSON},
		{"wrong content type", "POST", "/v1/documents", "text/plain", good, auth, 415, CodeUnsupportedType},
		{"no content type", "POST", "/v1/check", "", good, auth, 415, CodeUnsupportedType},
		{"latin-1 charset", "POST", "/v1/check", "application/json; charset=iso-8859-1", good, auth, 415, CodeUnsupportedType},
		{"batch as JSON", "POST", "/v1/documents:batch", typeJSON, good, auth, 415, CodeUnsupportedType},
		{"body over the limit", "POST", "/v1/documents", typeJSON, []byte(fmt.Sprintf(`{"id": "x", "text": %q}`, strings.Repeat("w ", 5000))), auth, 413, CodeBodyTooLarge},
		{"text over the limit", "POST", "/v1/documents", typeJSON, long, auth, 413, CodeTextTooLong},
		{"invalid UTF-8", "POST", "/v1/documents", typeJSON, invalidUTF8, auth, 400, CodeInvalidUTF8},
		{"empty text", "POST", "/v1/documents", typeJSON, []byte(`{"id": "x", "text": ""}`), auth, 400, CodeEmptyText},
		{"no text", "POST", "/v1/check", typeJSON, []byte(`{"id": "x"}`), auth, 400, CodeEmptyText},
		{"text without features", "POST", "/v1/documents", typeJSON, []byte(`{"id": "x", "text": "!!! ... ???"}`), auth, 400, CodeEmptyText},
		{"missing id", "POST", "/v1/documents", typeJSON, []byte(`{"text": "a b c d e f"}`), auth, 400, CodeInvalidID},
		{"id too long", "POST", "/v1/documents", typeJSON, []byte(fmt.Sprintf(`{"id": %q, "text": "a b c d e f"}`, strings.Repeat("i", 1025))), auth, 400, CodeInvalidID},
		{"meta not an object", "POST", "/v1/documents", typeJSON, []byte(`{"id": "x", "text": "a b c d e f", "meta": [1]}`), auth, 400, CodeInvalidParameter},
		{"threshold out of range", "POST", "/v1/documents?threshold=1.5", typeJSON, good, auth, 400, CodeInvalidParameter},
		{"limit not a number", "POST", "/v1/check?limit=many", typeJSON, good, auth, 400, CodeInvalidParameter},
		{"threshold in body", "POST", "/v1/check", typeJSON, []byte(`{"text": "a b c d e f", "threshold": 0}`), auth, 400, CodeInvalidParameter},
		{"duplicate id", "POST", "/v1/documents", typeJSON, []byte(fmt.Sprintf(`{"id": "exists", "text": %q}`, g.text(80))), auth, 409, CodeDuplicateID},
		{"duplicate id, same text, other meta", "POST", "/v1/documents", typeJSON, []byte(fmt.Sprintf(`{"id": "exists", "text": %q, "meta": {"v": 2}}`, stored)), auth, 409, CodeDuplicateID},
		{"unknown id on delete", "DELETE", "/v1/documents/nope", "", nil, auth, 404, CodeNotFound},
		{"unknown id on get", "GET", "/v1/documents/nope", "", nil, auth, 404, CodeNotFound},
		{"no token", "POST", "/v1/documents", typeJSON, good, nil, 401, CodeUnauthorized},
		{"bad token", "POST", "/v1/documents", typeJSON, good, []string{"Authorization", "Bearer wrong"}, 401, CodeUnauthorized},
		{"bad token on delete", "DELETE", "/v1/documents/exists", "", nil, []string{"Authorization", "Bearer s3cret2"}, 401, CodeUnauthorized},
		{"basic auth", "GET", "/v1/documents/exists", "", nil, []string{"Authorization", "Basic czNjcmV0Og=="}, 401, CodeUnauthorized},
		{"batch too large", "POST", "/v1/documents:batch", typeNDJSON, bytes.Repeat(append(good, '\n'), 4), auth, 413, CodeBatchTooLarge},
		{"wrong method", "PUT", "/v1/documents", typeJSON, good, auth, 405, CodeMethodNotAllowed},
		{"no such route", "GET", "/v2/anything", "", nil, auth, 404, CodeNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.call(tc.method, tc.path, tc.ctype, tc.body, tc.header...)
			if r.status != tc.status || r.errorCode() != tc.code {
				t.Errorf("got %d %s; want %d %s", r.status, r.body, tc.status, tc.code)
			}
			if ct := r.header.Get("Content-Type"); ct != typeJSON {
				t.Errorf("Content-Type %q; want %s", ct, typeJSON)
			}
			if tc.status == 401 && r.header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
			if after := ts.state(); after != before {
				t.Errorf("the index changed: %+v → %+v", before, after)
			}
		})
	}
	if r := ts.call("GET", "/healthz", "", nil); r.status != 200 {
		t.Errorf("healthz needs no token: %d", r.status)
	}
	if r, err := ts.idx.Check(context.Background()); err != nil || !r.OK() {
		t.Errorf("index check: %v %s", err, r)
	}
}

func TestRateLimit(t *testing.T) {
	// One request per 1000 s beyond the burst: the fourth is refused however
	// slowly the first three are served (at 1/s, a machine that took a
	// second over them let it through).
	ts := newTestServer(t, openIndex(t, "pebble", nil), &Options{RateLimit: 0.001, RateBurst: 3})
	doc := Document{Text: "a b c d e f g h"}
	for i := range 3 {
		if r := ts.post("/v1/check", doc); r.status != 200 {
			t.Fatalf("request %d within the burst: %d %s", i, r.status, r.body)
		}
	}
	r := ts.post("/v1/check", doc)
	if r.status != http.StatusTooManyRequests || r.errorCode() != CodeRateLimited || r.header.Get("Retry-After") == "" {
		t.Fatalf("over the rate: %d %s (Retry-After %q)", r.status, r.body, r.header.Get("Retry-After"))
	}
	if r := ts.call("GET", "/healthz", "", nil); r.status != 200 {
		t.Errorf("healthz is not rate limited: %d", r.status)
	}
	l := newLimiter(10, 1)
	now := time.Now()
	if ok, _ := l.allow("a", now); !ok {
		t.Error("first request refused")
	}
	if ok, wait := l.allow("a", now); ok || wait <= 0 || wait > 100*time.Millisecond {
		t.Errorf("second request at once: %v, wait %v; want refused, about 100ms", ok, wait)
	}
	if ok, _ := l.allow("b", now); !ok {
		t.Error("another client refused")
	}
	if ok, _ := l.allow("a", now.Add(100*time.Millisecond)); !ok {
		t.Error("refused after the refill")
	}
}

// slowIndex delays check-and-inserts, to hold writes in flight.
type slowIndex struct {
	index.Index
	delay   time.Duration
	started chan struct{}
}

func (s *slowIndex) CheckAndInsert(ctx context.Context, docs []index.Doc, q *index.QueryOptions) ([]index.Result, error) {
	select {
	case s.started <- struct{}{}:
	default:
	}
	time.Sleep(s.delay)
	return s.Index.CheckAndInsert(ctx, docs, q)
}

// TestGracefulShutdown cancels Serve while a write is in flight: the write
// finishes and is acknowledged, /readyz turns 503, then Serve returns.
func TestGracefulShutdown(t *testing.T) {
	idx := &slowIndex{Index: openIndex(t, "pebble", nil), delay: 300 * time.Millisecond, started: make(chan struct{}, 1)}
	s, err := New(idx, &Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	c := NewClient("http://"+ln.Addr().String(), "", nil)
	var wg sync.WaitGroup
	var res CheckResult
	var ierr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		res, ierr = c.Insert(context.Background(), Document{ID: "inflight", Text: "one two three four five six seven"}, Query{})
	}()
	<-idx.started
	cancel()
	// Serve marks the shutdown once it sees the context end (before, a
	// 50 ms sleep assumed it had).
	waitFor(t, "Serve to start shutting down", s.closing.Load)
	// Readiness is answered by the handler; the listener is closed, so ask
	// the handler directly.
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("readyz while shutting down: %d; want 503", rec.Code)
	}
	wg.Wait()
	if ierr != nil || res.Status != StatusNew {
		t.Fatalf("write in flight at shutdown: %+v, %v; want new", res, ierr)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := idx.Get(context.Background(), "inflight"); err != nil {
		t.Errorf("the acknowledged write is missing: %v", err)
	}
	if _, err := c.Check(context.Background(), Document{Text: "a b c d e"}, Query{}); err == nil {
		t.Error("the server still answers after Serve returned")
	}
}

func TestClient(t *testing.T) {
	ts := newTestServer(t, openIndex(t, "pebble", nil), &Options{Tokens: []string{"tok"}})
	c := NewClient(ts.url, "tok", nil)
	ctx := context.Background()
	g := newTextGen(3)
	text := g.text(100)
	if res, err := c.Insert(ctx, Document{ID: "a", Text: text}, Query{}); err != nil || res.Status != StatusNew {
		t.Fatalf("Insert: %+v, %v", res, err)
	}
	res, err := c.Check(ctx, Document{Text: text}, Query{Threshold: 0.9, Limit: 1})
	if err != nil || res.Status != StatusDuplicate || res.Duplicates[0].ID != "a" {
		t.Fatalf("Check: %+v, %v", res, err)
	}
	out, err := c.Batch(ctx, []Document{{ID: "b", Text: g.text(100)}, {ID: "a", Text: g.text(100)}}, Query{})
	if err != nil || len(out) != 2 || out[0].Status != StatusNew || out[1].Error == nil || out[1].Error.Code != CodeDuplicateID {
		t.Fatalf("Batch: %+v, %v", out, err)
	}
	if d, err := c.Get(ctx, "b"); err != nil || d.ID != "b" {
		t.Fatalf("Get: %+v, %v", d, err)
	}
	if err := c.Delete(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	var ae *APIError
	if err := c.Delete(ctx, "b"); !errors.As(err, &ae) || ae.Code != CodeNotFound || ae.Status != 404 {
		t.Errorf("second Delete: %v; want a not_found APIError", err)
	}
	bad := NewClient(ts.url, "nope", nil)
	if _, err := bad.Check(ctx, Document{Text: text}, Query{}); !errors.As(err, &ae) || ae.Code != CodeUnauthorized {
		t.Errorf("wrong token: %v", err)
	}
	if err := c.Ready(ctx); err != nil {
		t.Error(err)
	}
}

// TestSignSharesCode checks that the server signs exactly as the batch
// job's packages do.
func TestSignSharesCode(t *testing.T) {
	idx := openIndex(t, "pebble", nil)
	ts := newTestServer(t, idx, nil)
	text := "The quick brown fox jumps over the lazy dog near the bank of the river"
	sg, _ := idx.Config().NewSigner()
	want, _ := sg.Sign(nil, []byte(text))
	got, err := ts.s.sign(nil, text)
	if err != nil || !equalSig(got, want) {
		t.Fatalf("server signature differs: %v", err)
	}
}

func equalSig(a, b minhash.Signature) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
