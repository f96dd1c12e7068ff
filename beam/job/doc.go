// Package job runs neardup's batch deduplication as Apache Beam pipelines,
// for corpora larger than one machine. It drives the same core stages
// (corpus, shingle, minhash, lsh, eval, cluster), never a second
// implementation of them, through the same job description as neardup dedup
// (internal/jobspec: options, the sketch's sign-and-band, the verifier, the
// output encoders and the report; it does not import package dedup), and
// writes the same outputs as dedup.Run: with
// Options.SingleFile the bytes of kept.jsonl, clusters.jsonl and pairs.tsv
// are those of neardup dedup with the same options; otherwise each output is
// cut into shards that, read in order, are that file. report.json has the
// same counts, buckets and histograms. The results are deterministic: they
// do not depend on the runner, the number of workers, bundling or retries.
//
// # Document numbers
//
// Each input file is a split, read whole by one worker. A document is
// numbered ord = split<<40 | local record index, which orders documents as
// dedup's global record index does, without a pass to count each split's
// records first; every rule dedup applies by index (the lowest member of a
// capped bucket, cluster order, keep-policy ties, the order of equal ids in
// pairs.tsv, kept.jsonl's order) comes out the same.
//
// # Pipelines
//
// A Beam pipeline is a fixed graph, and connected components need rounds
// until a fixed point, so Run starts several pipelines in turn, passing state
// through files under Options.Dedup.TempDir (see package files):
//
//  1. candidates: read and sign each split (corpus, shingle, minhash, lsh
//     band keys) → band-key entries in batches per partition of the
//     bucket-key space → GroupByKey(partition) → sort and lsh.Grouper
//     (buckets keyed by jobspec's bucket keys, the band keys' high 32 bits; the
//     hot-bucket cap; each pair with its bucket) → GroupByKey(a) to drop
//     repeated candidates and give each pair a verification task (the
//     largest bucket that paired it, a chunk of at most 1,024 of a's pairs
//     there) → the documents each task needs, by split →
//     GroupByKey(split): re-read those documents for their signature and,
//     for exact verification, text (s2-compressed), sent once to each of
//     their tasks → CoGroupByKey(task) → verify each task's pairs (minhash
//     Similarity; for exact verification the feature sets, recomputed once
//     a document and task, and eval.Jaccard). A document's data so travels
//     at most once per bucket key it has, not once per candidate pair
//     → pairs.tsv (range shards, sorted), and the first rounds of connected
//     components on the verified pairs (package cc).
//  2. components (zero or more): more rounds, until the fixed point.
//  3. outputs: label each clustered document with its component's lowest
//     member → CoGroupByKey(label) → per component, cluster.Components (or
//     cluster.Star on the component's pairs) with the keep policy →
//     clusters.jsonl (shards by the split of each cluster's first member,
//     numbered with the counts of earlier shards) → kept.jsonl (each split
//     re-read, its removed documents left out, records copied with
//     corpus.Writer).
//
// The driver then writes report.json from the statistics the pipelines
// wrote.
//
// # Types
//
// The exported types other than Options, Runner and the constants are the
// data the pipelines pass between stages, exported because Beam's coders
// read their fields (and schemas need exported fields); they are plain
// values, not an API.
//
// # Star clustering
//
// Star clustering is a greedy pass over the documents in keep-policy order.
// Components are independent under it, so the job runs cluster.Star on each
// connected component, on one worker, with the component's verified pairs:
// exactly dedup's result. A component's pairs must then fit one worker's
// memory (8 bytes per pair plus the member list); with components the
// member list alone does (it is one line of clusters.jsonl anyway).
package job
