package dedup

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/neardup/neardup/cluster"
	"github.com/neardup/neardup/lsh"
)

// withStdin runs fn with os.Stdin reading data.
func withStdin(t *testing.T, data []byte, fn func()) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { w.Write(data); w.Close() }()
	old := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = old; r.Close() }()
	fn()
}

// readReport reads an output directory's report.json.
func readReport(t *testing.T, dir string) *Report {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	return &rep
}

// TestStdinInputsInReport: report.json names standard input "-", as given,
// not the temporary file it was spooled to.
func TestStdinInputsInReport(t *testing.T) {
	data, err := os.ReadFile("../testdata/articles_1000.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "more.jsonl")
	writeJSONL(t, file, []doc{{"extra", "a document only in the second input, long enough to shingle"}})
	for _, inputs := range [][]string{{"-"}, {"-", file}, {file, "-"}} {
		t.Run(strings.Join(inputs, ","), func(t *testing.T) {
			var out string
			var rep *Report
			withStdin(t, data, func() { out, rep = runDedup(t, inputs, &Options{}) })
			if !slices.Equal(rep.Inputs, inputs) {
				t.Errorf("Report.Inputs = %q; want %q", rep.Inputs, inputs)
			}
			if got := readReport(t, out).Inputs; !slices.Equal(got, inputs) {
				t.Errorf("report.json inputs = %q; want %q", got, inputs)
			}
			if want := int64(1000 + len(inputs) - 1); rep.Counts.Documents != want || rep.Counts.VerifiedPairs != 10 {
				t.Errorf("counts %+v; want %d documents, 10 verified pairs", rep.Counts, want)
			}
		})
	}
}

// template returns a 200-word boilerplate text with one distinguishing word
// at the end, so that any two such texts have word 5-gram Jaccard 196/198.
func template(i int) string {
	var words []string
	for w := 0; w < 200; w++ {
		words = append(words, fmt.Sprintf("boiler%d", w))
	}
	return strings.Join(words, " ") + fmt.Sprintf(" unique%d", i)
}

// TestBoilerplateBucket: 1,500 identical and 1,500 template documents fill
// buckets far over the cap of 1,000. Capped buckets link their members to
// their first member, so candidates and pairs grow linearly with the
// members, not quadratically; report.json counts and lists the capped
// buckets by their first member.
func TestBoilerplateBucket(t *testing.T) {
	const n = 1500
	base := readJSONL(t, "../testdata/articles_1000.jsonl")
	var docs []doc
	for i := 0; i < 100; i++ { // distinct articles around the boilerplate
		docs = append(docs, base[i])
	}
	for i := 0; i < n; i++ {
		docs = append(docs, doc{fmt.Sprintf("same%04d", i), "this page intentionally left blank " + base[999].Text})
	}
	for i := 0; i < n; i++ {
		docs = append(docs, doc{fmt.Sprintf("tmpl%04d", i), template(i)})
	}
	in := filepath.Join(t.TempDir(), "boilerplate.jsonl")
	writeJSONL(t, in, docs)
	// Without the exact pass, which would take the identical documents out
	// of the buckets (TestExactPassBoilerplate).
	out, rep := runDedup(t, []string{in}, &Options{SkipExactPass: true})

	bands := rep.Config.Bands
	if rep.Config.BucketCap != lsh.DefaultCap {
		t.Fatalf("bucket cap %d; want the default %d", rep.Config.BucketCap, lsh.DefaultCap)
	}
	// Every band of the identical documents is one bucket of n; most bands
	// of the template documents are too.
	if rep.Buckets.CappedBuckets < int64(bands) {
		t.Errorf("capped buckets %d; want at least %d (every band of the identical documents)", rep.Buckets.CappedBuckets, bands)
	}
	if rep.Buckets.CappedMembers < int64(bands*n) {
		t.Errorf("capped members %d; want at least %d", rep.Buckets.CappedMembers, bands*n)
	}
	// Linear: each capped bucket emits one pair per member; a full pairing
	// would emit n(n−1)/2 = 1,124,250 per bucket.
	linear := int64(2 * bands * n)
	if rep.Buckets.PairsEmitted > linear || rep.Counts.Candidates > linear {
		t.Errorf("pairs emitted %d, candidates %d; want at most %d (linear in the members)", rep.Buckets.PairsEmitted, rep.Counts.Candidates, linear)
	}
	// report.json lists capped buckets by the member the others were linked
	// to: a bucket of the identical documents names same0000.
	listed := false
	for _, lb := range readReport(t, out).Buckets.Largest {
		if lb.Size <= lsh.DefaultCap {
			continue
		}
		if lb.Size == n && lb.First == "same0000" {
			listed = true
		}
		if !strings.HasPrefix(lb.First, "same") && !strings.HasPrefix(lb.First, "tmpl") {
			t.Errorf("report.json lists a capped bucket of %d first %q; want a boilerplate document", lb.Size, lb.First)
		}
	}
	if !listed {
		t.Errorf("report.json largest buckets %+v; want one of size %d first same0000", rep.Buckets.Largest, n)
	}
	// The identical documents are linked to the first one: exactly the n−1
	// pairs (same0000, sameXXXX), and one cluster that keeps same0000.
	var same []string
	for _, p := range readPairs(t, filepath.Join(out, PairsFile)) {
		a, b, _ := strings.Cut(p, "\t")
		if strings.HasPrefix(a, "same") || strings.HasPrefix(b, "same") {
			same = append(same, p)
			if a != "same0000" {
				t.Errorf("pair %q: want every identical document linked to same0000", p)
			}
		}
	}
	if len(same) != n-1 {
		t.Errorf("%d pairs among the identical documents; want %d", len(same), n-1)
	}
	clusters := readClusters(t, out)
	bySize := map[string]ClusterLine{}
	for _, c := range clusters {
		bySize[c.Kept] = c
	}
	if c := bySize["same0000"]; c.Size != n {
		t.Errorf("cluster kept by same0000 has %d members; want %d", c.Size, n)
	}
	if c := bySize["tmpl0000"]; c.Size != n {
		t.Errorf("cluster kept by tmpl0000 has %d members; want %d", c.Size, n)
	}
	if rep.Counts.Removed != 2*(n-1) || rep.Counts.Kept != 100+2 {
		t.Errorf("removed %d, kept %d; want %d and %d", rep.Counts.Removed, rep.Counts.Kept, 2*(n-1), 102)
	}
}

func readClusters(t *testing.T, dir string) []ClusterLine {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ClustersFile))
	if err != nil {
		t.Fatal(err)
	}
	var cs []ClusterLine
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var c ClusterLine
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	return cs
}

