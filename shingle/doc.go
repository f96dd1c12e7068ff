// Package shingle turns text into a multiset of 64-bit features (hashed
// n-grams, "shingles") under a versioned, fingerprinted Spec. Features are the
// input of every other stage of neardup: MinHash and SimHash signatures, and
// the exact Jaccard similarity used for verification and ground truth.
//
// The hashes are fast non-cryptographic hashes (xxh3) by default: they are for
// similarity, not integrity. A keyed Spec uses SipHash-2-4 under a secret key
// for input chosen by an adversary.
//
// # The definition
//
// A Spec's features of a text are defined as follows; docs/signature-format.md
// in the repository restates this for implementers in other languages.
//
//  1. Decoding. The text is read as UTF-8; each byte that is not part of a
//     valid sequence stands for U+FFFD (as Go's range loop decodes it).
//  2. NFKC (if Spec.NFKC): Unicode compatibility normalisation.
//  3. Case folding (if Spec.CaseFold): Unicode full case folding
//     (CaseFolding.txt, statuses C and F) of the result of step 2. The result
//     is not normalised again.
//  4. Classification, one code point c at a time:
//     if FoldDigits and c is a decimal digit (Nd), c becomes '0';
//     c is a space if it is Unicode whitespace (Go's unicode.IsSpace);
//     if FoldPunct and c is punctuation (category P) it becomes ' ', a space.
//     Then by unit: for Word, c is kept if it is a word character (L, M, Nd or
//     Pc) and otherwise is a separator; for Token, spaces are separators and
//     everything else is kept; for Char, spaces are separators when FoldSpace
//     is set and kept as they are otherwise.
//  5. Separators become one ASCII space; runs of separators collapse to one;
//     separators at the start and end are dropped. The result is the
//     normalised text. For Word and Token units it is the units joined by
//     single spaces.
//  6. Units and features. With base hash H = xxh3-64 with seed Spec.Seed (or
//     SipHash-2-4 under Spec.Key when keyed) over UTF-8 bytes:
//     for Char units, the feature of each window of N consecutive code points
//     is H of the window's bytes;
//     for Word and Token units, each unit u has the hash t = H(u), and the
//     feature of each window of N consecutive units t_0..t_{N−1} is
//     fmix64(Σ t_j·P^{N−1−j} mod 2^64), with P = 0x9e3779b97f4a7c15 and
//     fmix64 the MurmurHash3 64-bit finaliser.
//     A text with m units, 0 < m < N, has exactly one feature, the same
//     formula over its m units; a text with no units has none.
//
// Features are returned in text order with repeats: a multiset, as SimHash's
// term weights need. MinHash and the Jaccard similarity use the set.
//
// # Boilerplate lines
//
// A Spec may carry a Boilerplate set: lines that many documents share
// (navigation, cookie banners, footers), dropped before step 1. A line is a
// run of the text up to "\n" (exclusive) or the end; its normalised form is
// steps 1 to 5 applied to the line alone, and its line hash is H (step 6) of
// that form's bytes. A line whose normalised form is not empty and whose
// line hash is in the set is dropped together with its "\n"; the features
// are those of what remains. When that would drop every line whose
// normalised form is not empty, no line is dropped: a page that is all
// template is a duplicate of the other such pages, not an empty document. Lines are found and counted with
// Shingler.AppendLines under the spec without a set (internal/boilerplate
// counts them over a corpus). Since "\n" separates units, the normalised
// text of what remains is the kept lines' normalised forms joined by one
// space (by their "\n" for Char units without FoldSpace, where spaces are
// characters), which is how the Shingler computes it, normalising each line
// once. BoilerplateVersion versions this definition; the set's size and
// fingerprint, never its lines, are in the canonical form.
//
// Shingler.TextHash hashes the normalised text (after dropping lines) to 128
// bits: two texts with the same hash have the same features, which is what
// an exact-duplicate pass before MinHash needs.
//
// # Speed
//
// ASCII texts, the bulk of most corpora, skip steps 1 to 3 (they are the
// identity there, bar ASCII lower-casing) and normalise through a 256-entry
// table with a branch-free collapse of separators; on CPUs with AVX2, 32 bytes
// at a time (nibble tables classify each byte, and a shuffle squeezes out the
// separators that follow separators). Word and token units are hashed a
// block at a time, then a second loop rolls the n-gram polynomial. The Go
// loop finds where each unit ends and hashes it from the same 8-byte load,
// computing both short xxh3 paths and keeping one without a branch; the AVX2
// loop lists the units from a bitmap of the spaces and hashes four at a
// time. Character 4- to 8-grams take their xxh3 from one 8-byte load per
// position, or eight at a time in AVX2 registers.
//
// Other texts take the Unicode path, which still treats most of a text as
// the ASCII path does: only runs of code points that NFKC or case folding
// may change, or join to a neighbour, are transformed (each with the code
// point before it, for combining marks). ASCII stretches are classified 32
// bytes at a time; "inert" code points below U+10000 (most CJK, kana, Hangul
// syllables, curly quotes) are copied; code points whose NFKC form nothing
// can join (no-break spaces, full-width digits) are transformed once per
// Shingler and remembered; Unicode classes come from a 64 KiB table built on
// first use. Tests check each of these against the plain definition for
// every code point.
//
// minhash.Hasher.SignText drives these loops straight into its
// one-permutation bins (through package internal/fused), so features are
// binned as they are hashed and never stored.
//
// The vector code is in simd_amd64.s; CPUs without AVX2, other
// architectures and the purego build tag use the pure-Go loops. All paths
// produce identical features: the tests compare them with each other and with
// a slow reference implementation written from the definition above.
//
// # Presets
//
// Prose (word 5-grams), Code (word 5-grams, case kept, '_' inside words), CJK
// (character 3-grams) and Web (Prose with digits folded) are documented choices;
// Parse accepts their names and "word:N", "char:N", "token:N".
//
// # Versions
//
// Version and UnicodeVersion are part of the canonical form (Spec.String) and so
// of Spec.Fingerprint: anything made under one fingerprint must not be compared
// with anything made under another. Golden vectors in testdata pin the features
// of known texts, so a change that alters any feature fails the tests.
package shingle
