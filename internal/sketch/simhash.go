package sketch

import (
	"fmt"
	"slices"
	"sync"

	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
	"github.com/neardup/neardup/simhash"
)

// Kind says which sketch a Config makes.
type Kind uint8

// The sketches. The zero Kind is MinHash, so that a Config made before
// SimHash existed (or decoded from JSON without a kind) still means MinHash.
const (
	// MinHash: shingle features, minhash signatures, lsh band keys.
	MinHash Kind = iota
	// SimHash: one 64-bit fingerprint of the weighted features, bucket keys
	// from the block-permutation tables, Hamming distance as the candidate
	// test.
	SimHash
)

// String returns "minhash" or "simhash".
func (k Kind) String() string {
	switch k {
	case MinHash:
		return "minhash"
	case SimHash:
		return "simhash"
	}
	return fmt.Sprintf("sketch(%d)", uint8(k))
}

// ParseKind reads "minhash" or "simhash"; the error wraps ErrInvalidConfig.
func ParseKind(s string) (Kind, error) {
	switch s {
	case "minhash":
		return MinHash, nil
	case "simhash":
		return SimHash, nil
	}
	return 0, fmt.Errorf("%w: sketch %q, want minhash or simhash", ErrInvalidConfig, s)
}

// Defaults of SimHash jobs, from the measurements in BENCHMARKS.md ("SimHash:
// weighting and k").
const (
	// DefaultHamming is the default Hamming distance k of a SimHash
	// candidate: the least k that catches 95 % of the pairs at J ≥ 0.95 on
	// every corpus measured (the generated corpus needs 6, the Go tree 4,
	// the articles 6 at 0.95 of their 20 pairs). Each step of k costs
	// tables (C(B, k) entries a document); plan --sketch simhash measures
	// it on a sample of the corpus at hand.
	DefaultHamming = 6
)

// SimHashConfig parameterises SimHash (Config.Kind = SimHash): the
// weighting, the Hamming distance of a candidate and the block-permutation
// layout of the bucket keys. Plain data; IDF is the one field that does not
// travel through encoding/json (a distributed driver ships the
// document-frequency table by other means and sets it on its workers).
type SimHashConfig struct {
	// Params are the fingerprints' params as signature files name them:
	// TF or TF-IDF weighting and, for TF-IDF, the fingerprint of the
	// document-frequency table.
	Params sigfile.SimHashParams
	// K is the Hamming distance within which two fingerprints are
	// candidates, 0..simhash.MaxMaxDistance.
	K int
	// Blocks is B, the number of blocks the 64 bits are split into: the
	// bucket keys are the permuted prefixes of C(B, K) tables. 0 until
	// the number of documents is known (Config.Resolve chooses it by the
	// planner's rule); a sketch made with 0 signs but makes no bucket keys.
	// Range K+1..simhash.MaxBlocks with C(B, K) ≤ simhash.MaxTables.
	Blocks int
	// IDF are the TF-IDF weights (DFTable.IDF); required with TF-IDF, its
	// fingerprint equal to Params.DFFingerprint, and nil with TF.
	IDF *simhash.IDF `json:"-"`
}

// layoutOptions returns the simhash options of the layout (K = 0 is
// simhash.ExactMatch there).
func (s *SimHashConfig) layoutOptions() simhash.Options {
	k := s.K
	if k == 0 {
		k = simhash.ExactMatch
	}
	return simhash.Options{MaxDistance: k, Blocks: s.Blocks}
}

// check reports whether s describes a usable SimHash sketch.
func (s *SimHashConfig) check() error {
	if err := s.Params.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if s.K < 0 || s.K > simhash.MaxMaxDistance {
		return fmt.Errorf("%w: Hamming distance %d; want 0 to %d", ErrInvalidConfig, s.K, simhash.MaxMaxDistance)
	}
	if s.Blocks != 0 {
		if err := (&simhash.Options{MaxDistance: s.layoutOptions().MaxDistance, Blocks: s.Blocks}).Validate(); err != nil {
			return fmt.Errorf("%w: %d blocks for Hamming distance %d: %w", ErrInvalidConfig, s.Blocks, s.K, err)
		}
	}
	switch {
	case s.Params.Weighting == sigfile.TFIDF && s.IDF == nil:
		return fmt.Errorf("%w: TF-IDF weighting without the document-frequency table %016x (count it first: NewDFCounter)", ErrInvalidConfig, s.Params.DFFingerprint)
	case s.Params.Weighting == sigfile.TFIDF && s.IDF.Fingerprint() != s.Params.DFFingerprint:
		return fmt.Errorf("%w: TF-IDF weights of table %016x; the params name table %016x", ErrInvalidConfig, s.IDF.Fingerprint(), s.Params.DFFingerprint)
	case s.Params.Weighting == sigfile.TF && s.IDF != nil:
		return fmt.Errorf("%w: TF weighting with TF-IDF weights", ErrInvalidConfig)
	}
	return nil
}

