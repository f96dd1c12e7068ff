package minhash

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/neardup/neardup/internal/fused"
	"github.com/neardup/neardup/shingle"
)

// empty marks a slot or bin no feature has reached. A feature whose value is
// exactly 2^64−1 is indistinguishable from none (probability 2^-64).
const empty = ^uint64(0)

// mersenne61 is the prime 2^61 − 1 of the classic hash functions.
const mersenne61 = 1<<61 - 1

// chunk is how many features SignText hands from the shingler to the bins
// at a time: small enough to stay in L1, large enough to amortise the call.
const chunk = 512

// Densification by re-hashing (see doc.go, "Schemes"): a bin that no feature
// reaches in round 0 takes the least key round<<roundShift | (v_r >> 17)
// over the features and rounds r ≥ 1 that reach it. Rounds number at most
// 2K − 1 < 2^17, so a key fits 64 bits.
const roundShift = 47

// keepFeatures is how many features per slot a Hasher keeps for
// densification before it switches to densifying as features arrive
// (Hasher.lazy): sets larger than 32·K leave a bin empty with probability
// below K·e^-32.
const keepFeatures = 32

// Hasher computes signatures under one Params. It owns scratch state, so it
// does not allocate per signature.
//
// The zero Hasher is not usable; call NewHasher. A Hasher is not safe for
// concurrent use: give each goroutine its own (see Streaming for one state fed
// from many goroutines). Its output is deterministic: equal Params and
// features (in any order, with any repeats) give equal signatures.
type Hasher struct {
	p Params

	mins []uint64 // raw minima per slot (KHash) or bin (OnePermutation)
	fill []uint64 // densified copy of mins, packed from

	// OnePermutation densification: keys[i] is the least re-hashing key of
	// bin i, meaningful while mins[i] is empty. Until the set passes
	// keepFeatures·K features, feats holds them and keys are computed when
	// the signature is taken; past that (lazy), every feature is re-hashed
	// as it arrives through the rounds 1..rmax that can still fill a bin.
	keys  []uint64
	feats []uint64
	lazy  bool
	rmax  int
	need  int // bins densification must fill, from the first (DensifyFirst); 0: all

	// OnePermutation: a feature f goes to bin binOf(f·mult) with value f·mult.
	mult  uint64
	shift uint // 64 − log2 K when K is a power of two, else 0
	// Densification: round r ≥ 1 multiplies by roundMult(r), drawn from
	// dseed; mults[r] caches it for r < K when K is a power of two.
	dseed uint64
	mults []uint64

	// KHash coefficients, a_i in [1, p), b_i in [0, p).
	a, b []uint64

	pushed  int64          // features pushed since Reset
	bins    fused.Bins     // mins as SignText's fused path sees them (power-of-two K)
	buf     []uint64       // feature chunk for SignText's other paths
	push    func([]uint64) // h.Push, bound once so SignText does not allocate
	metrics Metrics
}

// Metrics counts what a Hasher (or several, added together) has done. A plain
// value: read it with Hasher.Metrics, combine with Add.
type Metrics struct {
	// Signatures is the number of signatures finished.
	Signatures int64
	// Features is the number of features pushed (with repeats).
	Features int64
	// EmptySets is the number of signatures of sets with no feature.
	EmptySets int64
	// Bins is the number of one-permutation bins finished (K per signature).
	Bins int64
	// EmptyBins is how many of those had no feature and were densified.
	EmptyBins int64
	// Rounds is the number of densification rounds run: passes that
	// re-hash a set's features (rounds r ≥ 1) to fill its empty bins. A set
	// of n features that leaves bins empty costs n·(1 + rounds) feature
	// hashes; for n well below K·ln K, rounds is about K·H_K/n (see
	// BENCHMARKS.md, "Short documents"). Sets of more than 32·K features,
	// which re-hash features as they arrive, count the rounds each Push
	// passes them through.
	Rounds int64
}

