package server

import (
	"bytes"
	"context"
	"crypto/subtle"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fastjson"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/minhash"
)

// OpenAPI is the API's OpenAPI 3 description (openapi.yaml in this package),
// served at /openapi.yaml; the tests validate every response against it.
//
//go:embed openapi.yaml
var OpenAPI []byte

// Server is the HTTP API over an Index. Build one with New, serve it with
// Serve (or mount Handler). A Server is safe for concurrent use; it does not
// own the Index (close it after Serve returns).
type Server struct {
	idx    index.Index
	cfg    index.Config
	opts   Options
	m      *metrics
	log    *slog.Logger
	limit  *limiter
	tokens [][]byte

	signers sync.Pool // *signer
	bufs    sync.Pool // *bytes.Buffer
	handler http.Handler
	closing atomic.Bool

	// repack is the index, when Options.RepackInterval asks Serve to
	// repack it; repackProgress, if set (by tests) before Serve, is passed
	// to each Repack.
	repack         repacker
	repackProgress func(done, total int64)

	// golden is the golden-set monitor (golden.go), when Options.Golden.
	golden *golden

	// shadow runs the shadow index (Options.Shadow; shadow.go), or is nil.
	shadow *shadow
}

// signer is a pooled index.Signer with its signature buffer.
type signer struct {
	s   *index.Signer
	sig minhash.Signature
}

// New returns a Server for idx.
func New(idx index.Index, opts *Options) (*Server, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	cfg := idx.Config()
	if _, err := cfg.NewSigner(); err != nil {
		return nil, err
	}
	s := &Server{idx: idx, cfg: cfg, opts: o, log: o.Logger}
	if o.RepackInterval > 0 {
		r, ok := idx.(repacker)
		if !ok {
			return nil, fmt.Errorf("%w: RepackInterval = %v, but the index (%T) has no packed postings to repack; only a Pebble index (*index.DB) repacks",
				ErrInvalidOptions, o.RepackInterval, idx)
		}
		s.repack = r
	}
	for _, t := range o.Tokens {
		s.tokens = append(s.tokens, []byte(t))
	}
	if o.RateLimit > 0 {
		s.limit = newLimiter(o.RateLimit, o.RateBurst)
	}
	s.signers.New = func() any {
		sg, _ := cfg.NewSigner()
		return &signer{s: sg}
	}
	s.bufs.New = func() any { return new(bytes.Buffer) }
	if o.Golden != nil {
		if err := o.Golden.validate(cfg.Threshold); err != nil {
			return nil, err
		}
	}
	s.m = newMetrics(o.Registry, idx, s.repack != nil)
	if o.Shadow != nil {
		var err error
		if s.shadow, err = newShadow(o.Shadow, cfg, o.Registry, s.log); err != nil {
			return nil, err
		}
	}
	if o.Golden != nil {
		s.golden = newGolden(o.Registry, o.Golden, o.GoldenInterval)
		if s.shadow != nil {
			sh := s.shadow.idx // the golden run checks the shadow too
			s.golden.shadow = func() index.Index { return sh }
		}
	}

	mux := http.NewServeMux()
	mux.Handle("/v1/check", s.route(routeCheck, true, "POST", s.handleCheck))
	mux.Handle("/v1/documents", s.route(routeInsert, true, "POST", s.handleInsert))
	mux.Handle("/v1/documents:batch", s.route(routeBatch, true, "POST", s.handleBatch))
	mux.Handle("/v1/documents/{id...}", s.route(routeGet, true, "GET DELETE", s.handleDocument))
	mux.Handle("/v1/shadow", s.route(routeShadow, true, "GET", s.handleShadow))
	mux.Handle("/healthz", s.route(routeHealth, false, "GET", s.handleHealth))
	mux.Handle("/readyz", s.route(routeHealth, false, "GET", s.handleReady))
	mux.Handle("/openapi.yaml", s.route(routeOpenAPI, false, "GET", s.handleOpenAPI))
	promh := promhttp.HandlerFor(o.Registry, promhttp.HandlerOpts{})
	mux.Handle("/metrics", s.route(routeMetrics, false, "GET", func(w http.ResponseWriter, r *http.Request) error {
		promh.ServeHTTP(w, r)
		return nil
	}))
	mux.Handle("/", s.route(routeOther, false, "", func(w http.ResponseWriter, r *http.Request) error {
		return errorf(CodeNotFound, "no route %s %s", r.Method, r.URL.Path)
	}))
	s.handler = mux
	return s, nil
}