// layouts caches the layouts of Config.AppendBucketKeys, by options: a
// handful of (K, B) pairs at most, each immutable.
var layouts sync.Map // simhash.Options → *simhash.Layout

func layoutOf(o simhash.Options) (*simhash.Layout, error) {
	if l, ok := layouts.Load(o); ok {
		return l.(*simhash.Layout), nil
	}
	l, err := simhash.NewLayout(o)
	if err != nil {
		return nil, err
	}
	v, _ := layouts.LoadOrStore(o, l)
	return v.(*simhash.Layout), nil
}

// simHashBucketKeys appends the bucket keys of fingerprint sig[0] under l:
// one per table, the high BucketKeyBits of the table's entry with
// EntryDocBits document bits, so that PackEntry(key, doc) is the entry
// l.AppendEntries makes for doc and a simhash.Grouper reads it.
func simHashBucketKeys(l *simhash.Layout, dst, scratch, sig []uint64) ([]uint64, []uint64) {
	scratch = l.AppendEntries(scratch[:0], sig[0], 0, EntryDocBits)
	for _, e := range scratch {
		dst = append(dst, EntryBucket(e))
	}
	return dst, scratch
}

// simHash is the SimHash Sketch: features by a shingle.Spec weighed by term
// frequency or TF-IDF into one 64-bit fingerprint (simhash.Hasher), the
// block-permutation table keys of a simhash.Layout as bucket keys, a
// simhash.Grouper keeping the pairs within Hamming distance K, and
// simhash.ModelJaccard of the distance as the estimate.
type simHash struct {
	spec   shingle.Spec
	cfg    SimHashConfig
	layout *simhash.Layout // nil until Blocks is chosen
}

var _ Sketch = (*simHash)(nil)

func newSimHash(c Config) (*simHash, error) {
	if err := c.Spec.Validate(); err != nil {
		return nil, err
	}
	s := c.SimHash
	if err := s.check(); err != nil {
		return nil, err
	}
	m := &simHash{spec: c.Spec, cfg: s}
	if s.Blocks != 0 {
		var err error
		if m.layout, err = layoutOf(s.layoutOptions()); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		}
	}
	return m, nil
}

func (m *simHash) Words() int { return 1 }

// Similarity is the unit-weight model's Jaccard similarity at the
// fingerprints' Hamming distance (simhash.ModelJaccard): a number on the
// Jaccard scale for reports, not an estimate to threshold (see
// jobspec.Options.Verify).
func (m *simHash) Similarity(a, b []uint64) float64 {
	return simhash.ModelJaccard(simhash.Distance(a[0], b[0]))
}

func (m *simHash) AppendBucketKeys(dst, scratch, sig []uint64) ([]uint64, []uint64) {
	if m.layout == nil {
		panic("sketch: SimHash bucket keys before the blocks are chosen (Config.Resolve)")
	}
	return simHashBucketKeys(m.layout, dst, scratch, sig)
}

// KeyBits is BucketKeyBits: SimHash's keys are its layout's.
func (m *simHash) KeyBits() int { return BucketKeyBits }

// AppendKeys is AppendBucketKeys with the keys in place (shifted up by
// EntryDocBits), as Sketch.AppendKeys says.
func (m *simHash) AppendKeys(dst, scratch, sig []uint64) ([]uint64, []uint64) {
	n := len(dst)
	dst, scratch = m.AppendBucketKeys(dst, scratch, sig)
	for i := n; i < len(dst); i++ {
		dst[i] <<= EntryDocBits
	}
	return dst, scratch
}

// Empty reports the fingerprint of a text without features, 0 (which a text
// with features has with probability about 2^−64).
func (m *simHash) Empty(sig []uint64) bool { return len(sig) == 1 && sig[0] == 0 }

func (m *simHash) GroupsBySignature() bool { return true }

func (m *simHash) NewGrouper(sigs []uint64, bucketCap int, reference uint32) (Grouper, error) {
	if reference > 0 {
		return nil, fmt.Errorf("%w: SimHash candidates with %d reference documents: reference documents are MinHash's for now", ErrInvalidConfig, reference)
	}
	if m.layout == nil {
		return nil, fmt.Errorf("%w: SimHash candidates before the blocks are chosen (Config.Resolve)", ErrInvalidConfig)
	}
	g, err := m.layout.NewGrouper(sigs, EntryDocBits, m.cfg.K, &simhash.PairOptions{Cap: bucketCap})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return &simHashGrouper{g: g, cap: bucketCap}, nil
}

