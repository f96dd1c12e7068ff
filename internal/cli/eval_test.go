package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	mbits "math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/shingle"
)

type jdoc struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

func readSample(t testing.TB) []jdoc {
	t.Helper()
	data, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	var docs []jdoc
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var d jdoc
		if err := json.Unmarshal(line, &d); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	return docs
}

func writeDocs(t testing.TB, path string, docs []jdoc) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, d := range docs {
		enc.Encode(d)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// editedCorpus returns n documents: bases from the bundled articles, each
// followed by 0 to 3 variants made by word edits (substitute, insert,
// delete) at a random rate up to maxRate, shuffled, so that pairs straddle
// every threshold. Deterministic for a seed (the package eval test's
// plantEdits, on JSONL documents).
func editedCorpus(t testing.TB, bases, n int, maxRate float64, seed uint64) []jdoc {
	base := readSample(t)[:bases]
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var vocab []string
	for _, d := range base[:min(len(base), 200)] {
		vocab = append(vocab, strings.Fields(d.Text)...)
	}
	var out []jdoc
	for i := 0; len(out) < n; i++ {
		src := base[i%len(base)]
		id := fmt.Sprintf("%s-%d", src.ID, i/len(base))
		out = append(out, jdoc{id, src.Text})
		words := strings.Fields(src.Text)
		for v := rng.IntN(4); v > 0 && len(out) < n; v-- {
			rate := rng.Float64() * maxRate
			var w []string
			for _, word := range words {
				if rng.Float64() >= rate {
					w = append(w, word)
					continue
				}
				switch rng.IntN(3) {
				case 0:
					w = append(w, vocab[rng.IntN(len(vocab))])
				case 1:
					w = append(w, vocab[rng.IntN(len(vocab))], word)
				}
			}
			out = append(out, jdoc{fmt.Sprintf("%s-v%d", id, v), strings.Join(w, " ")})
		}
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// bruteForce returns the Jaccard similarity of every pair (i < j) of sets
// at or above tmin, keyed i<<32|j, by examining all N·(N−1)/2 pairs, with
// none of the join's filters. It is the package eval test's reference: the
// overlap of a pair is counted through a per-set bitset of the most frequent
// features (popcount of the AND) plus an inverted index of the others.
func bruteForce(sets [][]uint64, tmin float64) map[uint64]float64 {
	n := len(sets)
	ids := map[uint64]int32{}
	var lists [][]int32
	all := make([][]int32, n)
	for d, s := range sets {
		for _, f := range s {
			id, ok := ids[f]
			if !ok {
				id = int32(len(lists))
				ids[f] = id
				lists = append(lists, nil)
			}
			lists[id] = append(lists[id], int32(d))
			all[d] = append(all[d], id)
		}
	}
	byDF := make([]int32, len(lists))
	for i := range byDF {
		byDF[i] = int32(i)
	}
	slices.SortStableFunc(byDF, func(a, b int32) int { return len(lists[b]) - len(lists[a]) })
	heavy := 0
	for heavy < len(byDF) && len(lists[byDF[heavy]]) > 64 {
		heavy++
	}
	column := make([]int, len(lists))
	for i := range column {
		column[i] = -1
	}
	for c, f := range byDF[:heavy] {
		column[f] = c
	}
	words := (heavy + 63) / 64
	bm := make([]uint64, n*words)
	light := make([][]int32, n)
	for d, s := range all {
		for _, id := range s {
			if c := column[id]; c >= 0 {
				bm[d*words+c/64] |= 1 << (c % 64)
			} else {
				light[d] = append(light[d], id)
			}
		}
	}
	out := map[uint64]float64{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var next int
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			cnt := make([]int32, n)
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				for _, f := range light[i] {
					for _, j := range lists[f] {
						if int(j) > i {
							cnt[j]++
						}
					}
				}
				bi := bm[i*words : (i+1)*words]
				for j := i + 1; j < n; j++ { // every pair
					o := int(cnt[j])
					cnt[j] = 0
					for w, x := range bm[j*words : (j+1)*words] {
						o += mbits.OnesCount64(x & bi[w])
					}
					u := len(sets[i]) + len(sets[j]) - o
					if u > 0 && float64(o)/float64(u) >= tmin {
						mu.Lock()
						out[uint64(i)<<32|uint64(j)] = float64(o) / float64(u)
						mu.Unlock()
					}
				}
			}
		})
	}
	wg.Wait()
	return out
}

