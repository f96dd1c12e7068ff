// Package tune compares LSH bandings offline: from stored MinHash signatures
// (a signature file, package sigfile) and a golden set of pairs (a truth
// file, package eval), it measures for each banding the candidates it makes,
// the recall it reaches per similarity band beside the S-curve's prediction,
// its precision before verification and the memory of its band index,
// without signing or reading any text. It measures candidates, not verified
// pairs: what dedup finds before its verification step.
//
// # What it computes
//
// For each banding (lsh.Params), Run finds exactly the candidate pairs
// neardup dedup finds with that banding on the same corpus: the same band
// keys (lsh.Params.AppendKeys of the stored slots), the same 32-bit bucket
// keys packed above 32-bit document positions, documents without features
// left out, and buckets past the cap linked to their first member
// (lsh.Grouper). Against the truth pairs that count at the threshold (a
// similarity at or above it, or none given), matched by id:
//
//   - recall is the share of truth pairs among the candidates. With exact
//     verification dedup keeps every candidate whose exact similarity
//     reaches the threshold, so when the truth comes from neardup eval truth
//     under the signatures' shingle spec, this is the recall neardup eval
//     score measures on dedup's pairs.tsv;
//   - recall per similarity band is eval.ScorePairs's, each band beside the
//     mean of the S-curve (eval.SCurve: slot width included) over its pairs;
//   - precision before verification is the truth pairs among the candidates
//     over all candidates. It is exact only when the truth lists every pair
//     at or above the threshold (a truth file of eval truth at a threshold no
//     higher); over a labelled sample it is a lower bound, and Result.Notes
//     says so;
//   - memory is postings (documents with features × keys per document) times
//     the bytes a posting takes in dedup's sorted runs and in a packed index.
//
// # The default bandings
//
// Without explicit bandings, Run compares the Frontier for the signatures'
// K: for each recall level (DefaultRecalls, and the recall target), the
// banding with the least false-positive area ∫₀ᵗP among those reaching that
// recall at the threshold (lsh.ForRecall). These are points of the Pareto
// frontier of (P(t), false-positive area) — the S-curve's trade between
// catching pairs at the threshold and letting dissimilar pairs in — and each
// is the banding dedup --recall R picks, so a row of the table can be run
// as it is.
//
// # One pass, bounded memory
//
// The signatures are read once: each record's slots are widened once and
// banded under every banding, on up to Options.Workers goroutines (one
// banding each), into one internal/extsort sorter per banding, which spills
// sorted runs to disk past its share of Options.Memory (half the budget,
// split between the bandings). Then each banding's entries are merged into
// buckets by an lsh.Grouper, its candidate pairs sorted and deduplicated by a
// second sorter (a quarter of the budget, split between the bandings grouped
// at once), and the distinct pairs merged with the truth pairs sorted by
// document position. Nothing is kept per candidate pair beyond the sorters;
// the truth pairs and a map of their ids are held in memory. The result is
// the same for any number of workers and whether or not anything spilled.
package tune
