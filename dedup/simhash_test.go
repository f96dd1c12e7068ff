package dedup

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
	"github.com/neardup/neardup/simhash"
)

// simCorpus returns n short documents cut from the bundled articles, a
// quarter of them lightly mutated and some repeated, so that pairs lie at
// every Hamming distance from 0 up, plus two documents without features.
func simCorpus(t testing.TB, n int, seed uint64) []doc {
	t.Helper()
	base := readJSONL(t, "../testdata/articles_1000.jsonl")
	r := rand.New(rand.NewPCG(seed, seed))
	var docs []doc
	for i := 0; len(docs) < n; i++ {
		b := base[i%len(base)]
		words := strings.Fields(b.Text)
		start := r.IntN(max(1, len(words)-40))
		text := strings.Join(words[start:min(len(words), start+40)], " ")
		switch r.IntN(8) {
		case 0, 1:
			text = mutate(r, text, 0.02+0.06*r.Float64())
		case 2:
			if len(docs) > 0 {
				text = mutate(r, docs[r.IntN(len(docs))].Text, 0.03)
			}
		}
		docs = append(docs, doc{fmt.Sprintf("d%06d", i), text})
	}
	docs[n/3].Text, docs[2*n/3].Text = "", "!!! ..."
	return docs
}

// bruteSimHash returns the id pairs of the documents within Hamming
// distance k, by comparing every pair of fingerprints made by the
// definition (simhash.Fingerprint of the features, or the weighted one under
// idf); documents without features have no fingerprint.
func bruteSimHash(docs []doc, spec shingle.Spec, idf *simhash.IDF, k int) []string {
	sh := shingle.MustNew(spec)
	h := simhash.NewHasher(idf)
	var fps []uint64
	var ids []string
	for _, d := range docs {
		fs := sh.AppendFeatures(nil, []byte(d.Text))
		if len(fs) == 0 {
			continue
		}
		fps = append(fps, h.FingerprintFeatures(fs))
		ids = append(ids, d.ID)
	}
	var out []string
	for i, a := range fps {
		for j := i + 1; j < len(fps); j++ {
			if bits.OnesCount64(a^fps[j]) <= k {
				out = append(out, pairKey(ids[i], ids[j]))
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestSimHashCandidatesBruteForce: with --verify none the pairs of a SimHash
// run are its candidates, which must be exactly the pairs within Hamming
// distance k that a comparison of all pairs finds, whether the entries
// spill or not, whatever the workers, with the blocks chosen from the corpus
// size (bucket keys made after signing) or given (made by the workers), for
// several k; runs of the same k write byte-identical outputs.
func TestSimHashCandidatesBruteForce(t *testing.T) {
	n := 40000 // 7 tables at k = 6: 280,000 entries, past the 262,144 of 16 MiB
	if testing.Short() {
		n = 6000
	}
	docs := simCorpus(t, n, 5)
	in := filepath.Join(t.TempDir(), "in.jsonl")
	writeJSONL(t, in, docs)
	for _, k := range []int{6, 3} {
		want := bruteSimHash(docs, shingle.Prose, nil, k)
		if len(want) < 100 {
			t.Fatalf("k %d: %d pairs within distance; the corpus is too easy", k, len(want))
		}
		var first string
		for _, c := range []struct {
			name    string
			workers int
			memory  int64
			blocks  int
			spill   bool
		}{
			{"workers1", 1, 0, 0, false},
			{"spill", 2, 16 << 20, 0, true},
			{"blocks-given-spill", 2, 16 << 20, k + 3, true},
		} {
			opts := &Options{Sketch: sketch.SimHash, SimHash: SimHashOptions{Hamming: k, Blocks: c.blocks},
				Verify: VerifyNone, Workers: c.workers, Memory: c.memory,
				// The spilled runs band the exact copies too, so that the
				// k = 6 entries pass the buffer; workers1 runs the pass.
				SkipExactPass: c.spill}
			out, rep := runDedup(t, []string{in}, opts)
			got := readPairs(t, filepath.Join(out, PairsFile))
			if !slices.Equal(got, want) {
				t.Errorf("k %d %s: %d pairs; brute force finds %d", k, c.name, len(got), len(want))
			}
			// The entries' buffer is a 64th of the budget (8 bytes an entry).
			if c.spill && rep.Buckets.Entries > c.memory/64 && rep.Spill.EntryRuns == 0 ||
				c.spill && k == 6 && !testing.Short() && rep.Spill.EntryRuns == 0 {
				t.Errorf("k %d %s: nothing spilled (%+v)", k, c.name, rep.Spill)
			}
			sc := rep.Config.SimHash
			if rep.Config.Sketch != "simhash" || sc == nil || sc.Hamming != k || sc.Blocks < k+1 || c.blocks != 0 && sc.Blocks != c.blocks {
				t.Errorf("k %d %s: report config %+v, simhash %+v", k, c.name, rep.Config, sc)
			}
			// Exact copies are neither signed nor banded (the exact pass).
			signed := rep.Counts.Documents - rep.Counts.Empty - rep.Counts.ExactDuplicates
			if rep.Buckets.CappedBuckets != 0 || rep.Buckets.Entries != int64(sc.Tables)*signed {
				t.Errorf("k %d %s: buckets %+v; want %d tables × %d documents, none capped", k, c.name, rep.Buckets, sc.Tables, signed)
			}
			if rep.Counts.Empty != 2 {
				t.Errorf("k %d %s: %d empty documents; want 2", k, c.name, rep.Counts.Empty)
			}
			pairs, err := os.ReadFile(filepath.Join(out, PairsFile))
			if err != nil {
				t.Fatal(err)
			}
			if c.blocks != 0 {
				continue // other tables, other bucket counts; the pairs are compared above
			}
			rj, err := os.ReadFile(filepath.Join(out, ClustersFile))
			if err != nil {
				t.Fatal(err)
			}
			if s := string(pairs) + string(rj); first == "" {
				first = s
			} else if s != first {
				t.Errorf("k %d %s: pairs.tsv or clusters.jsonl differ from the first run's", k, c.name)
			}
		}
	}
}

// TestSimHashExactVerification: with exact verification the pairs are the
// candidates (pairs within distance k) whose exact Jaccard similarity
// reaches the threshold, each with its exact similarity and the model's
// estimate at its distance: precision 1.
func TestSimHashExactVerification(t *testing.T) {
	docs := simCorpus(t, 4000, 6)
	in := filepath.Join(t.TempDir(), "in.jsonl")
	writeJSONL(t, in, docs)
	const k, threshold = 6, 0.7
	truth := exactTruth(t, docs, shingle.Prose, threshold)
	within := map[string]bool{}
	for _, p := range bruteSimHash(docs, shingle.Prose, nil, k) {
		within[p] = true
	}
	var want []string
	for p := range truth {
		if within[p] {
			want = append(want, p)
		}
	}
	slices.Sort(want)
	if len(want) < 50 || len(want) == len(truth) {
		t.Fatalf("%d true pairs within distance %d of %d: the corpus does not test both sides", len(want), k, len(truth))
	}
	out, rep := runDedup(t, []string{in}, &Options{Sketch: sketch.SimHash, SimHash: SimHashOptions{Hamming: k}, Threshold: threshold})
	got := readPairs(t, filepath.Join(out, PairsFile))
	if !slices.Equal(got, want) {
		t.Errorf("%d pairs; want the %d true pairs within distance %d", len(got), len(want), k)
	}
	// The pairs of exact copies are verified without being candidates (the
	// exact pass), so candidates may be fewer than verified pairs.
	if rep.Counts.VerifiedPairs != int64(len(want)) || rep.Counts.Candidates == 0 || rep.Counts.ExactDuplicates == 0 {
		t.Errorf("counts %+v", rep.Counts)
	}
	data, _ := os.ReadFile(filepath.Join(out, PairsFile))
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Split(line, "\t")
		if want := FormatSim(truth[f[0]+"\t"+f[1]]); f[3] != want {
			t.Errorf("pair %s %s: exact %s; want %s", f[0], f[1], f[3], want)
		}
		var est float64
		fmt.Sscan(f[2], &est)
		if est < simhash.ModelJaccard(k)-1e-6 || est > 1 {
			t.Errorf("pair %s %s: estimate %v; want the model's Jaccard at a distance ≤ %d (≥ %v)", f[0], f[1], est, k, simhash.ModelJaccard(k))
		}
	}
}

// TestSimHashTFIDF: a TF-IDF run counts the document frequencies of its
// inputs first (the same table as counting every document directly),
// names the table in its report, and pairs the documents whose weighted
// fingerprints are within distance k; a run given the table does the same.
func TestSimHashTFIDF(t *testing.T) {
	docs := simCorpus(t, 3000, 7)
	in := filepath.Join(t.TempDir(), "in.jsonl")
	writeJSONL(t, in, docs)
	table, err := simhash.NewDFTable(simhash.DFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sh := shingle.MustNew(shingle.Prose)
	for _, d := range docs {
		table.AddText(sh, []byte(d.Text))
	}
	const k = 5
	want := bruteSimHash(docs, shingle.Prose, table.IDF(), k)
	if tf := bruteSimHash(docs, shingle.Prose, nil, k); slices.Equal(tf, want) {
		t.Fatal("TF and TF-IDF pair the same documents: the test cannot tell them apart")
	}
	for _, given := range []*simhash.DFTable{nil, table} {
		opts := &Options{Sketch: sketch.SimHash, SimHash: SimHashOptions{Weight: sigfile.TFIDF, Hamming: k, DF: given}, Verify: VerifyNone, Workers: 2}
		out, rep := runDedup(t, []string{in}, opts)
		if got := readPairs(t, filepath.Join(out, PairsFile)); !slices.Equal(got, want) {
			t.Errorf("given table %v: %d pairs; want %d", given != nil, len(got), len(want))
		}
		fp := fmt.Sprintf("%016x", table.Fingerprint())
		sc := rep.Config.SimHash
		if sc == nil || sc.Weight != "tfidf" || sc.DFFingerprint != fp || sc.DFDocuments != uint64(len(docs)) ||
			rep.Config.Params != "v1/simhash/bits=64/weight=tfidf/df="+fp {
			t.Errorf("given table %v: report config %+v, simhash %+v; want table %s of %d documents", given != nil, rep.Config, sc, fp, len(docs))
		}
		if stages := rep.Timings; (given == nil) != (stages[0].Stage == "df") {
			t.Errorf("given table %v: stages %+v", given != nil, stages)
		}
	}
}

// TestSimHashJaccardScore: the exact pairs of a SimHash run score against
// the exact truth with precision 1 (recall is what the corpus allows).
func TestSimHashJaccardScore(t *testing.T) {
	docs := simCorpus(t, 2000, 8)
	in := filepath.Join(t.TempDir(), "in.jsonl")
	writeJSONL(t, in, docs)
	truthPath := filepath.Join(t.TempDir(), "truth.tsv")
	var lines []string
	for p, j := range exactTruth(t, docs, shingle.Prose, 0.8) {
		lines = append(lines, p+"\t"+FormatSim(j))
	}
	slices.Sort(lines)
	if err := os.WriteFile(truthPath, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, rep := runDedup(t, []string{in}, &Options{Sketch: sketch.SimHash, Golden: truthPath})
	g := rep.Golden
	if g == nil || g.Pairs.Precision != 1 || g.Pairs.Recall <= 0 || g.Pairs.TruePositives == 0 {
		t.Fatalf("golden score %+v", g)
	}
}
