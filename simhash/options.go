package simhash

import "fmt"

// Limits on Options.
const (
	// MaxMaxDistance is the largest MaxDistance an Index accepts. Beyond it the
	// table count or the candidates per probe grow out of proportion, and
	// SimHash distances that large no longer separate near-duplicates from
	// unrelated texts well (unrelated fingerprints differ in 32 ± 4 bits).
	MaxMaxDistance = 8

	// MaxBlocks is the largest number of blocks an Index splits the 64 bits
	// into (blocks of 4 bits).
	MaxBlocks = 16

	// MaxTables is the largest number of tables, C(Blocks, MaxDistance), an
	// Index may keep. Each table costs 16 bytes per entry.
	MaxTables = 1024

	// ExactMatch as Options.MaxDistance asks for an index that answers only
	// k = 0 queries (K = 0), since a MaxDistance of 0 means the default.
	ExactMatch = -1
)

// DefaultMaxDistance is the MaxDistance used when Options.MaxDistance is 0: the
// value Manku, Jain and Das Sarma found right for 64-bit fingerprints of web
// pages.
const DefaultMaxDistance = 3

// Options configures an Index. The zero value asks for the defaults. Options
// fix the table layout for the life of the Index.
type Options struct {
	// MaxDistance is K, the largest Hamming distance the index answers queries
	// for. 0 means the default, DefaultMaxDistance (3 bits); ExactMatch (−1)
	// asks for K = 0, an exact-match index. Range ExactMatch, 0..MaxMaxDistance.
	MaxDistance int

	// Blocks is B, the number of blocks the 64 bits are split into (the first
	// 64 mod B blocks get one bit more). The index keeps one table per choice
	// of B−K blocks, C(B, K) tables in all, each keyed on those blocks, about
	// 64·(B−K)/B leading bits. More blocks mean longer keys and so fewer
	// candidates per query, but more tables: memory is 16·C(B, K) bytes per
	// entry (see the package doc for the trade-off). 0 means the default, K+1:
	// the fewest tables, which suits K = 3 up to about ten million entries.
	// Range K+1..MaxBlocks with C(B, K) ≤ MaxTables.
	Blocks int
}

// EnsureDefaults fills zero fields with their defaults and returns o. It is
// nil-safe: a nil o yields a new Options holding the defaults. It is
// idempotent.
func (o *Options) EnsureDefaults() *Options {
	if o == nil {
		o = &Options{}
	}
	if o.MaxDistance == 0 {
		o.MaxDistance = DefaultMaxDistance
	}
	if o.Blocks == 0 {
		o.Blocks = o.k() + 1
	}
	return o
}

// k returns the effective K.
func (o *Options) k() int {
	switch o.MaxDistance {
	case ExactMatch:
		return 0
	case 0:
		return DefaultMaxDistance
	}
	return o.MaxDistance
}

// Validate reports whether o, with defaults filled in, describes a valid
// index; errors wrap ErrInvalidOptions.
func (o *Options) Validate() error {
	c := *o
	c.EnsureDefaults()
	if c.MaxDistance < ExactMatch || c.MaxDistance > MaxMaxDistance {
		return fmt.Errorf("%w: MaxDistance %d (want %d..%d, or ExactMatch)",
			ErrInvalidOptions, c.MaxDistance, 1, MaxMaxDistance)
	}
	k := c.k()
	if c.Blocks < k+1 || c.Blocks > MaxBlocks {
		return fmt.Errorf("%w: Blocks %d (want %d..%d for MaxDistance %d)",
			ErrInvalidOptions, c.Blocks, k+1, MaxBlocks, k)
	}
	if t := binomial(c.Blocks, k); t > MaxTables {
		return fmt.Errorf("%w: Blocks %d with MaxDistance %d needs %d tables (want at most %d)",
			ErrInvalidOptions, c.Blocks, k, t, MaxTables)
	}
	return nil
}

// binomial returns C(n, k) for small n.
func binomial(n, k int) int {
	if k < 0 || k > n {
		return 0
	}
	r := 1
	for i := 1; i <= k; i++ {
		r = r * (n - k + i) / i
	}
	return r
}