// TestEvalTruthAgreesWithBruteForce runs `neardup eval truth` on a corpus of
// 2,400 documents (real articles with planted edits) for word and char
// 5-grams at t = 0.3, 0.5 and 0.8 and compares its file, pair by pair and
// similarity to the bit, with an all-pairs brute force over the same
// shingle features.
func TestEvalTruthAgreesWithBruteForce(t *testing.T) {
	docs := editedCorpus(t, 800, 2400, 0.15, 1)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeDocs(t, in, docs)
	for _, spec := range []string{"word:5", "char:5"} {
		t.Run(spec, func(t *testing.T) {
			if spec == "char:5" && testing.Short() {
				t.Skip("char 5-grams: the brute force takes a few seconds; skipped with -short")
			}
			sp, _ := shingle.Parse(spec)
			sh := shingle.MustNew(sp)
			sets := make([][]uint64, len(docs))
			for i, d := range docs {
				sets[i] = eval.Normalize(sh.AppendFeatures(nil, []byte(d.Text)))
			}
			ref := bruteForce(sets, 0.3)
			for _, th := range []float64{0.3, 0.5, 0.8} {
				out := filepath.Join(dir, fmt.Sprintf("truth-%s-%v.tsv", strings.ReplaceAll(spec, ":", ""), th))
				code, _, stderr := runCLI(t, "", "eval", "truth", "--shingle", spec, "--threshold", fmt.Sprint(th), "-o", out, in)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				f, err := os.Open(out)
				if err != nil {
					t.Fatal(err)
				}
				pf, err := eval.ReadPairFile(f, out)
				f.Close()
				if err != nil {
					t.Fatal(err)
				}
				if pf.Threshold != th || pf.Documents != int64(len(docs)) || pf.Spec != sp.String() {
					t.Errorf("t=%v: header threshold %v documents %d spec %q", th, pf.Threshold, pf.Documents, pf.Spec)
				}
				want := map[string]float64{}
				for k, j := range ref {
					if j >= th {
						a, b := docs[k>>32].ID, docs[uint32(k)].ID
						want[min(a, b)+"\t"+max(a, b)] = j
					}
				}
				if len(want) == 0 {
					t.Fatalf("t=%v: no true pairs; the corpus does not exercise the join", th)
				}
				got := map[string]float64{}
				for _, p := range pf.Pairs {
					got[p.A+"\t"+p.B] = p.J
				}
				for k, j := range want {
					if g, ok := got[k]; !ok {
						t.Errorf("t=%v: missing pair %q (J=%v)", th, k, j)
					} else if g != j {
						t.Errorf("t=%v: pair %q has J=%v; want %v", th, k, g, j)
					}
				}
				for k := range got {
					if _, ok := want[k]; !ok {
						t.Errorf("t=%v: extra pair %q", th, k)
					}
				}
				t.Logf("%s t=%v: %d pairs, equal to the brute force", spec, th, len(got))
			}
		})
	}
}

