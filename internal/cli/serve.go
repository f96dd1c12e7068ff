package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/bytesize"
	"github.com/neardup/neardup/internal/keyfile"
	"github.com/neardup/neardup/server"
	"github.com/neardup/neardup/shingle"
)

type serveOptions struct {
	index           indexFlags
	addr            string
	tokenFile       string
	rateLimit       float64
	rateBurst       int
	maxBody         string
	maxText         string
	maxBatchDocs    int
	maxBatchBody    string
	requestTimeout  time.Duration
	shutdownTimeout time.Duration
	preload         bool
	repackInterval  time.Duration
	metricsAuth     bool
	shadowData      string
	shadowQueue     int
	shadowApplyWait time.Duration
	shadowWaitSet   bool // --shadow-apply-wait was given
	shadowKeyFile   string
	golden          goldenFlags // serve_golden.go
	memoryIndex     bool
}

func (o *serveOptions) AddFlags(fs *pflag.FlagSet) {
	o.index.AddFlags(fs)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&o.tokenFile, "token-file", "", "require a bearer token: one per line in this file (default: $NEARDUP_TOKEN if set, else no authentication)")
	fs.Float64Var(&o.rateLimit, "rate-limit", 0, "requests per second per client (token, or IP address); 0: no limit")
	fs.IntVar(&o.rateBurst, "rate-burst", 0, "requests a client may send at once above the rate (default: the rate)")
	fs.StringVar(&o.maxBody, "max-body-bytes", "4MiB", "largest body of a single-document request")
	fs.StringVar(&o.maxText, "max-text-bytes", "1MiB", "longest document text")
	fs.IntVar(&o.maxBatchDocs, "max-batch-docs", server.DefaultMaxBatchDocs, "most documents in a batch request")
	fs.StringVar(&o.maxBatchBody, "max-batch-bytes", "64MiB", "largest body of a batch request")
	fs.DurationVar(&o.requestTimeout, "request-timeout", server.DefaultRequestTimeout, "time limit of each request")
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", server.DefaultShutdownTimeout, "on SIGTERM or SIGINT, how long to wait for requests in flight")
	fs.BoolVar(&o.preload, "preload", false, "read the whole index into the block cache before serving (size the cache with --cache-size)")
	fs.BoolVar(&o.metricsAuth, "metrics-auth", false, "require the bearer token on /metrics too (with --token-file or $NEARDUP_TOKEN)")
	o.golden.AddFlags(fs)
	fs.StringVar(&o.shadowData, "shadow-data", "", "a shadow index directory (Pebble, made by neardup index build with other bands, params or spec): every acknowledged write is journaled for it and every check also runs on it, off the latency path; GET /v1/shadow compares; neardup index promote switches it in")
	fs.IntVar(&o.shadowQueue, "shadow-queue", server.DefaultShadowQueue, "most checks waiting for the shadow; more are dropped and counted")
	fs.DurationVar(&o.shadowApplyWait, "shadow-apply-wait", server.DefaultShadowApplyWait, "how long a check waits for the shadow to apply the writes acknowledged before it; one still waiting is not compared and counts in neardup_shadow_stale_total (1ms..1h)")
	fs.StringVar(&o.shadowKeyFile, "shadow-key-file", "", "the key of a shadow index made under a keyed spec (--key-file of its build; e.g. a new key, to rotate keys)")
	fs.DurationVar(&o.repackInterval, "repack-interval", 0, "repack the index in the background this often, e.g. 6h (Pebble only: Redis has no packed postings); 0: never")
	fs.BoolVar(&o.memoryIndex, "memory-index", false, "serve a new, empty index held in memory instead of --data or --redis: lost when the server stops")
}

// openMemory makes the new index in memory of serve --memory-index, with the
// sketch flags of a new index.
func openMemory(f *indexFlags, fs *pflag.FlagSet) (*index.Memory, error) {
	o, err := f.options(fs)
	if err != nil {
		return nil, err
	}
	return index.NewMemory(&o)
}

// readTokens reads bearer tokens, one a line; blank lines and lines starting
// with '#' are skipped.
func readTokens(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var tokens []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if t := strings.TrimSpace(sc.Text()); t != "" && !strings.HasPrefix(t, "#") {
			tokens = append(tokens, t)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("%s holds no token", path)
	}
	return tokens, nil
}