// tsvRow is one parsed pairs.tsv line.
type tsvRow struct {
	a, b  string
	est   float64
	exact string // as written: six decimals, or "-"
}

func readPairRows(t *testing.T, dir string) []tsvRow {
	t.Helper()
	readPairs(t, filepath.Join(dir, PairsFile)) // four fields, idA < idB, sorted
	data, err := os.ReadFile(filepath.Join(dir, PairsFile))
	if err != nil {
		t.Fatal(err)
	}
	var rows []tsvRow
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		est, err := strconv.ParseFloat(f[2], 64)
		if err != nil || f[2] != FormatSim(est) {
			t.Fatalf("pairs.tsv line %q: estimate %q is not a six-decimal number", line, f[2])
		}
		rows = append(rows, tsvRow{f[0], f[1], est, f[3]})
	}
	return rows
}

// TestMultiProbe: with few long bands (8 × 8: 0.77 at J = 0.8), probing
// bands that differ in one row raises the expected recall and finds a
// superset of the pairs.
func TestMultiProbe(t *testing.T) {
	docs := nearDupCorpus(t, 300, 3, 5)
	in := filepath.Join(t.TempDir(), "in.jsonl")
	writeJSONL(t, in, docs)
	plain, repPlain := runDedup(t, []string{in}, &Options{Bands: lsh.Params{Bands: 8, Rows: 8}})
	probe, repProbe := runDedup(t, []string{in}, &Options{Bands: lsh.Params{Bands: 8, Rows: 8, Probe: 1}})
	if repProbe.Config.Probe != 1 || repPlain.Config.Probe != 0 {
		t.Fatalf("probe in report: %d and %d; want 0 and 1", repPlain.Config.Probe, repProbe.Config.Probe)
	}
	if !(repProbe.ExpectedRecall > repPlain.ExpectedRecall) {
		t.Errorf("expected recall with multi-probe %.4f; want more than %.4f without", repProbe.ExpectedRecall, repPlain.ExpectedRecall)
	}
	a := readPairs(t, filepath.Join(plain, PairsFile))
	b := readPairs(t, filepath.Join(probe, PairsFile))
	for _, p := range a {
		if _, found := slices.BinarySearch(b, p); !found {
			t.Errorf("pair %q found without multi-probe but not with it", p)
		}
	}
	if len(b) <= len(a) {
		t.Errorf("multi-probe found %d pairs; want more than the %d without", len(b), len(a))
	}
	if repProbe.Counts.Candidates <= repPlain.Counts.Candidates {
		t.Errorf("multi-probe candidates %d; want more than %d", repProbe.Counts.Candidates, repPlain.Counts.Candidates)
	}
	t.Logf("8×8: expected recall %.4f → %.4f with probe 1; pairs %d → %d; candidates %d → %d",
		repPlain.ExpectedRecall, repProbe.ExpectedRecall, len(a), len(b), repPlain.Counts.Candidates, repProbe.Counts.Candidates)
}

