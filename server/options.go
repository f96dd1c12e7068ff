package server

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Defaults of Options.
const (
	DefaultMaxBodyBytes    = 4 << 20
	DefaultMaxTextBytes    = 1 << 20
	DefaultMaxBatchDocs    = 1000
	DefaultMaxBatchBytes   = 64 << 20
	DefaultRequestTimeout  = 10 * time.Second
	DefaultShutdownTimeout = 30 * time.Second
	DefaultIdleTimeout     = 2 * time.Minute
)

// Options configure a Server. The zero value, and nil, ask for the
// defaults: no authentication, no rate limit.
type Options struct {
	// MaxBodyBytes is the largest body of a single-document request, in
	// bytes; larger bodies get 413 body_too_large. Default 4 MiB.
	MaxBodyBytes int64
	// MaxTextBytes is the longest text of a document, in bytes; longer
	// texts get 413 text_too_long. Default 1 MiB.
	MaxTextBytes int
	// MaxBatchDocs is the most documents (lines) a batch may hold; more get
	// 413 batch_too_large and nothing is stored. Default 1000.
	MaxBatchDocs int
	// MaxBatchBytes is the largest batch body, in bytes; a larger one gets
	// 413 body_too_large and nothing is stored. The body is read a line at a
	// time (a line at most MaxBodyBytes), so this bounds the request's work,
	// not its memory. Default 64 MiB.
	MaxBatchBytes int64
	// RequestTimeout bounds each request's work; a request not done in
	// time gets 503 timeout (a write that had started is finished and
	// answered). Default 10 s.
	RequestTimeout time.Duration
	// ShutdownTimeout bounds how long Serve waits, once its context ends,
	// for requests in flight (writes included) to finish. Default 30 s.
	ShutdownTimeout time.Duration
	// IdleTimeout closes keep-alive connections idle this long. Default 2 min.
	IdleTimeout time.Duration
	// Tokens, when not empty, are the accepted bearer tokens: every /v1
	// request must carry "Authorization: Bearer <token>" (the scheme's name
	// in any case) with one of them, or gets 401 unauthorized. /healthz,
	// /readyz, /openapi.yaml and, unless MetricsAuth, /metrics stay open.
	// Default none (no authentication).
	Tokens []string
	// MetricsAuth makes /metrics take the same bearer tokens as /v1 (it is
	// not rate-limited). It needs Tokens. Default false: /metrics is open,
	// as Prometheus scrapers usually expect; it reveals counts and sizes,
	// never ids or texts.
	MetricsAuth bool
	// RateLimit is each client's sustained rate of /v1 requests per second
	// (a client is its token when Tokens are set, else its IP address);
	// requests over it get 429 rate_limited. A batch counts once. Default 0:
	// no limit.
	RateLimit float64
	// RateBurst is how many requests a client may send at once above the
	// rate. Default: the rate, rounded up (at least 1).
	RateBurst int
	// Registry receives the Prometheus collectors. Default: a new registry
	// (see Server.Registry), so that several Servers can coexist.
	Registry *prometheus.Registry
	// Logger logs failures (5xx) and lifecycle. Default slog.Default().
	Logger *slog.Logger
	// RepackInterval, when positive, makes Serve repack a Pebble index
	// (index.DB.Repack) in the background while it serves: the first repack
	// one interval after Serve starts, each next one an interval after the
	// previous one ended. Each repack logs one line and is counted in the
	// neardup_index_repack* metrics (registered only when this is set).
	// At shutdown Serve cancels a repack in progress and waits for it before
	// it returns (an interrupted repack leaves the index consistent). An
	// index that cannot repack (Redis, which has no packed postings) makes
	// New fail with ErrInvalidOptions. Handler alone never repacks. Default
	// 0: no repack.
	RepackInterval time.Duration
	// Golden, when not nil, is a labeled set Serve checks against the index
	// (and the shadow index, if any) at start and every GoldenInterval,
	// read-only, exporting recall and precision at the index's threshold
	// (neardup_golden_*; see GoldenSet and Server.GoldenRun). New fails with
	// ErrInvalidOptions if the set is malformed or its truth cannot score
	// the index's threshold. Handler alone never runs it; Server.GoldenRun
	// does, on demand. Default nil: no golden monitoring.
	Golden *GoldenSet
	// GoldenInterval is the time from the end of one golden run to the start
	// of the next. Default 1 h (DefaultGoldenInterval) with Golden; at
	// least a second.
	GoldenInterval time.Duration
	// Shadow, when not nil, runs a shadow index beside the index (see
	// "Shadow index" in the package doc): every acknowledged write is
	// journaled for it, every check is also run on it off the latency path,
	// GET /v1/shadow compares, and the neardup_shadow_* metrics are
	// registered. Default nil: no shadow (GET /v1/shadow answers 404).
	Shadow *ShadowOptions
}

