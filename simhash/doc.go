// Package simhash computes 64-bit SimHash fingerprints of weighted feature
// sets and finds stored fingerprints within a small Hamming distance with the
// block-permutation index of Manku, Jain and Das Sarma.
//
// SimHash estimates angular (cosine) similarity; it is approximate, not
// cryptographic, and it is meant for near-exact duplicates (Jaccard above
// about 0.9). For moderate similarity use MinHash with LSH (packages minhash
// and lsh): on real text, pairs at Jaccard 0.8 to 0.9 are 6 to 8 bits apart
// on average, and 13–22 % of the pairs at Jaccard 0.8 or more are farther
// than 8 bits, the largest k an Index or Layout takes.
//
// # Fingerprints
//
// Charikar (STOC 2002) showed that for a random hyperplane through the origin
// with normal r, two vectors u and v fall on different sides with probability
// θ/π, θ the angle between them. SimHash takes 64 such hyperplanes at once.
// Each feature f carries a weight w_f and a well-mixed 64-bit hash h_f; bit i
// of the fingerprint is
//
//	sign( Σ_f w_f · s_{f,i} ),  s_{f,i} = +1 if bit i of h_f is 1, else −1,
//
// so row i of the ±1 matrix s plays the normal of hyperplane i. With hashes
// that behave as independent uniform bits and many features, the votes are
// close to jointly normal (central limit theorem) and each bit of two
// fingerprints differs with probability θ/π, independently across bits: the
// expected Hamming distance is 64·θ/π. For sets with unit weights, cos θ =
// |A∩B| / √(|A|·|B|); for equal sizes that is 2J/(1+J), J the Jaccard
// similarity, giving these expected distances:
//
//	Jaccard   0.99  0.97  0.95  0.90  0.80  0.50  unrelated
//	distance   2.0   3.6   4.6   6.6   9.7  17.1  32 ± 4
//
// A vote of exactly 0 gives bit 0. With unit weights that happens only when
// the number of features is even; it biases both fingerprints of a pair the
// same way, so it barely moves their distance.
//
// Fingerprint weighs each occurrence of a feature once, so repeated features
// count by term frequency. FingerprintWeighted and Builder.Add take float64
// weights (for example tf-idf). Two fingerprints are comparable only if their
// features came from the same shingle Spec (hence the same hash function and
// seed) and the same weighting.
//
// # Weighting texts: TF and TF-IDF
//
// A Hasher is what a driver calls per document: it streams a text's features
// from a shingle.Shingler into the vote counters, without allocating, under
// one of the two weightings of sigfile's SimHash params. With TF (the zero
// Hasher) each occurrence votes 1, so a feature weighs its count in the
// document. With TF-IDF (NewHasher(idf)) each occurrence votes the feature's
// IDF weight, an integer round(8·(ln((N+1)/(df+1)) + 1)), so a feature weighs
// its count times its idf (IDF explains the formula). The document
// frequencies come from a first pass over the corpus into a DFTable, a
// count-min sketch of fixed size (8 MiB by default) that merges across
// workers and has a checksummed encoding whose checksum is the table's
// fingerprint, the df field of the params. Its counts only err upwards, by
// collisions, and those matter for rare features, whose weights bunch at the
// top of the scale anyway: the weights need rare told from common, not df = 1
// from df = 3. Measured, a table 64 times the default size (near-exact
// counts) changed recall by under 0.02.
//
// Measured on the articles, generated near-copies and the Go source tree
// (BENCHMARKS.md, "SimHash: weighting and k"), TF-IDF does not pay: at the
// same k it mostly finds fewer of the near-duplicate pairs than TF (in 58 of
// 72 cases; as many in 12, one or two pairs more in 2), for fewer candidates,
// and where the two catch the same share their candidates are about equal.
// The reason is structural: the features two near-duplicates do not share are
// those the edits made, found in one document only, so IDF gives them the
// largest weight and pushes the pair apart, while the features they share
// appear in at least both and weigh less. TF-IDF also costs the first pass
// and several times TF's fingerprinting time (a table lookup and a few more
// counters per feature). Prefer TF; TF-IDF is there for corpora where
// boilerplate shared by unrelated documents dominates the candidates.
//
// # The index
//
// Split the 64 bits into B disjoint blocks. If two fingerprints differ in at
// most k bits, those bits fall into at most k blocks, so at least B−k blocks
// are equal (pigeonhole). For an index answering any k ≤ K, keep one table
// per set S of B−K blocks, C(B, K) tables in all. In the table for S every
// fingerprint is stored permuted so that S's blocks come first; a query
// permutes its fingerprint the same way and looks up the entries whose first
// d_S bits (the total size of S's blocks) equal its own. If a stored
// fingerprint is within k ≤ K bits, the set of its blocks equal to the query's
// has at least B−K members, so it contains some table's S, and that table's
// lookup finds it: recall is exact. Every candidate's full distance is then
// checked with one popcount, so there are no false positives either. A match
// found by several tables is reported only by the lowest-numbered one whose
// blocks it matches, so no deduplication pass is needed.
//
// Each table is a sorted array of (permuted fingerprint, id) pairs with a
// directory over the leading bits, as in the paper, rather than hash buckets
// keyed on the prefix: 16 bytes per entry with no per-bucket overhead, one
// contiguous range per probe, and bulk loading by radix sort. Online inserts
// go to a small sorted delta per table that is merged into the array when it
// passes about 2√n entries.
//
// The trade-off is tables (memory, 16 bytes per entry each, and probes per
// query) against prefix length: a random fingerprint shares a d-bit prefix
// with about n·2^−d of n stored ones, so a query checks about Σ_S n·2^−d_S
// candidates. Some layouts (candidates per query for random fingerprints):
//
//	K  B  tables  prefix bits  bytes/entry  n = 1M   n = 100M
//	3  4     4        16            64         61       6100
//	3  5    10      25-26          160        0.2         21
//	3  6    20      31-33          320      0.005        0.5
//	4  5     5      12-13           80        730      73000
//	4  6    15      20-22          240          6        620
//	5  7    21      18-19          336         69       6900
//	8 11   165      16-18         2640       1000     100000
//
// The default B = K+1 takes the fewest tables; with K = 3 a query checks about
// n/16384 candidates, a few microseconds up to ten million entries. Larger
// indexes, or K above 3, want more blocks. A query for k < K probes every
// table all the same, so its cost does not fall with k.
//
// # Batch candidates
//
// For a batch job the tables need not be built: a Layout turns each
// fingerprint into one packed uint64 entry per table, (table | the table's
// leading bits of the permuted fingerprint | document), which sort with the
// same machinery as MinHash band keys (package lsh, the external sort of
// package internal/extsort) so that each bucket of entries sharing a table
// and a key is a run. A Grouper scans the sorted runs, compares every pair of
// documents in a bucket with one popcount of their fingerprints (which the
// caller keeps, 8 bytes a document), and emits the pairs within distance k
// from the lowest-numbered table whose blocks they agree on: each such pair
// exactly once, nothing farther, with no deduplication pass. Layout.Pairs
// does it all in memory. When the corpus needs more than 64 − table bits −
// prefix bits for document numbers, keys are cut short: buckets hold more
// documents, and more comparisons are made, but no pair is missed.
//
// Which k, and how many blocks, a Jaccard threshold needs depends on the
// corpus, since SimHash estimates the angle between weighted vectors, not
// Jaccard similarity: package plan measures it on a sample (plan.MakeSimHash).
package simhash
