package minhash

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/zeebo/xxh3"
)

// FormatVersion is the version of the signature definition and wire format.
// It is part of Params.String and so of every params fingerprint.
const FormatVersion = 2

// Scheme is how the k slots of a signature are computed.
type Scheme uint8

// The schemes.
const (
	// OnePermutation hashes each feature once, splits the hash range into k
	// bins and keeps each bin's minimum (Li, Owen & Zhang, NIPS 2012); empty
	// bins are filled by re-hashing the features in further rounds
	// (Dahlgaard, Knudsen & Thorup, FOCS 2017), which keeps the estimator
	// unbiased on short documents with no more variance than KHash. The
	// default: O(1) per feature instead of O(k).
	OnePermutation Scheme = iota + 1
	// KHash is classic MinHash: k independent hash functions
	// h_i(x) = (a_i·x + b_i) mod (2^61 − 1), each slot the minimum of one.
	// O(k) per feature; kept for comparison and for Merge.
	KHash
)

// String returns "oph" or "khash".
func (s Scheme) String() string {
	switch s {
	case OnePermutation:
		return "oph"
	case KHash:
		return "khash"
	}
	return "scheme(" + strconv.Itoa(int(s)) + ")"
}

// ParseScheme reads "oph" or "khash".
func ParseScheme(s string) (Scheme, error) {
	switch s {
	case "oph", "one-permutation":
		return OnePermutation, nil
	case "khash", "classic":
		return KHash, nil
	}
	return 0, fmt.Errorf("%w: scheme %q, want oph or khash", ErrInvalidParams, s)
}

// Errors; check with errors.Is.
var (
	// ErrInvalidParams reports Params that break a rule.
	ErrInvalidParams = errors.New("minhash: invalid params")
	// ErrSpecMismatch reports a signature made under another shingle spec.
	ErrSpecMismatch = errors.New("minhash: signature made under another shingle spec")
	// ErrParamsMismatch reports a signature made under other Params.
	ErrParamsMismatch = errors.New("minhash: signature made under other params")
	// ErrCorrupt reports bytes that are not a well-formed wire signature.
	ErrCorrupt = errors.New("minhash: corrupt signature encoding")
	// ErrMergeUnsupported reports a Merge of finished signatures that cannot
	// be merged slot-wise (see Params.Merge).
	ErrMergeUnsupported = errors.New("minhash: signatures of these params cannot be merged")
)

// MaxK is the largest number of slots Params accepts.
const MaxK = 1 << 16

// Params define a signature: how many slots, how they are computed, the seed
// of the hash functions and how many bits of each slot are kept. Signatures
// are comparable only when made under equal Params (equal Fingerprint) and
// from features of the same shingle spec.
//
// The zero value means all defaults. Params is a plain value, safe to copy and
// share.
type Params struct {
	// K is the number of slots. Default 128.
	K int
	// Scheme computes the slots. Default OnePermutation.
	Scheme Scheme
	// Seed selects the hash functions; signatures under different seeds are
	// independent. Default 0.
	Seed uint64
	// Bits is how many low bits of each slot's value are kept: 64, 32, 16, 8,
	// 4, 2 or 1. Fewer bits store more signatures per byte at the cost of
	// accidental slot agreements (probability 2^-Bits), which Similarity
	// corrects for (Li & König, WWW 2010). Default 32: accidental agreement
	// 2.3e-10, half the space of 64.
	Bits int
}

// EnsureDefaults fills zero fields with their defaults and returns p; a nil p
// yields a new Params with every default.
func (p *Params) EnsureDefaults() *Params {
	if p == nil {
		p = &Params{}
	}
	if p.K == 0 {
		p.K = 128
	}
	if p.Scheme == 0 {
		p.Scheme = OnePermutation
	}
	if p.Bits == 0 {
		p.Bits = 32
	}
	return p
}

// Validate reports whether p (after defaults) is usable; the error wraps
// ErrInvalidParams and names the field and the rule.
func (p Params) Validate() error {
	if p.K < 1 || p.K > MaxK {
		return fmt.Errorf("%w: k = %d, want 1..%d", ErrInvalidParams, p.K, MaxK)
	}
	if p.Scheme != OnePermutation && p.Scheme != KHash {
		return fmt.Errorf("%w: scheme %d, want oph or khash", ErrInvalidParams, p.Scheme)
	}
	switch p.Bits {
	case 1, 2, 4, 8, 16, 32, 64:
	default:
		return fmt.Errorf("%w: bits = %d, want 64, 32, 16, 8, 4, 2 or 1", ErrInvalidParams, p.Bits)
	}
	return nil
}

// String returns the canonical form, e.g. "v2/oph/k=128/bits=32/seed=0".
func (p Params) String() string {
	var b strings.Builder
	b.WriteString("v")
	b.WriteString(strconv.Itoa(FormatVersion))
	b.WriteString("/")
	b.WriteString(p.Scheme.String())
	b.WriteString("/k=")
	b.WriteString(strconv.Itoa(p.K))
	b.WriteString("/bits=")
	b.WriteString(strconv.Itoa(p.Bits))
	b.WriteString("/seed=")
	b.WriteString(strconv.FormatUint(p.Seed, 10))
	return b.String()
}

// Fingerprint is the xxh3-64 (seed 0) of String(): equal fingerprints, equal
// signature definitions.
func (p Params) Fingerprint() uint64 { return xxh3.HashString(p.String()) }

