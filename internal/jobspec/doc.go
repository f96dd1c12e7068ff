// Package jobspec is the description of a neardup deduplication job that
// every driver runs the same way: the one-machine driver (package dedup,
// "neardup dedup"), the Apache Beam job (beam/job, "neardup-beam") and, for
// signing and banding, the online index (package index). It holds what
// decides a job's outputs and nothing about how a driver schedules the work:
//
//   - Options (defaults, ranges, validation), Banding (bands, rows and probe
//     to an lsh banding), and Job, the resolved description as plain data;
//   - the sketch: Sketch and Sketcher (the sign-and-band of one document),
//     and the one rule for bucket keys and band-key entries (BucketKeyBits,
//     PackEntry);
//   - the Verifier (the verify switch), Verdict and the cluster options;
//   - the output formats: PairRow (pairs.tsv, ids encoded by
//     internal/docid), AppendClusterLine (clusters.jsonl), Report and
//     EncodeReport (report.json), the pair histogram and TopBuckets.
//
// Its flags are in internal/jobflags, so that library packages do not link
// the flag library. It is internal: package dedup re-exports what a library
// user names (dedup.Options, dedup.Report).
//
// # The sketch seam
//
// Drivers sign, band and estimate only through Sketch and Sketcher, made by
// SketchConfig.New, the one switch between sketches. MinHash is the only
// sketch today. A second one, SimHash say, implements:
//
//   - Sketcher.Sign: the text's features (shingle) hashed into one 64-bit
//     fingerprint (Sketch.Words() = 1), and whether the text had none;
//   - Sketch.AppendBucketKeys: one key per permutation table, the
//     fingerprint's permuted block prefix mixed with the table number and cut
//     to BucketKeyBits;
//   - Sketch.Similarity: the estimate from the Hamming distance of two
//     fingerprints (1 − d/64, mapped to the Jaccard scale the threshold is
//     on);
//   - Sketcher.Metrics: signatures and features (no bins);
//
// and adds to SketchConfig the field that selects it with its parameters,
// a case in New and AppendBucketKeys, its flag in jobflags, and its
// configuration lines in NewReport. The drivers do not change: they store
// Words() words a document, group by bucket keys, and verify with the
// Verifier.
//
// Everything in the package is deterministic; the types' docs say which
// values are safe to share.
package jobspec
