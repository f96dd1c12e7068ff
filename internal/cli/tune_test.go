package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/sigfile"
	"github.com/neardup/neardup/tune"
)

// tuneTolerance is how far tune's recall may be from what dedup and eval
// score measure with the same banding. With exact verification and a truth
// over the signatures' spec, the two are computed on the same candidate
// pairs and agree exactly; the tolerance is the one the issue sets.
const tuneTolerance = 0.02

// TestTuneMatchesDedup runs tune over stored signatures and, for each of its
// bandings, dedup with that banding followed by eval score, and checks that
// tune's recall (overall and per similarity band) is within 0.02 of theirs
// and that both found the same number of candidate pairs: on the bundled
// articles with their labelled truth, and on a generated corpus with its
// exact truth from eval truth.
func TestTuneMatchesDedup(t *testing.T) {
	t.Run("articles", func(t *testing.T) {
		// The ten labelled pairs are at J ≈ 0.96: long bands make recall fall.
		tuneVsDedup(t, sample, "../../testdata/articles_1000.truth", "0.8", "2x40,4x32,3x24,8x16,16x6")
	})
	t.Run("generated", func(t *testing.T) {
		dir := t.TempDir()
		corpus := gencorpusFile(t, dir, "-docs", "10000", "-dup", "0.4", "-seed", "3")
		truth := filepath.Join(dir, "truth.tsv")
		if code, _, stderr := runCLI(t, "", "eval", "truth", "--threshold", "0.5", "-o", truth, corpus); code != ExitOK {
			t.Fatalf("eval truth: exit %d: %s", code, stderr)
		}
		tuneVsDedup(t, corpus, truth, "0.8", "4x8,10x12,13x7,20x5,9x13/p1")
		if !testing.Short() {
			tuneVsDedup(t, corpus, truth, "0.6", "6x6,12x8,16x4/p1")
		}
	})
}

// gencorpusFile writes a corpus with internal/tools/gencorpus and returns
// its path; it skips the test when the go command is not at hand.
func gencorpusFile(t testing.TB, dir string, args ...string) string {
	t.Helper()
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		if gobin, err = exec.LookPath("go"); err != nil {
			t.Skip("no go command to build internal/tools/gencorpus")
		}
	}
	out := filepath.Join(dir, "corpus.jsonl")
	cmd := exec.Command(gobin, append([]string{"run", "./internal/tools/gencorpus", "-o", out}, args...)...)
	cmd.Dir = "../.."
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gencorpus: %v\n%s", err, b)
	}
	return out
}

