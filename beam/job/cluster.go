package job

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/neardup/neardup/cluster"
	"github.com/neardup/neardup/internal/jobspec"
)

// labelMembersFn joins a document's component label with its Member and
// sends it to the component.
func labelMembersFn(o uint64, labels func(*uint64) bool, members func(*Member) bool, emit func(uint64, Member)) error {
	var label uint64
	if !labels(&label) {
		return fmt.Errorf("clustered document %d/%d has no component", splitOf(o), localOf(o))
	}
	var m Member
	if !members(&m) {
		return fmt.Errorf("component member %d/%d has no id", splitOf(o), localOf(o))
	}
	emit(label, m)
	return nil
}

// labelEdgesFn sends each verified pair (a, b), arriving at a, to a's
// component.
func labelEdgesFn(a uint64, labels func(*uint64) bool, bs func(*uint64) bool, emit func(uint64, Pair)) error {
	var label uint64
	if !labels(&label) {
		return fmt.Errorf("clustered document %d/%d has no component", splitOf(a), localOf(a))
	}
	var b uint64
	for bs(&b) {
		emit(label, Pair{a, b})
	}
	return nil
}

// Pair is a verified pair of documents, A < B.
type Pair struct {
	A, B uint64 // the documents' ords
}

// ClusterOut is one cluster of the output: its lowest member, which orders
// the clusters, the kept document's id and the members' ids in order.
type ClusterOut struct {
	First   uint64   // ord of the lowest member
	Kept    []byte   // id of the kept document
	Members [][]byte // ids of the members, in document order
	Marker  bool     // an empty placeholder that makes sure a shard is written
}

// SizeCount is one bar of the cluster-size histogram.
type SizeCount struct {
	Size  int   // documents in a cluster
	Count int64 // clusters of that size
}

// ClusterStats sums the clustering of the components.
type ClusterStats struct {
	// Clusters is the number of clusters of two or more documents, Removed
	// the number of documents not kept.
	Clusters, Removed int64
	Sizes             []SizeCount // by size ascending
}

func (a ClusterStats) merge(b ClusterStats) ClusterStats {
	a.Clusters += b.Clusters
	a.Removed += b.Removed
	sizes := append(slices.Clone(a.Sizes), b.Sizes...)
	slices.SortFunc(sizes, func(x, y SizeCount) int { return cmp.Compare(x.Size, y.Size) })
	out := sizes[:0]
	for _, s := range sizes {
		if len(out) > 0 && out[len(out)-1].Size == s.Size {
			out[len(out)-1].Count += s.Count
		} else {
			out = append(out, s)
		}
	}
	a.Sizes = out
	return a
}

// clusterFn clusters one connected component of the verified pairs with the
// core package: cluster.Components (the component is one cluster; the policy
// picks the kept document) or cluster.Star on the component's own pairs.
// The members are numbered 0…s−1 in document order, so the policies' ties
// and the clusters' order come out as in dedup. It emits the clusters, the
// removed documents (KV<output shard, ord>) and, per bundle, the statistics.
//
// A component is whole on one worker here: its member list is one line of
// clusters.jsonl anyway, and star clustering is a greedy pass in policy order
// over the component's pairs, which makes it sequential within a component
// (components are independent, so it is exact to run it per component).
type clusterFn struct {
	C Config

	stats ClusterStats
}

// StartBundle resets the bundle's statistics.
func (f *clusterFn) StartBundle(_ func(ClusterOut), _ func(int, uint64), _ func(ClusterStats)) {
	f.stats = ClusterStats{}
}

// ProcessElement clusters the component labelled label from its members
// and, under Star, its pairs; it emits the clusters and each removed
// document's ord keyed by its kept.jsonl shard, and adds to the bundle's
// statistics.
func (f *clusterFn) ProcessElement(label uint64, members func(*Member) bool, pairs func(*Pair) bool,
	emit func(ClusterOut), removed func(int, uint64), _ func(ClusterStats)) error {
	var ms []Member
	var m Member
	for members(&m) {
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(x, y Member) int { return cmp.Compare(x.Ord, y.Ord) })
	ms = slices.CompactFunc(ms, func(x, y Member) bool { return x.Ord == y.Ord })
	if len(ms) < 2 || ms[0].Ord != label {
		return fmt.Errorf("component %d/%d: %d members, not led by its label", splitOf(label), localOf(label), len(ms))
	}
	n := len(ms)
	local := func(o uint64) (uint32, error) {
		i, ok := slices.BinarySearchFunc(ms, o, func(x Member, o uint64) int { return cmp.Compare(x.Ord, o) })
		if !ok {
			return 0, fmt.Errorf("component %d/%d: pair member %d/%d is not a member", splitOf(label), localOf(label), splitOf(o), localOf(o))
		}
		return uint32(i), nil
	}
	attrs := &cluster.Attrs{Lengths: make([]int64, n), Values: make([]float64, n), Has: make([]bool, n)}
	for i, m := range ms {
		attrs.Lengths[i], attrs.Values[i], attrs.Has[i] = m.Length, m.Keep, m.HasKeep
	}
	// Every verified pair reaches the clustering floor (exact or estimated
	// similarity ≥ threshold; floor 0 under VerifyNone), so similarity 1
	// stands for each.
	var edges []cluster.Edge
	var res *cluster.Result
	var err error
	if f.C.Job.Cluster == jobspec.Star {
		var p Pair
		for pairs(&p) {
			a, err := local(p.A)
			if err != nil {
				return err
			}
			b, err := local(p.B)
			if err != nil {
				return err
			}
			edges = append(edges, cluster.Edge{A: a, B: b, Sim: 1})
		}
		res, err = cluster.Star(n, edges, attrs, f.C.Job.ClusterOptions())
	} else {
		for i := 1; i < n; i++ {
			edges = append(edges, cluster.Edge{A: 0, B: uint32(i), Sim: 1})
		}
		res, err = cluster.Components(n, edges, attrs, f.C.Job.ClusterOptions())
	}
	if err != nil {
		return err
	}
	for _, c := range res.Clusters {
		out := ClusterOut{First: ms[c.Members[0]].Ord, Kept: ms[c.Kept].ID}
		for _, i := range c.Members {
			out.Members = append(out.Members, ms[i].ID)
			if i != c.Kept {
				o := ms[i].Ord
				removed(f.keptShard(o), o)
			}
		}
		emit(out)
	}
	f.stats = f.stats.merge(ClusterStats{Clusters: int64(res.Metrics.Clusters), Removed: int64(res.Metrics.Removed), Sizes: sizes(res.Metrics.Sizes)})
	return nil
}

// FinishBundle emits the bundle's statistics.
func (f *clusterFn) FinishBundle(_ func(ClusterOut), _ func(int, uint64), stats func(ClusterStats)) {
	stats(f.stats)
}

func sizes(s []cluster.SizeCount) []SizeCount {
	out := make([]SizeCount, len(s))
	for i, x := range s {
		out[i] = SizeCount{x.Size, int64(x.Count)}
	}
	return out
}

// keptShard is the kept.jsonl shard of a document: its split's, or 0 for a
// single file.
func (f *clusterFn) keptShard(o uint64) int {
	if f.C.SingleFile {
		return 0
	}
	return splitOf(o)
}
