package cluster

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// chainEdges links document i to i+1 for i < n−1, each with similarity sim.
func chainEdges(n int, sim float64) []Edge {
	var edges []Edge
	for i := 0; i+1 < n; i++ {
		edges = append(edges, Edge{A: uint32(i), B: uint32(i + 1), Sim: sim})
	}
	return edges
}

// hasEdge reports whether a and b are linked by an edge with Sim ≥ t.
func hasEdge(edges []Edge, a, b uint32, t float64) bool {
	for _, e := range edges {
		if (e.A == a && e.B == b || e.A == b && e.B == a) && e.Sim >= t {
			return true
		}
	}
	return false
}

func TestChain(t *testing.T) {
	const n, thr = 50, 0.8
	edges := chainEdges(n, 0.85)
	opts := &Options{Threshold: thr}

	comp, err := Components(n, edges, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(comp.Clusters) != 1 || len(comp.Clusters[0].Members) != n || comp.Clusters[0].Kept != 0 {
		t.Fatalf("Components of a %d-chain: %d clusters (first %v); want one of all %d, keeping 0", n, len(comp.Clusters), comp.Clusters, n)
	}

	star, err := Star(n, edges, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(star.Clusters) < 2 {
		t.Fatalf("Star of a %d-chain gave %d clusters; want several", n, len(star.Clusters))
	}
	for _, c := range star.Clusters {
		for _, m := range c.Members {
			if m != c.Kept && !hasEdge(edges, m, c.Kept, thr) {
				t.Errorf("Star: member %d of cluster kept by %d has no edge ≥ %v to it", m, c.Kept, thr)
			}
		}
	}
	// Visited first to last, the chain pairs up: (0,1), (2,3), …
	if len(star.Clusters) != n/2 || star.Metrics.Removed != n/2 {
		t.Errorf("Star of a %d-chain: %d clusters, %d removed; want %d and %d", n, len(star.Clusters), star.Metrics.Removed, n/2, n/2)
	}

	// The ends are unrelated: with the threshold above the chain's similarity nothing merges.
	none, _ := Star(n, edges, nil, &Options{Threshold: 0.9})
	if len(none.Clusters) != 0 {
		t.Errorf("Star with threshold above every edge gave %d clusters; want 0", len(none.Clusters))
	}

	// Shuffled (and flipped) edges give identical results.
	rng := rand.New(rand.NewPCG(1, 1))
	for range 5 {
		sh := shuffled(rng, edges)
		c2, _ := Components(n, sh, nil, opts)
		s2, _ := Star(n, sh, nil, opts)
		if !reflect.DeepEqual(c2, comp) || !reflect.DeepEqual(s2, star) {
			t.Fatalf("shuffled edge order changed the result")
		}
	}
}

// shuffled returns edges in a random order with random endpoint order.
func shuffled(rng *rand.Rand, edges []Edge) []Edge {
	out := slices.Clone(edges)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	for i := range out {
		if rng.IntN(2) == 0 {
			out[i].A, out[i].B = out[i].B, out[i].A
		}
	}
	return out
}

// refKey orders documents for the reference implementations, written
// independently of ranker: a sort key compared lexicographically.
func refOrder(p Policy, n int, a *Attrs) []uint32 {
	type key struct {
		missing int
		neg     float64
		idx     uint32
	}
	keys := make([]key, n)
	for i := range n {
		k := key{idx: uint32(i)}
		switch p.Kind {
		case KeepLongest:
			k.neg = -float64(a.Lengths[i])
		case KeepField:
			v := a.Values[i]
			if math.IsNaN(v) || a.Has != nil && !a.Has[i] {
				k.missing = 1
			} else {
				k.neg = -v
			}
		}
		keys[i] = k
	}
	slices.SortFunc(keys, func(x, y key) int {
		return cmp.Or(cmp.Compare(x.missing, y.missing), cmp.Compare(x.neg, y.neg), cmp.Compare(x.idx, y.idx))
	})
	out := make([]uint32, n)
	for i, k := range keys {
		out[i] = k.idx
	}
	return out
}

// refAdj builds neighbour sets of the used edges.
func refAdj(n int, edges []Edge, t float64) []map[uint32]bool {
	adj := make([]map[uint32]bool, n)
	for i := range adj {
		adj[i] = map[uint32]bool{}
	}
	for _, e := range edges {
		if e.A != e.B && e.Sim >= t {
			adj[e.A][e.B] = true
			adj[e.B][e.A] = true
		}
	}
	return adj
}

// refClusters turns groups into Clusters ordered by lowest member.
func refClusters(groups [][]uint32, kept []uint32) []Cluster {
	var out []Cluster
	for i, g := range groups {
		if len(g) < 2 {
			continue
		}
		m := slices.Sorted(slices.Values(g))
		out = append(out, Cluster{Kept: kept[i], Members: m})
	}
	slices.SortFunc(out, func(a, b Cluster) int { return cmp.Compare(a.Members[0], b.Members[0]) })
	return out
}

// refComponents finds components by breadth-first search and keeps the
// member ranked first by refOrder.
func refComponents(n int, edges []Edge, t float64, p Policy, a *Attrs) []Cluster {
	adj := refAdj(n, edges, t)
	pos := make([]int, n)
	for i, d := range refOrder(p, n, a) {
		pos[d] = i
	}
	seen := make([]bool, n)
	var groups [][]uint32
	var kept []uint32
	for s := range n {
		if seen[s] {
			continue
		}
		seen[s] = true
		g := []uint32{uint32(s)}
		for q := 0; q < len(g); q++ {
			for d := range adj[g[q]] {
				if !seen[d] {
					seen[d] = true
					g = append(g, d)
				}
			}
		}
		best := g[0]
		for _, d := range g {
			if pos[d] < pos[best] {
				best = d
			}
		}
		groups, kept = append(groups, g), append(kept, best)
	}
	return refClusters(groups, kept)
}

// refStar is the greedy star clustering written plainly.
func refStar(n int, edges []Edge, t float64, p Policy, a *Attrs) []Cluster {
	adj := refAdj(n, edges, t)
	assigned := make([]bool, n)
	var groups [][]uint32
	var kept []uint32
	for _, c := range refOrder(p, n, a) {
		if assigned[c] {
			continue
		}
		g := []uint32{c}
		for d := range adj[c] {
			if !assigned[d] {
				g = append(g, d)
			}
		}
		if len(g) == 1 {
			continue
		}
		for _, d := range g {
			assigned[d] = true
		}
		groups, kept = append(groups, g), append(kept, c)
	}
	return refClusters(groups, kept)
}

// randomGraph makes n documents with clustered random edges (including
// repeats and self-loops) and attributes with ties and missing values.
func randomGraph(rng *rand.Rand, n, m int) ([]Edge, *Attrs) {
	var edges []Edge
	for range m {
		a := rng.IntN(max(n, 1))
		b := a + rng.IntN(20) - 10 // mostly local, so components form
		if rng.IntN(10) == 0 {
			b = rng.IntN(n)
		}
		b = min(max(b, 0), n-1)
		edges = append(edges, Edge{A: uint32(a), B: uint32(b), Sim: 0.5 + 0.5*rng.Float64()})
	}
	if len(edges) > 0 {
		edges = append(edges, edges[0]) // an exact repeat
	}
	at := &Attrs{Lengths: make([]int64, n), Values: make([]float64, n), Has: make([]bool, n)}
	for i := range n {
		at.Lengths[i] = int64(rng.IntN(5)) // many ties
		at.Values[i] = float64(rng.IntN(4))
		at.Has[i] = rng.IntN(5) != 0
		if rng.IntN(20) == 0 {
			at.Values[i] = math.NaN()
		}
	}
	return edges, at
}

var policies = []Policy{{Kind: KeepFirst}, {Kind: KeepLongest}, {Kind: KeepField, Field: "score"}}

func TestRandomGraphsVsReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	sizes := []struct{ n, m int }{{0, 0}, {1, 0}, {2, 1}, {10, 8}, {200, 150}, {200, 600}, {3000, 2500}}
	for _, sz := range sizes {
		for _, p := range policies {
			for _, thr := range []float64{0, 0.8} {
				name := fmt.Sprintf("n=%d/m=%d/%v/t=%v", sz.n, sz.m, p, thr)
				edges, attrs := randomGraph(rng, sz.n, sz.m)
				opts := &Options{Threshold: thr, Keep: p}
				comp, err := Components(sz.n, edges, attrs, opts)
				if err != nil {
					t.Fatal(err)
				}
				if want := refComponents(sz.n, edges, thr, p, attrs); !equalClusters(comp.Clusters, want) {
					t.Fatalf("%s: Components differs from the reference:\ngot  %v\nwant %v", name, comp.Clusters, want)
				}
				star, err := Star(sz.n, edges, attrs, opts)
				if err != nil {
					t.Fatal(err)
				}
				if want := refStar(sz.n, edges, thr, p, attrs); !equalClusters(star.Clusters, want) {
					t.Fatalf("%s: Star differs from the reference:\ngot  %v\nwant %v", name, star.Clusters, want)
				}
				checkStar(t, name, sz.n, edges, thr, star)
				checkResult(t, name, sz.n, comp)
				checkResult(t, name, sz.n, star)
				sh := shuffled(rng, edges)
				comp2, _ := Components(sz.n, sh, attrs, opts)
				star2, _ := Star(sz.n, sh, attrs, opts)
				if !reflect.DeepEqual(comp2, comp) || !reflect.DeepEqual(star2, star) {
					t.Fatalf("%s: shuffled edges changed the result", name)
				}
			}
		}
	}
}

func equalClusters(a, b []Cluster) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}