func (o *serveOptions) build() (*server.Options, error) {
	so := &server.Options{RateLimit: o.rateLimit, RateBurst: o.rateBurst, MaxBatchDocs: o.maxBatchDocs,
		RequestTimeout: o.requestTimeout, ShutdownTimeout: o.shutdownTimeout, RepackInterval: o.repackInterval, MetricsAuth: o.metricsAuth}
	if o.repackInterval > 0 && o.index.redis != "" {
		return nil, usagef("--repack-interval is for a Pebble index (--data): an index on Redis has no packed postings to repack")
	}
	if o.memoryIndex && (o.index.data != "" || o.index.redis != "" || o.repackInterval > 0 || o.preload) {
		return nil, usagef("--memory-index serves a new index in memory: it excludes --data, --redis, --repack-interval and --preload")
	}
	for _, v := range []struct {
		s   string
		dst *int64
	}{{o.maxBody, &so.MaxBodyBytes}, {o.maxBatchBody, &so.MaxBatchBytes}} {
		n, err := bytesize.Parse(v.s)
		if err != nil {
			return nil, usageError{err}
		}
		*v.dst = n
	}
	n, err := bytesize.Parse(o.maxText)
	if err != nil {
		return nil, usageError{err}
	}
	so.MaxTextBytes = int(n)
	switch {
	case o.tokenFile != "":
		if so.Tokens, err = readTokens(o.tokenFile); err != nil {
			return nil, usageError{err}
		}
	case os.Getenv("NEARDUP_TOKEN") != "":
		so.Tokens = []string{os.Getenv("NEARDUP_TOKEN")}
	}
	if o.shadowData != "" && (o.index.data == "" || o.index.redis != "") {
		return nil, usagef("--shadow-data is for a Pebble primary (--data)")
	}
	if o.shadowKeyFile != "" && o.shadowData == "" {
		return nil, usagef("--shadow-key-file is the key of --shadow-data's index; give both")
	}
	if o.shadowQueue < 1 {
		return nil, usagef("--shadow-queue %d; must be at least 1", o.shadowQueue)
	}
	if o.shadowWaitSet && o.shadowData == "" {
		return nil, usagef("--shadow-apply-wait is for a shadow index; give --shadow-data too")
	}
	if o.shadowApplyWait < time.Millisecond || o.shadowApplyWait > time.Hour {
		return nil, usagef("--shadow-apply-wait %v; must be 1ms..1h", o.shadowApplyWait)
	}
	if o.metricsAuth && len(so.Tokens) == 0 {
		return nil, usagef("--metrics-auth needs a token (--token-file or $NEARDUP_TOKEN)")
	}
	if err := so.Validate(); err != nil {
		return nil, usageError{err}
	}
	return so, nil
}

