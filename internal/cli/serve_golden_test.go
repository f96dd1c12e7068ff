package cli

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/server"
)

// TestServeGoldenMatchesEvalScore builds an index from a corpus of edited
// articles whose pairs straddle the threshold, with a banding that misses
// pairs (4 bands of 8 rows: a pair at J = 0.8 is a candidate with
// probability 1−(1−0.8⁸)⁴ ≈ 0.52) and signatures of 32 slots whose estimate
// (standard deviation √(0.8·0.2/32) ≈ 0.07) lets pairs below 0.8 through, so
// that recall and precision are both below 1. It scores `neardup dedup --verify estimate` of the same
// corpus with `neardup eval score`, then runs the golden set (the whole
// corpus and the truth of `neardup eval truth`) against the index, and wants
// the same pairs, recall and precision; then serves the index with --golden
// and wants /metrics to say the same.
func TestServeGoldenMatchesEvalScore(t *testing.T) {
	dir := t.TempDir()
	corpusPath := filepath.Join(dir, "corpus.jsonl")
	writeDocs(t, corpusPath, editedCorpus(t, 120, 360, 0.45, 14))
	truth := filepath.Join(dir, "truth.tsv")
	run := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := runCLI(t, "", args...)
		if code != ExitOK {
			t.Fatalf("%s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
		}
		return stdout
	}
	run("eval", "truth", "--threshold", "0.5", "-o", truth, corpusPath)
	banding := []string{"--threshold", "0.8", "--num-perm", "32", "--bands", "4", "--rows", "8"}
	idxDir := filepath.Join(dir, "idx")
	run(append([]string{"index", "build", "-q", "--data", idxDir}, append(banding, corpusPath)...)...)
	out := filepath.Join(dir, "out")
	run(append([]string{"dedup", "-q", "--verify", "estimate", "-o", out}, append(banding, corpusPath)...)...)
	var want eval.Score
	if err := json.Unmarshal([]byte(run("eval", "score", "--json", "--truth", truth, "--pairs", filepath.Join(out, "pairs.tsv"))), &want); err != nil {
		t.Fatal(err)
	}
	wp := want.Pairs
	if !(wp.Recall > 0 && wp.Recall < 1 && wp.Precision > 0 && wp.Precision < 1) {
		t.Fatalf("eval score: recall %v, precision %v; the test needs both in (0, 1) to mean anything", wp.Recall, wp.Precision)
	}
	t.Logf("eval score: truth %d, predicted %d, true positives %d, recall %.4f, precision %.4f",
		wp.Truth, wp.Predicted, wp.TruePositives, wp.Recall, wp.Precision)

	// The golden run, in process: the same pairs and score.
	set, err := loadGoldenSet(context.Background(), truth, corpusPath)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := index.Open(idxDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	before, err := idx.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(idx, &server.Options{Golden: set, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.GoldenRun(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := res[0].Score
	if len(res) != 1 || res[0].Index != server.GoldenPrimary {
		t.Fatalf("golden run: %d results, first %q; want one, primary", len(res), res[0].Index)
	}
	if got.Truth != wp.Truth || got.Predicted != wp.Predicted || got.TruePositives != wp.TruePositives ||
		got.Recall != wp.Recall || got.Precision != wp.Precision {
		t.Errorf("golden run: truth %d, predicted %d, TP %d, recall %v, precision %v; want eval score's %d, %d, %d, %v, %v",
			got.Truth, got.Predicted, got.TruePositives, got.Recall, got.Precision, wp.Truth, wp.Predicted, wp.TruePositives, wp.Recall, wp.Precision)
	}
	pf, err := readPairFile(filepath.Join(out, "pairs.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b eval.LabeledPair) bool { return a.A == b.A && a.B == b.B }
	if !slices.EqualFunc(res[0].Pairs, pf.Pairs, same) {
		t.Errorf("golden run found %d pairs; dedup --verify estimate %d, not the same", len(res[0].Pairs), len(pf.Pairs))
	}
	after, err := idx.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if m := idx.Metrics(); after.Documents != before.Documents || m.Inserts != 0 || m.Deletes != 0 || m.Commits != 0 {
		t.Errorf("the golden run wrote: documents %d → %d, inserts %d, deletes %d, commits %d; want read-only",
			before.Documents, after.Documents, m.Inserts, m.Deletes, m.Commits)
	}
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}

	// serve --golden: the gauges say the same.
	srv := startServe(t, "--data", idxDir, "--golden", truth, "--golden-corpus", corpusPath, "--golden-interval", "1h")
	gauges := func() map[string]float64 {
		resp, err := http.Get(srv.url + "/metrics")
		if err != nil {
			return nil
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		m := map[string]float64{}
		for _, line := range strings.Split(string(body), "\n") {
			if name, v, ok := strings.Cut(line, " "); ok && strings.HasPrefix(name, "neardup_golden_") {
				m[name], _ = strconv.ParseFloat(v, 64)
			}
		}
		return m
	}
	deadline := time.Now().Add(30 * time.Second)
	var g map[string]float64
	for g = gauges(); g["neardup_golden_last_run_timestamp_seconds"] == 0; g = gauges() {
		if time.Now().After(deadline) {
			t.Fatalf("no golden run on /metrics after 30 s\n%s", srv.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r, p := g[`neardup_golden_recall{index="primary"}`], g[`neardup_golden_precision{index="primary"}`]; r != wp.Recall || p != wp.Precision ||
		g["neardup_golden_runs_total"] != 1 || g["neardup_golden_failures_total"] != 0 {
		t.Errorf("/metrics: %v; want recall %v, precision %v, one run, no failure", g, wp.Recall, wp.Precision)
	}
	if code := srv.stop(); code != ExitOK {
		t.Fatalf("serve: exit %d\n%s", code, srv.logs)
	}
	if logs := srv.logs.String(); !strings.Contains(logs, "msg=\"golden run\" index=primary") || !strings.Contains(logs, "golden_documents=360") {
		t.Errorf("serve's log lacks the golden run:\n%s", logs)
	}
}

// TestServeGoldenFlags: the golden flags go together, and a truth file that
// names documents the golden corpus lacks, or lists pairs above the index's
// threshold only, is refused before serving (exit 2).
func TestServeGoldenFlags(t *testing.T) {
	dir := t.TempDir()
	idxDir := filepath.Join(dir, "idx")
	if code, stdout, stderr := runCLI(t, "", "index", "build", "-q", "--data", idxDir, sample); code != ExitOK {
		t.Fatalf("index build: exit %d\n%s%s", code, stdout, stderr)
	}
	truth := "../../testdata/articles_1000.truth"
	stranger := filepath.Join(dir, "stranger.truth")
	high := filepath.Join(dir, "high.truth")
	for path, data := range map[string]string{stranger: "t1088\tnobody\n", high: "# threshold=0.9\nt1088\tt5015\t0.95\n"} {
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--golden", truth}, "--golden and --golden-corpus go together"},
		{[]string{"--golden-corpus", sample}, "--golden and --golden-corpus go together"},
		{[]string{"--golden-interval", "1m"}, "--golden-interval needs --golden"},
		{[]string{"--golden", truth, "--golden-corpus", sample, "--golden-interval", "10ms"}, "must be at least 1s"},
		{[]string{"--golden", stranger, "--golden-corpus", sample}, `names "nobody", which is not a golden document`},
		{[]string{"--golden", high, "--golden-corpus", sample}, "cannot score the index's threshold 0.8"},
		{[]string{"--golden", filepath.Join(dir, "absent"), "--golden-corpus", sample}, "golden set:"},
	} {
		args := append([]string{"serve", "--data", idxDir, "--addr", "127.0.0.1:0"}, tc.args...)
		if code, _, stderr := runCLI(t, "", args...); code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, %q; want 2 and %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}
