// Package cc finds the connected components of a graph held as a Beam
// PCollection of edges, without collecting the graph on one worker: it
// alternates the large-star and small-star steps of Kiveris et al.
// ("Connected Components in MapReduce and Beyond", SoCC 2014) until a fixed
// point, at which every component is a star around its lowest node.
//
// # Representation
//
// Nodes are uint64s; an edge is a KV<uint64, uint64> with key < value (an
// undirected edge in canonical order; self-loops are dropped, duplicates are
// harmless). A node's label is the lowest node of its component, so the
// result is deterministic and equals what a union-find that always links the
// larger root under the smaller (cluster.Components) returns.
//
// # Steps
//
// Large-star: every node u sees its neighbourhood Γ(u) and links each
// neighbour v > u to m(u) = min(Γ(u) ∪ {u}). Small-star: every node v sees
// its smaller neighbours N(v) and links each of N(v) ∪ {v} to min N(v).
// Both keep connectivity; together they shrink the depth of the trees that
// the "smaller neighbour" links form. The graph is a fixed point when every
// node has at most one smaller neighbour and no node has both a smaller and a
// larger neighbour: then each component is a star around its minimum, and
// both steps return it unchanged. The large-star reducer counts the nodes
// breaking that invariant ("unsettled"); a round whose count is zero started
// from the fixed point.
//
// # Rounds
//
// Kiveris et al. prove O(log² n) rounds for the alternation and observe
// about log₂ n; the tests measure it on adversarial graphs (a path in index
// and random order, a star around its largest node, a complete graph, many
// small components). A Beam pipeline is a fixed graph of steps, so the loop
// until the fixed point is run by a driver ([Converge]): each job appends k
// rounds ([Step]), writes the edges and the unsettled count through
// package files, and the driver starts another job while the count is not
// zero. Each round shuffles every edge three times (both directions for
// large-star, one for small-star) plus the edges each step emits; a
// reducer holds one node's distinct neighbours, which at the fixed point is
// the node's whole component when it is the minimum (the star centre).
package cc

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/beam/internal/files"
)

func init() {
	register.Function3x0(emitBoth)
	register.Function3x0(emitToLarger)
	register.DoFn4x0[uint64, func(*uint64) bool, func(uint64, uint64), func(int64)](&largeStarFn{})
	register.DoFn3x0[uint64, func(*uint64) bool, func(uint64, uint64)](&smallStarFn{})
	register.Function3x0(labelPairs)
	register.Function3x0(minLabel)
	register.Function2x1(sumInt64)
	register.Function2x1(encodeEdge)
	register.Function2x0(decodeEdge)
	register.Function1x2(edgeToKV)
	register.Function2x1(kvToEdge)
	register.Function1x1(countJSON)
	register.Emitter1[int64]()
	register.Emitter2[uint64, uint64]()
	register.Iter1[uint64]()
}

// Step appends k ≥ 1 rounds (large-star, then small-star) to the pipeline
// and returns the edges after them and a PCollection holding one int64: the
// number of unsettled nodes seen by the last round's large-star step (0
// means that round's input was already the fixed point, and so is the
// output).
func Step(s beam.Scope, edges beam.PCollection, k int) (out, unsettled beam.PCollection) {
	if k < 1 {
		panic(fmt.Sprintf("cc: Step with k = %d rounds", k))
	}
	s = s.Scope("cc.Step")
	for i := range k {
		rs := s.Scope(fmt.Sprintf("round%d", i))
		edges, unsettled = largeStar(rs, edges)
		edges = smallStar(rs, edges)
	}
	zero := beam.Create(s, int64(0)) // so that an empty graph counts 0
	return edges, beam.Combine(s, sumInt64, beam.Flatten(s, unsettled, zero))
}

func largeStar(s beam.Scope, edges beam.PCollection) (out, unsettled beam.PCollection) {
	s = s.Scope("largeStar")
	both := beam.ParDo(s, emitBoth, edges)
	return beam.ParDo2(s, &largeStarFn{}, beam.GroupByKey(s, both))
}

