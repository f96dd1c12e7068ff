package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
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

// TestPlanSamplePredictsRecall: `plan --sample` on a corpus (7,000 documents: the bundled
// articles and six edited copies of each) predicts the
// recall that `dedup` with the planned parameters, scored by `eval score`
// against `eval truth`, then measures, within ±0.02. The recall target is
// set low (0.5 at t = 0.8) so that the prediction is far from 1 and the
// check means something.
func TestPlanSamplePredictsRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("runs plan, dedup, eval truth and eval score on 5,000 documents; skipped with -short")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "corpus.jsonl")
	writeDocs(t, in, variantCorpus(t, 6, 0.06, 1))
	truth := filepath.Join(dir, "truth.tsv")
	if code, _, stderr := runCLI(t, "", "eval", "truth", "--threshold", "0.5", "-o", truth, in); code != 0 {
		t.Fatalf("eval truth: exit %d: %s", code, stderr)
	}
	// The planner's own choice, and a plan with k and the slot width fixed.
	for _, extra := range [][]string{nil, {"--num-perm", "128", "--bits", "32"}} {
		t.Run(strings.Join(append([]string{"plan"}, extra...), " "), func(t *testing.T) { planAndMeasure(t, dir, in, truth, extra) })
	}
}

func planAndMeasure(t *testing.T, dir, in, truth string, extra []string) {
	code, stdout, stderr := runCLI(t, "", append([]string{"plan", "--sample", in, "--threshold", "0.8", "--recall", "0.5", "--precision", "-1", "--json"}, extra...)...)
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, stderr)
	}
	var p plan.Plan
	if err := json.Unmarshal([]byte(stdout), &p); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr = runCLI(t, "", "dedup", "-q", "-o", out, "--threshold", "0.8", "--num-perm", fmt.Sprint(p.K), "--scheme", p.Scheme,
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
	if s.Pairs.Truth < 3000 {
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
}