// checkStar checks Star's invariants: members link to their centre,
// centres do not link to each other, and a singleton's neighbours are all
// clustered.
func checkStar(t *testing.T, name string, n int, edges []Edge, thr float64, r *Result) {
	t.Helper()
	adj := refAdj(n, edges, thr)
	for _, c := range r.Clusters {
		for _, m := range c.Members {
			if m != c.Kept && !adj[c.Kept][m] {
				t.Fatalf("%s: member %d has no edge ≥ %v to its centre %d", name, m, thr, c.Kept)
			}
		}
	}
	for _, c := range r.Clusters {
		for d := range adj[c.Kept] {
			if cd := r.ClusterOf(d); cd >= 0 && r.Clusters[cd].Kept == d {
				t.Fatalf("%s: centres %d and %d are linked", name, c.Kept, d)
			}
		}
	}
	for d := range n {
		if r.ClusterOf(uint32(d)) >= 0 {
			continue
		}
		for e := range adj[d] {
			if r.ClusterOf(e) < 0 {
				t.Fatalf("%s: singletons %d and %d are linked; one should have claimed the other", name, d, e)
			}
		}
	}
}

// checkResult checks that the accessors and metrics agree with Clusters.
func checkResult(t *testing.T, name string, n int, r *Result) {
	t.Helper()
	var removed []uint32
	clustered, largest := 0, 0
	hist := map[int]int{}
	for ci, c := range r.Clusters {
		if len(c.Members) < 2 || !slices.IsSorted(c.Members) || !slices.Contains(c.Members, c.Kept) {
			t.Fatalf("%s: malformed cluster %v", name, c)
		}
		if ci > 0 && r.Clusters[ci-1].Members[0] >= c.Members[0] {
			t.Fatalf("%s: clusters not ordered by lowest member", name)
		}
		for _, m := range c.Members {
			if r.ClusterOf(m) != ci || r.IsKept(m) != (m == c.Kept) {
				t.Fatalf("%s: ClusterOf(%d) = %d, IsKept = %v; want %d, %v", name, m, r.ClusterOf(m), r.IsKept(m), ci, m == c.Kept)
			}
			if m != c.Kept {
				removed = append(removed, m)
			}
		}
		clustered += len(c.Members)
		largest = max(largest, len(c.Members))
		hist[len(c.Members)]++
	}
	slices.Sort(removed)
	if got := r.AppendRemoved(nil); !slices.Equal(got, removed) && len(got)+len(removed) > 0 {
		t.Fatalf("%s: AppendRemoved = %v; want %v", name, got, removed)
	}
	m := r.Metrics
	if m.Docs != n || m.Clusters != len(r.Clusters) || m.Clustered != clustered || m.Removed != len(removed) || m.Largest != largest {
		t.Fatalf("%s: metrics %+v disagree with the clusters", name, m)
	}
	total := 0
	for i, s := range m.Sizes {
		if hist[s.Size] != s.Count || i > 0 && m.Sizes[i-1].Size >= s.Size {
			t.Fatalf("%s: size histogram %v; want counts %v ascending", name, m.Sizes, hist)
		}
		total += s.Count
	}
	if total != len(r.Clusters) {
		t.Fatalf("%s: size histogram covers %d clusters; want %d", name, total, len(r.Clusters))
	}
	for d := range n {
		if r.ClusterOf(uint32(d)) < 0 && !r.IsKept(uint32(d)) {
			t.Fatalf("%s: singleton %d not kept", name, d)
		}
	}
}