// TestVerifyModes: exact writes both similarities and keeps pairs with
// exact ≥ t; estimate writes "-" for the exact value and keeps estimates
// ≥ t; none writes every candidate, with "-".
func TestVerifyModes(t *testing.T) {
	docs := nearDupCorpus(t, 300, 3, 9)
	in := filepath.Join(t.TempDir(), "in.jsonl")
	writeJSONL(t, in, docs)
	const th = 0.8
	outs := map[Verify][]tsvRow{}
	reps := map[Verify]*Report{}
	for _, v := range []Verify{VerifyExact, VerifyEstimate, VerifyNone} {
		// Without the exact pass, which adds the pairs of copies to the
		// candidates verified (TestExactPass).
		out, rep := runDedup(t, []string{in}, &Options{Threshold: th, Verify: v, SkipExactPass: true})
		outs[v], reps[v] = readPairRows(t, out), rep
		if rep.Config.Verify != v.String() {
			t.Errorf("report verify %q; want %q", rep.Config.Verify, v)
		}
		if int64(len(outs[v])) != rep.Counts.VerifiedPairs {
			t.Errorf("%s: %d lines in pairs.tsv; report says %d verified pairs", v, len(outs[v]), rep.Counts.VerifiedPairs)
		}
		if got := rep.PairSim.Exact != nil; got != (v == VerifyExact) {
			t.Errorf("%s: exact histogram present = %v; want %v", v, got, v == VerifyExact)
		}
	}
	for _, r := range outs[VerifyExact] {
		x, err := strconv.ParseFloat(r.exact, 64)
		if err != nil || x < th {
			t.Errorf("exact: pair %s %s exact %q; want a number ≥ %v", r.a, r.b, r.exact, th)
		}
	}
	for _, r := range outs[VerifyEstimate] {
		if r.exact != "-" || r.est < th {
			t.Errorf("estimate: pair %s %s estimate %v exact %q; want estimate ≥ %v and exact -", r.a, r.b, r.est, r.exact, th)
		}
	}
	for _, r := range outs[VerifyNone] {
		if r.exact != "-" {
			t.Errorf("none: pair %s %s exact %q; want -", r.a, r.b, r.exact)
		}
	}
	c := reps[VerifyNone].Counts
	if c.VerifiedPairs != c.Candidates || c.VerifiedDocs != 0 {
		t.Errorf("none: %d pairs of %d candidates, %d documents re-shingled; want every candidate and none", c.VerifiedPairs, c.Candidates, c.VerifiedDocs)
	}
	// The candidates are the same in every mode; each mode keeps a subset.
	for _, v := range []Verify{VerifyExact, VerifyEstimate} {
		if reps[v].Counts.Candidates != c.Candidates {
			t.Errorf("%s: %d candidates; want %d as with none", v, reps[v].Counts.Candidates, c.Candidates)
		}
		if len(outs[v]) > len(outs[VerifyNone]) {
			t.Errorf("%s kept %d pairs, more than the %d candidates", v, len(outs[v]), len(outs[VerifyNone]))
		}
	}
	if len(outs[VerifyNone]) <= len(outs[VerifyExact]) {
		t.Errorf("none wrote %d pairs, exact %d: the corpus should have candidates below the threshold", len(outs[VerifyNone]), len(outs[VerifyExact]))
	}
	// Estimates of the same pair agree across modes.
	est := map[string]float64{}
	for _, r := range outs[VerifyNone] {
		est[r.a+"\t"+r.b] = r.est
	}
	for _, v := range []Verify{VerifyExact, VerifyEstimate} {
		for _, r := range outs[v] {
			if e, ok := est[r.a+"\t"+r.b]; !ok || e != r.est {
				t.Errorf("%s: pair %s %s estimate %v; none has %v (present %v)", v, r.a, r.b, r.est, e, ok)
			}
		}
	}
}

