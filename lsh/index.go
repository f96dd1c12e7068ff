package lsh

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Default values of IndexOptions.
const (
	// DefaultBucketCap is the default IndexOptions.BucketCap. A key shared
	// by more than 1000 documents is almost always boilerplate; a query
	// still finds the 1000 documents already in such a bucket, so a new
	// near-duplicate of them is still detected, while the bucket's memory
	// and every query's work stay bounded.
	DefaultBucketCap = 1000

	// DefaultShards is the default IndexOptions.Shards: enough lock
	// stripes that goroutines on a many-core machine rarely contend.
	DefaultShards = 64

	// Unlimited as IndexOptions.BucketCap lets buckets grow without bound.
	Unlimited = -1
)

// IndexOptions configures an Index. The zero value, and nil, ask for the
// defaults.
type IndexOptions struct {
	// BucketCap is the most ids a bucket (the ids sharing one key) holds.
	// Inserting into a full bucket leaves it unchanged and counts a dropped
	// posting in Metrics; the id is still inserted into its other buckets.
	// 0 means the default, DefaultBucketCap (1000 ids); Unlimited (−1)
	// removes the cap. Range Unlimited or 1 and up.
	BucketCap int

	// Shards is the number of lock stripes the buckets and the id table are
	// split into, rounded up to a power of two. 0 means the default,
	// DefaultShards (64). Range 1..65536.
	Shards int
}

// EnsureDefaults fills zero fields with their defaults and returns o. It is
// nil-safe: a nil o yields a new IndexOptions holding the defaults.
func (o *IndexOptions) EnsureDefaults() *IndexOptions {
	if o == nil {
		o = &IndexOptions{}
	}
	if o.BucketCap == 0 {
		o.BucketCap = DefaultBucketCap
	}
	if o.Shards == 0 {
		o.Shards = DefaultShards
	}
	return o
}

// Validate reports whether o, with defaults filled in, is usable; errors
// wrap ErrInvalidOptions. It is nil-safe.
func (o *IndexOptions) Validate() error {
	var c IndexOptions
	if o != nil {
		c = *o
	}
	c.EnsureDefaults()
	if c.BucketCap < 1 && c.BucketCap != Unlimited {
		return fmt.Errorf("%w: BucketCap = %d; must be at least 1 or Unlimited (%d)", ErrInvalidOptions, c.BucketCap, Unlimited)
	}
	if c.Shards < 1 || c.Shards > 1<<16 {
		return fmt.Errorf("%w: Shards = %d; must be in 1..65536", ErrInvalidOptions, c.Shards)
	}
	return nil
}

// Index is an in-memory LSH index from band keys to document ids, for
// online use: Insert a document's keys (from Params.AppendKeys) under its
// id, Query with another document's keys for the ids sharing any key,
// Remove an id. The index stores keys, not signatures: verifying candidates
// is the caller's business.
//
// The zero value is an empty index with the default options, ready to use;
// NewIndex sets other options. An Index is safe for concurrent use: buckets
// and ids are split over lock stripes, and Insert and Remove of one id are
// serialised. Insert is not atomic with respect to a concurrent Query,
// which may see an id in some of its buckets and not yet in others.
//
// Query results are sorted and deduplicated, so they do not depend on
// insertion order or timing, except where a bucket is full: which ids a
// full bucket holds depends on the order of the inserts into it. An Index
// must not be copied after first use.
type Index struct {
	once    sync.Once
	opts    IndexOptions
	shift   uint // 64 − log2(shards)
	buckets []bucketShard
	ids     []idShard

	nBuckets, postings, fullBuckets atomic.Int64
	nIDs                            atomic.Int64
	inserts, removes, dropped       atomic.Uint64
	queries, candidates             atomic.Uint64
}

type bucketShard struct {
	mu sync.RWMutex
	m  map[uint64][]uint64
	_  [32]byte // pad to 64 bytes: keep neighbouring shards' locks off one cache line
}

type idShard struct {
	mu sync.Mutex
	m  map[uint64][]uint64 // id → its distinct keys, sorted
	_  [48]byte
}

// NewIndex returns an empty Index with the given options (nil for the
// defaults). Errors wrap ErrInvalidOptions.
func NewIndex(opts *IndexOptions) (*Index, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	x := &Index{}
	if opts != nil {
		x.opts = *opts
	}
	x.init()
	return x, nil
}

func (x *Index) init() {
	x.once.Do(func() {
		x.opts.EnsureDefaults()
		shards := 1 << bits.Len(uint(x.opts.Shards-1))
		x.shift = uint(64 - bits.TrailingZeros(uint(shards)))
		x.buckets = make([]bucketShard, shards)
		x.ids = make([]idShard, shards)
		for i := range x.buckets {
			x.buckets[i].m = make(map[uint64][]uint64)
			x.ids[i].m = make(map[uint64][]uint64)
		}
	})
}

// stripe maps a key or id to its lock stripe. Keys from AppendKeys are
// already well mixed, but ids and caller-made keys may not be, so they are
// multiplied by an odd constant and the top bits taken.
func (x *Index) stripe(v uint64) int {
	if x.shift == 64 {
		return 0
	}
	return int((v * prime1) >> x.shift)
}

