package dedup

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/shingle"
)

// doc is a test document.
type doc struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

func writeJSONL(t testing.TB, path string, docs []doc) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readTrain reads an articles .train file (`<id> <text>` a line).
func readTrain(t testing.TB, path string) []doc {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("shared data absent: %v", err)
	}
	defer f.Close()
	var docs []doc
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		id, text, _ := strings.Cut(sc.Text(), " ")
		docs = append(docs, doc{id, text})
	}
	return docs
}

func readJSONL(t testing.TB, path string) []doc {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var docs []doc
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var d doc
		if err := json.Unmarshal(line, &d); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	return docs
}

// pairKey orders a pair's ids.
func pairKey(a, b string) string {
	if a > b {
		a, b = b, a
	}
	return a + "\t" + b
}

// readPairs returns the id pairs of a pairs.tsv.
func readPairs(t testing.TB, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			t.Fatalf("pairs.tsv line %q has %d fields; want 4", line, len(f))
		}
		if f[0] >= f[1] {
			t.Errorf("pairs.tsv line %q: idA >= idB", line)
		}
		out = append(out, f[0]+"\t"+f[1])
	}
	if !slices.IsSorted(out) {
		t.Error("pairs.tsv is not sorted")
	}
	return out
}

func runDedup(t testing.TB, inputs []string, opts *Options) (string, *Report) {
	t.Helper()
	out := t.TempDir()
	rep, err := Run(context.Background(), inputs, out, opts)
	if err != nil {
		t.Fatal(err)
	}
	return out, rep
}

// TestArticlesTruth: on the labelled articles sets, at t = 0.8 with prose
// shingles, exactly the labelled pairs: recall 1, no other pair.
func TestArticlesTruth(t *testing.T) {
	sets := []struct{ name, train, truth string }{
		{"bundled-1000", "", "../testdata/articles_1000.truth"},
		{"articles_100", "../../shared/data/articles/articles_100.train", "../../shared/data/articles/articles_100.truth"},
		{"articles_1000", "../../shared/data/articles/articles_1000.train", "../../shared/data/articles/articles_1000.truth"},
		{"articles_2500", "../../shared/data/articles/articles_2500.train", "../../shared/data/articles/articles_2500.truth"},
	}
	for _, s := range sets {
		t.Run(s.name, func(t *testing.T) {
			input := "../testdata/articles_1000.jsonl"
			if s.train != "" {
				input = filepath.Join(t.TempDir(), "in.jsonl")
				writeJSONL(t, input, readTrain(t, s.train))
			}
			truthData, err := os.ReadFile(s.truth)
			if err != nil {
				t.Skipf("shared data absent: %v", err)
			}
			var want []string
			for _, line := range strings.Split(strings.TrimSpace(string(truthData)), "\n") {
				f := strings.Fields(line)
				want = append(want, pairKey(f[0], f[1]))
			}
			slices.Sort(want)
			out, rep := runDedup(t, []string{input}, &Options{Threshold: 0.8})
			got := readPairs(t, filepath.Join(out, PairsFile))
			if !slices.Equal(got, want) {
				t.Errorf("pairs:\ngot  %q\nwant %q", got, want)
			}
			if rep.Counts.Removed != int64(len(want)) {
				t.Errorf("removed %d; want %d", rep.Counts.Removed, len(want))
			}
			kept := readJSONL(t, filepath.Join(out, KeptFile))
			if int64(len(kept)) != rep.Counts.Documents-rep.Counts.Removed {
				t.Errorf("kept.jsonl has %d records; want %d", len(kept), rep.Counts.Documents-rep.Counts.Removed)
			}
		})
	}
}

// mutate returns text with about rate of its words replaced, deleted or
// followed by an inserted word.
func mutate(r *rand.Rand, text string, rate float64) string {
	words := strings.Fields(text)
	var out []string
	for _, w := range words {
		if r.Float64() >= rate {
			out = append(out, w)
			continue
		}
		switch r.IntN(3) {
		case 0:
			out = append(out, fmt.Sprintf("w%d", r.IntN(1e6)))
		case 1:
		case 2:
			out = append(out, w, fmt.Sprintf("x%d", r.IntN(1e6)))
		}
	}
	return strings.Join(out, " ")
}

// nearDupCorpus builds a corpus from the bundled articles with planted near
// duplicates at edit rates from 0 to 8%, so that word-5-gram similarities of
// related pairs spread across 0.5..1.
func nearDupCorpus(t testing.TB, originals, copies int, seed uint64) []doc {
	base := readJSONL(t, "../testdata/articles_1000.jsonl")
	r := rand.New(rand.NewPCG(seed, 7))
	var docs []doc
	for i := 0; i < originals && i < len(base); i++ {
		docs = append(docs, base[i])
		for c := 0; c < copies; c++ {
			rate := r.Float64() * 0.08
			docs = append(docs, doc{fmt.Sprintf("%s-v%d", base[i].ID, c), mutate(r, base[i].Text, rate)})
		}
	}
	r.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
	return docs
}