// TestKeepPolicies: in clusters of three near copies, first keeps the
// earliest, longest the longest text (earliest on ties), field:score the
// largest score (a missing value loses).
func TestKeepPolicies(t *testing.T) {
	base := readJSONL(t, "../testdata/articles_1000.jsonl")
	type rec struct {
		ID    string   `json:"id"`
		Text  string   `json:"text"`
		Score *float64 `json:"score,omitempty"`
	}
	num := func(x float64) *float64 { return &x }
	var recs []rec
	for i := 0; i < 5; i++ {
		txt := base[i].Text
		recs = append(recs,
			rec{fmt.Sprintf("a%d", i), txt, num(1)},
			rec{fmt.Sprintf("b%d", i), txt + " and a short tail", nil},
			rec{fmt.Sprintf("c%d", i), txt + " x", num(float64(10 + i))},
		)
	}
	in := filepath.Join(t.TempDir(), "in.jsonl")
	var lines []string
	for _, r := range recs {
		b, _ := json.Marshal(r)
		lines = append(lines, string(b))
	}
	os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644)

	for _, tc := range []struct {
		keep   string
		prefix string
	}{{"first", "a"}, {"longest", "b"}, {"field:score", "c"}} {
		t.Run(tc.keep, func(t *testing.T) {
			pol, err := cluster.ParsePolicy(tc.keep)
			if err != nil {
				t.Fatal(err)
			}
			out, rep := runDedup(t, []string{in}, &Options{Keep: pol})
			if rep.Config.Keep != tc.keep {
				t.Errorf("report keep %q; want %q", rep.Config.Keep, tc.keep)
			}
			cs := readClusters(t, out)
			if len(cs) != 5 {
				t.Fatalf("%d clusters; want 5", len(cs))
			}
			for i, c := range cs {
				if want := fmt.Sprintf("%s%d", tc.prefix, i); c.Kept != want || c.Size != 3 {
					t.Errorf("cluster %d keeps %s (size %d); want %s (size 3)", i, c.Kept, c.Size, want)
				}
			}
			// kept.jsonl holds the kept records untouched, in input order.
			data, _ := os.ReadFile(filepath.Join(out, KeptFile))
			var want []string
			for i := range recs {
				if strings.HasPrefix(recs[i].ID, tc.prefix) {
					want = append(want, lines[i])
				}
			}
			if got := strings.Split(strings.TrimSpace(string(data)), "\n"); !slices.Equal(got, want) {
				t.Errorf("kept.jsonl:\ngot  %q\nwant %q", got, want)
			}
		})
	}
}