// Handler returns the API's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Registry returns the Prometheus registry the server's collectors are on.
func (s *Server) Registry() *prometheus.Registry { return s.opts.Registry }

// Serve answers requests on ln until ctx ends, then shuts down gracefully:
// /readyz turns 503, the listener closes, and requests in flight (writes
// included) finish, for at most Options.ShutdownTimeout. With
// Options.RepackInterval it also repacks the index in the background, and
// with Options.Golden it runs the golden set at once and every
// Options.GoldenInterval; a repack or golden run in progress at shutdown is
// cancelled, and Serve returns only once it has stopped, so the caller may
// close the index then. It returns nil
// after a clean shutdown.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	defer s.Close()
	var repacks sync.WaitGroup
	rctx, stopRepacks := context.WithCancel(ctx)
	defer func() {
		stopRepacks()
		repacks.Wait()
	}()
	if s.repack != nil {
		repacks.Go(func() { s.repackLoop(rctx, s.repack) })
	}
	if s.golden != nil {
		repacks.Go(func() { s.goldenLoop(rctx) })
	}
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       s.opts.RequestTimeout + 10*time.Second,
		WriteTimeout:      2*s.opts.RequestTimeout + 10*time.Second,
		IdleTimeout:       s.opts.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.closing.Store(true)
	s.log.Info("shutting down: finishing requests in flight", "timeout", s.opts.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// statusWriter records the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

// WriteHeader records code if no status is recorded yet and passes it on.
func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write records status 200 if no status is recorded yet and passes p on.
func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// route wraps a handler: metrics, method check, authentication, rate limit,
// timeout and error responses.
func (s *Server) route(name string, api bool, methods string, h func(http.ResponseWriter, *http.Request) error) http.Handler {
	allowed := strings.Fields(methods)
	type perRoute struct {
		name     string
		requests prometheus.Counter
		latency  prometheus.Observer
	}
	resolve := func(route string) perRoute {
		return perRoute{route, s.m.requests.WithLabelValues(route), s.m.latency.WithLabelValues(route)}
	}
	main, del := resolve(name), resolve(routeDelete)
	auth := api || name == routeMetrics && s.opts.MetricsAuth
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rm := main
		if name == routeGet && r.Method == http.MethodDelete {
			rm = del
		}
		s.m.inFlight.Inc()
		defer s.m.inFlight.Dec()
		rm.requests.Inc()
		w := &statusWriter{ResponseWriter: rw}
		err := s.serve(w, r, api, auth, allowed, h)
		if err != nil {
			code := s.writeError(w, r, err)
			s.m.failed.WithLabelValues(rm.name, code).Inc()
		}
		rm.latency.Observe(time.Since(start).Seconds())
	})
}