func TestKeepPolicies(t *testing.T) {
	// A star around document 2 (leaves 0, 1, 3, 4) and a singleton 5.
	edges := []Edge{{2, 0, 0.9}, {2, 1, 0.9}, {2, 3, 0.9}, {4, 2, 0.9}}
	attrs := Attrs{
		Lengths: []int64{10, 30, 20, 30, 5, 99},
		Values:  []float64{1, math.NaN(), 2, 7, 7, 100},
	}
	tests := []struct {
		p        Policy
		has      []bool
		wantComp uint32    // Components' kept document of {0..4}
		wantStar []Cluster // Star's clusters
	}{
		// Visiting 0 first, 0 claims the hub 2; the other leaves have no
		// unassigned neighbour left and stay singletons.
		{Policy{Kind: KeepFirst}, nil, 0, []Cluster{{0, []uint32{0, 2}}}},
		// Lengths 30 tie: 1 before 3.
		{Policy{Kind: KeepLongest}, nil, 1, []Cluster{{1, []uint32{1, 2}}}},
		// Values 7 tie: 3 before 4; 1 (NaN) counts as missing and ranks last.
		{Policy{Kind: KeepField, Field: "x"}, nil, 3, []Cluster{{3, []uint32{2, 3}}}},
		// Only 1 (NaN: missing anyway), 2 and 5 have values: the hub goes first and claims all.
		{Policy{Kind: KeepField, Field: "x"}, []bool{1: true, 2: true, 5: true}, 2, []Cluster{{2, []uint32{0, 1, 2, 3, 4}}}},
		// All missing: index order.
		{Policy{Kind: KeepField, Field: "x"}, make([]bool, 6), 0, []Cluster{{0, []uint32{0, 2}}}},
	}
	for _, tt := range tests {
		a := attrs
		a.Has = tt.has
		opts := &Options{Threshold: 0.5, Keep: tt.p}
		r, err := Components(6, edges, &a, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Clusters) != 1 || r.Clusters[0].Kept != tt.wantComp {
			t.Errorf("Components with %v (Has %v): clusters %v; want one keeping %d", tt.p, tt.has, r.Clusters, tt.wantComp)
		}
		s, err := Star(6, edges, &a, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(s.Clusters, tt.wantStar) {
			t.Errorf("Star with %v (Has %v): clusters %v; want %v", tt.p, tt.has, s.Clusters, tt.wantStar)
		}
	}
}

func TestMetrics(t *testing.T) {
	// Clusters of sizes 2, 3, 3 and 5 among 20 documents; one edge below the threshold, one self-loop.
	edges := []Edge{
		{0, 1, 1}, {2, 3, 1}, {3, 4, 1}, {5, 6, 1}, {5, 7, 1},
		{10, 11, 1}, {11, 12, 1}, {12, 13, 1}, {13, 14, 1},
		{15, 16, 0.1}, {17, 17, 1},
	}
	r, err := Components(20, edges, nil, &Options{Threshold: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	want := Metrics{
		Docs: 20, Edges: 11, Used: 9, Clusters: 4, Clustered: 13, Removed: 9, Largest: 5,
		Sizes: []SizeCount{{2, 1}, {3, 2}, {5, 1}},
	}
	if !reflect.DeepEqual(r.Metrics, want) {
		t.Errorf("metrics:\n%v\nwant:\n%v", r.Metrics, want)
	}
	if got := r.Metrics.RemovedFraction(); got != 9.0/20 {
		t.Errorf("RemovedFraction = %v; want %v", got, 9.0/20)
	}
	if got := r.AppendRemoved(nil); !slices.Equal(got, []uint32{1, 3, 4, 6, 7, 11, 12, 13, 14}) {
		t.Errorf("AppendRemoved = %v", got)
	}
	if r.ClusterOf(19) != -1 || r.ClusterOf(1000) != -1 || !r.IsKept(19) || r.IsKept(1000) {
		t.Errorf("singleton or out-of-range accessors wrong")
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		edges []Edge
		attrs *Attrs
		opts  *Options
		want  error
	}{
		{"endpoint out of range", 3, []Edge{{0, 3, 1}}, nil, nil, ErrInvalidEdge},
		{"NaN similarity", 3, []Edge{{0, 1, math.NaN()}}, nil, nil, ErrInvalidEdge},
		{"negative n", -1, nil, nil, nil, ErrInvalidOptions},
		{"NaN threshold", 3, nil, nil, &Options{Threshold: math.NaN()}, ErrInvalidOptions},
		{"unknown policy", 3, nil, nil, &Options{Keep: Policy{Kind: 9}}, ErrInvalidPolicy},
		{"field without name", 3, nil, nil, &Options{Keep: Policy{Kind: KeepField}}, ErrInvalidPolicy},
		{"no lengths", 3, nil, nil, &Options{Keep: Policy{Kind: KeepLongest}}, ErrMissingAttrs},
		{"short lengths", 3, nil, &Attrs{Lengths: []int64{1, 2}}, &Options{Keep: Policy{Kind: KeepLongest}}, ErrMissingAttrs},
		{"short values", 3, nil, &Attrs{Values: []float64{1}}, &Options{Keep: Policy{Kind: KeepField, Field: "x"}}, ErrMissingAttrs},
		{"short has", 3, nil, &Attrs{Values: []float64{1, 2, 3}, Has: []bool{true}}, &Options{Keep: Policy{Kind: KeepField, Field: "x"}}, ErrMissingAttrs},
	}
	for _, tt := range tests {
		if _, err := Components(tt.n, tt.edges, tt.attrs, tt.opts); !errors.Is(err, tt.want) {
			t.Errorf("%s: Components error = %v; want %v", tt.name, err, tt.want)
		}
		if _, err := Star(tt.n, tt.edges, tt.attrs, tt.opts); !errors.Is(err, tt.want) {
			t.Errorf("%s: Star error = %v; want %v", tt.name, err, tt.want)
		}
	}
}

// TestComponentsSparse clusters a few documents among many, at the edges of
// the 64-document words Components marks them in (0, 63, 64, n−1 with n not
// a multiple of 64), with a repeated edge, a loop and an edge below the
// threshold: only the linked documents are clustered, the rest stay
// singletons.
func TestComponentsSparse(t *testing.T) {
	const n = 1000
	edges := []Edge{
		{A: 999, B: 63, Sim: 0.9}, {A: 64, B: 0, Sim: 0.9}, {A: 63, B: 999, Sim: 0.95},
		{A: 500, B: 500, Sim: 1}, {A: 127, B: 128, Sim: 0.5}, {A: 64, B: 999, Sim: 0.85},
		{A: 300, B: 301, Sim: 0.9},
	}
	r, err := Components(n, edges, nil, &Options{Threshold: 0.8})
	if err != nil {
		t.Fatal(err)
	}
	want := []Cluster{{Kept: 0, Members: []uint32{0, 63, 64, 999}}, {Kept: 300, Members: []uint32{300, 301}}}
	if !reflect.DeepEqual(r.Clusters, want) {
		t.Fatalf("clusters %v; want %v", r.Clusters, want)
	}
	if got := refComponents(n, edges, 0.8, Policy{}, nil); !equalClusters(r.Clusters, got) {
		t.Fatalf("clusters %v; the reference has %v", r.Clusters, got)
	}
	for _, d := range []uint32{1, 127, 128, 500, 998} {
		if r.ClusterOf(d) != -1 || !r.IsKept(d) {
			t.Errorf("document %d: cluster %d, kept %v; want a kept singleton", d, r.ClusterOf(d), r.IsKept(d))
		}
	}
	if r.ClusterOf(999) != 0 || r.IsKept(999) || r.ClusterOf(301) != 1 {
		t.Errorf("ClusterOf(999) = %d, IsKept(999) = %v, ClusterOf(301) = %d", r.ClusterOf(999), r.IsKept(999), r.ClusterOf(301))
	}
	m := r.Metrics
	if m.Edges != 7 || m.Used != 5 || m.Clusters != 2 || m.Clustered != 6 || m.Removed != 4 || m.Largest != 4 ||
		!reflect.DeepEqual(m.Sizes, []SizeCount{{2, 1}, {4, 1}}) {
		t.Errorf("metrics %+v", m)
	}
	checkResult(t, "sparse", n, r)
	if got := r.AppendRemoved(nil); !reflect.DeepEqual(got, []uint32{63, 64, 301, 999}) {
		t.Errorf("removed %v", got)
	}
}
