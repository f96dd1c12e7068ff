package cc_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/neardup/neardup/beam/cc"
	"github.com/neardup/neardup/beam/internal/tmpdir"
	"github.com/neardup/neardup/cluster"
)

func TestMain(m *testing.M) {
	beamlog.LogLevel = "warn" // beam.Init sets up slog
	beam.Init()
	cleanup, err := tmpdir.Private("neardup-beam-test-") // Beam's leftovers go with it
	if err != nil {
		panic(err)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

func runPrism(ctx context.Context, p *beam.Pipeline) error {
	_, err := prism.Execute(ctx, p)
	return err
}

// components runs the whole loop on edges (k rounds per job) and returns the
// label of every node with an edge, and the rounds run.
func components(t *testing.T, edges []cc.Edge, k int) (map[uint64]uint64, int) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	p, s := beam.NewPipelineWithRoot()
	out, unsettled := cc.Step(s, cc.ToKV(s, beam.CreateList(s, edges)), k)
	cc.WriteStep(s, dir, "cc", out, unsettled)
	if err := runPrism(ctx, p); err != nil {
		t.Fatal(err)
	}
	final, more, err := cc.Converge(ctx, runPrism, dir, "cc", k, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, s = beam.NewPipelineWithRoot()
	st, err := cc.Read(ctx, s, dir, final)
	if err != nil {
		t.Fatal(err)
	}
	cc.Write(s, dir, "labels", cc.Labels(s, st))
	if err := runPrism(ctx, p); err != nil {
		t.Fatal(err)
	}
	labels := map[uint64]uint64{}
	for _, e := range readState(t, dir, "labels") {
		if old, ok := labels[e.U]; ok && old != e.V {
			t.Fatalf("node %d labelled %d and %d", e.U, old, e.V)
		}
		labels[e.U] = e.V
	}
	return labels, k + more
}

func readState(t *testing.T, dir, name string) []cc.Edge {
	t.Helper()
	m, err := os.ReadFile(filepath.Join(dir, name+".manifest"))
	if err != nil {
		t.Fatal(err)
	}
	var out []cc.Edge
	for _, f := range strings.Fields(string(m)) {
		fh, err := os.Open(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(fh)
		for {
			n, err := binary.ReadUvarint(r)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil || n != 16 {
				t.Fatalf("%s: bad record (%d bytes, %v)", f, n, err)
			}
			var b [16]byte
			if _, err := io.ReadFull(r, b[:]); err != nil {
				t.Fatal(err)
			}
			out = append(out, cc.Edge{U: binary.LittleEndian.Uint64(b[:]), V: binary.LittleEndian.Uint64(b[8:])})
		}
		fh.Close()
	}
	return out
}

// unionFind labels every node with an edge by the lowest node of its
// component, with cluster.Components (whose roots are component minima).
func unionFind(t *testing.T, n int, edges []cc.Edge) map[uint64]uint64 {
	t.Helper()
	ce := make([]cluster.Edge, len(edges))
	for i, e := range edges {
		ce[i] = cluster.Edge{A: uint32(e.U), B: uint32(e.V), Sim: 1}
	}
	res, err := cluster.Components(n, ce, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]uint64{}
	for _, c := range res.Clusters {
		for _, m := range c.Members {
			want[uint64(m)] = uint64(c.Members[0])
		}
	}
	return want
}

// TestAdversarial checks the components against union-find on graphs that
// are hard for label propagation or hash-to-min: long paths (in index and
// random order), a star around its largest node, a complete graph and many
// small components, and records the rounds to the fixed point.
func TestAdversarial(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pathN := 4096
	if testing.Short() {
		pathN = 512
	}
	perm := r.Perm(pathN)
	graphs := []struct {
		name  string
		n     int
		edges []cc.Edge
	}{
		{"path", pathN, path(pathN, func(i int) uint64 { return uint64(i) })},
		{"path-reversed", pathN, path(pathN, func(i int) uint64 { return uint64(pathN - 1 - i) })},
		{"path-random", pathN, path(pathN, func(i int) uint64 { return uint64(perm[i]) })},
		{"star-max-centre", 2000, star(2000)},
		{"complete", 100, complete(100)},
		{"small-components", 6000, smallComponents(r, 6000)},
		{"path-with-duplicates", 300, append(path(300, func(i int) uint64 { return uint64(i) }), path(300, func(i int) uint64 { return uint64(i) })...)},
		{"empty", 0, nil},
		{"self-loop-only", 3, []cc.Edge{{1, 1}}},
	}
	for _, g := range graphs {
		t.Run(g.name, func(t *testing.T) {
			got, rounds := components(t, g.edges, 4)
			want := unionFind(t, g.n, g.edges)
			if len(got) != len(want) {
				t.Errorf("got %d labelled nodes; want %d", len(got), len(want))
			}
			for v, l := range want {
				if got[v] != l {
					t.Fatalf("node %d: got label %d; want %d", v, got[v], l)
				}
			}
			logn := bits.Len(uint(max(g.n, 2)))
			t.Logf("%s: %d nodes, %d edges, fixed point within %d rounds (log2 n = %d)", g.name, g.n, len(g.edges), rounds, logn)
			if rounds > 4*logn+4 {
				t.Errorf("%d rounds; want at most 4·log2 n + 4 = %d", rounds, 4*logn+4)
			}
		})
	}
}

// TestOneRoundPerJob drives the loop one round per job, so that Converge
// starts many jobs, and checks the result does not depend on k.
func TestOneRoundPerJob(t *testing.T) {
	edges := path(200, func(i int) uint64 { return uint64(i * 7 % 200) })
	got, rounds := components(t, edges, 1)
	want := unionFind(t, 200, edges)
	for v, l := range want {
		if got[v] != l {
			t.Fatalf("node %d: got label %d; want %d", v, got[v], l)
		}
	}
	t.Logf("%d jobs of one round", rounds)
}

func path(n int, node func(int) uint64) []cc.Edge {
	var e []cc.Edge
	for i := 1; i < n; i++ {
		e = append(e, cc.Edge{U: node(i - 1), V: node(i)})
	}
	return e
}

func star(n int) []cc.Edge {
	var e []cc.Edge
	for i := 0; i < n-1; i++ {
		e = append(e, cc.Edge{U: uint64(n - 1), V: uint64(i)})
	}
	return e
}

func complete(n int) []cc.Edge {
	var e []cc.Edge
	for i := range n {
		for j := i + 1; j < n; j++ {
			e = append(e, cc.Edge{U: uint64(j), V: uint64(i)})
		}
	}
	return e
}

// smallComponents cuts n shuffled nodes into components of 1 to 6 nodes, each
// a random tree, with a few extra edges.
func smallComponents(r *rand.Rand, n int) []cc.Edge {
	perm := r.Perm(n)
	var e []cc.Edge
	for i := 0; i < n; {
		size := 1 + r.IntN(6)
		c := perm[i:min(i+size, n)]
		for j := 1; j < len(c); j++ {
			e = append(e, cc.Edge{U: uint64(c[r.IntN(j)]), V: uint64(c[j])})
		}
		if len(c) > 2 {
			e = append(e, cc.Edge{U: uint64(c[0]), V: uint64(c[len(c)-1])})
		}
		i += size
	}
	return e
}