// serve runs h for a request of a route: auth checks the bearer token, api
// (a /v1 route) also applies the rate limit.
func (s *Server) serve(w *statusWriter, r *http.Request, api, auth bool, allowed []string, h func(http.ResponseWriter, *http.Request) error) error {
	if len(allowed) > 0 && !contains(allowed, r.Method) && !(r.Method == http.MethodHead && contains(allowed, http.MethodGet)) {
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		return errorf(CodeMethodNotAllowed, "%s does not take %s; it takes %s", r.URL.Path, r.Method, strings.Join(allowed, ", "))
	}
	var client string
	if auth {
		var ok bool
		if client, ok = s.authorize(r); !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="neardup"`)
			return errorf(CodeUnauthorized, "missing or wrong bearer token")
		}
	}
	if api {
		if s.limit != nil {
			if ok, wait := s.limit.allow(client, time.Now()); !ok {
				w.Header().Set("Retry-After", strconv.Itoa(max(1, int(wait.Seconds()+0.999))))
				return errorf(CodeRateLimited, "over the rate limit of %g requests per second", s.opts.RateLimit)
			}
		}
		if s.closing.Load() {
			w.Header().Set("Connection", "close")
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
	defer cancel()
	return h(w, r.WithContext(ctx))
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// authorize checks the bearer token and returns the client's rate-limit key.
func (s *Server) authorize(r *http.Request) (string, bool) {
	if len(s.tokens) == 0 {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		return host, true
	}
	token, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok {
		return "", false
	}
	match := -1
	for i, t := range s.tokens {
		if subtle.ConstantTimeCompare([]byte(token), t) == 1 {
			match = i
		}
	}
	if match < 0 {
		return "", false
	}
	return "token:" + strconv.Itoa(match), true
}

// bearerToken returns the token of an Authorization header value of the
// Bearer scheme, whose name is case-insensitive (RFC 7235, section 2.1):
// "Bearer", "bearer" and "BEARER" all name it.
func bearerToken(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// writeError answers with err as JSON and returns its code.
func (s *Server) writeError(w *statusWriter, r *http.Request, err error) string {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = s.mapError(r, err)
	}
	status := codeStatus[ae.code]
	if status >= 500 && ae.code != CodeTimeout {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "code", ae.code, "err", err)
	}
	if w.status != 0 {
		return ae.code // the response had started: nothing more to say
	}
	s.writeJSON(w, status, ErrorResponse{Error: ErrorBody{Code: ae.code, Message: ae.msg}})
	return ae.code
}

// mapError turns an index error into an API error.
func (s *Server) mapError(r *http.Request, err error) *apiError {
	switch {
	case errors.Is(err, index.ErrDuplicateID):
		return errorf(CodeDuplicateID, "%v", err)
	case errors.Is(err, index.ErrNotFound):
		return errorf(CodeNotFound, "%v", err)
	case errors.Is(err, index.ErrInvalidDocument):
		return errorf(CodeInvalidID, "%v", err)
	case errors.Is(err, index.ErrInvalidOptions):
		return errorf(CodeInvalidParameter, "%v", err)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, index.ErrLockTimeout):
		return errorf(CodeTimeout, "the request did not finish in %v", s.opts.RequestTimeout)
	case errors.Is(err, index.ErrClosed):
		return errorf(CodeUnavailable, "the index is closed")
	case errors.Is(err, index.ErrStorage):
		return errorf(CodeUnavailable, "%v", err)
	case errors.Is(err, context.Canceled):
		return errorf(CodeUnavailable, "the request was cancelled")
	}
	return errorf(CodeInternal, "%v", err)
}

// writeJSON writes v as the JSON response.
func (s *Server) writeJSON(w http.ResponseWriter, status int, v any) {
	buf := s.bufs.Get().(*bytes.Buffer)
	buf.Reset()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":{"code":"internal","message":"cannot encode the response"}}` + "\n")
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	w.Write(buf.Bytes())
	if buf.Cap() <= 1<<20 {
		s.bufs.Put(buf)
	}
}

// writeResult writes a check or insert answer.
func (s *Server) writeResult(w http.ResponseWriter, status int, r *CheckResult) {
	buf := s.bufs.Get().(*bytes.Buffer)
	buf.Reset()
	buf.Write(appendCheckResult(buf.AvailableBuffer(), r))
	h := w.Header()
	h.Set("Content-Type", typeJSON)
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	w.Write(buf.Bytes())
	if buf.Cap() <= 1<<20 {
		s.bufs.Put(buf)
	}
}

// Content types.
const (
	typeJSON   = "application/json"
	typeNDJSON = "application/x-ndjson"
)

// checkType accepts a request whose Content-Type is one of types (charset,
// if given, must be utf-8).
func checkType(r *http.Request, types ...string) error {
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err == nil && contains(types, mt) {
		if cs, ok := params["charset"]; !ok || strings.EqualFold(cs, "utf-8") {
			return nil
		}
	}
	if ct == "" {
		ct = "none"
	}
	return errorf(CodeUnsupportedType, "Content-Type %s; want %s (UTF-8)", ct, strings.Join(types, " or "))
}

// readBody reads the whole body, at most limit bytes, into a pooled buffer
// (return it with s.bufs.Put).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, limit int64) (*bytes.Buffer, error) {
	if r.ContentLength > limit {
		return nil, errorf(CodeBodyTooLarge, "body of %d bytes; the limit is %d", r.ContentLength, limit)
	}
	buf := s.bufs.Get().(*bytes.Buffer)
	buf.Reset()
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		s.bufs.Put(buf)
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errorf(CodeBodyTooLarge, "body over the limit of %d bytes", limit)
		}
		return nil, errorf(CodeBadJSON, "reading the body: %v", err)
	}
	return buf, nil
}