func newServeCmd(io IO) *cobra.Command {
	o := &serveOptions{}
	o.index.sketch.Key.Warn = io.Err
	cmd := &cobra.Command{
		Use:   "serve --data DIR [--addr 127.0.0.1:8080] [flags]",
		Short: "Serve the online near-duplicate API over a persistent index",
		Long: `serve answers JSON over HTTP from a persistent index (Pebble in --data, made by
neardup index build, or a shared index on Redis with --redis), or from a new
index in memory (--memory-index; lost when the server stops), under the sketch
stored in the index (MinHash, or SimHash with its distance and weights):

  POST   /v1/check              duplicates of a document; nothing stored
  POST   /v1/documents          check, and store the document if it is new
  POST   /v1/documents:batch    the same for NDJSON lines, answered in NDJSON
  GET    /v1/documents/{id}     a stored document's id and metadata
  DELETE /v1/documents/{id}     delete a document
  GET    /v1/shadow             the comparison with the shadow index (--shadow-data)
  GET    /healthz /readyz /metrics /openapi.yaml

A "new" answer is sent once the document is durable (its WAL record synced); a
retry of a request that stored its document is answered "new" again.
A damaged block of the index fails the requests that read it (500) and turns
/readyz 503; a full or read-only disk makes writes answer 503 (and /readyz)
until the server is restarted once it has room. /metrics is open unless
--metrics-auth, which makes it take the bearer tokens too.
SIGTERM or SIGINT stop accepting requests and finish those in flight first.
With --repack-interval (Pebble only) the server packs the postings inserts
wrote, as neardup index repack does, in the background; shutdown interrupts a
repack in progress, which leaves the index consistent.
With --golden TRUTH --golden-corpus CORPUS the server checks the golden
documents (which must be in the index) against the index at start and every
--golden-interval, read-only, and exports recall and precision at the index's
threshold (neardup_golden_recall, neardup_golden_precision), as neardup eval
score would score the pairs the index finds among them.
With --shadow-data SHADOW (an index built with other bands, params or spec)
every acknowledged write is also journaled for the shadow (fsynced before the
answer) and applied to it in the background, and every check also runs on it
off the latency path (at most --shadow-queue waiting; more are dropped and
counted). A check waits for the shadow to apply the writes acknowledged
before it for at most --shadow-apply-wait (5s); one still waiting is not
compared and counts as stale (neardup_shadow_stale_total): raise it for a
shadow that is slow to catch up, e.g. after a restart with a long journal.
GET /v1/shadow and the neardup_shadow_* metrics compare the two.
neardup index promote switches the shadow in (docs/shadow.md).
The API is described in server/openapi.yaml (also served at /openapi.yaml).`,
		Example: `  neardup serve --data idx --addr 127.0.0.1:8080
  NEARDUP_TOKEN=s3cret neardup serve --data idx --rate-limit 100
  neardup serve --data idx --repack-interval 6h
  neardup serve --data idx --golden golden.truth --golden-corpus golden.jsonl --golden-interval 1h
  neardup serve --data idx --shadow-data idx-b32
  neardup serve --memory-index --threshold 0.9
  neardup serve --redis 10.0.0.1:7001,10.0.0.2:7001,10.0.0.3:7001 --threshold 0.85`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.shadowWaitSet = cmd.Flags().Changed("shadow-apply-wait")
			so, err := o.build()
			if err != nil {
				return err
			}
			if err := o.golden.validate(cmd.Flags()); err != nil {
				return err
			}
			return runServe(cmd.Context(), io, o, so, cmd.Flags())
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func runServe(ctx context.Context, stdio IO, o *serveOptions, so *server.Options, fs *pflag.FlagSet) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()
	logger := slog.New(slog.NewTextHandler(stdio.Err, nil))
	so.Logger = logger
	o.index.logger = logger
	if o.index.data != "" {
		if err := refusePromoted(o.index.data); err != nil {
			return err
		}
	}
	if err := o.golden.load(ctx, so); err != nil {
		return err
	}
	var idx index.Index
	var err error
	if o.memoryIndex {
		idx, err = openMemory(&o.index, fs)
	} else {
		idx, err = o.index.open(ctx, fs)
	}
	if err != nil {
		return err
	}
	defer idx.Close()
	if o.shadowData != "" {
		shadow, err := openShadow(o, logger)
		if err != nil {
			return err
		}
		defer shadow.Close()
		so.Shadow = &server.ShadowOptions{Index: shadow, Journal: server.JournalPath(o.shadowData), QueueSize: o.shadowQueue, ApplyWait: o.shadowApplyWait}
		logger.Info("shadow", "dir", o.shadowData, "index", shadow.Config().String(), "queue", o.shadowQueue, "apply_wait", o.shadowApplyWait)
	}
	if db, ok := idx.(*index.DB); ok && o.preload {
		start := time.Now()
		n, err := db.Preload(ctx)
		switch {
		case errors.Is(err, index.ErrCorrupt):
			// Serve what can be read: the damaged range fails its requests,
			// and /readyz answers 503.
			logger.Error("preload stopped at a damaged block; serving the rest", "bytes", n, "err", err)
		case err != nil:
			return err
		default:
			logger.Info("preloaded", "bytes", n, "seconds", time.Since(start).Seconds())
		}
	}
	s, err := server.New(idx, so)
	if errors.Is(err, server.ErrInvalidOptions) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	st, _ := idx.Stats(ctx)
	logger.Info("serving", "addr", ln.Addr().String(), "documents", st.Documents, "index", idx.Config().String(), "auth", len(so.Tokens) > 0,
		"repack_interval", so.RepackInterval, "golden_documents", len(goldenDocs(so)), "golden_interval", so.GoldenInterval)
	if err := s.Serve(ctx, ln); err != nil {
		return err
	}
	logger.Info("stopped")
	if so.Shadow != nil {
		if err := so.Shadow.Index.Close(); err != nil {
			return err
		}
	}
	return idx.Close()
}

// openShadow opens the shadow index of --shadow-data (its stored config:
// the sketch flags are the primary's), keyed with --shadow-key-file's key
// when it was made under a keyed spec.
func openShadow(o *serveOptions, logger *slog.Logger) (*index.DB, error) {
	cache, err := bytesize.Parse(o.index.cacheSize)
	if err != nil {
		return nil, usageError{err}
	}
	key, err := readKeyFlag("shadow-key-file", o.shadowKeyFile)
	if err != nil {
		return nil, err
	}
	return openData(o.shadowData, &index.Options{MustExist: true, CacheSize: cache, Logger: logger, Key: key})
}

// readKeyFlag reads the key file a flag names (nil for none); errors name
// the flag and the file, never the key.
func readKeyFlag(flag, path string) (*shingle.Key, error) {
	if path == "" {
		return nil, nil
	}
	k, err := keyfile.Read(path, os.Stderr)
	if err != nil {
		return nil, usageError{fmt.Errorf("--%s %s: %w", flag, path, err)}
	}
	return k, nil
}
