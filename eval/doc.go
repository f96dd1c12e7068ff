// Package eval computes neardup's ground truth: the exact list of all pairs of
// documents whose feature sets have Jaccard similarity at or above a
// threshold. It is exact, not an estimate (unlike minhash and lsh), and it
// never compares all N² pairs: it is a prefix-filtered all-pairs similarity
// join.
//
// # Input and result
//
// A corpus is a [][]uint64: one feature set per document (64-bit feature
// hashes, such as shingles), document i at index i, each set sorted ascending
// without duplicates ([Normalize] puts a slice in that form in place).
// [AllPairs] returns every pair (A < B) with
//
//	float64(|A ∩ B|) / float64(|A ∪ B|) >= threshold,    0 < threshold <= 1,
//
// sorted by (A, B), each with its exact overlap and Jaccard value. That float64
// expression is the definition: it is what [Jaccard] returns and what the join
// compares. Empty sets never pair. [AllPairsFunc] streams the same pairs
// without collecting them, and [NewCollection] prepares a corpus once for
// joins at several thresholds.
//
// # How the join works
//
// The join follows AllPairs (Bayardo, Ma and Srikant, WWW 2007) and PPJoin
// (Xiao, Wang, Lin and Yu, WWW 2008).
//
// Global ordering. Every distinct feature becomes a dense int32 token, in
// ascending order of document frequency (ties by feature value), and each set
// becomes its tokens in ascending order: rarest first. Documents are
// processed in ascending order of size (ties by index), so each is compared
// only with documents at most its size.
//
// Required overlap. For sizes |x| and |y|, a pair can only pass with an
// overlap of at least α(|x|+|y|), the least o with o/(|x|+|y|−o) ≥ t; in real
// numbers α(s) = ⌈t/(1+t)·s⌉.
//
// Size filter. Since J(x, y) ≤ |y|/|x| for |y| ≤ |x|, a document x meets only
// partners of at least minSize(|x|) ≈ ⌈t·|x|⌉.
//
// Prefix filter. If two sets sorted in the same global order share at least α
// tokens, then their first |x|−α+1 and |y|−α+1 tokens share at least one.
// Each document is indexed under its first |y|−α(2|y|)+1 tokens (its partners
// are at least as large, so they need at least α(2|y|) shared tokens), and
// probes the index with its first |x|−α(|x|+minSize(|x|))+1 tokens. Only
// documents met this way become candidates; rare tokens come first, so
// posting lists are short. Tokens of document frequency one are skipped: they
// cannot meet anything.
//
// Positional filter. When x's token at position i meets y's token at
// position j, the overlap is at most the matches counted so far, plus one,
// plus min(|x|−i−1, |y|−j−1). A candidate whose bound falls below α(|x|+|y|)
// is dropped for good.
//
// Verification. A surviving candidate's overlap is its counted prefix
// matches plus the matches after the last of them: every other shared token
// lies beyond it in both sets. The remaining tokens are counted by a merge
// or, when several candidates survive, by testing y's against a bitmap of
// x's, stopping as soon as the misses show that α can no longer be reached.
// Overlaps of accepted pairs are therefore complete and exact.
//
// # Why the result is exact
//
// Every filter only drops pairs that provably fail, and verification applies
// the definition itself. The bounds are integers derived from the very
// predicate the verification applies, float64(o)/float64(u) >= t: the real
// formulas (⌈t/(1+t)·s⌉, ⌈t·n⌉) serve only as a first guess, corrected in
// whole steps by evaluating that predicate. This is sound because the
// predicate is monotone (float64 division is correctly rounded, hence
// monotone in o/u), and it matters. With t = 0.8, a pair with overlap 4 and
// union 5 has float64(4)/float64(5) == 0.8 and passes, yet the float64 0.8
// is slightly above 4/5, so rational arithmetic on the float's exact value
// would reject it; and for sets of 35 and 28 sharing 28 (J = 0.8 exactly),
// 0.8/(1+0.8)·63 evaluates to 28.000000000000004, whose ceiling, 29, would
// have the filters lose the pair. The tests plant pairs at
// exactly J = t for every threshold o/u with u ≤ 40 and compare whole corpora
// against a brute-force reference.
//
// # Parallelism and determinism
//
// Building a [Collection] (counting and ordering features, remapping the
// sets) and probing run on Options.Workers goroutines; probing hands out
// chunks of documents dynamically and reassembles their output in chunk
// order. Results depend only on the input and threshold: identical, to the
// bit, for any number of workers.
//
// # Memory
//
// A [Collection] keeps 4 bytes per feature occurrence and 16 per non-empty
// set; building it needs about 16 bytes per feature occurrence more for a
// while (up to 28 if feature values cluster badly). A join adds its prefix
// index, 8 bytes per indexed token (about a third of all tokens at t = 0.5,
// more at lower thresholds) and 4 per distinct token; each worker adds 16
// bytes per set, 4 per token of the largest set and a bitmap of one bit per
// distinct token shared by two or more sets (capped at 32 MiB, past which
// verification merges instead). [AllPairs] holds its result, 24 bytes a
// pair; [AllPairsFunc] only a few chunks' worth per worker. So memory grows
// linearly with the corpus and, for AllPairs, with the output; nothing
// spills to disk. `neardup eval truth` adds the shingled sets it builds the
// Collection from (8 bytes per feature occurrence, freed once it is built)
// and 12 bytes per pair found; it peaks at about 40 bytes per feature
// occurrence: 370 MB for the Go source tree below (9.32 M occurrences), 690
// MB for twice that. A corpus past the machine's memory needs a sample.
//
// # Performance
//
// Prefix filtering shines on sparse features such as word 5-grams: on every
// .go file of GOROOT/src (7.7k documents, 90 MB of text, 9.32 M word 5-gram
// occurrences, 6.83 M distinct) the whole join at t = 0.5 takes about 0.35 s
// on 2 cores (see BENCHMARKS.md). Dense features, such as char 5-grams of
// prose, share common tokens so widely that at low thresholds almost every
// pair becomes a candidate: the join stays exact but approaches the cost of
// comparing all pairs.
//
// # Truth files and scores
//
// [ReadPairFile] reads pair files: the truth files `neardup eval truth` writes
// ([WriteTruthHeader], [AppendPairLine]: a header with the threshold, document
// count and shingle spec, then idA, idB and the exact Jaccard a line), dedup's
// pairs.tsv, and plain id pairs such as the articles set's .truth files.
// [ScorePairs] compares predicted pairs with truth pairs by id — precision,
// recall, F1, and recall by similarity band beside an S-curve's prediction
// ([SCurve]) — and [ScoreClusters] compares clusters with the connected
// components of the truth pairs: adjusted Rand index ([CompareClusterings])
// and pair-counting precision, recall and F1. [Score] gathers both, as
// `neardup eval score` prints them and dedup's report.json holds them.
package eval