func (m *simHash) NewSketcher() (Sketcher, error) {
	sh, err := shingle.New(m.spec)
	if err != nil {
		return nil, err
	}
	return &simHashSketcher{m: m, sh: sh, h: simhash.NewHasher(m.cfg.IDF)}, nil
}

// simHashSketcher is simHash's Sketcher.
type simHashSketcher struct {
	m       *simHash
	sh      *shingle.Shingler
	h       *simhash.Hasher
	scratch []uint64
	metrics minhash.Metrics
}

var (
	_ Sketcher   = (*simHashSketcher)(nil)
	_ TextHasher = (*simHashSketcher)(nil)
)

// TextHash is the shingler's: a fingerprint depends only on the features
// of the normalised text (and the weights, fixed for the sketch).
func (k *simHashSketcher) TextHash(text []byte) (hi, lo uint64, empty bool) {
	return k.sh.TextHash(text)
}

// TextHashHeld is the shingler's, as TextHash.
func (k *simHashSketcher) TextHashHeld(text []byte) (hi, lo uint64, empty bool) {
	return k.sh.TextHashHeld(text)
}

func (k *simHashSketcher) Sign(dst []uint64, text []byte) ([]uint64, bool) {
	fp := k.h.FingerprintText(k.sh, text)
	n := k.h.Features()
	k.metrics.Signatures++
	k.metrics.Features += int64(n)
	if n == 0 {
		k.metrics.EmptySets++
	}
	return append(dst, fp), n == 0
}

func (k *simHashSketcher) AppendBucketKeys(dst, sig []uint64) []uint64 {
	dst, k.scratch = k.m.AppendBucketKeys(dst, k.scratch, sig)
	return dst
}

func (k *simHashSketcher) AppendKeys(dst, sig []uint64) []uint64 {
	dst, k.scratch = k.m.AppendKeys(dst, k.scratch, sig)
	return dst
}

// Metrics counts signatures, features and empty sets; SimHash has no bins.
func (k *simHashSketcher) Metrics() minhash.Metrics { return k.metrics }

// simHashGrouper is a simhash.Grouper with lsh's metrics: the pairs it emits
// are those within Hamming distance K, each once (capped buckets aside), and
// it lists the largest capped buckets as lsh.Grouper does.
type simHashGrouper struct {
	g   *simhash.Grouper
	cap int

	started bool
	last    uint64
	cur     lsh.Bucket
	largest []lsh.Bucket // capped, by size descending then key ascending
}

var _ Grouper = (*simHashGrouper)(nil)

func (g *simHashGrouper) Append(dst, entries []uint64) ([]uint64, error) {
	dst, err := g.g.Append(dst, entries)
	if err != nil {
		return dst, err
	}
	const keyMask = ^uint64(1<<EntryDocBits - 1)
	for _, e := range entries {
		switch {
		case g.started && e == g.last:
		case g.started && e&keyMask == g.cur.Key:
			g.cur.Size++
		default:
			g.closeBucket()
			g.cur, g.started = lsh.Bucket{Key: e & keyMask, Size: 1, First: EntryDoc(e)}, true
		}
		g.last = e
	}
	return dst, nil
}

// closeBucket records the open bucket if it is over the cap and among the
// lsh.DefaultLargest largest.
func (g *simHashGrouper) closeBucket() {
	b := g.cur
	g.cur.Size = 0
	if g.cap == simhash.NoCap || b.Size <= g.cap {
		return
	}
	i, _ := slices.BinarySearchFunc(g.largest, b, func(x, y lsh.Bucket) int {
		if x.Size != y.Size {
			return y.Size - x.Size
		}
		switch {
		case x.Key < y.Key:
			return -1
		case x.Key > y.Key:
			return 1
		}
		return 0
	})
	g.largest = slices.Insert(g.largest, i, b)[:min(len(g.largest)+1, lsh.DefaultLargest)]
}

func (g *simHashGrouper) Flush(dst []uint64) []uint64 {
	g.closeBucket()
	g.started = false
	return g.g.Flush(dst)
}

func (g *simHashGrouper) Metrics() lsh.CandidateMetrics {
	m := g.g.Metrics()
	return lsh.CandidateMetrics{Entries: m.Entries, DuplicateEntries: m.DuplicateEntries, Buckets: m.Buckets,
		SharedBuckets: m.SharedBuckets, Pairs: m.Pairs, CappedBuckets: m.CappedBuckets, CappedMembers: m.CappedMembers,
		Largest: slices.Clone(g.largest)}
}

