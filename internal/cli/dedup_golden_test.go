package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/eval"
)

func readReportJSON(t *testing.T, dir string) *dedup.Report {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, dedup.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	var rep dedup.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	return &rep
}

// goldenLine is the line `dedup --golden` prints for a score.
func goldenLine(s *eval.Score) string {
	line := fmt.Sprintf("golden %s: precision %.4f  recall %.4f  F1 %.4f", s.Truth, s.Pairs.Precision, s.Pairs.Recall, s.Pairs.F1)
	if s.Clusters != nil {
		line += fmt.Sprintf("  ARI %.4f", s.Clusters.ARI)
	}
	return line + "\n"
}

// TestDedupGoldenFlag: `dedup --golden` prints the score and puts it in
// report.json; on the bundled sample against its .truth every pair is found
// (hand-checked: 10 truth pairs, 10 verified, the same 10 clusters), and on
// an edited corpus scored against `eval truth` with a banding of low recall
// the score equals what `eval score` computes from the run's outputs.
func TestDedupGoldenFlag(t *testing.T) {
	t.Run("articles", func(t *testing.T) {
		out := t.TempDir()
		truth := "../../testdata/articles_1000.truth"
		code, stdout, stderr := runCLI(t, "", "dedup", "-q", "-o", out, "--golden", truth, sample)
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		want := "golden " + truth + ": precision 1.0000  recall 1.0000  F1 1.0000  ARI 1.0000\n"
		if !strings.HasSuffix(stdout, want) {
			t.Errorf("stdout ends %q; want %q", stdout[strings.LastIndex(strings.TrimSuffix(stdout, "\n"), "\n")+1:], want)
		}
		g := readReportJSON(t, out).Golden
		if g == nil {
			t.Fatal("report.json has no golden score")
		}
		p := g.Pairs
		if g.Truth != truth || p.Truth != 10 || p.Predicted != 10 || p.TruePositives != 10 || p.FalsePositives != 0 || p.FalseNegatives != 0 ||
			p.Precision != 1 || p.Recall != 1 || p.F1 != 1 {
			t.Errorf("report.json golden pairs %+v (truth %q); want 10 truth, 10 predicted, all true, precision = recall = F1 = 1", p, g.Truth)
		}
		if c := g.Clusters; c == nil || c.Documents != 1000 || c.TruthClusters != 10 || c.PredictedClusters != 10 || c.ARI != 1 {
			t.Errorf("report.json golden clusters %+v; want 1000 documents, 10 and 10 clusters, ARI 1", c)
		}
	})

	t.Run("edited", func(t *testing.T) {
		dir := t.TempDir()
		in := filepath.Join(dir, "corpus.jsonl")
		writeDocs(t, in, editedCorpus(t, 400, 2000, 0.1, 3))
		truth := filepath.Join(dir, "truth.tsv")
		if code, _, stderr := runCLI(t, "", "eval", "truth", "--threshold", "0.5", "-o", truth, in); code != 0 {
			t.Fatalf("eval truth: exit %d: %s", code, stderr)
		}
		out := filepath.Join(dir, "out")
		// 4 bands of 8 rows: P(0.8) = 0.53, so some true pairs are missed.
		code, stdout, stderr := runCLI(t, "", "dedup", "-q", "-o", out, "--threshold", "0.8", "--bands", "4", "--rows", "8", "--golden", truth, in)
		if code != ExitOK {
			t.Fatalf("dedup: exit %d: %s", code, stderr)
		}
		g := readReportJSON(t, out).Golden
		if g == nil {
			t.Fatal("report.json has no golden score")
		}
		if !strings.HasSuffix(stdout, goldenLine(g)) {
			t.Errorf("stdout %q; want it to end with %q, the score in report.json", stdout, goldenLine(g))
		}
		p := g.Pairs
		t.Logf("%s", strings.TrimSpace(goldenLine(g)))
		if !(p.Recall > 0.2 && p.Recall < 0.95) || p.Precision != 1 || p.Truth < 200 || p.FalsePositives != 0 {
			t.Errorf("golden pairs %+v; want recall well inside (0, 1) over at least 200 truth pairs, precision 1 with exact verification", p)
		}
		if g.Bands != 4 || g.Rows != 8 || p.PredictedRecall == nil || len(p.Bands) == 0 || g.Clusters == nil {
			t.Errorf("golden score %+v; want bands 4, rows 8, a predicted recall, recall by band and a cluster score", g)
		}
		// eval score on the run's outputs (it reads report.json beside the
		// pairs for the banding, threshold and document count) gives the
		// same score: both call one scorer.
		code, stdout, stderr = runCLI(t, "", "eval", "score", "--truth", truth, "--pairs", filepath.Join(out, "pairs.tsv"),
			"--clusters", filepath.Join(out, "clusters.jsonl"), "--json")
		if code != ExitOK {
			t.Fatalf("eval score: exit %d: %s", code, stderr)
		}
		var s eval.Score
		if err := json.Unmarshal([]byte(stdout), &s); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(s, *g) {
			a, _ := json.Marshal(s)
			b, _ := json.Marshal(g)
			t.Errorf("eval score:\n%s\nreport.json golden:\n%s\nwant equal", a, b)
		}
	})
}