// EnsureDefaults fills zero fields with their defaults and returns o; a nil o
// yields new Options with every default.
func (o *Options) EnsureDefaults() *Options {
	if o == nil {
		o = &Options{}
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxTextBytes == 0 {
		o.MaxTextBytes = DefaultMaxTextBytes
	}
	if o.MaxBatchDocs == 0 {
		o.MaxBatchDocs = DefaultMaxBatchDocs
	}
	if o.MaxBatchBytes == 0 {
		o.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.ShutdownTimeout == 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.RateLimit > 0 && o.RateBurst == 0 {
		o.RateBurst = max(1, int(o.RateLimit+0.999))
	}
	if o.Golden != nil && o.GoldenInterval == 0 {
		o.GoldenInterval = DefaultGoldenInterval
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Shadow != nil && (o.Shadow.QueueSize == 0 || o.Shadow.ApplyWait == 0) {
		sh := *o.Shadow
		if sh.QueueSize == 0 {
			sh.QueueSize = DefaultShadowQueue
		}
		if sh.ApplyWait == 0 {
			sh.ApplyWait = DefaultShadowApplyWait
		}
		o.Shadow = &sh
	}
	return o
}

// Validate reports whether o (after defaults) is usable; errors wrap
// ErrInvalidOptions and name the field.
func (o *Options) Validate() error {
	var c Options
	if o != nil {
		c = *o
	}
	c.EnsureDefaults()
	switch {
	case c.MaxBodyBytes < 1024:
		return fmt.Errorf("%w: MaxBodyBytes = %d; must be at least 1024", ErrInvalidOptions, c.MaxBodyBytes)
	case c.MaxTextBytes < 1:
		return fmt.Errorf("%w: MaxTextBytes = %d; must be at least 1", ErrInvalidOptions, c.MaxTextBytes)
	case c.MaxBatchDocs < 1 || c.MaxBatchDocs > 100000:
		return fmt.Errorf("%w: MaxBatchDocs = %d; must be 1..100000", ErrInvalidOptions, c.MaxBatchDocs)
	case c.MaxBatchBytes < c.MaxBodyBytes:
		return fmt.Errorf("%w: MaxBatchBytes = %d; must be at least MaxBodyBytes (%d)", ErrInvalidOptions, c.MaxBatchBytes, c.MaxBodyBytes)
	case c.RequestTimeout < time.Millisecond || c.ShutdownTimeout < 0 || c.IdleTimeout < time.Millisecond:
		return fmt.Errorf("%w: timeouts must be positive", ErrInvalidOptions)
	case c.RepackInterval < 0:
		return fmt.Errorf("%w: RepackInterval = %v; must not be negative", ErrInvalidOptions, c.RepackInterval)
	case c.Golden != nil && c.GoldenInterval < time.Second:
		return fmt.Errorf("%w: GoldenInterval = %v; must be at least 1s", ErrInvalidOptions, c.GoldenInterval)
	case c.RateLimit < 0 || c.RateBurst < 0:
		return fmt.Errorf("%w: RateLimit = %v, RateBurst = %d; must not be negative", ErrInvalidOptions, c.RateLimit, c.RateBurst)
	}
	if sh := c.Shadow; sh != nil {
		switch {
		case sh.Index == nil:
			return fmt.Errorf("%w: Shadow.Index is nil", ErrInvalidOptions)
		case sh.Journal == "":
			return fmt.Errorf("%w: Shadow.Journal is empty", ErrInvalidOptions)
		case sh.QueueSize < 1 || sh.QueueSize > 1<<20:
			return fmt.Errorf("%w: Shadow.QueueSize = %d; must be 1..%d", ErrInvalidOptions, sh.QueueSize, 1<<20)
		case sh.ApplyWait < time.Millisecond || sh.ApplyWait > time.Hour:
			return fmt.Errorf("%w: Shadow.ApplyWait = %v; must be 1ms..1h", ErrInvalidOptions, sh.ApplyWait)
		}
	}
	if c.MetricsAuth && len(c.Tokens) == 0 {
		return fmt.Errorf("%w: MetricsAuth needs Tokens to check", ErrInvalidOptions)
	}
	for i, t := range c.Tokens {
		if t == "" {
			return fmt.Errorf("%w: Tokens[%d] is empty", ErrInvalidOptions, i)
		}
	}
	return nil
}