func smallStar(s beam.Scope, edges beam.PCollection) beam.PCollection {
	s = s.Scope("smallStar")
	up := beam.ParDo(s, emitToLarger, edges)
	return beam.ParDo(s, &smallStarFn{}, beam.GroupByKey(s, up))
}

func emitBoth(u, v uint64, emit func(uint64, uint64)) {
	if u != v {
		emit(u, v)
		emit(v, u)
	}
}

func emitToLarger(u, v uint64, emit func(uint64, uint64)) {
	switch {
	case u < v:
		emit(v, u)
	case v < u:
		emit(u, v)
	}
}

// distinct collects an iterator's values into buf, sorted and unique.
func distinct(buf []uint64, it func(*uint64) bool) []uint64 {
	buf = buf[:0]
	var v uint64
	for it(&v) {
		buf = append(buf, v)
	}
	slices.Sort(buf)
	return slices.Compact(buf)
}

// largeStarFn links the larger neighbours of u to the minimum of u's closed
// neighbourhood, and counts u as unsettled if it has two smaller
// neighbours, or a smaller and a larger one.
type largeStarFn struct {
	nbrs      []uint64
	unsettled int64
}

// StartBundle resets the bundle's unsettled count.
func (f *largeStarFn) StartBundle(_ func(uint64, uint64), _ func(int64)) { f.unsettled = 0 }

// ProcessElement takes node u and its neighbours, emits an edge from the
// minimum of u's closed neighbourhood to each neighbour above u, and counts
// u if it is unsettled.
func (f *largeStarFn) ProcessElement(u uint64, it func(*uint64) bool, emit func(uint64, uint64), _ func(int64)) {
	f.nbrs = distinct(f.nbrs, it)
	m := min(f.nbrs[0], u)
	// The neighbours below u are nbrs[:smaller]; u is not among them (no
	// self-loops), so the rest are above it.
	smaller, _ := slices.BinarySearch(f.nbrs, u)
	if smaller > 1 || smaller == 1 && smaller < len(f.nbrs) {
		f.unsettled++
	}
	for _, v := range f.nbrs[smaller:] {
		emit(m, v)
	}
}

// FinishBundle emits the bundle's unsettled count, if not zero.
func (f *largeStarFn) FinishBundle(_ func(uint64, uint64), count func(int64)) {
	if f.unsettled > 0 {
		count(f.unsettled)
	}
}

// smallStarFn links v and its smaller neighbours to the least of them.
type smallStarFn struct{ nbrs []uint64 }

// ProcessElement takes node v and its smaller neighbours and emits an edge
// from the least of them to each of the others and to v.
func (f *smallStarFn) ProcessElement(v uint64, it func(*uint64) bool, emit func(uint64, uint64)) {
	f.nbrs = distinct(f.nbrs, it)
	m := f.nbrs[0]
	for _, w := range f.nbrs[1:] {
		emit(m, w)
	}
	emit(m, v)
}

// Labels turns the edges of a fixed point into KV<node, label>: every node
// that has an edge, labelled with the lowest node of its component.
func Labels(s beam.Scope, edges beam.PCollection) beam.PCollection {
	s = s.Scope("cc.Labels")
	return beam.ParDo(s, minLabel, beam.GroupByKey(s, beam.ParDo(s, labelPairs, edges)))
}

func labelPairs(u, v uint64, emit func(uint64, uint64)) {
	m, w := min(u, v), max(u, v)
	if m != w {
		emit(w, m)
		emit(m, m)
	}
}

func minLabel(node uint64, labels func(*uint64) bool, emit func(uint64, uint64)) {
	best := node
	var l uint64
	for labels(&l) {
		best = min(best, l)
	}
	emit(node, best)
}

func sumInt64(a, b int64) int64 { return a + b }

// Write writes edges as the state name under dir (see package files).
func Write(s beam.Scope, dir, name string, edges beam.PCollection) {
	files.WriteBlobs(s, dir, name, beam.ParDo(s, encodeEdge, edges))
}