// TestDedupReportTopBuckets: report.json and report.html list the largest
// shared buckets whether or not any is over the cap; with the cap lowered
// so that some are, the capped ones lead the list, marked, and agree with
// report.json's "largest" (the capped buckets only).
func TestDedupReportTopBuckets(t *testing.T) {
	for _, c := range []struct {
		cap    string
		capped bool
	}{{"1000", false}, {"2", true}} {
		t.Run("cap="+c.cap, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "corpus.jsonl")
			writeDocs(t, in, editedCorpus(t, 300, 1200, 0.05, 5))
			out := filepath.Join(dir, "out")
			if code, _, stderr := runCLI(t, "", "dedup", "-q", "-o", out, "--bucket-cap", c.cap, in); code != ExitOK {
				t.Fatalf("dedup: exit %d: %s", code, stderr)
			}
			rep := readReportJSON(t, out)
			b := rep.Buckets
			if (b.CappedBuckets > 0) != c.capped {
				t.Fatalf("%d capped buckets; want some: %v", b.CappedBuckets, c.capped)
			}
			if len(b.Top) != 10 || b.Top[0].Size < 3 {
				t.Fatalf("report.json top buckets %+v; want 10, the largest of 3 or more documents", b.Top)
			}
			for i, lb := range b.Top {
				if lb.Size < 2 || lb.First == "" || len(lb.Key) != 16 {
					t.Errorf("top bucket %d: %+v; want a shared bucket with a first member and a 16-digit key", i, lb)
				}
				if i > 0 && (lb.Size > b.Top[i-1].Size || lb.Size == b.Top[i-1].Size && lb.Key <= b.Top[i-1].Key) {
					t.Errorf("top buckets %d, %d: %+v, %+v; want size descending, then key ascending", i-1, i, b.Top[i-1], lb)
				}
			}
			nCapped := 0
			for _, lb := range b.Top {
				if lb.Size > rep.Config.BucketCap {
					nCapped++
				}
			}
			t.Logf("top buckets (%d capped over %d): %+v", nCapped, rep.Config.BucketCap, b.Top)
			if want := min(len(b.Largest), len(b.Top)); nCapped < want || !reflect.DeepEqual(b.Top[:want], b.Largest[:want]) {
				t.Errorf("top buckets %+v; want them to start with the capped ones, %+v", b.Top, b.Largest)
			}
			html, err := os.ReadFile(filepath.Join(out, dedup.HTMLFile))
			if err != nil {
				t.Fatal(err)
			}
			page := string(html)
			if !strings.Contains(page, "Largest buckets") || !strings.Contains(page, b.Top[0].Key) || !strings.Contains(page, b.Top[9].Key) {
				t.Errorf("report.html lacks the table of the largest buckets (%s … %s)", b.Top[0].Key, b.Top[9].Key)
			}
			if got := strings.Count(page, "over the cap</b>"); got != nCapped {
				t.Errorf("report.html marks %d buckets over the cap; want %d", got, nCapped)
			}
		})
	}
}
