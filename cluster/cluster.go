package cluster

import (
	"fmt"
	"iter"
	"math"
	"math/bits"
	"slices"
	"strings"
)

// Edge links two documents, by input index, with their similarity: a
// verified candidate pair. Edges are undirected; A and B may come in either
// order, and an edge may repeat (it counts if any copy reaches the
// threshold). Self-loops (A == B) are ignored.
type Edge struct {
	// A and B are the two documents' input indices, below the n given to
	// Components or Star.
	A, B uint32
	// Sim is the pair's similarity; the edge is used only if Sim ≥
	// Options.Threshold. It must not be NaN.
	Sim float64
}

// MaxDocs is the largest document count accepted: indices are uint32, and
// one value is reserved.
const MaxDocs = math.MaxUint32

// Options configures Components and Star. The zero value, and nil, ask for
// the defaults.
type Options struct {
	// Threshold is the similarity floor: edges with Sim below it are
	// ignored. 0 means the default, 0 (every edge counts); drivers usually
	// pass the verification threshold. It must not be NaN.
	Threshold float64

	// Keep is the keep policy choosing each cluster's kept document. The
	// zero value means the default, KeepFirst (the lowest index).
	Keep Policy

	// Reference is the number of reference documents, the documents
	// numbered 0 … Reference−1: documents kept before (an archive that new
	// documents are deduplicated against), which are never removed. They
	// rank before every other document under every policy, among
	// themselves by index (their attributes are not read), so a cluster
	// that holds one keeps one: Components keeps its lowest reference
	// member, and Star visits reference documents first, so that every
	// star holding one is centred on one. Result.IsKept reports every
	// reference document as kept, and Metrics.Removed counts only other
	// documents. Default 0: none. Range 0 … n.
	Reference int
}

// EnsureDefaults returns o, or new Options if o is nil; the zero values of
// the fields are already their defaults. It is nil-safe.
func (o *Options) EnsureDefaults() *Options {
	if o == nil {
		o = &Options{}
	}
	return o
}

// Validate reports whether o is usable; errors wrap ErrInvalidOptions or
// ErrInvalidPolicy. It is nil-safe.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	if math.IsNaN(o.Threshold) {
		return fmt.Errorf("%w: Threshold is NaN", ErrInvalidOptions)
	}
	if o.Reference < 0 {
		return fmt.Errorf("%w: Reference = %d; must be 0 or more", ErrInvalidOptions, o.Reference)
	}
	return o.Keep.Validate()
}

// Cluster is one group of two or more documents.
type Cluster struct {
	// Kept is the document the cluster keeps: the best by the keep policy
	// (Components) or the centre (Star).
	Kept uint32
	// Members are the cluster's documents, Kept included, ascending.
	Members []uint32
}

// Result is a clustering of n documents: the clusters of two or more
// documents, ordered by their lowest member; every other document is a
// singleton and is kept. A Result is immutable once returned and safe for
// concurrent reads. The Members slices share one backing array owned by the
// Result; do not modify them.
type Result struct {
	// Clusters are the clusters of two or more documents, ordered by their
	// lowest member; empty if every document is a singleton.
	Clusters []Cluster
	// Metrics summarises the clustering.
	Metrics Metrics

	of  []uint32 // cluster index per document, or noCluster
	ref uint32   // Options.Reference
}

const noCluster = math.MaxUint32

// ClusterOf returns the index in Clusters of doc's cluster, or −1 if doc is
// a singleton (or out of range).
func (r *Result) ClusterOf(doc uint32) int {
	if int(doc) >= len(r.of) || r.of[doc] == noCluster {
		return -1
	}
	return int(r.of[doc])
}

// IsKept reports whether doc survives deduplication: it is a singleton, its
// cluster's kept document or a reference document (Options.Reference).
// Out-of-range documents report false.
func (r *Result) IsKept(doc uint32) bool {
	if int(doc) >= len(r.of) {
		return false
	}
	c := r.of[doc]
	return c == noCluster || r.Clusters[c].Kept == doc || doc < r.ref
}

