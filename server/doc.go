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
package server
