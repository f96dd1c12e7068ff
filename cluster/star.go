package cluster

import (
	"fmt"
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
		slices.SortFunc(order, func(a, b uint32) int {
			switch {
			case rank.before(a, b):
				return -1
			case rank.before(b, a):
				return 1
			}
			return 0
		})
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