func tuneVsDedup(t *testing.T, corpus, truth, threshold, bands string) {
	t.Helper()
	dir := t.TempDir()
	sigs := filepath.Join(dir, "sigs.ndsf")
	if code, _, stderr := runCLI(t, "", "sign", "-q", "-o", sigs, corpus); code != ExitOK {
		t.Fatalf("sign: exit %d: %s", code, stderr)
	}
	resPath := filepath.Join(dir, "tune.json")
	code, stdout, stderr := runCLI(t, "", "tune", "--signatures", sigs, "--truth", truth, "--threshold", threshold,
		"--bands", bands, "--json", resPath)
	if code != ExitOK {
		t.Fatalf("tune: exit %d: %s", code, stderr)
	}
	t.Logf("neardup tune --threshold %s --bands %s\n%s", threshold, bands, stdout)
	var res tune.Result
	readJSON(t, resPath, &res)
	lowRecall := false
	for _, b := range res.Bandings {
		out := filepath.Join(dir, "dedup-"+strings.ReplaceAll(b.Label, "/", "-"))
		// Without the exact pass, whose copies make no candidates: tune
		// counts the candidates of every document.
		code, _, stderr := runCLI(t, "", "dedup", "-q", "--exact-pass=false", "--threshold", threshold, "--bands", fmt.Sprint(b.Bands),
			"--rows", fmt.Sprint(b.Rows), "--multi-probe", fmt.Sprint(b.Probe), "-o", out, corpus)
		if code != ExitOK {
			t.Fatalf("dedup %s: exit %d: %s", b.Label, code, stderr)
		}
		code, scoreOut, stderr := runCLI(t, "", "eval", "score", "--truth", truth, "--pairs", filepath.Join(out, "pairs.tsv"),
			"--threshold", threshold, "--json")
		if code != ExitOK {
			t.Fatalf("eval score %s: exit %d: %s", b.Label, code, stderr)
		}
		var score eval.Score
		if err := json.Unmarshal([]byte(scoreOut), &score); err != nil {
			t.Fatal(err)
		}
		var rep dedup.Report
		readJSON(t, filepath.Join(out, dedup.ReportFile), &rep)

		got, want := b.Pairs, score.Pairs
		t.Logf("%-8s tune recall %.4f  dedup+score recall %.4f  candidates %d / %d", b.Label, got.Recall, want.Recall, b.Candidates, rep.Counts.Candidates)
		lowRecall = lowRecall || want.Recall < 0.9
		if got.Truth != want.Truth || math.Abs(got.Recall-want.Recall) > tuneTolerance {
			t.Errorf("%s: tune recall %.4f over %d truth pairs; dedup + eval score %.4f over %d (tolerance %v)",
				b.Label, got.Recall, got.Truth, want.Recall, want.Truth, tuneTolerance)
		}
		if len(got.Bands) != len(want.Bands) {
			t.Fatalf("%s: %d similarity bands; eval score has %d", b.Label, len(got.Bands), len(want.Bands))
		}
		for i, g := range got.Bands {
			w := want.Bands[i]
			if g.Lo != w.Lo || g.Truth != w.Truth || math.Abs(g.Recall-w.Recall) > tuneTolerance {
				t.Errorf("%s: band %.2f–%.2f: tune recall %.4f of %d; dedup + eval score %.4f of %d",
					b.Label, g.Lo, g.Hi, g.Recall, g.Truth, w.Recall, w.Truth)
			}
		}
		if b.Candidates != rep.Counts.Candidates {
			t.Errorf("%s: tune counts %d candidate pairs, dedup %d", b.Label, b.Candidates, rep.Counts.Candidates)
		}
	}
	if !lowRecall {
		t.Errorf("every banding reached recall 0.9: the comparison does not test the misses")
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestTuneFlags checks the refusals (exit 2, naming the range), the help's
// EXIT STATUS, failures on bad inputs (exit 1, naming the file), and that
// --json writes its file atomically and - prints JSON instead of the table.
func TestTuneFlags(t *testing.T) {
	dir := t.TempDir()
	sigs := filepath.Join(dir, "sigs.ndsf")
	if code, _, stderr := runCLI(t, "", "sign", "-q", "-o", sigs, sample); code != ExitOK {
		t.Fatal(stderr)
	}
	truth := "../../testdata/articles_1000.truth"
	base := []string{"tune", "--signatures", sigs, "--truth", truth}
	with := func(extra ...string) []string { return append(append([]string(nil), base...), extra...) }
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"tune", "--truth", truth}, ExitUsage, "--signatures and --truth are required"},
		{[]string{"tune", "--signatures", sigs}, ExitUsage, "--signatures and --truth are required"},
		{with("extra-arg"), ExitUsage, "unknown command"},
		{with("--threshold", "1"), ExitUsage, "--threshold 1; want 0 < t < 1"},
		{with("--threshold", "0"), ExitUsage, "want 0 < t < 1"},
		{with("--bands", "16by6"), ExitUsage, "want BxR"},
		{with("--bands", "16x6,16x6"), ExitUsage, "given twice"},
		{with("--bands", "100x2"), ExitUsage, "reads 200 slots; the signatures have k = 128"},
		{with("--multi-probe", "3"), ExitUsage, "multi-probe level 3; want 0..2"},
		{with("--recall", "1.2"), ExitUsage, "recall target 1.2; want 0 (none) to 1"},
		{with("--precision", "-0.1"), ExitUsage, "precision target -0.1"},
		{with("--bucket-cap", "1"), ExitUsage, "--bucket-cap 1; want 2..65536"},
		{with("--band-width", "0"), ExitUsage, "--band-width 0; want 0 < w <= 1"},
		{with("--memory", "1MiB"), ExitUsage, "want at least 16MiB"},
		{with("--memory", "lots"), ExitUsage, "lots"},
		{with("--workers", "-2"), ExitUsage, "--workers -2"},
		{[]string{"tune", "--signatures", filepath.Join(dir, "none.ndsf"), "--truth", truth}, ExitFailure, "none.ndsf"},
		{[]string{"tune", "--signatures", sample, "--truth", truth}, ExitFailure, "articles_1000.jsonl"},
		{[]string{"tune", "--signatures", sigs, "--truth", filepath.Join(dir, "none.truth")}, ExitFailure, "none.truth"},
	} {
		code, _, stderr := runCLI(t, "", tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d mentioning %q", tc.args[1:], code, stderr, tc.code, tc.msg)
		}
	}
	code, stdout, _ := runCLI(t, "", "tune", "--help")
	if code != ExitOK || !strings.Contains(stdout, "EXIT STATUS") || !strings.Contains(stdout, "--signatures") {
		t.Errorf("help: exit %d, no EXIT STATUS section or flags:\n%s", code, stdout)
	}

	// --json FILE: the file appears whole, nothing else is left, and the
	// table still goes to standard output.
	jsonPath := filepath.Join(dir, "out", "tune.json")
	os.Mkdir(filepath.Dir(jsonPath), 0o755)
	code, stdout, stderr := runCLI(t, "", with("--recall", "0.9", "--json", jsonPath)...)
	if code != ExitOK || !strings.Contains(stdout, "banding") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	entries, _ := os.ReadDir(filepath.Dir(jsonPath))
	if len(entries) != 1 || entries[0].Name() != "tune.json" {
		t.Errorf("output directory holds %v; want only tune.json", entries)
	}
	var fromFile tune.Result
	readJSON(t, jsonPath, &fromFile)
	if len(fromFile.Bandings) == 0 || fromFile.Recall != 0.9 || fromFile.TruthComplete || fromFile.TruthPairs != 10 {
		t.Errorf("tune.json: %d bandings, recall target %v, complete %v, %d truth pairs; want the frontier, 0.9, false, 10",
			len(fromFile.Bandings), fromFile.Recall, fromFile.TruthComplete, fromFile.TruthPairs)
	}
	// --json -: the same JSON on standard output instead of the table.
	code, stdout, stderr = runCLI(t, "", with("--recall", "0.9", "--json", "-")...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	fileData, _ := os.ReadFile(jsonPath)
	if !bytes.Equal([]byte(stdout), fileData) {
		t.Errorf("--json - printed\n%s\nwant the file's\n%s", stdout, fileData)
	}
}

