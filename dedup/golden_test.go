package dedup

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGolden: a run scored against the bundled articles' labelled pairs
// finds them all (precision, recall, ARI 1) and reports it in report.json
// and report.html; a truth file that stops above the run's threshold is
// refused before any work.
func TestGolden(t *testing.T) {
	out, rep := runDedup(t, []string{"../testdata/articles_1000.jsonl"}, &Options{Threshold: 0.8, Golden: "../testdata/articles_1000.truth"})
	g := rep.Golden
	if g == nil || g.Pairs.Truth != 10 || g.Pairs.Precision != 1 || g.Pairs.Recall != 1 || g.Clusters == nil || g.Clusters.ARI != 1 {
		t.Fatalf("golden score %+v; want 10 truth pairs, precision = recall = ARI = 1", g)
	}
	if g.Clusters.Documents != 1000 || g.Bands != rep.Config.Bands || g.Rows != rep.Config.Rows {
		t.Errorf("golden %+v; want 1000 documents and the run's bands", g)
	}
	data, err := os.ReadFile(filepath.Join(out, ReportFile))
	if err != nil || !strings.Contains(string(data), `"golden"`) {
		t.Errorf("report.json lacks the golden score (%v)", err)
	}
	html, err := os.ReadFile(filepath.Join(out, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Against the golden set", `class="curve"`, "Sample clusters", `<mark class="del">`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}

	truth := filepath.Join(t.TempDir(), "truth.tsv")
	os.WriteFile(truth, []byte("# neardup eval truth threshold=0.9 documents=1000 spec=x\n"), 0o644)
	_, err = Run(context.Background(), []string{"../testdata/articles_1000.jsonl"}, t.TempDir(), &Options{Threshold: 0.8, Golden: truth})
	if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), "J >= 0.9 only") {
		t.Errorf("truth at 0.9 for a run at 0.8: err = %v; want ErrInvalidOptions", err)
	}
}