// Read reads the state name under dir back as edges.
func Read(ctx context.Context, s beam.Scope, dir, name string) (beam.PCollection, error) {
	blobs, err := files.ReadBlobs(ctx, s, dir, name)
	if err != nil {
		return beam.PCollection{}, err
	}
	return beam.ParDo(s, decodeEdge, blobs), nil
}

// Edge is an edge as a plain value, for building edge PCollections from
// lists (beam.CreateList, then ToKV) and for reading them back (FromKV).
type Edge struct {
	// U and V are the two nodes, in either order (ToKV puts the lower
	// first); from FromKV, the key and value (of labels, node and label).
	U, V uint64
}

// ToKV turns a PCollection of Edge into edges (KV<uint64, uint64>, key < value).
func ToKV(s beam.Scope, col beam.PCollection) beam.PCollection {
	return beam.ParDo(s, edgeToKV, col)
}

// FromKV turns edges, or labels, into a PCollection of Edge.
func FromKV(s beam.Scope, edges beam.PCollection) beam.PCollection {
	return beam.ParDo(s, kvToEdge, edges)
}

func edgeToKV(e Edge) (uint64, uint64) { return min(e.U, e.V), max(e.U, e.V) }
func kvToEdge(u, v uint64) Edge        { return Edge{u, v} }

func encodeEdge(u, v uint64) []byte {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint64(b, u)
	binary.LittleEndian.PutUint64(b[8:], v)
	return b
}

func decodeEdge(b []byte, emit func(uint64, uint64)) {
	emit(binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:]))
}

func countJSON(n int64) []byte { return fmt.Appendf(nil, "{\"unsettled\":%d}\n", n) }

// unsettledFile is the file beside state name that holds its unsettled count.
func unsettledFile(dir, name string) string { return files.Join(dir, name+".unsettled.json") }

// WriteStep writes the result of Step as the state name under dir: the edges
// and, beside them, the unsettled count that Converge reads.
func WriteStep(s beam.Scope, dir, name string, edges, unsettled beam.PCollection) {
	Write(s, dir, name, edges)
	files.WriteJSON(s, unsettledFile(dir, name), beam.ParDo(s, countJSON, unsettled))
}

// Runner runs one pipeline to completion.
type Runner func(ctx context.Context, p *beam.Pipeline) error

// Converge continues from the state name under dir, written by WriteStep,
// until the fixed point: while the state's unsettled count is not zero, it
// runs a job of k rounds (Step) on it with run, writing the state
// "<name>+<rounds>". It returns the name of the state at the fixed point and
// the number of rounds it ran (0 if name already was one). It gives up with
// an error after maxRounds rounds (0 means 4096), which the O(log² n) bound
// never needs: reaching it means a bug.
func Converge(ctx context.Context, run Runner, dir, name string, k, maxRounds int) (final string, rounds int, err error) {
	if maxRounds <= 0 {
		maxRounds = 4096
	}
	base := name
	for {
		var st struct{ Unsettled int64 }
		if err := files.ReadJSON(ctx, unsettledFile(dir, name), &st); err != nil {
			return "", rounds, err
		}
		if st.Unsettled == 0 {
			return name, rounds, nil
		}
		if rounds >= maxRounds {
			return "", rounds, fmt.Errorf("cc: no fixed point after %d rounds (%d nodes unsettled)", rounds, st.Unsettled)
		}
		p, s := beam.NewPipelineWithRoot()
		edges, err := Read(ctx, s, dir, name)
		if err != nil {
			return "", rounds, err
		}
		out, unsettled := Step(s, edges, k)
		rounds += k
		next := fmt.Sprintf("%s+%d", base, rounds)
		WriteStep(s, dir, next, out, unsettled)
		if err := run(ctx, p); err != nil {
			return "", rounds, fmt.Errorf("cc: job of rounds %d..%d: %w", rounds-k+1, rounds, err)
		}
		name = next
	}
}