// DFCounter is the first pass of TF-IDF weighting for one goroutine: it
// counts the document frequencies of the features of the texts it is given
// (simhash.DFTable, default size: 8 MiB whatever the corpus). Counters of
// several goroutines merge (Merge) into the same table whatever the split
// of the documents between them. Not safe for concurrent use.
type DFCounter struct {
	sh    *shingle.Shingler
	table *simhash.DFTable
}

// NewDFCounter returns a counter of the document frequencies of features
// under spec, in a table of the default size.
func NewDFCounter(spec shingle.Spec) (*DFCounter, error) {
	sh, err := shingle.New(spec)
	if err != nil {
		return nil, err
	}
	t, err := simhash.NewDFTable(simhash.DFOptions{})
	if err != nil {
		return nil, err
	}
	return &DFCounter{sh: sh, table: t}, nil
}

// Add counts one document: text is only read.
func (d *DFCounter) Add(text []byte) { d.table.AddText(d.sh, text) }

// Merge adds o's counts to d's.
func (d *DFCounter) Merge(o *DFCounter) error { return d.table.Merge(o.table) }

// Table returns the counted table; it is d's, and changes if d counts on.
func (d *DFCounter) Table() *simhash.DFTable { return d.table }

// WithDF returns c with TF-IDF weights from table t: the weights (t.IDF())
// and the table's fingerprint in the params. c must select SimHash.
func (c Config) WithDF(t *simhash.DFTable) Config {
	idf := t.IDF()
	c.SimHash.IDF = idf
	c.SimHash.Params = sigfile.SimHashParams{Weighting: sigfile.TFIDF, DFFingerprint: idf.Fingerprint()}
	return c
}

// Resolved reports whether c's bucket keys are fixed: always for MinHash;
// for SimHash once the blocks are chosen.
func (c *Config) Resolved() bool { return c.Kind != SimHash || c.SimHash.Blocks != 0 }

// Resolve returns c with everything that waits for the corpus size chosen
// for documents signed documents: for SimHash without blocks, the number of
// blocks by the planner's rule for random fingerprints
// (simhash.ChooseBlocks with entries of EntryDocBits document bits and
// simhash.DefaultEntryCost); otherwise c unchanged. Deterministic; every
// driver resolves with the same count (the documents with a signature,
// empty ones excluded) and so gets the same layout.
func (c Config) Resolve(documents int64) (Config, error) {
	if c.Resolved() {
		return c, nil
	}
	b, err := simhash.ChooseBlocks(c.SimHash.layoutOptions().MaxDistance, documents, EntryDocBits, simhash.DefaultEntryCost)
	if err != nil {
		return c, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	c.SimHash.Blocks = b
	return c, nil
}

// Tables returns the bucket keys a signature has: the bands of MinHash, the
// tables C(B, K) of a resolved SimHash (0 before).
func (c *Config) Tables() int {
	if c.Kind != SimHash {
		return c.Bands.Bands
	}
	if c.SimHash.Blocks == 0 {
		return 0
	}
	l, err := layoutOf(c.SimHash.layoutOptions())
	if err != nil {
		return 0
	}
	return l.Tables()
}

// CandidateProbability returns the probability that a pair at Jaccard
// similarity j becomes a candidate: the S-curve of the bands for MinHash;
// for SimHash the unit-weight model's P(distance ≤ K) (simhash.ModelRecall),
// which on real text is pessimistic below J ≈ 0.9 (BENCHMARKS.md measures
// it) — plan --sketch simhash measures the real share on a sample.
func (c *Config) CandidateProbability(j float64) float64 {
	if c.Kind == SimHash {
		return simhash.ModelRecall(j, c.SimHash.K)
	}
	return c.Bands.Probability(j)
}

// ParamsString returns the canonical form of the signature params (the
// minhash params, or the SimHash params as signature files name them) and
// its fingerprint.
func (c *Config) ParamsString() (string, uint64) {
	if c.Kind == SimHash {
		return c.SimHash.Params.String(), c.SimHash.Params.Fingerprint()
	}
	return c.Params.String(), c.Params.Fingerprint()
}

// SignatureHeader returns the header of a signature file (package sigfile)
// of signatures made under c.
func (c *Config) SignatureHeader() sigfile.Header {
	if c.Kind == SimHash {
		return sigfile.SimHashHeader(c.Spec, c.SimHash.Params)
	}
	return sigfile.MinHashHeader(c.Spec, c.Params)
}