// Insert adds id under each of keys (duplicates among keys count once).
// A full bucket is left unchanged (see IndexOptions.BucketCap). If the index
// already holds id, Insert changes nothing and returns an error wrapping
// ErrDuplicateID; Remove it first to replace it. keys is not retained.
func (x *Index) Insert(id uint64, keys []uint64) error {
	x.init()
	ks := slices.Clone(keys)
	slices.Sort(ks)
	ks = slices.Clip(slices.Compact(ks))

	is := &x.ids[x.stripe(id)]
	is.mu.Lock()
	defer is.mu.Unlock()
	if _, ok := is.m[id]; ok {
		return fmt.Errorf("%w: id %d", ErrDuplicateID, id)
	}
	is.m[id] = ks
	x.nIDs.Add(1)
	x.inserts.Add(1)

	capacity := x.opts.BucketCap
	for _, k := range ks {
		bs := &x.buckets[x.stripe(k)]
		bs.mu.Lock()
		b, ok := bs.m[k]
		switch {
		case capacity != Unlimited && len(b) >= capacity:
			x.dropped.Add(1)
		default:
			if !ok {
				x.nBuckets.Add(1)
			}
			bs.m[k] = append(b, id)
			x.postings.Add(1)
			if len(b)+1 == capacity {
				x.fullBuckets.Add(1)
			}
		}
		bs.mu.Unlock()
	}
	return nil
}

// Remove deletes id from the index and reports whether it was present.
func (x *Index) Remove(id uint64) bool {
	x.init()
	is := &x.ids[x.stripe(id)]
	is.mu.Lock()
	defer is.mu.Unlock()
	ks, ok := is.m[id]
	if !ok {
		return false
	}
	delete(is.m, id)
	x.nIDs.Add(-1)
	x.removes.Add(1)

	capacity := x.opts.BucketCap
	for _, k := range ks {
		bs := &x.buckets[x.stripe(k)]
		bs.mu.Lock()
		b := bs.m[k]
		if i := slices.Index(b, id); i >= 0 { // absent if the bucket was full
			if len(b) == capacity {
				x.fullBuckets.Add(-1)
			}
			b = slices.Delete(b, i, i+1)
			x.postings.Add(-1)
			if len(b) == 0 {
				delete(bs.m, k)
				x.nBuckets.Add(-1)
			} else {
				bs.m[k] = b
			}
		}
		bs.mu.Unlock()
	}
	return true
}

// Query appends to dst the ids sharing at least one of keys, sorted
// ascending and without duplicates, and returns the extended slice (only
// dst[len(dst):] on entry is sorted; earlier elements are untouched). An id
// inserted under one of keys is included even if it is the querying
// document itself. Query allocates only if dst lacks capacity.
func (x *Index) Query(dst, keys []uint64) []uint64 {
	x.init()
	start := len(dst)
	for _, k := range keys {
		bs := &x.buckets[x.stripe(k)]
		bs.mu.RLock()
		dst = append(dst, bs.m[k]...)
		bs.mu.RUnlock()
	}
	found := dst[start:]
	slices.Sort(found)
	found = slices.Compact(found)
	x.queries.Add(1)
	x.candidates.Add(uint64(len(found)))
	return dst[:start+len(found)]
}

// Contains reports whether the index holds id.
func (x *Index) Contains(id uint64) bool {
	x.init()
	is := &x.ids[x.stripe(id)]
	is.mu.Lock()
	defer is.mu.Unlock()
	_, ok := is.m[id]
	return ok
}

// Len returns the number of ids in the index.
func (x *Index) Len() int { return int(x.nIDs.Load()) }

// IndexMetrics describes an Index's size and the work it has done. It is a
// plain snapshot; under concurrent updates its fields may come from
// slightly different instants.
type IndexMetrics struct {
	// Size.
	IDs         int64 // ids held
	Buckets     int64 // non-empty buckets (distinct keys held)
	Postings    int64 // (key, id) entries held, summed over buckets
	FullBuckets int64 // buckets at BucketCap, which no longer grow
	BucketCap   int   // the cap, or Unlimited

	// Work, counted since the index was made.
	Inserts         uint64 // successful Insert calls
	Removes         uint64 // successful Remove calls
	DroppedPostings uint64 // postings not stored because their bucket was full
	Queries         uint64 // Query calls
	Candidates      uint64 // ids returned by Query, summed
}

// MeanBucketSize returns Postings/Buckets, or 0 for an empty index.
func (m IndexMetrics) MeanBucketSize() float64 {
	if m.Buckets == 0 {
		return 0
	}
	return float64(m.Postings) / float64(m.Buckets)
}

// MeanCandidates returns the mean number of ids a query returned, or 0.
func (m IndexMetrics) MeanCandidates() float64 {
	if m.Queries == 0 {
		return 0
	}
	return float64(m.Candidates) / float64(m.Queries)
}

// String returns the metrics as an aligned two-column table.
func (m IndexMetrics) String() string {
	var sb strings.Builder
	row := func(name string, v any) { fmt.Fprintf(&sb, "%-18s %12v\n", name, v) }
	row("ids", m.IDs)
	row("buckets", m.Buckets)
	row("postings", m.Postings)
	row("full buckets", m.FullBuckets)
	row("bucket cap", m.BucketCap)
	row("mean bucket size", fmt.Sprintf("%.2f", m.MeanBucketSize()))
	row("inserts", m.Inserts)
	row("removes", m.Removes)
	row("dropped postings", m.DroppedPostings)
	row("queries", m.Queries)
	row("mean candidates", fmt.Sprintf("%.2f", m.MeanCandidates()))
	return sb.String()
}

// Metrics returns a snapshot of the index's metrics.
func (x *Index) Metrics() IndexMetrics {
	x.init()
	return IndexMetrics{
		IDs:             x.nIDs.Load(),
		Buckets:         x.nBuckets.Load(),
		Postings:        x.postings.Load(),
		FullBuckets:     x.fullBuckets.Load(),
		BucketCap:       x.opts.BucketCap,
		Inserts:         x.inserts.Load(),
		Removes:         x.removes.Load(),
		DroppedPostings: x.dropped.Load(),
		Queries:         x.queries.Load(),
		Candidates:      x.candidates.Load(),
	}
}
