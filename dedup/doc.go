// Package dedup is neardup's batch deduplication: Run reads one or more
// corpora, finds every pair of documents whose Jaccard similarity reaches a
// threshold, groups them into clusters and keeps one document per cluster.
//
// Run goes through five stages, each timed in the report: sign (shingle and
// MinHash every document, and band its signature into LSH keys), candidates
// (sort the band keys and pair the members of each bucket), verify (check
// each candidate exactly, by its signatures, or not at all; see Verify),
// cluster (connected components or stars; see ClusterMode) and write. Data
// that grows with the corpus is held within Options.Memory and spills to
// temporary files past it. Into its output directory Run writes kept.jsonl
// (the kept input records, untouched), clusters.jsonl, pairs.tsv,
// report.json (Report) and report.html, all renamed into place only once
// every one is complete. Ids must be unique: a repeated id fails the run,
// naming the file and line of both occurrences, or under SkipBad makes the
// later record a bad one.
//
// The outputs depend only on the inputs and the options, never on the number
// of workers or on whether the run spilled. Package dedup is only the
// one-machine driver (reading files, spilling, the memory budget): the job it
// runs (options, the sign-and-band of a document, verification, the output
// formats and the report) is described in internal/jobspec, which the Apache
// Beam job in beam/ runs too, so both write the same bytes; Options, Report
// and the constants here are aliases of it.
package dedup