// AppendRemoved appends the documents that are not kept, ascending, to dst
// and returns the extended slice.
func (r *Result) AppendRemoved(dst []uint32) []uint32 {
	for d, c := range r.of {
		if c != noCluster && r.Clusters[c].Kept != uint32(d) && uint32(d) >= r.ref {
			dst = append(dst, uint32(d))
		}
	}
	return dst
}

// Metrics summarises a clustering. It is a plain value; Sizes is owned by
// the Result.
type Metrics struct {
	Docs      int         // documents clustered, n
	Edges     int         // edges given, repeats and self-loops included
	Used      int         // edges at or above the threshold between distinct documents
	Clusters  int         // clusters of two or more documents
	Clustered int         // documents in those clusters
	Removed   int         // documents not kept: Clustered − Clusters, less the reference documents not kept by their cluster
	Largest   int         // size of the largest cluster, 0 if none
	Sizes     []SizeCount // how many clusters have each size, by size ascending
}

// SizeCount is one bar of the cluster-size histogram.
type SizeCount struct {
	Size, Count int // Count clusters have exactly Size members
}

// RemovedFraction returns Removed/Docs, the share of documents removed as
// near-duplicates, or 0 for no documents.
func (m Metrics) RemovedFraction() float64 {
	if m.Docs == 0 {
		return 0
	}
	return float64(m.Removed) / float64(m.Docs)
}

// String returns the metrics as an aligned table, the size histogram last.
func (m Metrics) String() string {
	var sb strings.Builder
	row := func(name string, v any) { fmt.Fprintf(&sb, "%-12s %12v\n", name, v) }
	row("docs", m.Docs)
	row("edges", m.Edges)
	row("used edges", m.Used)
	row("clusters", m.Clusters)
	row("clustered", m.Clustered)
	row("removed", m.Removed)
	row("removed %", fmt.Sprintf("%.2f", 100*m.RemovedFraction()))
	row("largest", m.Largest)
	for _, s := range m.Sizes {
		fmt.Fprintf(&sb, "size %-7d %12d\n", s.Size, s.Count)
	}
	return sb.String()
}

// checkInput validates n, the options, and the edges, and counts the used
// edges.
func checkInput(n int, edges []Edge, opts *Options) (used int, err error) {
	if err := checkN(n, opts); err != nil {
		return 0, err
	}
	u := usedEdges{n: n, threshold: opts.EnsureDefaults().Threshold}
	for range u.of(slices.Values(edges)) {
	}
	return u.used, u.err
}

// usedEdges filters a sequence of edges down to those a clustering of n
// documents uses (at or above threshold, not loops), checking each edge
// and counting the edges read and used: the head of every clustering's
// edge loop.
type usedEdges struct {
	n         int
	threshold float64
	count     int   // edges read; while one is yielded, count-1 is its index
	used      int   // edges yielded
	err       error // the first invalid edge; the sequence stops there
}

// of yields the used edges of edges, stopping at the first invalid one
// (u.err then holds its error).
func (u *usedEdges) of(edges iter.Seq[Edge]) iter.Seq[Edge] {
	return func(yield func(Edge) bool) {
		for e := range edges {
			ok, err := checkEdge(u.n, u.count, e, u.threshold)
			if err != nil {
				u.err = err
				return
			}
			u.count++
			if !ok {
				continue
			}
			u.used++
			if !yield(e) {
				return
			}
		}
	}
}

// checkN validates n and the options.
func checkN(n int, opts *Options) error {
	if n < 0 || n > MaxDocs {
		return fmt.Errorf("%w: n = %d; must be in 0..%d", ErrInvalidOptions, n, MaxDocs)
	}
	if err := opts.Validate(); err != nil {
		return err
	}
	if opts != nil && opts.Reference > n {
		return fmt.Errorf("%w: Reference = %d with n = %d documents", ErrInvalidOptions, opts.Reference, n)
	}
	return nil
}