// TestEvalScoreHand scores small fixtures whose metrics are worked out by
// hand, through the command line, in both the tab-separated truth format
// and the articles .truth format.
func TestEvalScoreHand(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	// Truth at t = 0.8 (ef is below it): ab 0.9, ac 0.85, de 0.95, hi 1.
	truth := write("truth.tsv", "# neardup eval truth threshold=0.5 documents=10 spec=x\na\tb\t0.9\na\tc\t0.85\nd\te\t0.95\ne\tf\t0.6\nh\ti\t1\n")
	// pairs.tsv columns: idA idB estimate exact. ab, de, hi found; xy wrong.
	pairs := write("pairs.tsv", "a\tb\t0.875000\t0.900000\nd\te\t0.930000\t0.950000\nh\ti\t1.000000\t1.000000\nx\ty\t0.810000\t-\n")
	// Clusters {a,b} {d,e} {h,i} {x,y}; truth components {a,b,c} {d,e} {h,i}.
	clusters := write("clusters.jsonl", `{"cluster":0,"size":2,"kept":"a","members":["a","b"]}
{"cluster":1,"size":2,"kept":"d","members":["d","e"]}
{"cluster":2,"size":2,"kept":"h","members":["h","i"]}
{"cluster":3,"size":2,"kept":"x","members":["x","y"]}
`)
	code, stdout, stderr := runCLI(t, "", "eval", "score", "--truth", truth, "--pairs", pairs, "--clusters", clusters,
		"--threshold", "0.8", "--bands", "2", "--rows", "3", "--bits", "64", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var s eval.Score
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatal(err)
	}
	p := s.Pairs
	// TP 3 (ab de hi), FP 1 (xy), FN 1 (ac): precision = recall = F1 = 3/4.
	if p.Truth != 4 || p.TruePositives != 3 || p.FalsePositives != 1 || p.FalseNegatives != 1 || p.Precision != 0.75 || p.Recall != 0.75 || p.F1 != 0.75 {
		t.Errorf("pairs %+v; want truth 4, TP 3, FP 1, FN 1, precision = recall = F1 = 0.75", p)
	}
	// Band 0.85–0.90 holds ac, missed; its prediction is P(0.85) for b=2, r=3.
	want := 1 - (1-0.85*0.85*0.85)*(1-0.85*0.85*0.85)
	if b := p.Bands[1]; b.Truth != 1 || b.Found != 0 || b.Predicted == nil || math.Abs(*b.Predicted-want) > 1e-12 {
		t.Errorf("band 0.85–0.90: %+v; want 1 truth pair, none found, predicted %.6f", b, want)
	}
	// Clusters over 10 documents. Truth: {a,b,c} {d,e} {h,i}; predicted:
	// {a,b} {d,e} {h,i} {x,y}; c, x, y singletons elsewhere. Same-cluster
	// pairs: truth 3+1+1 = 5, predicted 4, both 3. C(10,2) = 45.
	// ARI = (3 − 5·4/45) / ((5+4)/2 − 5·4/45) = 2.5556/4.0556 = 0.630137.
	c := s.Clusters
	wantARI := (3 - 20.0/45) / (4.5 - 20.0/45)
	if c == nil || c.Documents != 10 || math.Abs(c.ARI-wantARI) > 1e-12 || c.PairPrecision != 0.75 || c.PairRecall != 0.6 {
		t.Errorf("clusters %+v; want 10 documents, ARI %.6f, pair precision 0.75, recall 0.6", c, wantARI)
	}
	// The articles format: ids separated by a space, no similarity.
	art := write("articles.truth", "b a\nc a\ne d\ni h\n")
	code, stdout, stderr = runCLI(t, "", "eval", "score", "--truth", art, "--pairs", pairs, "--threshold", "0.8")
	if code != 0 || !strings.Contains(stdout, "precision 0.7500  recall 0.7500  F1 0.7500") {
		t.Errorf("articles format: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// Usage errors.
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"eval", "score", "--pairs", pairs}, "--truth and --pairs"},
		{[]string{"eval", "score", "--truth", art, "--pairs", pairs}, "--threshold is required"},
		{[]string{"eval", "score", "--truth", truth, "--pairs", pairs, "--threshold", "0.3"}, "J >= 0.5 only"},
		{[]string{"eval", "truth", sample}, "--out is required"},
		{[]string{"eval", "truth", "-o", filepath.Join(dir, "x")}, "requires at least 1 arg"},
		{[]string{"eval", "score", "--truth", truth, "--pairs", pairs, "extra"}, "unknown command"},
		{[]string{"eval", "truth", "-o", filepath.Join(dir, "x"), "--threshold", "0", sample}, "--threshold"},
		{[]string{"plan", "--threshold", "0.8"}, "--documents and --features"},
		{[]string{"plan", "--documents", "1e6", "--features", "100", "--recall", "2"}, "recall"},
	} {
		code, _, stderr := runCLI(t, "", tc.args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, stderr, ExitUsage, tc.msg)
		}
	}
	if code, _, stderr := runCLI(t, "", "eval", "score", "--truth", filepath.Join(dir, "missing"), "--pairs", pairs, "--threshold", "0.8"); code != ExitFailure {
		t.Errorf("missing truth: exit %d (%s); want %d", code, stderr, ExitFailure)
	}
}