// exactTruth returns the id pairs with Jaccard ≥ t over the spec's features,
// by the exact all-pairs join.
func exactTruth(t testing.TB, docs []doc, spec shingle.Spec, threshold float64) map[string]float64 {
	t.Helper()
	sh := shingle.MustNew(spec)
	sets := make([][]uint64, len(docs))
	for i, d := range docs {
		sets[i] = eval.Normalize(sh.AppendFeatures(nil, []byte(d.Text)))
	}
	pairs, err := eval.AllPairs(sets, threshold, nil)
	if err != nil {
		t.Fatal(err)
	}
	truth := map[string]float64{}
	for _, p := range pairs {
		truth[pairKey(docs[p.A].ID, docs[p.B].ID)] = p.Jaccard
	}
	return truth
}

// TestRecallAgainstExactTruth: recall ≥ 0.99 of the pairs with J ≥ 0.8 at
// threshold 0.8 (bands from the recall target), and precision 1 with exact
// verification, on a corpus of real articles with planted near duplicates.
func TestRecallAgainstExactTruth(t *testing.T) {
	docs := nearDupCorpus(t, 1000, 4, 1)
	in := filepath.Join(t.TempDir(), "in.jsonl")
	writeJSONL(t, in, docs)
	truth := exactTruth(t, docs, shingle.Prose, 0.8)
	if len(truth) < 1000 {
		t.Fatalf("only %d true pairs; the corpus should plant more", len(truth))
	}
	out, rep := runDedup(t, []string{in}, &Options{Threshold: 0.8})
	got := readPairs(t, filepath.Join(out, PairsFile))
	found := 0
	for _, p := range got {
		if _, ok := truth[p]; ok {
			found++
		} else {
			t.Errorf("pair %q is not a true pair (precision < 1)", p)
		}
	}
	recall := float64(found) / float64(len(truth))
	t.Logf("%d docs, %d true pairs, %d found, recall %.4f, expected recall at 0.8 %.4f, bands %d×%d",
		len(docs), len(truth), found, recall, rep.ExpectedRecall, rep.Config.Bands, rep.Config.Rows)
	if recall < 0.99 {
		t.Errorf("recall %.4f; want ≥ 0.99", recall)
	}
}

// TestDeterminism: one worker, two workers, a run that spills to disk under
// a 16 MiB budget (where the exact-duplicate pass's table fills and the
// remaining copies are found after signing), and runs without the exact
// pass write byte-identical outputs.
func TestDeterminism(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 70k-document corpus; skipped with -short")
	}
	// Many short documents, so that 16 MiB of band-key entries (256k)
	// spills; about a tenth are exact copies of another.
	base := readJSONL(t, "../testdata/articles_1000.jsonl")
	r := rand.New(rand.NewPCG(3, 3))
	var docs []doc
	for i := 0; len(docs) < 70000; i++ {
		b := base[i%len(base)]
		words := strings.Fields(b.Text)
		start := r.IntN(max(1, len(words)-40))
		text := strings.Join(words[start:min(len(words), start+40)], " ")
		if r.IntN(4) == 0 {
			text = mutate(r, text, 0.03)
		}
		docs = append(docs, doc{fmt.Sprintf("d%06d", i), text})
	}
	in := filepath.Join(t.TempDir(), "in.jsonl")
	writeJSONL(t, in, docs)
	runs := []struct {
		name string
		opts Options
	}{
		{"workers1", Options{Workers: 1}},
		{"workers2", Options{Workers: 2}},
		{"spill16MiB", Options{Workers: 2, Memory: 16 << 20}},
		{"no-exact-pass", Options{Workers: 2, SkipExactPass: true}},
		{"star-workers1", Options{Workers: 1, Cluster: Star}},
		{"star-spill", Options{Workers: 2, Cluster: Star, Memory: 16 << 20}},
		{"star-no-exact-pass", Options{Workers: 2, Cluster: Star, SkipExactPass: true}},
	}
	outs := map[string]string{}
	for _, rr := range runs {
		o := rr.opts
		out, rep := runDedup(t, []string{in}, &o)
		outs[rr.name] = out
		if strings.Contains(rr.name, "spill") && rep.Spill.EntryRuns == 0 {
			t.Errorf("%s: nothing spilled (report %+v)", rr.name, rep.Spill)
		}
		if rr.name == "workers1" && (rep.Counts.VerifiedPairs == 0 || rep.Counts.ExactDuplicates < 1000) {
			t.Fatalf("%d pairs, %d exact duplicates: the test corpus is too easy", rep.Counts.VerifiedPairs, rep.Counts.ExactDuplicates)
		}
	}
	for _, f := range []string{PairsFile, ClustersFile, KeptFile} {
		for _, group := range [][]string{{"workers1", "workers2", "spill16MiB", "no-exact-pass"}, {"star-workers1", "star-spill", "star-no-exact-pass"}} {
			want, _ := os.ReadFile(filepath.Join(outs[group[0]], f))
			for _, other := range group[1:] {
				got, _ := os.ReadFile(filepath.Join(outs[other], f))
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs between %s and %s", f, group[0], other)
				}
			}
		}
	}
}