// TestTuneGolden keeps the table neardup tune prints for the bundled
// articles as a golden file (-update rewrites it).
func TestTuneGolden(t *testing.T) {
	dir := t.TempDir()
	sigs := filepath.Join(dir, "sigs.ndsf")
	if code, _, stderr := runCLI(t, "", "sign", "-q", "-o", sigs, sample); code != ExitOK {
		t.Fatal(stderr)
	}
	code, stdout, stderr := runCLI(t, "", "tune", "--signatures", sigs, "--truth", "../../testdata/articles_1000.truth",
		"--bands", "2x40,4x32,8x16,16x6,9x13/p1", "--recall", "0.9", "--precision", "0.5")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := []byte(strings.ReplaceAll(stdout, sigs, "sigs.ndsf"))
	golden := "../../testdata/golden/cli/tune-articles.txt"
	if *update {
		os.WriteFile(golden, got, 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update once)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("tune output differs from %s:\n%s", golden, got)
	}
}

// TestTuneShards checks that tune reads a directory of shards, and a glob
// of them, as the one file they were cut from.
func TestTuneShards(t *testing.T) {
	dir := t.TempDir()
	whole := filepath.Join(dir, "sigs.ndsf")
	if code, _, stderr := runCLI(t, "", "sign", "-q", "-o", whole, sample); code != ExitOK {
		t.Fatal(stderr)
	}
	r, err := sigfile.Open(whole, nil)
	if err != nil {
		t.Fatal(err)
	}
	shards := filepath.Join(dir, "shards")
	os.Mkdir(shards, 0o755)
	const n = 3
	var ws []*sigfile.Writer
	for i := range n {
		h := r.Header()
		h.Shard, h.Shards = i, n
		w, err := sigfile.Create(filepath.Join(shards, sigfile.ShardName("sigs", i, n)), h)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	var rec sigfile.Record
	for i := 0; ; i++ {
		if err := r.Next(&rec); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if err := ws[i*n/1000].Add(rec.ID, rec.Sig); err != nil { // contiguous thirds, in order
			t.Fatal(err)
		}
	}
	r.Close()
	for _, w := range ws {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	run := func(sigs string) tune.Result {
		out := filepath.Join(t.TempDir(), "tune.json")
		code, _, stderr := runCLI(t, "", "tune", "--signatures", sigs, "--truth", "../../testdata/articles_1000.truth",
			"--bands", "4x32,8x16,9x13/p1", "--json", out)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", sigs, code, stderr)
		}
		var res tune.Result
		readJSON(t, out, &res)
		res.Signatures = ""
		return res
	}
	want := run(whole)
	for _, sigs := range []string{shards, filepath.Join(shards, "sigs-*")} {
		if got := run(sigs); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: result differs from the whole file's:\n%s\nwant\n%s", sigs, got.String(), want.String())
		}
	}
}