// EmptyBinRate is the fraction of one-permutation bins that were empty before
// densification; high rates mean documents short against K.
func (m Metrics) EmptyBinRate() float64 {
	if m.Bins == 0 {
		return 0
	}
	return float64(m.EmptyBins) / float64(m.Bins)
}

// Add returns the sum of m and o.
func (m Metrics) Add(o Metrics) Metrics {
	return Metrics{m.Signatures + o.Signatures, m.Features + o.Features, m.EmptySets + o.EmptySets, m.Bins + o.Bins, m.EmptyBins + o.EmptyBins, m.Rounds + o.Rounds}
}

// Sub returns m less o: the metrics of the work done between two readings
// o and m of the same counters.
func (m Metrics) Sub(o Metrics) Metrics {
	return Metrics{m.Signatures - o.Signatures, m.Features - o.Features, m.EmptySets - o.EmptySets, m.Bins - o.Bins, m.EmptyBins - o.EmptyBins, m.Rounds - o.Rounds}
}

// String renders the metrics as a small table.
func (m Metrics) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "signatures  %d\n", m.Signatures)
	fmt.Fprintf(&b, "features    %d\n", m.Features)
	fmt.Fprintf(&b, "empty sets  %d\n", m.EmptySets)
	fmt.Fprintf(&b, "empty bins  %d of %d (%.2f%%)\n", m.EmptyBins, m.Bins, 100*m.EmptyBinRate())
	fmt.Fprintf(&b, "rounds      %d\n", m.Rounds)
	return b.String()
}