// Words is the length in uint64 words of a packed Signature.
func (p Params) Words() int { return (p.K*p.Bits + 63) / 64 }

// Bytes is the size of a signature's slots on the wire: ⌈K·Bits/8⌉.
func (p Params) Bytes() int { return (p.K*p.Bits + 7) / 8 }

// Signature is a packed MinHash signature: K slots of Params.Bits bits, slot i
// in bits [(i·Bits) mod 64, …) of word (i·Bits)/64, little-endian within the
// word. Its meaning depends on the Params and shingle spec it was made under;
// it carries neither (the wire format does).
type Signature []uint64

// Slot returns slot i of s.
func (p Params) Slot(s Signature, i int) uint64 {
	if p.Bits == 64 {
		return s[i]
	}
	bit := i * p.Bits
	return s[bit>>6] >> (bit & 63) & (1<<p.Bits - 1)
}

// AppendSlots appends the K slot values of s to dst, one per element.
func (p Params) AppendSlots(dst []uint64, s Signature) []uint64 {
	n := len(dst)
	dst = slices.Grow(dst, p.K)[:n+p.K]
	out := dst[n:]
	switch p.Bits {
	case 64:
		copy(out, s[:p.K])
	case 32:
		// Two slots a word, low half first: one load and two stores a pair.
		pairs := out[:p.K&^1]
		for i, w := range s[:len(pairs)/2] {
			o := pairs[2*i : 2*i+2 : 2*i+2]
			o[0], o[1] = w&0xffffffff, w>>32
		}
		if p.K&1 == 1 {
			out[p.K-1] = s[p.K/2] & 0xffffffff
		}
	default:
		// Bits divides 64 (Validate): a word holds per slots whole.
		per, mask := 64/p.Bits, uint64(1)<<p.Bits-1
		sh, w := uint(bits.TrailingZeros(uint(per))), uint(p.Bits)
		for i := range out {
			out[i] = s[i>>sh] >> (uint(i&(per-1)) * w) & mask
		}
	}
	return dst
}

// Matches counts the slots on which a and b agree.
func (p Params) Matches(a, b Signature) int {
	w := p.Words()
	a, b = a[:w], b[:w]
	if p.Bits == 64 {
		n := 0
		for i := range a {
			if a[i] == b[i] {
				n++
			}
		}
		return n
	}
	low := lowBits(p.Bits) // the lowest bit of every field
	differ := 0
	for i := range a {
		x := a[i] ^ b[i]
		// Fold each field's bits onto its lowest bit, then count the fields
		// with any bit set.
		for s := p.Bits >> 1; s > 0; s >>= 1 {
			x |= x >> s
		}
		differ += bits.OnesCount64(x & low)
	}
	// Padding fields past K agree (both zero); differ counts only real ones.
	return p.K - differ
}

// lowBits returns the word with the lowest bit of every b-bit field set.
func lowBits(b int) uint64 {
	var m uint64
	for i := 0; i < 64; i += b {
		m |= 1 << i
	}
	return m
}

// Estimate returns the unbiased estimate of the Jaccard similarity of the
// sets behind a and b: with P̂ the fraction of agreeing slots and c = 2^-Bits
// the chance that two different minima agree on their low Bits bits,
// Ĵ = (P̂ − c)/(1 − c) (Li & König 2010, for sets small against 2^64). It can be
// slightly negative or above 1 by chance; Similarity clamps it.
func (p Params) Estimate(a, b Signature) float64 {
	phat := float64(p.Matches(a, b)) / float64(p.K)
	if p.Bits == 64 {
		return phat
	}
	c := math.Ldexp(1, -p.Bits)
	return (phat - c) / (1 - c)
}

// Similarity is Estimate clamped to [0, 1]: the estimated Jaccard similarity
// of the two sets.
func (p Params) Similarity(a, b Signature) float64 {
	return min(1, max(0, p.Estimate(a, b)))
}

// Variance is the variance of Estimate for sets of Jaccard similarity j under
// classic MinHash: with P = c + (1−c)·j, P(1−P)/(K·(1−c)²); for 64 bits,
// j(1−j)/K. One-permutation hashing has at most this variance (less when the
// sets have few more elements than K, see the package doc).
func (p Params) Variance(j float64) float64 {
	c := 0.0
	if p.Bits < 64 {
		c = math.Ldexp(1, -p.Bits)
	}
	P := c + (1-c)*j
	return P * (1 - P) / (float64(p.K) * (1 - c) * (1 - c))
}

// Merge sets dst to the signature of the union of the two sets, slot by slot
// (the minimum), where that is valid: only for KHash with Bits = 64. For
// truncated slots the minimum of the kept bits is not the kept bits of the
// minimum, and a one-permutation slot holds fmix64 of its bin's value (and a
// densified bin's value depends on which other bins are empty); those return
// ErrMergeUnsupported. Merge raw states with
// Streaming.Merge instead, which is valid for both schemes.
func (p Params) Merge(dst, src Signature) error {
	if p.Scheme != KHash || p.Bits != 64 {
		return fmt.Errorf("%w: %s (only khash with 64-bit slots merges; use Streaming.Merge)", ErrMergeUnsupported, p)
	}
	for i := range dst[:p.K] {
		dst[i] = min(dst[i], src[i])
	}
	return nil
}
