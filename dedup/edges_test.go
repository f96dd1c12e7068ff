package dedup

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/cluster"
	"github.com/neardup/neardup/internal/extsort"
	"github.com/neardup/neardup/internal/jobspec"
	"golang.org/x/sync/errgroup"
)

// hubCorpus is a corpus with hubs, as web crawls have: a page repeated 300
// times, 20 near copies of it (one word changed) each repeated 5 times, and
// 2,000 distinct documents, in a shuffled order: some 80,000 verified
// pairs (the 300 copies alone make 44,850) from 2,400 documents.
func hubCorpus() []doc {
	words := func(seed, n int) []string {
		w := make([]string, n)
		for i := range w {
			w[i] = fmt.Sprintf("w%dx%d", seed, i)
		}
		return w
	}
	hub := words(-1, 60)
	var docs []doc
	for i := range 300 {
		docs = append(docs, doc{fmt.Sprintf("hub%03d", i), strings.Join(hub, " ")})
	}
	for j := range 20 {
		near := append([]string(nil), hub...)
		near[j] = fmt.Sprintf("changed%d", j)
		for k := range 5 {
			docs = append(docs, doc{fmt.Sprintf("near%02d-%d", j, k), strings.Join(near, " ")})
		}
	}
	for i := range 2000 {
		docs = append(docs, doc{fmt.Sprintf("d%04d", i), strings.Join(words(i, 40), " ")})
	}
	// A fixed shuffle, so that copies are far from their first.
	for i := range docs {
		j := (i*7919 + 13) % len(docs)
		docs[i], docs[j] = docs[j], docs[i]
	}
	return docs
}

// TestVerifiedPairsSpill: under the smallest budget the verified pairs of a
// corpus with hubs spill (report.json's spill.edge_bytes; before, every
// pair was held in memory, several times over, outside the budget), and
// the outputs — pairs.tsv, clusters.jsonl, kept.jsonl, and the report's
// counts and histograms — are byte for byte those of a run under the
// default budget that holds them all, under Components and under Star (by
// index, and by a keep policy, whose visit order needs its own sort).
func TestVerifiedPairsSpill(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeJSONL(t, in, hubCorpus())
	// A golden set of three pairs found (one given B before A) and two
	// missed: scored from the pairs read in one pass, the others counted.
	truth := filepath.Join(dir, "truth.tsv")
	if err := os.WriteFile(truth, []byte("hub000 hub001\nnear03-1 hub007\nhub299 near19-4\nd0000 d0001\nd0002 hub000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"components", Options{}},
		{"star", Options{Cluster: Star}},
		{"star-longest", Options{Cluster: Star, Keep: cluster.Policy{Kind: cluster.KeepLongest}, Verify: VerifyEstimate}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			small, big := tc.opts, tc.opts
			small.Memory, small.Workers = jobspec.MinMemory, 2
			big.Workers = 1
			small.Golden, big.Golden = truth, truth
			smallOut, smallRep := runDedup(t, []string{in}, &small)
			bigOut, bigRep := runDedup(t, []string{in}, &big)
			if smallRep.Counts.VerifiedPairs < 75000 {
				t.Fatalf("%d verified pairs; the corpus should make over 75,000", smallRep.Counts.VerifiedPairs)
			}
			if smallRep.Spill.EdgeBytes == 0 {
				t.Errorf("%d verified pairs under %d MiB spilled nothing", smallRep.Counts.VerifiedPairs, jobspec.MinMemory>>20)
			}
			if bigRep.Spill.EdgeBytes != 0 {
				t.Errorf("%d bytes of verified pairs spilled under the default budget", bigRep.Spill.EdgeBytes)
			}
			for _, f := range []string{PairsFile, ClustersFile, KeptFile} {
				a, err := os.ReadFile(filepath.Join(smallOut, f))
				if err != nil {
					t.Fatal(err)
				}
				b, _ := os.ReadFile(filepath.Join(bigOut, f))
				if !bytes.Equal(a, b) {
					t.Errorf("%s differs between %d MiB and the default budget", f, jobspec.MinMemory>>20)
				}
			}
			g := smallRep.Golden.Pairs
			if g.Truth != 5 || g.TruePositives != 3 || g.Predicted != smallRep.Counts.VerifiedPairs || g.FalsePositives != g.Predicted-3 {
				t.Errorf("golden pairs %+v; want 5 truth pairs, 3 found, every verified pair predicted", g)
			}
			for _, f := range []struct {
				name      string
				got, want any
			}{
				{"counts", smallRep.Counts, bigRep.Counts},
				{"pair_similarity", smallRep.PairSim, bigRep.PairSim},
				{"cluster_sizes", smallRep.Sizes, bigRep.Sizes},
				{"drift", smallRep.Drift, bigRep.Drift},
				{"golden", smallRep.Golden, bigRep.Golden},
			} {
				if !reflect.DeepEqual(f.got, f.want) {
					t.Errorf("report %s differs between %d MiB and the default budget:\n%+v\n%+v", f.name, jobspec.MinMemory>>20, f.got, f.want)
				}
			}
		})
	}
}