// splitmix64 steps a SplitMix64 generator; the derivation of every constant
// from Params.Seed uses it, so it is part of the definition.
func splitmix64(state *uint64) uint64 {
	*state += 0x9e3779b97f4a7c15
	z := *state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// NewHasher returns a Hasher for p (zero fields take their defaults), or an
// error wrapping ErrInvalidParams.
func NewHasher(p Params) (*Hasher, error) {
	p.EnsureDefaults()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	h := &Hasher{p: p, mins: make([]uint64, p.K), fill: make([]uint64, p.K), buf: make([]uint64, 0, chunk)}
	if p.Scheme == OnePermutation {
		h.feats = make([]uint64, 0, keepFeatures*p.K)
	}
	state := p.Seed
	switch p.Scheme {
	case OnePermutation:
		h.mult = splitmix64(&state) | 1
		h.dseed = splitmix64(&state)
		h.keys = make([]uint64, p.K)
		if p.K&(p.K-1) == 0 {
			h.shift = uint(64 - bits.TrailingZeros(uint(p.K)))
			h.bins = fused.Bins{Mins: h.mins, Mult: h.mult, Shift: h.shift}
			h.mults = make([]uint64, p.K)
			for r := 1; r < p.K; r++ {
				h.mults[r] = h.roundMult(r)
			}
		}
	case KHash:
		h.a = make([]uint64, p.K)
		h.b = make([]uint64, p.K)
		for i := range h.a {
			for h.a[i] == 0 {
				h.a[i] = splitmix64(&state) >> 3 % mersenne61
			}
			h.b[i] = splitmix64(&state) >> 3 % mersenne61
		}
	}
	h.push = h.Push
	h.Reset()
	return h, nil
}

// MustNewHasher is NewHasher that panics on invalid Params.
func MustNewHasher(p Params) *Hasher {
	h, err := NewHasher(p)
	if err != nil {
		panic("minhash: " + err.Error())
	}
	return h
}

// Params returns the Hasher's Params, defaults filled in.
func (h *Hasher) Params() Params { return h.p }

// Metrics returns what the Hasher has counted so far.
func (h *Hasher) Metrics() Metrics { return h.metrics }

// allEmpty is a block of empty bins for Reset to copy (copy is vectorised;
// a loop of stores is not).
var allEmpty = func() (a [256]uint64) {
	for i := range a {
		a[i] = empty
	}
	return a
}()

// Reset starts a new, empty set.
func (h *Hasher) Reset() {
	h.pushed = 0
	h.feats = h.feats[:0]
	h.lazy, h.rmax = false, 0
	for m := h.mins; len(m) > 0; {
		m = m[copy(m, allEmpty[:]):]
	}
}

// Push adds features to the current set. Features must be well-mixed 64-bit
// hashes, as package shingle makes: one-permutation hashing applies only one
// multiplication to them, which cannot repair structured input (hash raw
// integers first, e.g. with xxh3).
func (h *Hasher) Push(features []uint64) {
	h.metrics.Features += int64(len(features))
	h.pushed += int64(len(features))
	if h.p.Scheme == KHash {
		h.pushKHash(features)
		return
	}
	h.pushRound0(features)
	switch {
	case h.lazy:
		if h.rmax > 0 {
			h.pushRounds(features)
		}
	default:
		h.feats = append(h.feats, features...)
		if len(h.feats) > keepFeatures*len(h.mins) {
			h.goLazy()
		}
	}
}

// pushRound0 bins features in round 0 of one-permutation hashing.
func (h *Hasher) pushRound0(features []uint64) {
	mins, m := h.mins, h.mult
	if h.shift != 0 {
		sh := h.shift
		mask := uint64(len(mins) - 1)
		for _, f := range features {
			v := f * m
			// A branch beats a branchless min here: after the first few
			// features per bin, the store is rarely taken.
			if i := (v >> sh) & mask; v < mins[i] {
				mins[i] = v
			}
		}
		return
	}
	k := uint64(len(mins))
	for _, f := range features {
		v := f * m
		if i, _ := bits.Mul64(v, k); v < mins[i] {
			mins[i] = v
		}
	}
}

// roundMult is the multiplier of densification round r ≥ 1.
func (h *Hasher) roundMult(r int) uint64 { return fmix64(h.dseed+uint64(r)) | 1 }

// roundBin returns the bin feature f reaches in densification round r ≥ 1,
// whose multiplier is m = roundMult(r), and its key there. Rounds below K
// draw a bin from v = f·m; rounds K to 2K−1 walk the bins from f's round-0
// bin, so that every bin is reached by round 2K−1.
func (h *Hasher) roundBin(f, m uint64, r int) (bin, key uint64) {
	v := f * m
	k := uint64(len(h.mins))
	if r < len(h.mins) {
		bin, _ = bits.Mul64(v, k)
	} else {
		b0, _ := bits.Mul64(f*h.mult, k)
		bin = (b0 + uint64(r)) % k
	}
	return bin, uint64(r)<<roundShift | v>>(64-roundShift)
}

// rehash computes the keys of the bins empty in round 0 from the features
// of the whole set, round by round until none is left empty. feats must not
// be empty.
//
// The keys start as a copy of the round-0 minima: all ones for the bins to
// fill, and for the others a value that is never all ones, which the
// branch-free updates only lower and nothing reads. A key of round r is
// above every key of an earlier round, so a bin's key is final once set. Bins
// stay filled once filled, so whether any is still empty is checked by a
// cursor that moves past filled ones: K + R checks in all, where re-checking
// every open bin after each round costs about E0/p (E0 bins empty in round
// 0, each filled in a round with probability p; for 20 features at K = 128,
// 750 checks).
func (h *Hasher) rehash(feats []uint64) {
	keys := h.keys
	k := len(keys)
	need := k // the bins that must be filled: keys[:need]
	if h.need > 0 {
		need = min(h.need, k)
	}
	copy(keys, h.mins)
	r := 0
	if h.shift != 0 {
		r = rehashPow2(keys, feats, h.mults, need)
	}
	if r == 0 {
		// K not a power of two, or rounds 1..K−1 left a bin empty (a set
		// of a few features): the general rounds, from where they stopped.
		if h.shift != 0 {
			r = k - 1
		}
		for c := 0; c < need; {
			r++
			m := h.roundMult(r)
			for _, f := range feats {
				if b, key := h.roundBin(f, m, r); key < keys[b] {
					keys[b] = key
				}
			}
			for c < need && keys[c] != empty {
				c++
			}
		}
	}
	h.metrics.Rounds += int64(r)
}

// DensifyFirst makes the signatures that follow (one-permutation MinHash)
// compute only slots 0 to n−1, and densify only their bins: the rounds stop
// once those are filled, so the first n slots are those of the whole
// signature (a bin's key is final once a round reaches it, keys growing
// with the round), and the others are zero. It is for a caller that reads
// the first n slots only, such as the band keys of b bands of r rows
// (lsh.Params reads slots 0 to b·r−1) of a run that verifies its pairs
// exactly and never looks at the signature again: filling the last empty
// bins is the coupon collector's tail (at 20–50 features, K = 128, about
// 5.4 % of the rounds go to bins 96–127 after bins 0–95 are full), and
// each slot is a mix of its bin's value. n ≤ 0 or n ≥ K restores whole
// signatures (the default). It changes none of the metrics but Rounds.
func (h *Hasher) DensifyFirst(n int) { h.need = max(n, 0) }

// rehashPow2 runs the densification rounds r = 1..K−1 for K = len(keys) a
// power of two, until none of keys[:need] is all ones, and returns the last
// round run, or 0 if one still is after round K−1.
func rehashPow2(keys, feats, mults []uint64, need int) int {
	c := 0 // keys[:c] are set
	for r := 1; r < len(mults); r++ {
		rehashRound(keys, feats, mults[r], uint64(r)<<roundShift)
		for c < need && keys[c] != empty {
			c++
		}
		if c == need {
			return r
		}
	}
	return 0
}

// rehashRound runs one densification round r < K for K = len(keys) a power
// of two: a feature f reaches bin ⌊(f·m)·K / 2^64⌋ with key
// base | (f·m) >> 17, base = r << 47, and each bin keeps its least key.
//
// It is the hot loop of short documents: about K·H_K ≈ 700 feature hashes
// per document at K = 128, whatever its length (BENCHMARKS.md, "Short
// documents"). Its shape is chosen for the code the compiler makes, 14
// instructions a feature: a function of its own, not inlined (inlined into a
// loop over the rounds it reloaded three spilled values a feature, and inside
// rehash, whose general loop needs AX and DX for 128-bit products, it spilled
// the loop counter too: 25 instructions and a store-to-load round trip a
// feature; a call per round costs less), and the bin is t·K >> 47 of the
// key's low part t = (f·m) >> 17, equal to (f·m) >> (64 − log2 K) for K a
// power of two, because a shift by a variable count needs CX, which the
// compiler gave the loop counter (three more moves a feature).
//
// The minimum is branch-free: whether a feature lands in an open bin is
// random (about one in eight in a short document's second round), so a
// branch would mispredict.
//
//go:noinline
func rehashRound(keys, feats []uint64, m, base uint64) {
	if len(keys) == 0 {
		return
	}
	k := uint64(len(keys))
	mask := k - 1 // lets the compiler drop the bounds check
	for _, f := range feats {
		t := f * m >> (64 - roundShift)
		b := t * k >> roundShift & mask
		keys[b] = min(base|t, keys[b])
	}
}

// goLazy stops keeping features: it computes the keys of the bins empty so
// far from the features kept, and from now on Push re-hashes each feature
// through the rounds that can still fill a bin.
func (h *Hasher) goLazy() {
	h.lazy = true
	if slices.Contains(h.mins, empty) {
		h.rehash(h.feats)
	}
	h.rmax = h.maxRound()
	h.feats = h.feats[:0]
}

// pushRounds re-hashes features through rounds 1..rmax (lazy mode) and
// lowers rmax to what the bins now need.
func (h *Hasher) pushRounds(features []uint64) {
	mins, keys := h.mins, h.keys
	h.metrics.Rounds += int64(h.rmax)
	for r := 1; r <= h.rmax; r++ {
		m := h.roundMult(r)
		for _, f := range features {
			if b, key := h.roundBin(f, m, r); mins[b] == empty && key < keys[b] {
				keys[b] = key
			}
		}
	}
	h.rmax = h.maxRound()
}

// maxRound returns the last round that can still lower a key: the largest
// round among the keys of bins empty in round 0 (2K−1 for a bin with none).
func (h *Hasher) maxRound() int {
	last := 2*len(h.mins) - 1
	r := 0
	for i, v := range h.mins {
		if v == empty {
			r = max(r, min(int(h.keys[i]>>roundShift), last))
		}
	}
	return r
}

// countEmpty returns how many bins are empty, without a branch per bin:
// which bins are empty is random, so a branch would mispredict.
func (h *Hasher) countEmpty() int {
	n := 0
	for _, v := range h.mins {
		n += b2i(v == empty)
	}
	return n
}

func (h *Hasher) pushKHash(features []uint64) {
	mins, a, b := h.mins, h.a, h.b[:len(h.a)]
	mins = mins[:len(a)]
	for _, f := range features {
		x := reduce61(f)
		for i, ai := range a {
			if v := khash(ai, b[i], x); v < mins[i] {
				mins[i] = v
			}
		}
	}
}

// reduce61 returns f mod (2^61 − 1).
func reduce61(f uint64) uint64 {
	x := f&mersenne61 + f>>61
	if x >= mersenne61 {
		x -= mersenne61
	}
	return x
}

// khash returns (a·x + b) mod (2^61 − 1) for a, b, x < 2^61 − 1.
func khash(a, b, x uint64) uint64 {
	hi, lo := bits.Mul64(a, x)
	// a·x = H·2^61 + L and 2^61 ≡ 1, so a·x ≡ H + L.
	v := lo&mersenne61 + (lo>>61 | hi<<3) + b
	v = v&mersenne61 + v>>61
	if v >= mersenne61 {
		v -= mersenne61
	}
	return v
}

// Empty reports whether no feature has been pushed since Reset: the set is
// empty and its signature is all ones.
func (h *Hasher) Empty() bool { return h.pushed == 0 }

// AppendSignature finishes the current set into a packed Signature appended
// to dst (Params.Words() words). The set itself is kept, so more features may
// be pushed and the signature taken again.
func (h *Hasher) AppendSignature(dst Signature) Signature {
	h.metrics.Signatures++
	slots := h.mins
	if h.p.Scheme == OnePermutation {
		n := h.countEmpty()
		h.metrics.Bins += int64(len(h.mins))
		h.metrics.EmptyBins += int64(n)
		if n == len(h.mins) {
			h.metrics.EmptySets++
			return pack(dst, h.mins, h.p.Bits)
		}
		if n > 0 && !h.lazy {
			h.rehash(h.feats)
		}
		// A slot is fmix64 of its bin's minimum (or key): the low bits of a
		// product f·M depend only on the low bits of f, so they would make
		// truncated slots of two fixed features agree far more or less often
		// than 2^-Bits. (Where no bin was empty, keys may hold another set's
		// values; they are not read.)
		fin := len(h.mins) // the slots computed (DensifyFirst); the others are zero
		if h.need > 0 {
			fin = min(h.need, fin)
		}
		if h.p.Bits == 32 {
			return appendSlots32(dst, h.mins, h.keys, fin)
		}
		finish(h.fill, h.mins[:fin], h.keys)
		clear(h.fill[fin:len(h.mins)])
		slots = h.fill
	} else if h.mins[0] == empty {
		h.metrics.EmptySets++
	}
	return pack(dst, slots, h.p.Bits)
}

// finish sets fill[i] to fmix64 of bin i's value: mins[i], or keys[i] where
// mins[i] is empty. The choice is made without a branch: on short documents
// which bins were empty is random.
func finish(fill, mins, keys []uint64) {
	fill, keys = fill[:len(mins)], keys[:len(mins)]
	for i, v := range mins {
		k := keys[i]
		if v == empty {
			v = k
		}
		fill[i] = fmix64(v)
	}
}

// appendSlots32 appends the slots of finish truncated to 32 bits and packed
// two a word (the default width), in one pass: pack over finish's output
// stores and loads every slot once more. Only the first fin slots are
// computed; the others are zero (DensifyFirst).
func appendSlots32(dst Signature, mins, keys []uint64, fin int) Signature {
	words := (len(mins) + 1) / 2
	n := len(dst)
	dst = slices.Grow(dst, words)[:n+words]
	out := dst[n:]
	slots32(out, mins[:fin&^1], keys)
	if fin%2 == 1 {
		v := mins[fin-1]
		if v == empty {
			v = keys[fin-1]
		}
		out[fin/2] = fmix64(v) & 0xffffffff
	}
	clear(out[(fin+1)/2:])
	return dst
}

// slots32 is appendSlots32's loop over pairs of slots. It is a function of
// its own, not inlined, so that the compiler keeps its values in registers
// (inside appendSlots32 it spilled two a slot).
//
//go:noinline
func slots32(out, mins, keys []uint64) {
	keys = keys[:len(mins)]
	out = out[:len(mins)/2]
	for i := range out {
		p := mins[2*i : 2*i+2 : 2*i+2] // one bounds check for the pair
		a, b := p[0], p[1]
		ka, kb := keys[2*i], keys[2*i+1]
		if a == empty {
			a = ka
		}
		if b == empty {
			b = kb
		}
		out[i] = fmix64(a)&0xffffffff | fmix64(b)<<32
	}
}

// Sign returns the signature of one feature set appended to dst.
func (h *Hasher) Sign(dst Signature, features []uint64) Signature {
	h.Reset()
	h.Push(features)
	return h.AppendSignature(dst)
}

// SignText shingles text with sh and appends its signature to dst: the
// signature of Sign over sh.AppendFeatures(nil, text), without holding the
// features. For one-permutation hashing with K a power of two (the default),
// the shingler bins each feature in the loop that hashes it (package
// internal/fused); otherwise features reach the bins in small chunks that
// stay in the cache. It does not allocate.
//
// Densification needs the features of a set that leaves a bin empty (fewer
// than a few K features): the fused word loops keep them as they go while
// the set is short, and short character texts take a path that keeps them;
// otherwise (rare) the text is shingled again through Push.
func (h *Hasher) SignText(dst Signature, sh *shingle.Shingler, text []byte) Signature {
	h.Reset()
	if h.bins.Mins != nil {
		h.bins.Feats = h.feats[:cap(h.feats)]
		n := sh.AddBins(text, &h.bins)
		switch {
		case n == 0 || !slices.Contains(h.mins, empty):
		case h.bins.Kept == n:
			h.feats = h.feats[:n] // densified from the kept features
		default: // rare: features not kept; shingle again
			h.Reset()
			h.buf = sh.Stream(text, h.buf, h.push)
			return h.AppendSignature(dst)
		}
		h.pushed += int64(n)
		h.metrics.Features += int64(n)
	} else {
		h.buf = sh.Stream(text, h.buf, h.push)
	}
	return h.AppendSignature(dst)
}

func fmix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// b2i is 1 for true and 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pack appends the low b bits of each slot, packed into words.
func pack(dst Signature, slots []uint64, b int) Signature {
	switch b {
	case 64:
		return append(dst, slots...)
	case 32: // the default, two slots a word
		n := len(dst)
		dst = slices.Grow(dst, (len(slots)+1)/2)[:n+(len(slots)+1)/2]
		out := dst[n:]
		for i := range len(slots) / 2 {
			out[i] = slots[2*i]&0xffffffff | slots[2*i+1]<<32
		}
		if len(slots)%2 == 1 {
			out[len(out)-1] = slots[len(slots)-1] & 0xffffffff
		}
		return dst
	}
	mask := uint64(1)<<b - 1
	var w uint64
	off := 0
	for _, v := range slots {
		w |= (v & mask) << off
		off += b
		if off == 64 {
			dst = append(dst, w)
			w, off = 0, 0
		}
	}
	if off > 0 {
		dst = append(dst, w)
	}
	return dst
}
