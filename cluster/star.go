package cluster

import (
	"fmt"
	"iter"
	"math"
	"slices"
)

// Star clusters n documents without chaining, by greedy star clustering
// over the edges at or above opts.Threshold: documents are visited in
// opts.Keep order (best first, reading attrs; nil for KeepFirst); a visited
// document that is still unassigned and has unassigned neighbours becomes a
// centre, and claims all of them. Each cluster is a centre and the
// documents it claimed; its kept document is the centre, so every removed
// document is linked to the document kept in its place by an edge with
// Sim ≥ Threshold. Centres are never linked to each other, and a document
// left a singleton has all its neighbours in clusters.
//
// Chains break into short stars: along a path of 50 documents visited
// first to last, Star makes 25 pairs where Components makes one cluster. In
// exchange, a document may end in a cluster other than the one holding its
// most similar neighbour (greedy, not optimal).
//
// Time is O(n log n + E) (the sort by policy) and memory about 16 bytes per
// document plus 8 per used edge (the adjacency lists); the used edges must
// number below 2³¹. Errors wrap ErrInvalidEdge, ErrInvalidOptions,
// ErrInvalidPolicy or ErrMissingAttrs. The result depends only on n, the set
// of edges, attrs and opts.
func Star(n int, edges []Edge, attrs *Attrs, opts *Options) (*Result, error) {
	used, err := checkInput(n, edges, opts)
	if err != nil {
		return nil, err
	}
	if used >= math.MaxInt32 {
		return nil, fmt.Errorf("%w: %d edges above the threshold; Star handles fewer than 2³¹", ErrInvalidOptions, used)
	}
	opts = opts.EnsureDefaults()
	rank, err := newRanker(opts.Keep, n, attrs, opts.Reference)
	if err != nil {
		return nil, err
	}
	t := opts.Threshold

	// Adjacency lists in CSR form: neighbours of d are adj[start[d]:start[d+1]].
	start := make([]uint32, n+1)
	for _, e := range edges {
		if e.A != e.B && e.Sim >= t {
			start[e.A+1]++
			start[e.B+1]++
		}
	}
	var order []uint32 // documents with neighbours, to visit
	for d := range n {
		if start[d+1] > 0 {
			order = append(order, uint32(d))
		}
		start[d+1] += start[d]
	}
	adj := make([]uint32, start[n])
	fill := slices.Clone(start[:n])
	for _, e := range edges {
		if e.A != e.B && e.Sim >= t {
			adj[fill[e.A]] = e.B
			fill[e.A]++
			adj[fill[e.B]] = e.A
			fill[e.B]++
		}
	}

	if opts.Keep.Kind != KeepFirst { // for KeepFirst, index order already is policy order (reference documents first)
		slices.SortFunc(order, rank.compare)
	}

	rep := make([]uint32, n) // the centre of each document's star, or noCluster
	for i := range rep {
		rep[i] = noCluster
	}
	for _, c := range order {
		if rep[c] != noCluster {
			continue
		}
		claimed := false
		for _, d := range adj[start[c]:start[c+1]] {
			if rep[d] == noCluster {
				rep[d] = c
				claimed = true
			}
		}
		if claimed {
			rep[c] = c
		}
	}
	res := build(n, rep, start[:n])
	res.setReference(opts.Reference)
	res.Metrics.Edges, res.Metrics.Used = len(edges), used
	return res, nil
}

// VisitOrder returns the position of each of n documents in the order Star
// visits them: opts.Keep order (reference documents first, by index; then
// best first by the policy, reading attrs; ties by index), a total order.
// Under KeepFirst it is the index order. Callers sort edges by it for
// StarSeq. Memory: 4 bytes per document (and the sort's).
func VisitOrder(n int, attrs *Attrs, opts *Options) ([]uint32, error) {
	opts, rank, err := prepare(n, attrs, opts)
	if err != nil {
		return nil, err
	}
	order := make([]uint32, n)
	for d := range order {
		order[d] = uint32(d)
	}
	if opts.Keep.Kind != KeepFirst {
		slices.SortFunc(order, rank.compare)
	}
	pos := make([]uint32, n)
	for p, d := range order {
		pos[d] = uint32(p)
	}
	return pos, nil
}

// StarSeq is Star over edges given as a sequence in visit order, read once:
// the used edges (at or above opts.Threshold, not self-loops) must come
// grouped by their endpoint that VisitOrder places first, those groups in
// visit order (in any order within a group) — under KeepFirst, edges with
// A < B sorted by A, such as edges sorted by (A, B). Edges that are not
// used may come anywhere. The edges are never held, so memory is O(n): 8
// bytes per document plus 4 per clustered document (and VisitOrder's
// positions unless the policy is KeepFirst), whatever their number E; Star
// holds every used edge instead, in any order.
//
// The result equals Star's over the same edges: when Star visits document
// c, every neighbour that it visited before is in a cluster already (it
// claimed c, or was claimed, or it claimed others before and is a centre),
// so c claims only among the neighbours it precedes, which are the edges of
// its group. A used edge out of order is an error wrapping ErrInvalidEdge,
// as are the edges Star rejects.
func StarSeq(n int, edges iter.Seq[Edge], attrs *Attrs, opts *Options) (*Result, error) {
	if err := checkN(n, opts); err != nil {
		return nil, err
	}
	opts = opts.EnsureDefaults()
	var pos []uint32 // nil: the index order
	if opts.Keep.Kind != KeepFirst {
		var err error
		if pos, err = VisitOrder(n, attrs, opts); err != nil {
			return nil, err
		}
	} else if _, err := newRanker(opts.Keep, n, attrs, opts.Reference); err != nil {
		return nil, err
	}
	at := func(d uint32) uint32 {
		if pos == nil {
			return d
		}
		return pos[d]
	}
	rep := make([]uint32, n) // the centre of each document's star, or noCluster
	for i := range rep {
		rep[i] = noCluster
	}
	u := usedEdges{n: n, threshold: opts.Threshold}
	centre := uint32(noCluster) // the document whose group is being read
	open, claimed := false, false
	end := func() { // the end of centre's group
		if claimed {
			rep[centre] = centre
		}
		open, claimed = false, false
	}
	for e := range u.of(edges) {
		c, d := e.A, e.B
		if at(d) < at(c) {
			c, d = d, c
		}
		if c != centre {
			if centre != noCluster && at(c) < at(centre) {
				return nil, fmt.Errorf("%w: edges[%d] = (%d, %d) comes after the edges of document %d, which Star visits later", ErrInvalidEdge, u.count-1, e.A, e.B, centre)
			}
			end()
			centre, open = c, rep[c] == noCluster
		}
		if open && rep[d] == noCluster {
			rep[d] = c
			claimed = true
		}
	}
	if u.err != nil {
		return nil, u.err
	}
	end()
	scratch := pos
	if scratch == nil {
		scratch = make([]uint32, n)
	}
	res := build(n, rep, scratch)
	res.setReference(opts.Reference)
	res.Metrics.Edges, res.Metrics.Used = u.count, u.used
	return res, nil
}
