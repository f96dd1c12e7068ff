// Package minhash computes MinHash signatures of feature sets and estimates
// their Jaccard similarity from them. Estimates are approximate by design: two
// signatures of K slots estimate J with standard deviation about sqrt(J(1−J)/K).
// The hashes are not cryptographic; use a keyed shingle.Spec for adversarial
// input.
//
// # Schemes
//
// OnePermutation (the default) hashes each feature once: v = f·M (M an odd
// constant drawn from the seed), puts it in bin ⌊v·K/2^64⌋ and keeps each bin's
// minimum v. Bins no feature reached are filled by optimal densification
// (Shrivastava, ICML 2017): empty bin i copies the minimum of the first
// non-empty bin of its own pseudo-random probe sequence. Every slot then agrees
// between two sets with probability exactly J, however short the sets are.
// Cost: one multiplication per feature plus O(K²/m) probes for a set that
// reaches m < K bins. The empty-bin rate is reported in Metrics.
//
// KHash is classic MinHash with K hash functions h_i(x) = (a_i·x + b_i) mod
// (2^61−1) over x = f mod (2^61−1): K multiplications per feature, slots that
// are independent, and signatures that merge slot-wise.
//
// # Accuracy
//
// Slot agreement is an unbiased estimate of J for both schemes. Classic MinHash
// has variance J(1−J)/K. One-permutation hashing has slightly less for sets
// much larger than K (about J(1−J)/K·(1 − (K−1)/(m−1)) for m elements,
// Li, Owen & Zhang 2012) and more for sets of a few dozen elements or fewer:
// 1.2 to 1.6 times J(1−J)/K at K = 128 for 5 to 50 elements, because two
// elements that fall in the same bin hide one of them from every slot that
// borrows that bin. The tests check both against the formulas.
//
// # Slot width
//
// A signature keeps the low Bits bits of each slot (64, 32, 16, 8, 4, 2 or 1,
// default 32), packed into 64-bit words. Two different minima agree on b bits
// with probability c = 2^-b, so Estimate corrects the agreement fraction P̂ to
// (P̂ − c)/(1 − c) (b-bit minwise hashing, Li & König, WWW 2010); its variance
// grows to P(1−P)/(K(1−c)²) with P = c + (1−c)J.
//
// # Comparability
//
// Two signatures may be compared only when they were made from features of the
// same shingle spec (equal shingle.Spec.Fingerprint) and under equal Params
// (equal Params.Fingerprint: K, scheme, seed and width). The wire format
// (AppendBinary, Decode; docs/signature-format.md) carries both fingerprints and
// refuses to decode a signature under any other.
//
// # Merging
//
// Slot-wise minimum is the signature of the union only for raw minima. Finished
// signatures merge (Params.Merge) only for KHash with 64-bit slots; Streaming
// keeps raw minima (one-permutation bins before densification) and merges
// exactly for both schemes.
package minhash
