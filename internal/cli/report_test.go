package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/drift"
	"github.com/neardup/neardup/internal/jobspec"
)

// dedupRun generates a corpus with gencorpus's args, deduplicates it and
// returns the output directory.
func dedupRun(t *testing.T, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	corpus := gencorpusFile(t, dir, args...)
	out := filepath.Join(dir, "out")
	if code, _, stderr := runCLI(t, "", "dedup", "-q", "-o", out, corpus); code != ExitOK {
		t.Fatalf("dedup %v: exit %d: %s", args, code, stderr)
	}
	return out
}

// diffJSON runs report diff --json old new.
func diffJSON(t *testing.T, old, new string) jobspec.ReportDiff {
	t.Helper()
	code, stdout, stderr := runCLI(t, "", "report", "diff", "--json", old, new)
	if code != ExitOK {
		t.Fatalf("report diff: exit %d: %s", code, stderr)
	}
	var d jobspec.ReportDiff
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatalf("report diff --json: %v\n%s", err, stdout)
	}
	return d
}

// TestReportDiff: two corpora from the same generator (seeds 1 and 2) do
// not differ; a corpus whose documents have half as many sentences has
// moved in text length and features.
//
// Null case: each p-value is conservative (binning only lowers D), so each
// of the six distributions has p < 0.001 with probability at most 0.001 and
// the test wrongly fails with probability at most 0.6% (union bound); a
// distribution is called moved only if moreover its PSI reaches 0.1, where
// the PSI of two samples of one distribution is about (k−1)(1/n1+1/n2) for
// k occupied bins: 12·2/4000 = 0.006 for the lengths.
//
// Shifted case: gencorpus draws the sentences of a document uniformly from
// 1…2m, so m = 12 → 6 moves the sentence count's CDFs apart by D = 0.5 at
// 12 sentences; the sentences' own lengths and the bins blur that, and the
// test asks for half, D ≥ 0.25, whose p-value at 4000 documents a side is
// Q(√2000·0.25) ≈ 10⁻¹⁰⁸.
func TestReportDiff(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gencorpus and runs dedup three times")
	}
	base := dedupRun(t, "-docs", "4000", "-seed", "1")
	same := dedupRun(t, "-docs", "4000", "-seed", "2")
	short := dedupRun(t, "-docs", "4000", "-seed", "3", "-sentences", "6")

	d := diffJSON(t, base, same)
	want := []string{"drift.best_similarity", "drift.features", "drift.text_bytes", "pair_similarity.estimate", "pair_similarity.exact", "cluster_sizes"}
	var names []string
	for _, x := range d.Distributions {
		names = append(names, x.Name)
		if x.Moved || x.P < 0.001 || x.PSI >= drift.MaterialPSI {
			t.Errorf("same generator, %s: %+v; want not moved, p ≥ 0.001, PSI < %g", x.Name, x.Comparison, drift.MaterialPSI)
		}
		if x.N1 == 0 || x.N2 == 0 {
			t.Errorf("%s: n %d and %d; want both runs' counts", x.Name, x.N1, x.N2)
		}
	}
	if !slices.Equal(names, want) || len(d.Missing) != 0 || len(d.Config) != 0 {
		t.Errorf("compared %v, missing %v, config %v; want %v, none, none", names, d.Missing, d.Config, want)
	}

	d = diffJSON(t, base, filepath.Join(short, "report.json"))
	if moved := d.Moved(); !slices.Contains(moved, "drift.text_bytes") || !slices.Contains(moved, "drift.features") {
		t.Errorf("half the sentences: moved %v; want drift.text_bytes and drift.features", moved)
	}
	for _, x := range d.Distributions {
		if strings.HasPrefix(x.Name, "drift.") && x.Name != "drift.best_similarity" && (x.D < 0.25 || x.P > 1e-100) {
			t.Errorf("half the sentences, %s: D %.3f, p %.3g; want D ≥ 0.25, p ≤ 1e-100", x.Name, x.D, x.P)
		}
	}

	// The text form names every distribution and says which moved.
	code, stdout, stderr := runCLI(t, "", "report", "diff", base, short)
	if code != ExitOK {
		t.Fatalf("report diff: exit %d: %s", code, stderr)
	}
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "drift.text_bytes ") && !strings.HasSuffix(line, "MOVED") {
			t.Errorf("text form: %q; want it MOVED", line)
		}
	}
	if !strings.Contains(stdout, "cluster_sizes") || !strings.Contains(stdout, "candidates_per_document") {
		t.Errorf("text form:\n%s\nwant every distribution and the counts", stdout)
	}
}

