// Package lsh bands MinHash signatures into locality-sensitive hash keys,
// so that documents likely to be near-duplicates share a key and become
// candidate pairs. It chooses the banding (the S-curve optimisers), computes
// band keys, and turns sorted (key | document) entries into candidate pairs
// for batch work. The online index, on the same band keys, is package index
// (persistent on Pebble or Redis, or in memory).
//
// LSH is a filter, not a verdict: candidates must be verified (estimated or
// exact Jaccard), and a true near-duplicate is missed with the probability
// given by the S-curve. The band keys are not cryptographic; an adversary
// who controls the signatures can force or avoid collisions.
//
// # The S-curve
//
// A MinHash signature of k slots agrees with another slot by slot with
// probability j, their Jaccard similarity, independently across slots.
// Banding cuts the first b·r slots into b bands of r rows; a band collides
// when all its r rows agree, with probability j^r, and a pair becomes a
// candidate when at least one band collides:
//
//	P(j) = 1 − (1 − j^r)^b
//
// As a function of j this is an S-shaped curve rising from 0 to 1, steepest
// near its inflection point, roughly (1/b)^(1/r). Pairs below the chosen
// threshold t that still collide are false positives, pairs above it that
// never collide are false negatives. Following datasketch, their weights are
// the areas
//
//	FP(t) = ∫₀ᵗ P(s) ds        FN(t) = ∫ₜ¹ (1 − P(s)) ds
//
// (the expected rates for similarities spread uniformly over [0, 1]).
// [Optimal] minimises w_fp·FP + w_fn·FN over b·r ≤ k; [ForRecall] requires
// P(t) ≥ a recall and minimises FP. For t = 0.8 and k = 128 with equal
// weights the optimum is b = 9, r = 13, with P(0.8) ≈ 0.40: equal weights
// favour precision, so pass a larger fnWeight or use ForRecall when missing
// duplicates costs more than verifying extra candidates.
//
// For a histogram of pair similarities (from a sample),
// [Params.CandidateFraction] gives the expected share of pairs that become
// candidates, and so the verification work.
//
// P is evaluated as −expm1(b·log(1 − q)) with q = j^r, using log1p(−q) when
// q is small and log(−expm1(r·log j)) for 1 − q when q is near 1, so that
// neither tail rounds to 0 or 1 early. The areas are computed by adaptive
// Gauss–Kronrod quadrature, checked in the tests against exact rational
// closed forms (P is a polynomial in s).
//
// # Multi-probe
//
// [Params.Probe] = m ≥ 1 trades more keys for recall at the same (b, r): each
// band emits C(r, m) keys, one per way of leaving m of its r rows out, so a
// band collides when at least r − m rows agree:
//
//	q_m(j) = Σ_{i=0}^{m} C(r, i)·j^(r−i)·(1−j)^i     P(j) = 1 − (1 − q_m(j))^b
//
// Level 1 multiplies the keys (and index postings) by r and level 2 by
// r(r−1)/2. In exchange the S-curve gets steeper for the same signature
// slots: for b = 9, r = 13 (117 slots), level 1 lifts P(0.8) from 0.40 to
// 0.91 while P(0.5) rises only to 0.015, whereas the best plain banding of at
// most 117 slots reaching P(0.8) ≥ 0.91 (b = 14, r = 8) passes P(0.5) = 0.053
// (FP area 0.128 against 0.100). Probing thus buys precision at a given
// recall and signature length, paid for in keys: 117 per document instead
// of 14. MaxProbe is 2.
//
// # Batch candidates
//
// For batch work keys go into flat arrays, not maps. Each band key of each
// document becomes one uint64 entry, PackEntry(key, doc, docBits): the
// key's high 64−docBits bits above the document index, docBits = DocBits(n)
// for n documents. Sorted ascending (SortEntries, a radix sort), equal keys
// are adjacent, forming buckets with their documents in ascending order. A
// Grouper scans sorted entries and emits pairs PackPair(a, b), a < b: all
// pairs of a bucket of at most Cap documents, or for a larger bucket
// (boilerplate shared by very many documents) only the links from its
// first member to every other, recording the bucket in the metrics. Pairs
// from different bands repeat, so they are sorted and deduplicated
// (SortUnique). [Candidates] does all of this in memory. Because only high
// key bits are kept, two different keys collide with probability about
// 2^−(64−docBits) per pair of keys; the few spurious candidates this adds are
// removed by verification. With CandidateOptions.Reference, the lowest
// document numbers are reference documents (an archive deduplicated
// before), paired with the others but never with each other.
//
// A driver with a memory budget streams instead:
//
//  1. append entries while signing; when the buffer is full, SortEntries it
//     and write it to disk as a run;
//  2. merge the runs with NewMerger(runs, false) and feed the merged
//     entries, in chunks, to a Grouper (Flush at the end);
//  3. whenever the pair buffer fills, SortUnique it and spill it as a run;
//  4. merge the pair runs with NewMerger(runs, true): the sorted, distinct
//     candidate pairs, the same as Candidates would return.
package lsh
