// Package jobspec is the description of a neardup deduplication job that
// every driver runs the same way: the one-machine driver (package dedup,
// "neardup dedup") and the Apache Beam job (beam/job, "neardup-beam"). It
// holds what decides a job's outputs and nothing about how a driver
// schedules the work:
//
//   - Options (defaults, ranges, validation), Banding (bands, rows and probe
//     to an lsh banding), and Job, the resolved description as plain data,
//     whose sketch (internal/sketch: the sign-and-band of one document and
//     the bucket-key rule, which the online index uses too) every driver
//     signs and bands with;
//   - the Verifier (the verify switch), Verdict and the cluster options;
//   - the output formats: PairRow (pairs.tsv, ids encoded by
//     internal/docid), AppendClusterLine (clusters.jsonl), Report and
//     EncodeReport (report.json), the pair histogram and TopBuckets.
//
// Its flags are in internal/jobflags, so that library packages do not link
// the flag library. It is internal: package dedup re-exports what a library
// user names (dedup.Options, dedup.Report).
//
// Everything in the package is deterministic; the types' docs say which
// values are safe to share.
package jobspec