// TestEdgeStoreConcurrentPasses checks that passes over spilled edges may
// run at once (pairs.tsv and the HTML report's samples are taken together
// in the write stage): each of four concurrent passes sees every edge once,
// in (a, b) order. Passes that shared the file's position (before) read
// each other's records.
func TestEdgeStoreConcurrentPasses(t *testing.T) {
	s := newEdgeStore(t.TempDir(), 64*extsort.RecordBytes) // spills
	defer s.close()
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 50_000
	var want []edge
	seen := map[[2]uint32]bool{}
	for len(want) < n {
		a, b := rng.Uint32N(1<<20), rng.Uint32N(1<<20)
		if a >= b || seen[[2]uint32{a, b}] {
			continue
		}
		seen[[2]uint32{a, b}] = true
		e := edge{a: a, b: b, Verdict: jobspec.Verdict{Est: rng.Float64(), Exact: rng.Float64()}}
		want = append(want, e)
		if err := s.add(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.seal(); err != nil {
		t.Fatal(err)
	}
	if s.file == nil {
		t.Fatal("the edges did not spill")
	}
	slices.SortFunc(want, func(x, y edge) int { return cmp.Or(cmp.Compare(x.a, y.a), cmp.Compare(x.b, y.b)) })
	var g errgroup.Group
	for range 4 {
		g.Go(func() error {
			i := 0
			err := s.each(func(e edge) error {
				if i >= len(want) || e != want[i] {
					return fmt.Errorf("edge %d: got %+v", i, e)
				}
				i++
				return nil
			})
			if err == nil && i != len(want) {
				err = fmt.Errorf("%d edges, want %d", i, len(want))
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}

// TestRankByID: rankByID ranks documents as a stable sort by id of the
// documents listed ascending does, equal ids ranked as the first, on ids
// already in the documents' order, in random order (most out of order
// early, some late), in reverse, with many repeated ids and ids prefixes of
// one another, of 0 to 300 documents.
func TestRankByID(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	gens := map[string]func(i int) string{
		"ordered":  func(i int) string { return fmt.Sprintf("s%09d", i) },
		"random":   func(int) string { return fmt.Sprintf("r%d", rng.IntN(1<<30)) },
		"late":     func(i int) string { return fmt.Sprintf("l%09d", i%290) },
		"reversed": func(i int) string { return fmt.Sprintf("v%09d", 1000-i) },
		"repeats":  func(int) string { return fmt.Sprint("x", rng.IntN(4)) },
		"prefixes": func(int) string { return strings.Repeat("a", rng.IntN(5)) },
	}
	for name, gen := range gens {
		for n := range 300 {
			ids := make([][]byte, 2*n)
			var docs []uint32
			for d := range ids {
				ids[d] = []byte(gen(d))
				if rng.IntN(2) == 0 {
					docs = append(docs, uint32(d))
				}
			}
			id := func(d uint32) []byte { return ids[d] }
			// The ranking writePairs made before rankByID.
			sorted := slices.Clone(docs)
			slices.SortStableFunc(sorted, func(x, y uint32) int { return bytes.Compare(id(x), id(y)) })
			want := make([]uint32, len(ids))
			for i, d := range sorted {
				want[d] = uint32(i)
				if i > 0 && bytes.Equal(id(d), id(sorted[i-1])) {
					want[d] = want[sorted[i-1]]
				}
			}
			if got := rankByID(docs, len(ids), id); !slices.Equal(got, want) {
				t.Fatalf("%s n=%d: rankByID = %v; want %v", name, n, got, want)
			}
		}
	}
}

// TestEdgeStoreOrder: the edges come out in the order of their records
// (extsort.CompareRecords: (a, b), then the verdict's bits) whether held in
// memory (the groups' edges by addSame, sorted early or not, and the others)
// or spilled, at the limit and either side of it, with repeated pairs of
// different verdicts, a verdict other than the shared one given to addSame,
// and no edges at all.
func TestEdgeStoreOrder(t *testing.T) {
	const limit = 1024 // newEdgeStore's least
	same := jobspec.Verdict{Est: 1, Exact: 1}
	for _, tc := range []struct {
		name          string
		nSame, nOther int
		sortEarly     bool
		spill         bool
	}{
		{"empty", 0, 0, false, false},
		{"one", 0, 1, false, false},
		{"one-same", 1, 0, true, false},
		{"same-only", 700, 0, true, false},
		{"mixed", 600, 300, true, false},
		{"mixed-unsorted", 600, 300, false, false},
		{"below-limit", 600, limit - 601, true, false},
		{"at-limit", 600, limit - 600, true, true},
		{"past-limit", 600, 5000, true, true},
		{"same-past-limit", 3000, 10, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(tc.nSame*7+tc.nOther)))
			s := newEdgeStore(t.TempDir(), limit*extsort.RecordBytes)
			defer s.close()
			var want []extsort.Record
			pair := func() (uint32, uint32) {
				a := rng.Uint32N(200)
				return a, a + 1 + rng.Uint32N(50) // few enough to repeat
			}
			for i := range tc.nSame {
				a, b := pair()
				v := same
				if i%97 == 5 {
					v = jobspec.Verdict{Est: 0.9, Exact: -1} // not the shared one
				}
				want = append(want, edgeRecord(edge{a: a, b: b, Verdict: v}))
				if err := s.addSame(a, b, v); err != nil {
					t.Fatal(err)
				}
			}
			if tc.sortEarly {
				s.sortSame()
			}
			for i := range tc.nOther {
				a, b := pair()
				v := jobspec.Verdict{Est: rng.Float64(), Exact: rng.Float64()}
				switch i % 5 {
				case 0:
					v = same // the same as the groups' edges
				case 1:
					v.Exact = -1
				}
				want = append(want, edgeRecord(edge{a: a, b: b, Verdict: v}))
				if err := s.add(edge{a: a, b: b, Verdict: v}); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.seal(); err != nil {
				t.Fatal(err)
			}
			if got := s.file != nil; got != tc.spill {
				t.Fatalf("spilled %v; want %v", got, tc.spill)
			}
			if s.len() != int64(len(want)) {
				t.Fatalf("len %d; want %d", s.len(), len(want))
			}
			slices.SortFunc(want, extsort.CompareRecords)
			i := 0
			err := s.each(func(e edge) error {
				if i >= len(want) {
					return fmt.Errorf("more than %d edges", len(want))
				}
				if w := edgeRecord(e); w != want[i] {
					return fmt.Errorf("edge %d: got %+v; want %+v", i, w, want[i])
				}
				i++
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if i != len(want) {
				t.Fatalf("%d edges; want %d", i, len(want))
			}
		})
	}
}