// chain returns 50 documents over a long sequence of distinct words, each a
// window of 200 words shifted by 16 from the previous: neighbours have word
// 5-gram Jaccard (200−16−4)/(200+16−4) = 0.849, and the ends share nothing.
func chain() []doc {
	var docs []doc
	for i := 0; i < 50; i++ {
		var words []string
		for w := i * 16; w < i*16+200; w++ {
			words = append(words, fmt.Sprintf("tok%d", w))
		}
		docs = append(docs, doc{fmt.Sprintf("c%02d", i), strings.Join(words, " ")})
	}
	return docs
}

func TestChaining(t *testing.T) {
	docs := chain()
	in := filepath.Join(t.TempDir(), "chain.jsonl")
	writeJSONL(t, in, docs)
	byID := map[string]string{}
	for _, d := range docs {
		byID[d.ID] = d.Text
	}
	sh := shingle.MustNew(shingle.Prose)
	jaccard := func(a, b string) float64 {
		return eval.Jaccard(eval.Normalize(sh.AppendFeatures(nil, []byte(byID[a]))), eval.Normalize(sh.AppendFeatures(nil, []byte(byID[b]))))
	}
	if j := jaccard("c00", "c01"); j < 0.84 || j > 0.86 {
		t.Fatalf("neighbour Jaccard %.3f; want ≈ 0.85", j)
	}
	if j := jaccard("c00", "c49"); j != 0 {
		t.Fatalf("end-to-end Jaccard %.3f; want 0", j)
	}
	clusters := func(mode ClusterMode) []ClusterLine {
		out, _ := runDedup(t, []string{in}, &Options{Threshold: 0.8, Cluster: mode})
		data, _ := os.ReadFile(filepath.Join(out, ClustersFile))
		var cs []ClusterLine
		for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			var c ClusterLine
			if err := json.Unmarshal(line, &c); err != nil {
				t.Fatal(err)
			}
			cs = append(cs, c)
		}
		return cs
	}
	comp := clusters(Components)
	if len(comp) != 1 || comp[0].Size != 50 {
		t.Errorf("components: %d clusters (first of size %d); want 1 of 50", len(comp), comp[0].Size)
	}
	star := clusters(Star)
	if len(star) < 2 {
		t.Errorf("star: %d clusters; want several", len(star))
	}
	for _, c := range star {
		for _, m := range c.Members {
			if m != c.Kept {
				if j := jaccard(c.Kept, m); j < 0.8 {
					t.Errorf("star cluster %d: member %s is %.3f from kept %s; want ≥ 0.8", c.Cluster, m, j, c.Kept)
				}
			}
		}
	}
	t.Logf("components: 1 cluster of 50; star: %d clusters", len(star))
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(in, []byte("{\"id\":\"a\",\"text\":\"one two three four five six\"}\n{not json}\n{\"id\":\"c\",\"text\":7}\n{\"id\":\"d\"}\n{\"id\":\"e\",\"text\":\"one two three four five six\"}\n{\"id\":\"f\",\"text\":\"\"}\n"), 0o644)
	_, err := Run(context.Background(), []string{in}, t.TempDir(), &Options{})
	if err == nil || !strings.Contains(err.Error(), "bad.jsonl") || !strings.Contains(err.Error(), ":2") {
		t.Fatalf("err = %v; want an error naming bad.jsonl line 2", err)
	}
	out, rep := runDedup(t, []string{in}, &Options{Corpus: corpusSkipBad()})
	if rep.Counts.Bad != 3 || rep.Counts.Empty != 1 || rep.Counts.Documents != 6 {
		t.Errorf("counts %+v; want 6 documents, 3 bad, 1 empty", rep.Counts)
	}
	if got := readPairs(t, filepath.Join(out, PairsFile)); !slices.Equal(got, []string{"a\te"}) {
		t.Errorf("pairs %q; want a–e", got)
	}
	kept := readJSONL(t, filepath.Join(out, KeptFile))
	var ids []string
	for _, d := range kept {
		ids = append(ids, d.ID)
	}
	if !slices.Equal(ids, []string{"a", "f"}) {
		t.Errorf("kept %q; want a and f (bad records dropped, empty kept)", ids)
	}
}

func corpusSkipBad() corpus.Options { return corpus.Options{SkipBad: true} }

// TestBadLastRecord: a record the reader skips as bad (too large) at the
// very end of the input is counted, as one before other records is.
func TestBadLastRecord(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.jsonl")
	long := strings.Repeat("word ", 100)
	os.WriteFile(in, []byte("{\"id\":\"a\",\"text\":\"one two three four five six\"}\n{\"id\":\"b\",\"text\":\""+long+"\"}\n"), 0o644)
	_, rep := runDedup(t, []string{in}, &Options{Corpus: corpus.Options{SkipBad: true, MaxRecordBytes: 100}})
	if rep.Counts.Bad != 1 || rep.Counts.Documents != 2 {
		t.Errorf("counts %+v; want 2 documents, 1 bad", rep.Counts)
	}
}