// checkEdge validates edge i, e, of a clustering of n documents, and
// reports whether it is used under threshold t.
func checkEdge(n, i int, e Edge, t float64) (used bool, err error) {
	if int(e.A) >= n || int(e.B) >= n {
		return false, fmt.Errorf("%w: edges[%d] = (%d, %d) with n = %d documents", ErrInvalidEdge, i, e.A, e.B, n)
	}
	if math.IsNaN(e.Sim) {
		return false, fmt.Errorf("%w: edges[%d] = (%d, %d) has a NaN similarity", ErrInvalidEdge, i, e.A, e.B)
	}
	return e.A != e.B && e.Sim >= t, nil
}

// Components clusters n documents into the connected components of the
// edges at or above opts.Threshold, using a union-find in which the larger
// root always joins the smaller, so each component's root is its lowest
// member whatever the edge order. Each cluster keeps its best document by
// opts.Keep, reading attrs (nil for KeepFirst).
//
// Components chains: documents A and Z end in one cluster whenever a path of
// edges joins them, however unrelated they are. Use Star when that matters.
// Time is O(n + E·α(n)), the O(n) a fill and a scan of a bitmap; memory
// is 4 bytes and a bit per document plus about 20 per clustered document.
// Errors wrap
// ErrInvalidEdge, ErrInvalidOptions, ErrInvalidPolicy or ErrMissingAttrs.
// The result depends only on n, the set of edges, attrs and opts.
// It is ComponentsSeq over the slice.
func Components(n int, edges []Edge, attrs *Attrs, opts *Options) (*Result, error) {
	return ComponentsSeq(n, slices.Values(edges), attrs, opts)
}

// prepare checks n and opts and returns opts with its defaults and the
// ranker of its keep policy, for the clustering functions.
func prepare(n int, attrs *Attrs, opts *Options) (*Options, ranker, error) {
	if err := checkN(n, opts); err != nil {
		return nil, ranker{}, err
	}
	opts = opts.EnsureDefaults()
	rank, err := newRanker(opts.Keep, n, attrs, opts.Reference)
	return opts, rank, err
}

// ComponentsSeq is Components over edges given as a sequence, in any
// order, read once: the edges are never held, so memory is O(n) — 4 bytes
// and a bit per document plus about 20 per clustered document — whatever
// their number E.
// The result equals Components' over the same edges (errors included: an
// edge is numbered by its position in the sequence). A sequence that stops
// early on an error of its own must make the caller discard the result.
func ComponentsSeq(n int, edges iter.Seq[Edge], attrs *Attrs, opts *Options) (*Result, error) {
	opts, rank, err := prepare(n, attrs, opts)
	if err != nil {
		return nil, err
	}
	// parent[x] is x's parent, or noCluster for a root. Only the documents
	// in used edges are read again after the unions: on millions of
	// documents with few of them in pairs, passes over all n would cost
	// more than the unions (the marks find them, 1 bit a document). The
	// array becomes the Result's cluster index per document.
	parent := make([]uint32, n)
	for i := range parent {
		parent[i] = noCluster
	}
	find := func(x uint32) uint32 {
		for {
			p := parent[x]
			if p == noCluster {
				return x
			}
			g := parent[p]
			if g == noCluster {
				return p
			}
			parent[x] = g // path halving
			x = g
		}
	}
	marks := make([]uint64, (n+63)/64) // documents in a component of two or more
	var joined []uint32                // documents that stopped being roots, each once
	u := usedEdges{n: n, threshold: opts.Threshold}
	for e := range u.of(edges) {
		a, b := find(e.A), find(e.B)
		if a == b {
			continue
		}
		if b < a {
			a, b = b, a
		}
		parent[b] = a // the larger root joins the smaller
		joined = append(joined, b)
		marks[a/64] |= 1 << (a % 64)
		marks[b/64] |= 1 << (b % 64)
	}
	if u.err != nil {
		return nil, u.err
	}
	// The clustered documents, ascending, and their roots: each
	// component's root is its lowest member, so it comes first.
	docs := make([]uint32, 0, 2*len(joined))
	for w, m := range marks {
		for ; m != 0; m &= m - 1 {
			docs = append(docs, uint32(w*64+bits.TrailingZeros64(m)))
		}
	}
	marks = nil
	roots := make([]uint32, len(docs))
	for i, d := range docs {
		roots[i] = find(d)
	}
	of := parent
	for _, d := range joined {
		of[d] = noCluster
	}
	var sizes []int
	var reps []uint32
	for i, d := range docs {
		if r := roots[i]; r == d {
			of[d] = uint32(len(sizes))
			sizes = append(sizes, 1)
			reps = append(reps, d)
		} else {
			c := of[r]
			of[d] = c
			sizes[c]++
		}
	}
	roots = nil
	res := newResult(n, sizes, reps, len(docs))
	for _, d := range docs {
		cl := &res.Clusters[of[d]]
		cl.Members = append(cl.Members, d)
	}
	res.of = of
	for c := range res.Clusters {
		cl := &res.Clusters[c]
		best := cl.Members[0]
		for _, d := range cl.Members[1:] {
			if rank.before(d, best) {
				best = d
			}
		}
		cl.Kept = best
	}
	res.setReference(opts.Reference)
	res.Metrics.Edges, res.Metrics.Used = u.count, u.used
	return res, nil
}