// queryParams reads threshold and limit from the URL query.
func queryParams(r *http.Request) (index.QueryOptions, error) {
	var q index.QueryOptions
	v := r.URL.Query()
	if t := v.Get("threshold"); t != "" {
		f, err := strconv.ParseFloat(t, 64)
		if err != nil || !(f > 0 && f <= 1) {
			return q, errorf(CodeInvalidParameter, "threshold %q; must be a number in (0, 1]", t)
		}
		q.Threshold = f
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > index.MaxLimit {
			return q, errorf(CodeInvalidParameter, "limit %q; must be an integer in 1..%d", l, index.MaxLimit)
		}
		q.Limit = n
	}
	return q, nil
}

// parsers parse request bodies. fastjson parses a 1 KB document in a few
// hundred nanoseconds where encoding/json's Decoder takes about 20 µs, a
// fifth of a check's whole budget on a small machine.
var parsers fastjson.ParserPool

// parseDocument decodes and validates one document; q receives its
// threshold and limit. The JSON must be a single object with only the
// Document fields, of the right types (bad_json otherwise).
func (s *Server) parseDocument(data []byte, needID bool, q *index.QueryOptions) (Document, error) {
	var d Document
	if !utf8.Valid(data) {
		return d, errorf(CodeInvalidUTF8, "the body is not valid UTF-8")
	}
	if err := fastjson.ValidateBytes(data); err != nil {
		return d, errorf(CodeBadJSON, "%v", err)
	}
	p := parsers.Get()
	defer parsers.Put(p)
	v, err := p.ParseBytes(data)
	if err != nil {
		return d, errorf(CodeBadJSON, "%v", err)
	}
	obj, err := v.Object()
	if err != nil {
		return d, errorf(CodeBadJSON, "the body is a JSON %s, not an object", v.Type())
	}
	var ferr error
	str := func(key []byte, v *fastjson.Value) string {
		b, err := v.StringBytes()
		if err != nil {
			ferr = errorf(CodeBadJSON, "field %q is a %s, not a string", key, v.Type())
		}
		return string(b)
	}
	obj.Visit(func(key []byte, v *fastjson.Value) {
		if ferr != nil {
			return
		}
		switch string(key) {
		case "id":
			d.ID = str(key, v)
		case "text":
			d.Text = str(key, v)
		case "meta":
			switch v.Type() {
			case fastjson.TypeNull:
				d.Meta = nil
			case fastjson.TypeObject:
				d.Meta = v.MarshalTo(nil)
			default:
				ferr = errorf(CodeInvalidParameter, "meta must be a JSON object, not a %s", v.Type())
			}
		case "threshold":
			f, err := v.Float64()
			if err != nil {
				ferr = errorf(CodeBadJSON, "field \"threshold\" is a %s, not a number", v.Type())
			}
			d.Threshold = &f
		case "limit":
			n, err := v.Int()
			if err != nil {
				ferr = errorf(CodeBadJSON, "field \"limit\" must be an integer")
			}
			d.Limit = &n
		default:
			ferr = errorf(CodeBadJSON, "unknown field %q", key)
		}
	})
	if ferr != nil {
		return d, ferr
	}
	switch {
	case needID && d.ID == "":
		return d, errorf(CodeInvalidID, "a document to store needs an id")
	case len(d.ID) > index.MaxIDLen:
		return d, errorf(CodeInvalidID, "id of %d bytes; the limit is %d", len(d.ID), index.MaxIDLen)
	case d.Text == "":
		return d, errorf(CodeEmptyText, "text is empty")
	case len(d.Text) > s.opts.MaxTextBytes:
		return d, errorf(CodeTextTooLong, "text of %d bytes; the limit is %d", len(d.Text), s.opts.MaxTextBytes)
	}
	if d.Threshold != nil {
		if t := *d.Threshold; !(t > 0 && t <= 1) {
			return d, errorf(CodeInvalidParameter, "threshold %v; must be in (0, 1]", t)
		}
		q.Threshold = *d.Threshold
	}
	if d.Limit != nil {
		if l := *d.Limit; l < 1 || l > index.MaxLimit {
			return d, errorf(CodeInvalidParameter, "limit %d; must be in 1..%d", l, index.MaxLimit)
		}
		q.Limit = *d.Limit
	}
	return d, nil
}

