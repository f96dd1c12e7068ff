// Package server is the HTTP API of the online near-duplicate service
// (`neardup serve`) over an index.Index: JSON in and out, limits on body,
// text and batch sizes, a timeout per request, graceful shutdown that
// finishes writes in flight, optional bearer-token authentication and
// per-client rate limits, errors as JSON with stable codes, Prometheus
// metrics and health endpoints. It also holds the Client that `neardup
// query`, `neardup check` and the load generator use.
//
// The API is described by openapi.yaml in this package (served at
// /openapi.yaml); the tests validate every response against it.
//
//	POST   /v1/check             {"id"?, "text", "meta"?, "threshold"?, "limit"?} → CheckResult; stores nothing
//	POST   /v1/documents         the same with an id: 201 "new" (stored) or 200 "duplicate"
//	POST   /v1/documents:batch   NDJSON documents → NDJSON CheckResults, in order
//	GET    /v1/documents/{id}    {"id", "meta"}
//	DELETE /v1/documents/{id}    204
//	GET    /v1/shadow            the comparison with the shadow index (ShadowReport); 404 without one
//	GET    /healthz /readyz /metrics /openapi.yaml
//
// A CheckResult is {"id", "status": "new" | "duplicate", "duplicates":
// [{"id", "similarity", "meta"}]}, best match first. Errors are
// {"error": {"code", "message"}}; the codes and their statuses are the Code
// constants.
//
// Retries are safe: a check-and-insert (single or a batch line) whose id is
// already stored with the same signature and metadata is answered "new" as
// the request that stored it was (200; neardup_documents_retried_total), the
// same id with another text or metadata 409 duplicate_id. A batch body is
// read a line at a time as it arrives and each document signed at once, so
// memory holds one line and the signatures, never the body; past
// MaxBatchBytes the answer is 413 and nothing is stored.
//
// The Authorization scheme is case-insensitive ("bearer" works). /metrics is
// open (it shows counts and sizes, never ids or texts) unless
// Options.MetricsAuth (neardup serve --metrics-auth).
//
// # Faults
//
// Over an index.DB, a request that reads a damaged block answers 500
// internal (one line naming the file) and the others go on; a full or
// read-only disk makes writes answer 503 unavailable naming the cause, while
// checks go on. Either way /readyz answers 503 (index.DB.Health) until the
// index is reopened, neardup_index_corruptions_total or
// neardup_index_storage_faults_total counts, and the log says it once, on
// one line. fault_test.go damages an sstable, fills a tmpfs (or an injected
// filesystem) and makes the data directory read-only under a serving index,
// and checks that every acknowledged document is kept.
//
// # Signing
//
// The server signs texts with index.Config.NewSigner — the shingle and
// minhash code of the batch job, under the index's stored spec and params —
// from a pool of signers, and parses requests with fastjson (a 1 KB document
// in under a microsecond, against 20 µs for encoding/json's Decoder), after
// checking that the body is valid UTF-8.
//
// # Metrics
//
// newMetrics registers, on Options.Registry: requests and failures by route
// (and error code), request latency by route, documents by outcome, signing
// latency, text bytes, one-permutation bins and empty bins (the empty-bin
// rate), and from the index: candidates per document, bucket sizes, full
// buckets, candidates dropped by verification (the verify drop rate),
// dropped postings, inserts, deletes, documents and bytes. With
// Options.RepackInterval also the periodic repack's: repacks run and failed
// (neardup_index_repacks_total, neardup_index_repacks_failed_total),
// postings moved and packed values written
// (neardup_index_repack_postings_total, neardup_index_repack_groups_total)
// and the duration of each (neardup_index_repack_duration_seconds).
// Drift histograms (drift.go) show a shift in the input: the best match's
// similarity of each checked document (neardup_check_best_similarity, 0 when
// none), and the features and text bytes of each signed document
// (neardup_document_features, neardup_document_bytes). With Options.Golden
// also the golden run's: neardup_golden_recall and neardup_golden_precision
// by index (primary, shadow), neardup_golden_runs_total,
// neardup_golden_failures_total and neardup_golden_last_run_timestamp_seconds.
// deploy/prometheus/alerts.yml and deploy/grafana/neardup.json (in the
// repository) alert on and show them; a test checks that every metric they
// name is exported.
//
// # Golden set
//
// Options.Golden (neardup serve --golden TRUTH --golden-corpus CORPUS) is a
// labeled set of documents, which must be in the index, and the true pairs
// among them. Serve checks it against the index at start and every
// Options.GoldenInterval (an hour by default; the next run an interval after
// one ends), and Server.GoldenRun on demand: each golden document is signed
// under the index's config and queried at its threshold, its own id
// excluded, and the matches that are golden documents too are scored
// against the truth exactly as `neardup eval score` scores a pairs.tsv.
// Nothing is stored or changed. When a shadow index is served, the same run
// checks it too, signed under its own config (Options.Shadow; golden.shadow). A run
// that fails counts in neardup_golden_failures_total and leaves the gauges
// as they were; an interrupted one (shutdown) is only logged.
//
// # Repack
//
// Options.RepackInterval (neardup serve --repack-interval) makes Serve run
// index.DB.Repack in a goroutine of its own while it serves, so that the
// postings inserts write one key each (7.6 bytes) are packed (about 4 bytes)
// without stopping the service: the first repack one interval after Serve
// starts, each next one an interval after the previous one ended, so
// repacks never overlap or pile up. Queries and inserts go on during a
// repack and answer exactly as before it (see "Repack" in the index package
// doc); deletes wait for the batch in progress. Each repack logs one line
// ("repacked", with the postings moved, groups written, sizes and seconds)
// and updates the metrics above. At shutdown Serve cancels a repack in
// progress and returns only once it has stopped, so the caller may close the
// index then; the repack stops between batches, each durable and atomic, so
// the index is consistent and the next repack finishes the work. An
// interrupted repack is logged, not counted as failed. A Redis index has no
// packed postings: New refuses RepackInterval over it (ErrInvalidOptions).
//
// # Shadow index
//
// Options.Shadow (neardup serve --shadow-data DIR) runs a second index, with
// other bands, params, spec or key, beside the primary, to be compared on
// live traffic before it replaces it:
//
//   - Writes. A document the server answers "new" (single, batch line, or a
//     retry answered "new") is signed under the shadow's config and
//     journaled in ShadowOptions.Journal (JournalPath(DIR)), synced, before
//     the answer; a delete is journaled before the primary makes it. The
//     journal — not the shadow — is on the write path: a slow or stuck
//     shadow costs an insert one append and one fsync, never a wait. A
//     goroutine applies the journal to the shadow in order (a failure is
//     retried every second, never skipped) and empties it once all is
//     applied (past 4 MiB, and when the server stops). Appends beside each
//     other share one fdatasync. Applying is idempotent (an insert of a stored id and a
//     delete of an absent one change nothing; the last record of an id
//     decides), so a journal left by a crash is applied again at the next
//     start. The shadow therefore holds, once its journal is applied, every
//     write the server acknowledged: this is what promotion relies on. A
//     write the primary made but the server did not acknowledge (a crash
//     between the two) may be missing from the shadow; its retry is
//     answered "new" and journaled.
//   - Checks. POST /v1/check is answered by the primary alone; the text, the
//     query and the primary's matches are then offered to a bounded queue
//     (ShadowOptions.QueueSize) without blocking: when it is full the check
//     is dropped and counted (neardup_shadow_dropped_total). A check
//     carries the journal's position when it is queued, and the worker
//     waits until the shadow has applied the journal up to it, so that the
//     shadow holds every write acknowledged before the primary answered; a
//     check still waiting ShadowOptions.ApplyWait after it was queued is
//     not compared and is counted (neardup_shadow_stale_total). One worker
//     signs the text under the shadow's config, queries the shadow and
//     compares: verdict agreement (duplicate or new), matched documents
//     found by both or one side, candidates per document and query time of
//     each. The primary's candidates of a check are the growth of its
//     candidate count over the query: exact when checks do not overlap, an
//     over-estimate when they do. Checks that are part of a
//     check-and-insert are not compared.
//   - Report. GET /v1/shadow answers the comparison so far (ShadowReport),
//     and the neardup_shadow_* metrics count the same: checks_total,
//     dropped_total, stale_total, agreements_total, matches_total{side}, queue_depth,
//     candidates{index}, check_duration_seconds{index} and
//     inserts_failed_total.
//
// Promotion (neardup index promote) is done with the server stopped
// (SIGTERM, or after a crash): ReplayShadowJournal applies what is left of
// the journal, after which the shadow holds every acknowledged write, and
// the command marks the old primary as replaced. See the command's help.
package server
