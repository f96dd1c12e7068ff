package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/neardup/neardup/index"
)

// spec is openapi.yaml, loaded and validated once.
var (
	spec       *openapi3.T
	specRouter routers.Router
)

func init() {
	openapi3filter.RegisterBodyDecoder(typeNDJSON, func(r io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
		b, err := io.ReadAll(r)
		return string(b), err
	})
}

func loadSpec(t *testing.T) {
	t.Helper()
	if spec != nil {
		return
	}
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI)
	if err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.yaml is not valid OpenAPI: %v", err)
	}
	doc.Servers = nil // match requests to any test server
	r, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	spec, specRouter = doc, r
}

// testServer is a Server on an httptest listener.
type testServer struct {
	t   *testing.T
	s   *Server
	idx index.Index
	url string
}

// openIndex opens an empty index of the named backend ("pebble", "redis",
// "redis-cluster"), closed (and dropped) at the end of the test.
func openIndex(t *testing.T, backend string, o *index.Options) index.Index {
	t.Helper()
	var opts index.Options
	if o != nil {
		opts = *o
	}
	switch backend {
	case "pebble":
		opts.CacheSize, opts.MemTableSize = 16<<20, 4<<20
		x, err := index.Open(filepath.Join(t.TempDir(), "index"), &opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { x.Close() })
		return x
	case "redis", "redis-cluster":
		cluster := backend == "redis-cluster"
		addrs := []string{"127.0.0.1:6379"}
		if v := os.Getenv("NEARDUP_REDIS_ADDR"); v != "" {
			addrs = []string{v}
		}
		if cluster {
			addrs = []string{"127.0.0.1:7001", "127.0.0.1:7002", "127.0.0.1:7003"}
			if v := os.Getenv("NEARDUP_REDIS_CLUSTER_ADDRS"); v != "" {
				addrs = strings.Split(v, ",")
			}
		}
		ro := &index.RedisOptions{Options: opts, Addrs: addrs, Cluster: cluster, Prefix: fmt.Sprintf("ndtest:%x:", rand.Uint64())}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		x, err := index.OpenRedis(ctx, ro)
		if err != nil {
			msg := fmt.Sprintf("no Redis at %v (%v); run .ci/services.sh", addrs, err)
			if os.Getenv("CI") == "true" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
		t.Cleanup(func() {
			x.Drop(context.Background())
			x.Close()
		})
		return x
	}
	t.Fatalf("unknown backend %q", backend)
	return nil
}

func newTestServer(t *testing.T, idx index.Index, o *Options) *testServer {
	t.Helper()
	loadSpec(t)
	var opts Options
	if o != nil {
		opts = *o
	}
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := New(idx, &opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return &testServer{t: t, s: s, idx: idx, url: hs.URL}
}

// response is what call returns.
type response struct {
	status int
	header http.Header
	body   []byte
}

// errorCode returns the code of an error response ("" if none).
func (r response) errorCode() string {
	var e ErrorResponse
	json.Unmarshal(r.body, &e)
	return e.Error.Code
}

func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
}

// call sends a request and validates the response against openapi.yaml.
func (ts *testServer) call(method, path, ctype string, body []byte, header ...string) response {
	t := ts.t
	t.Helper()
	req, err := http.NewRequest(method, ts.url+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := response{status: resp.StatusCode, header: resp.Header, body: data}
	ts.validate(req, r)
	return r
}

// validate checks a response against the OpenAPI description: its status is
// documented for the route, its body matches the schema; NDJSON lines each
// match CheckResult. Unknown routes must answer not_found.
func (ts *testServer) validate(req *http.Request, r response) {
	t := ts.t
	t.Helper()
	// Route on the escaped path, so that an id with an escaped '/' stays one
	// path parameter.
	rreq := req.Clone(context.Background())
	rreq.URL.Path = req.URL.EscapedPath()
	route, params, err := specRouter.FindRoute(rreq)
	if err != nil {
		if r.status != http.StatusNotFound && r.status != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: no route in openapi.yaml (%v), yet status %d", req.Method, req.URL.Path, err, r.status)
		}
		if c := r.errorCode(); c != CodeNotFound && c != CodeMethodNotAllowed {
			t.Errorf("%s %s: unrouted request answered %d %s; want not_found or method_not_allowed", req.Method, req.URL.Path, r.status, r.body)
		}
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 r.status,
		Header:                 r.header,
		Body:                   io.NopCloser(bytes.NewReader(r.body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s %s → %d %s: response does not match openapi.yaml: %v", req.Method, req.URL.Path, r.status, r.body, err)
	}
	if strings.HasPrefix(r.header.Get("Content-Type"), typeNDJSON) {
		schema := spec.Components.Schemas["CheckResult"].Value
		for i, line := range bytes.Split(bytes.TrimSpace(r.body), []byte("\n")) {
			var v any
			if err := json.Unmarshal(line, &v); err != nil {
				t.Errorf("NDJSON line %d %q: %v", i+1, line, err)
				continue
			}
			if err := schema.VisitJSON(v); err != nil {
				t.Errorf("NDJSON line %d %s does not match CheckResult: %v", i+1, line, err)
			}
		}
	}
}

// post sends a JSON document.
func (ts *testServer) post(path string, doc any, header ...string) response {
	ts.t.Helper()
	body, err := json.Marshal(doc)
	if err != nil {
		ts.t.Fatal(err)
	}
	return ts.call(http.MethodPost, path, typeJSON, body, header...)
}

// textGen makes reproducible texts and near copies.
type textGen struct {
	rng   *rand.Rand
	vocab []string
}

func newTextGen(seed uint64) *textGen {
	rng := rand.New(rand.NewPCG(seed, 7))
	vocab := make([]string, 4000)
	for i := range vocab {
		var b strings.Builder
		for range 3 + rng.IntN(6) {
			b.WriteByte(byte('a' + rng.IntN(26)))
		}
		vocab[i] = b.String()
	}
	return &textGen{rng: rng, vocab: vocab}
}

func (g *textGen) text(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = g.vocab[g.rng.IntN(len(g.vocab))]
	}
	return strings.Join(w, " ")
}

func (g *textGen) variant(text string, changes int) string {
	w := strings.Fields(text)
	for range changes {
		w[g.rng.IntN(len(w))] = g.vocab[g.rng.IntN(len(g.vocab))]
	}
	return strings.Join(w, " ")
}

// state captures what the index holds, to check that bad requests change
// nothing.
type state struct {
	docs    int64
	inserts uint64
	deletes uint64
}

func (ts *testServer) state() state {
	ts.t.Helper()
	st, err := ts.idx.Stats(context.Background())
	if err != nil {
		ts.t.Fatal(err)
	}
	m := ts.idx.Metrics()
	return state{docs: st.Documents, inserts: m.Inserts, deletes: m.Deletes}
}