// sign shingles and signs text; the signature is appended to dst.
func (s *Server) sign(dst minhash.Signature, text string) (minhash.Signature, error) {
	sg := s.signers.Get().(*signer)
	before := sg.s.Metrics()
	start := time.Now()
	sig, empty := sg.s.Sign(dst, []byte(text))
	s.m.signDur.Observe(time.Since(start).Seconds())
	after := sg.s.Metrics()
	s.signers.Put(sg)
	s.m.signBytes.Add(float64(len(text)))
	s.m.bins.Add(float64(after.Bins - before.Bins))
	s.m.emptyBins.Add(float64(after.EmptyBins - before.EmptyBins))
	s.m.drift.signed(len(text), after.Features-before.Features)
	if empty {
		return sig, errorf(CodeEmptyText, "text has no features under the index's shingle spec %s", s.cfg.Spec)
	}
	return sig, nil
}

// duplicates converts matches for the API.
func duplicates(ms []index.Match) []Duplicate {
	out := make([]Duplicate, len(ms))
	for i, m := range ms {
		out[i] = Duplicate{ID: m.ID, Similarity: m.Similarity, Meta: m.Meta}
	}
	return out
}

// readDocument reads a single-document request.
func (s *Server) readDocument(w http.ResponseWriter, r *http.Request, needID bool) (Document, index.QueryOptions, error) {
	q, err := queryParams(r)
	if err != nil {
		return Document{}, q, err
	}
	if err := checkType(r, typeJSON); err != nil {
		return Document{}, q, err
	}
	buf, err := s.readBody(w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return Document{}, q, err
	}
	defer s.bufs.Put(buf)
	d, err := s.parseDocument(buf.Bytes(), needID, &q)
	return d, q, err
}

// handleCheck: POST /v1/check — duplicates of a document, nothing stored.
func (s *Server) handleCheck(w http.ResponseWriter, r *http.Request) error {
	d, q, err := s.readDocument(w, r, false)
	if err != nil {
		return err
	}
	sg := s.signers.Get().(*signer)
	defer s.signers.Put(sg)
	sig, err := s.sign(sg.sig[:0], d.Text)
	sg.sig = sig
	if err != nil {
		return err
	}
	q.Exclude = d.ID
	var p probe
	if s.shadow != nil {
		p = s.shadow.begin(s.idx)
	}
	ms, err := s.idx.Query(r.Context(), sig, &q)
	if err != nil {
		return err
	}
	if s.shadow != nil {
		s.shadow.offer(p, s.idx, d.Text, q, ms)
	}
	res := CheckResult{ID: d.ID, Status: StatusNew, Duplicates: duplicates(ms)}
	if len(ms) > 0 {
		res.Status = StatusDuplicate
	}
	s.m.countDoc(res.Status, res.Duplicates)
	s.writeResult(w, http.StatusOK, &res)
	return nil
}

// handleInsert: POST /v1/documents — check and insert.
func (s *Server) handleInsert(w http.ResponseWriter, r *http.Request) error {
	d, q, err := s.readDocument(w, r, true)
	if err != nil {
		return err
	}
	sg := s.signers.Get().(*signer)
	defer s.signers.Put(sg)
	sig, err := s.sign(sg.sig[:0], d.Text)
	sg.sig = sig
	if err != nil {
		return err
	}
	if err := r.Context().Err(); err != nil {
		return err // out of time before the write: nothing stored
	}
	res, err := s.idx.CheckAndInsert(r.Context(), []index.Doc{{ID: d.ID, Sig: sig, Meta: d.Meta}}, &q)
	if err != nil {
		return err
	}
	out := CheckResult{ID: d.ID, Status: StatusNew, Duplicates: duplicates(res[0].Matches)}
	status := http.StatusCreated
	switch {
	case res[0].Err == nil:
	case s.isRetry(r.Context(), res[0].Err, &index.Doc{ID: d.ID, Sig: sig, Meta: d.Meta}):
		status = http.StatusOK // stored by an earlier request: answered as it was, bar the status
	default:
		return res[0].Err
	}
	if res[0].Status == index.Duplicate {
		out.Status, status = StatusDuplicate, http.StatusOK
	} else {
		if err := s.shadowInserted([]index.Doc{{ID: d.ID, Meta: d.Meta}}, []string{d.Text}); err != nil {
			return err
		}
		w.Header().Set("Location", "/v1/documents/"+escapePath(d.ID))
	}
	s.m.countDoc(out.Status, out.Duplicates)
	s.writeResult(w, status, &out)
	return nil
}