// setReference marks the first ref documents as reference documents, which
// are never removed, and takes those not kept by their cluster out of
// Metrics.Removed.
func (r *Result) setReference(ref int) {
	r.ref = uint32(ref)
	for d := range ref {
		if c := r.of[d]; c != noCluster && r.Clusters[c].Kept != uint32(d) {
			r.Metrics.Removed--
		}
	}
}

// build turns per-document group labels (a representative document, or
// noCluster for singletons) into a Result whose clusters are ordered by
// their lowest member and whose Kept is the representative. scratch is n
// uint32s of working memory; rep is reused as the Result's cluster index
// per document.
func build(n int, rep, scratch []uint32) *Result {
	// Number the groups in order of their lowest member.
	index := scratch // representative → cluster index
	for i := range index {
		index[i] = noCluster
	}
	var sizes []int
	var reps []uint32
	for _, r := range rep {
		if r == noCluster {
			continue
		}
		if index[r] == noCluster {
			index[r] = uint32(len(sizes))
			sizes = append(sizes, 0)
			reps = append(reps, r)
		}
		sizes[index[r]]++
	}
	clustered := 0
	for _, s := range sizes {
		clustered += s
	}
	res := newResult(n, sizes, reps, clustered)
	// Visiting documents in order appends each cluster's members ascending.
	for d, r := range rep {
		if r == noCluster {
			continue
		}
		c := index[r]
		rep[d] = c
		res.Clusters[c].Members = append(res.Clusters[c].Members, uint32(d))
	}
	res.of = rep
	return res
}

// newResult returns a Result of n documents whose clusters, ordered by
// their lowest member, have the given sizes and representatives (their
// Kept), with empty Members sharing one backing array of clustered (the
// sum of sizes) entries, and its Metrics but Edges and Used.
func newResult(n int, sizes []int, reps []uint32, clustered int) *Result {
	res := &Result{Clusters: make([]Cluster, len(sizes))}
	backing := make([]uint32, clustered)
	off := 0
	largest := 0
	for c, s := range sizes {
		res.Clusters[c] = Cluster{Kept: reps[c], Members: backing[off : off : off+s]}
		off += s
		largest = max(largest, s)
	}
	m := &res.Metrics
	m.Docs, m.Clusters, m.Clustered, m.Removed = n, len(sizes), clustered, clustered-len(sizes)
	// The size histogram by counting, not sorting: hundreds of thousands
	// of clusters, nearly all of two.
	count := make([]int, largest+1)
	for _, s := range sizes {
		count[s]++
	}
	for s, k := range count {
		if k > 0 {
			m.Sizes = append(m.Sizes, SizeCount{Size: s, Count: k})
		}
	}
	m.Largest = largest
	return res
}
