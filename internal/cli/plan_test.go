package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/plan"
)

// variantCorpus returns the bundled articles, each followed by copies
// variants with word edits at rates spread evenly over [0, maxRate), so
// that word-5-gram similarities of related pairs spread over about 0.5..1.
func variantCorpus(t testing.TB, copies int, maxRate float64, seed uint64) []jdoc {
	base := readSample(t)
	rng := rand.New(rand.NewPCG(seed, 7))
	var docs []jdoc
	for _, b := range base {
		docs = append(docs, b)
		for c := range copies {
			rate := rng.Float64() * maxRate
			var out []string
			for _, w := range strings.Fields(b.Text) {
				if rng.Float64() >= rate {
					out = append(out, w)
					continue
				}
				switch rng.IntN(3) {
				case 0:
					out = append(out, fmt.Sprintf("w%d", rng.IntN(1e6)))
				case 1:
				case 2:
					out = append(out, w, fmt.Sprintf("x%d", rng.IntN(1e6)))
				}
			}
			docs = append(docs, jdoc{fmt.Sprintf("%s-v%d", b.ID, c), strings.Join(out, " ")})
		}
	}
	rng.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
	return docs
}

// TestPlanSamplePredictsRecall: `plan --sample` on a random 30 % of a
// corpus, with --documents set to the whole corpus, predicts the recall that
// `dedup` with the planned parameters, scored by `eval score` against `eval
// truth`, then measures on the whole corpus, within ±0.02; and the
// candidates per document it predicts, scaled from the sample's pairs by
// C(N,2)/C(n,2), are within 10 % of dedup's count.
//
// Each corpus is 13,000 documents (the bundled articles and twelve edited
// copies of each, shuffled); the sample is its first 30 %, a uniform random
// subset of 3,900 documents. The recall target is set low (0.5 at t = 0.8)
// so that the prediction is far from 1 and the check means something.
//
// The tolerance: the prediction is a mean of P(J) over the sample's true
// pairs (about 1,700 here, correlated within an article's copies), so it
// carries sampling error; over corpus seeds 1–10 predicted − measured had a
// standard deviation of 0.005 and at most 0.010, and candidates per document
// were within 5.3 %. A corpus of 7,000 documents (six copies) with a quarter
// as sample held only ~300 true pairs: a standard deviation of 0.011 and one
// seed in ten off by 0.021. A wrong scale would miss candidates by a factor
// of N/n or more.
func TestPlanSamplePredictsRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("runs plan, dedup, eval truth and eval score on corpora of 13,000 documents; skipped with -short")
	}
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			dir := t.TempDir()
			docs := variantCorpus(t, 12, 0.05, seed)
			in := filepath.Join(dir, "corpus.jsonl")
			writeDocs(t, in, docs)
			smp := filepath.Join(dir, "sample.jsonl")
			writeDocs(t, smp, docs[:len(docs)*3/10])
			truth := filepath.Join(dir, "truth.tsv")
			if code, _, stderr := runCLI(t, "", "eval", "truth", "--threshold", "0.5", "-o", truth, in); code != 0 {
				t.Fatalf("eval truth: exit %d: %s", code, stderr)
			}
			// The planner's own choice, and a plan with k and the slot width fixed.
			for _, extra := range [][]string{nil, {"--num-perm", "128", "--bits", "32"}} {
				t.Run(strings.Join(append([]string{"plan"}, extra...), " "), func(t *testing.T) {
					planAndMeasure(t, smp, in, truth, len(docs), extra)
				})
			}
		})
	}
}

func planAndMeasure(t *testing.T, smp, in, truth string, n int, extra []string) {
	code, stdout, stderr := runCLI(t, "", append([]string{"plan", "--sample", smp, "--documents", fmt.Sprint(n),
		"--threshold", "0.8", "--recall", "0.5", "--precision", "-1", "--json"}, extra...)...)
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, stderr)
	}
	var p plan.Plan
	if err := json.Unmarshal([]byte(stdout), &p); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	// Without the exact pass, whose copies make no candidates: the plan
	// predicts the candidates of every document.
	code, _, stderr = runCLI(t, "", "dedup", "-q", "--exact-pass=false", "-o", out, "--threshold", "0.8", "--num-perm", fmt.Sprint(p.K), "--scheme", p.Scheme,
		"--bits", fmt.Sprint(p.Bits), "--bands", fmt.Sprint(p.B), "--rows", fmt.Sprint(p.R), in)
	if code != 0 {
		t.Fatalf("dedup: exit %d: %s", code, stderr)
	}
	code, stdout, stderr = runCLI(t, "", "eval", "score", "--truth", truth, "--pairs", filepath.Join(out, "pairs.tsv"), "--threshold", "0.8", "--json")
	if code != 0 {
		t.Fatalf("eval score: exit %d: %s", code, stderr)
	}
	var s eval.Score
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatal(err)
	}
	t.Logf("plan: k=%d bits=%d b=%d r=%d, P(t)=%.4f, predicted recall %.4f; measured recall %.4f over %d true pairs (S-curve over them: %v)",
		p.K, p.Bits, p.B, p.R, p.RecallAtThreshold, p.ExpectedRecall, s.Pairs.Recall, s.Pairs.Truth, *s.Pairs.PredictedRecall)
	if s.Pairs.Truth < 10000 {
		t.Fatalf("only %d true pairs; too few to measure recall to ±0.02", s.Pairs.Truth)
	}
	if p.ExpectedRecall > 0.97 {
		t.Errorf("predicted recall %.4f; the test wants a plan whose recall is far from 1", p.ExpectedRecall)
	}
	if d := math.Abs(p.ExpectedRecall - s.Pairs.Recall); d > 0.02 {
		t.Errorf("predicted recall %.4f, measured %.4f: off by %.4f; want within 0.02", p.ExpectedRecall, s.Pairs.Recall, d)
	}
	if s.Pairs.Precision != 1 {
		t.Errorf("precision %.4f with exact verification; want 1", s.Pairs.Precision)
	}
	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Counts struct {
			Candidates int64 `json:"candidates"`
		} `json:"counts"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	measured := 2 * float64(rep.Counts.Candidates) / float64(n)
	t.Logf("candidates per document: predicted %.4f, measured %.4f", p.CandidatesPerDoc, measured)
	if r := p.CandidatesPerDoc / measured; math.Abs(r-1) > 0.1 {
		t.Errorf("predicted %.4f candidates per document, dedup found %.4f: ratio %.3f; want within 10 %%", p.CandidatesPerDoc, measured, r)
	}
}
