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
// minimum v (round 0). Bins no feature reached are filled by densification by
// re-hashing, after the fast similarity sketch of Dahlgaard, Knudsen & Thorup
// (FOCS 2017): in rounds r = 1, 2, … every feature reaches one more bin (a
// bin drawn from f·M_r for r < K; bin (b0 + r) mod K for K ≤ r < 2K, so every
// bin is reached by round 2K−1), and a bin still empty takes the least value
// among the features that reach it in the first round that any does. A slot
// is fmix64 of its bin's value. Each slot is owned by one element of the set,
// and by symmetry by a uniformly random one of the union of two sets, so
// every slot agrees with probability exactly J, however short the sets are.
// Cost: one multiplication per feature; a set of m features that leaves bins
// empty (fewer than a few K) is re-hashed for about K·H_K/m − 1/2 rounds
// (H_K the harmonic number: the rounds end when the m·(1 + rounds) feature
// hashes have covered all K bins, a coupon collector's draw), so a short
// document costs about K·H_K ≈ 700 feature hashes at K = 128 whatever its
// length. Metrics reports the empty-bin rate (before densification) and the
// rounds.
//
// Why not optimal densification (Shrivastava, ICML 2017), where an empty bin
// copies the minimum of a non-empty one: two elements that share a bin hide
// one of them from every slot that copies that bin, which for sets of 5 to 50
// elements at K = 128 gives 1.2 to 1.6 times the variance of classic MinHash.
// Re-hashing gives every element slots of its own; at those sizes its
// variance is about half the classic one, because each element owns close to
// K/m slots rather than a multinomial share.
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
// Li, Owen & Zhang 2012), and about half of it for sets of a few dozen
// elements or fewer (re-hashing spreads the slots evenly over the elements).
// The tests check both against the formulas and a model of the allocation.
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
// keeps raw minima (one-permutation bins and densification keys) and merges
// exactly for both schemes.
package minhash