// TestReportDiffInputs: a report written before drift was recorded is
// compared on what it has; unreadable reports fail naming the file (exit 1),
// a wrong argument count is a usage error (exit 2).
func TestReportDiffInputs(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	if code, _, stderr := runCLI(t, "", "dedup", "-q", "-o", out, sample); code != ExitOK {
		t.Fatalf("dedup: exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		t.Fatal(err)
	}
	delete(fields, "drift")
	oldData, _ := json.Marshal(fields)
	old := filepath.Join(dir, "old.json")
	os.WriteFile(old, oldData, 0o644)

	d := diffJSON(t, old, out)
	if want := []string{"drift.best_similarity", "drift.features", "drift.text_bytes"}; !slices.Equal(d.Missing, want) {
		t.Errorf("missing %v; want %v", d.Missing, want)
	}
	for _, x := range d.Distributions {
		if x.D != 0 || x.P != 1 || x.PSI != 0 || x.Moved {
			t.Errorf("%s of a run against itself: %+v; want D 0, p 1, PSI 0", x.Name, x.Comparison)
		}
	}
	if len(d.Distributions) != 3 {
		t.Errorf("compared %d distributions; want the pair similarities and cluster sizes", len(d.Distributions))
	}

	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{\n  \"counts\": {\n  oops\n}\n"), 0o644)
	badBins := filepath.Join(dir, "bins.json")
	os.WriteFile(badBins, []byte(`{"drift":{"features":{"upper":[1,2],"counts":[1]}}}`), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{old, bad}, ExitFailure, "bad.json:3:"},
		{[]string{filepath.Join(dir, "nothing"), out}, ExitFailure, "nothing"},
		{[]string{badBins, out}, ExitFailure, "drift.features"},
		{[]string{out}, ExitUsage, "2 arg"},
	} {
		code, _, stderr := runCLI(t, "", append([]string{"report", "diff"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("report diff %v: exit %d, %q; want %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

// reportDiffGolden is the data-driven golden file of `neardup report diff`
// outputs, on the dedup report goldens.
const reportDiffGolden = "../../testdata/golden/cli/report-diff.txt"

// TestReportDiffGolden runs every command of
// testdata/golden/cli/report-diff.txt and compares its output with the
// file's (on failure "exit N" and stderr). go test -run
// TestReportDiffGolden -update rewrites the outputs.
func TestReportDiffGolden(t *testing.T) {
	data, err := os.ReadFile(reportDiffGolden)
	if err != nil {
		t.Fatal(err)
	}
	cases := parseGolden(t, reportDiffGolden, data)
	if len(cases) == 0 {
		t.Fatalf("%s holds no cases", reportDiffGolden)
	}
	for i, c := range cases {
		code, stdout, stderr := runCLI(t, "", strings.Fields(c.cmd)...)
		got := stdout
		if code != ExitOK {
			got = fmt.Sprintf("exit %d\n%s", code, stderr)
		}
		if !strings.HasSuffix(got, "\n") {
			got += "\n"
		}
		if *update {
			cases[i].want = got
			continue
		}
		if got != c.want {
			t.Errorf("neardup %s:\ngot:\n%s\nwant (%s):\n%s", c.cmd, got, reportDiffGolden, c.want)
		}
	}
	if *update {
		if err := os.WriteFile(reportDiffGolden, formatGolden(cases), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