// escapePath escapes an id as one URL path segment ('/' becomes %2F).
func escapePath(id string) string { return url.PathEscape(id) }

// handleDocument: GET and DELETE /v1/documents/{id}.
func (s *Server) handleDocument(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if id == "" || len(id) > index.MaxIDLen {
		return errorf(CodeInvalidID, "id of %d bytes; want 1..%d", len(id), index.MaxIDLen)
	}
	if r.Method == http.MethodDelete {
		if err := s.shadowDeleting(id); err != nil {
			return err
		}
		if err := s.idx.Delete(r.Context(), id); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	d, err := s.idx.Get(r.Context(), id)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, StoredDocument{ID: d.ID, Meta: d.Meta})
	return nil
}

// handleBatch: POST /v1/documents:batch — NDJSON in, NDJSON out, one result
// per non-blank input line, in order. The body is read a line at a time
// as it arrives and each document signed at once: memory holds one line
// (at most MaxBodyBytes) and the signatures, ids and metadata of the
// documents so far, never the whole body. Nothing is stored before the last
// line is read: a body over MaxBatchBytes, or over MaxBatchDocs documents,
// is answered 413 with nothing stored.
func (s *Server) handleBatch(w http.ResponseWriter, r *http.Request) error {
	q, err := queryParams(r)
	if err != nil {
		return err
	}
	if err := checkType(r, typeNDJSON, "application/jsonl", "application/ndjson"); err != nil {
		return err
	}
	limit := s.opts.MaxBatchBytes
	if r.ContentLength > limit {
		return errorf(CodeBodyTooLarge, "body of %d bytes; the limit is %d", r.ContentLength, limit)
	}
	type line struct {
		n   int
		res CheckResult
		doc int // index into docs, or −1
	}
	var lines []line
	var docs []index.Doc
	var texts []string           // with a shadow: the text of each line, for shadowInserted
	earlier := map[string]bool{} // ids of the lines so far, to tell a retry from a repeat
	repeated := map[int]bool{}   // docs whose id an earlier line had
	lr := newLineReader(http.MaxBytesReader(w, r.Body, limit), int(s.opts.MaxBodyBytes))
	for n := 1; ; n++ {
		l, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			return errorf(CodeBodyTooLarge, "body over the limit of %d bytes (stopped reading at line %d); nothing was stored", limit, n)
		case err != nil && !errors.Is(err, errLineTooLong):
			return errorf(CodeBadJSON, "reading the body at line %d: %v", n, err)
		case err == nil && len(bytes.TrimSpace(l)) == 0:
			continue
		}
		if len(lines) == s.opts.MaxBatchDocs {
			return errorf(CodeBatchTooLarge, "more than %d documents in a batch; nothing was stored", s.opts.MaxBatchDocs)
		}
		ln := line{n: n, doc: -1}
		var d Document
		var sig minhash.Signature
		if err != nil {
			err = errorf(CodeBodyTooLarge, "line of more than %d bytes; the limit of a document is %d", s.opts.MaxBodyBytes, s.opts.MaxBodyBytes)
		} else {
			var lq index.QueryOptions
			d, err = s.parseDocument(l, true, &lq)
			if err == nil && (lq.Threshold != 0 || lq.Limit != 0) {
				err = errorf(CodeInvalidParameter, "set threshold and limit as query parameters of a batch, not per line")
			}
		}
		if err == nil {
			sig, err = s.sign(nil, d.Text)
		}
		if err != nil {
			var ae *apiError
			errors.As(err, &ae)
			ln.res = CheckResult{ID: d.ID, Status: StatusError, Line: n, Duplicates: []Duplicate{}, Error: &ErrorBody{Code: ae.code, Message: ae.msg}}
		} else {
			ln.doc = len(docs)
			repeated[ln.doc] = earlier[d.ID]
			docs = append(docs, index.Doc{ID: d.ID, Sig: sig, Meta: d.Meta})
			if s.shadow != nil {
				texts = append(texts, d.Text)
			}
		}
		earlier[d.ID] = true
		lines = append(lines, ln)
	}
	if err := r.Context().Err(); err != nil {
		return err
	}
	var results []index.Result
	if len(docs) > 0 {
		if results, err = s.idx.CheckAndInsert(r.Context(), docs, &q); err != nil {
			return err
		}
	}
	out := s.bufs.Get().(*bytes.Buffer)
	out.Reset()
	defer s.bufs.Put(out)
	var stored []int // with a shadow: the docs answered "new"
	for _, ln := range lines {
		res := ln.res
		if ln.doc >= 0 {
			ir := results[ln.doc]
			res = CheckResult{ID: ir.ID, Duplicates: duplicates(ir.Matches)}
			switch {
			case ir.Status == index.New:
				res.Status = StatusNew
			case ir.Status == index.Duplicate:
				res.Status = StatusDuplicate
			case !repeated[ln.doc] && s.isRetry(r.Context(), ir.Err, &docs[ln.doc]):
				res.Status = StatusNew
			default:
				ae := s.mapError(r, ir.Err)
				res.Status, res.Line, res.Error = StatusError, ln.n, &ErrorBody{Code: ae.code, Message: ae.msg}
			}
			s.m.countDoc(res.Status, res.Duplicates)
			if s.shadow != nil && res.Status == StatusNew {
				stored = append(stored, ln.doc)
			}
		}
		out.Write(appendCheckResult(out.AvailableBuffer(), &res))
	}
	if len(stored) > 0 {
		sd, st := make([]index.Doc, len(stored)), make([]string, len(stored))
		for i, k := range stored {
			sd[i], st[i] = docs[k], texts[k]
		}
		if err := s.shadowInserted(sd, st); err != nil {
			return err
		}
	}
	w.Header().Set("Content-Type", typeNDJSON)
	w.Header().Set("Content-Length", strconv.Itoa(out.Len()))
	w.WriteHeader(http.StatusOK)
	w.Write(out.Bytes())
	return nil
}

// isRetry reports whether err, the error of a check-and-insert of doc, says
// the id is stored, and the stored document is doc itself (the same
// signature, so the same text under the index's spec, and the same
// metadata): the request repeats one that stored it, and is answered as
// that one was ("new"), so that a client may retry after a timeout.
func (s *Server) isRetry(ctx context.Context, err error, doc *index.Doc) bool {
	if !errors.Is(err, index.ErrDuplicateID) {
		return false
	}
	stored, gerr := s.idx.Get(ctx, doc.ID)
	if gerr != nil || !slices.Equal(stored.Sig, doc.Sig) || !bytes.Equal(stored.Meta, doc.Meta) {
		return false
	}
	s.m.retries.Inc()
	return true
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) error {
	s.writeJSON(w, http.StatusOK, Health{Status: "ok"})
	return nil
}

// healthReporter is what an index that watches its storage has: index.DB
// (a damaged block met, a failed write); the Redis index does not.
type healthReporter interface {
	Health() error
}

var _ healthReporter = (*index.DB)(nil)

// handleReady: 200 while serving with a reachable, healthy index; 503 once
// shutting down, when the index does not answer, or once it has met a
// damaged block or a failed write (until it is reopened).
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) error {
	if s.closing.Load() {
		s.writeJSON(w, http.StatusServiceUnavailable, Health{Status: "shutting down"})
		return nil
	}
	if hr, ok := s.idx.(healthReporter); ok {
		if err := hr.Health(); err != nil {
			s.writeJSON(w, http.StatusServiceUnavailable, Health{Status: "index unhealthy: " + err.Error()})
			return nil
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), time.Second)
	defer cancel()
	if _, err := s.idx.Stats(ctx); err != nil {
		s.writeJSON(w, http.StatusServiceUnavailable, Health{Status: "index unavailable: " + err.Error()})
		return nil
	}
	s.writeJSON(w, http.StatusOK, Health{Status: "ready"})
	return nil
}

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/yaml")
	w.Write(OpenAPI)
	return nil
}
