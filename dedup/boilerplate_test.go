package dedup

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/internal/boilerplate"
	"github.com/neardup/neardup/internal/sitetemplate"
	"github.com/neardup/neardup/shingle"
)

// truthPairs reads the labelled pairs of the bundled articles, each as
// "idA\tidB" with idA < idB.
func truthPairs(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("../testdata/articles_1000.truth")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		a, b, ok := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		if !ok {
			continue
		}
		out = append(out, min(a, b)+"\t"+max(a, b))
	}
	slices.Sort(out)
	return out
}

// TestSiteTemplateBoilerplate is the case boilerplate removal is for: the
// bundled articles, each wrapped in the same 600-word site template. At
// t = 0.5 the template alone makes any two pages near duplicates, and
// without boilerplate removal almost every page merges; with --boilerplate
// auto the template's lines are found and dropped, and the run finds
// exactly the 10 labelled pairs, each with the exact Jaccard similarity of
// the unwrapped articles (pairs.tsv is byte for byte that of the articles
// alone).
func TestSiteTemplateBoilerplate(t *testing.T) {
	arts := readJSONL(t, "../testdata/articles_1000.jsonl")
	var pages []doc
	for _, a := range arts {
		pages = append(pages, doc{a.ID, sitetemplate.Wrap(a.Text)})
	}
	dir := t.TempDir()
	wrapped := filepath.Join(dir, "site.jsonl")
	writeJSONL(t, wrapped, pages)

	// Without boilerplate removal: one giant cluster.
	_, rep := runDedup(t, []string{wrapped}, &Options{Threshold: 0.5})
	t.Logf("without boilerplate removal: %d candidates, %d verified pairs, %d clusters, %d of 1000 removed",
		rep.Counts.Candidates, rep.Counts.VerifiedPairs, rep.Counts.Clusters, rep.Counts.Removed)
	if rep.Counts.Removed < 950 {
		t.Errorf("without boilerplate removal %d of 1000 pages removed; want almost all (the template alone is J > 0.5)", rep.Counts.Removed)
	}
	if j := templateJaccard(t, arts[0].Text, arts[1].Text); j < 0.5 {
		t.Fatalf("two unrelated pages have J = %.3f; the template should make it > 0.5", j)
	}

	// With it: exactly the labelled pairs, as on the articles alone.
	outAuto, rep := runDedup(t, []string{wrapped}, &Options{Threshold: 0.5, Boilerplate: BoilerplateAuto})
	outPlain, _ := runDedup(t, []string{"../testdata/articles_1000.jsonl"}, &Options{Threshold: 0.5})
	if got := readPairs(t, filepath.Join(outAuto, PairsFile)); !slices.Equal(got, truthPairs(t)) {
		t.Errorf("with --boilerplate auto: pairs %q; want the 10 labelled pairs", got)
	}
	gotTSV, _ := os.ReadFile(filepath.Join(outAuto, PairsFile))
	wantTSV, _ := os.ReadFile(filepath.Join(outPlain, PairsFile))
	if string(gotTSV) != string(wantTSV) {
		t.Errorf("pairs.tsv of the wrapped pages with boilerplate dropped:\n%s\nof the articles alone:\n%s", gotTSV, wantTSV)
	}
	b := rep.Boilerplate
	t.Logf("with --boilerplate auto: %d verified pairs; %s", rep.Counts.VerifiedPairs, b.Reason)
	if b == nil || !b.Auto || b.MinDocs != 512 || b.Lines != len(templateHashes()) || len(b.Top) != boilerplate.DefaultTop {
		t.Fatalf("report boilerplate %+v; want auto, N 512, the %d template lines", b, len(templateHashes()))
	}
	if !strings.Contains(rep.Config.Spec, "/boilerplate:1:") {
		t.Errorf("report spec %q does not name the boilerplate set", rep.Config.Spec)
	}
	// The lines file beside the outputs reads back to the same set.
	res, err := ReadBoilerplateLines(filepath.Join(outAuto, boilerplate.FileName), shingle.Prose)
	if err != nil || !slices.Equal(res.Set.Lines(), templateHashes()) {
		t.Fatalf("boilerplate.tsv: %v, %d lines", err, res.Set.Len())
	}
	// Under the spec with the set, each labelled pair's exact Jaccard
	// similarity is that of the unwrapped articles, to the last bit.
	withSet := shingle.Prose
	withSet.Boilerplate = res.Set
	texts := map[string]string{}
	for _, a := range arts {
		texts[a.ID] = a.Text
	}
	set := func(sp shingle.Spec, text string) []uint64 {
		f := shingle.MustNew(sp).AppendFeatures(nil, []byte(text))
		slices.Sort(f)
		return slices.Compact(f)
	}
	for _, p := range truthPairs(t) {
		a, b, _ := strings.Cut(p, "\t")
		got := eval.Jaccard(set(withSet, sitetemplate.Wrap(texts[a])), set(withSet, sitetemplate.Wrap(texts[b])))
		want := eval.Jaccard(set(shingle.Prose, texts[a]), set(shingle.Prose, texts[b]))
		if got != want {
			t.Errorf("pair %s %s: exact Jaccard %v of the wrapped pages with the set dropped; want %v, the articles'", a, b, got, want)
		}
	}
	// And a run given that file finds the same pairs.
	outLines, rep2 := runDedup(t, []string{wrapped}, &Options{Threshold: 0.5, BoilerplateLines: filepath.Join(outAuto, boilerplate.FileName)})
	if got, _ := os.ReadFile(filepath.Join(outLines, PairsFile)); string(got) != string(wantTSV) || rep2.Config.Spec != rep.Config.Spec {
		t.Errorf("with --boilerplate-lines: pairs\n%s\nspec %s; want the same as auto", got, rep2.Config.Spec)
	}
	html, _ := os.ReadFile(filepath.Join(outAuto, HTMLFile))
	if !strings.Contains(string(html), `id="boilerplate"`) || !strings.Contains(string(html), "The Daily Ledger") {
		t.Error("report.html does not show the boilerplate lines")
	}
}

// templateJaccard is the exact Jaccard similarity of two texts wrapped in
// the template, under the prose spec.
func templateJaccard(t *testing.T, a, b string) float64 {
	sh := shingle.MustNew(shingle.Prose)
	set := func(s string) []uint64 {
		f := sh.AppendFeatures(nil, []byte(sitetemplate.Wrap(s)))
		slices.Sort(f)
		return slices.Compact(f)
	}
	return eval.Jaccard(set(a), set(b))
}

// templateHashes returns the line hashes of the template under prose.
func templateHashes() []uint64 {
	sh := shingle.MustNew(shingle.Prose)
	var hs []uint64
	for _, l := range sitetemplate.Lines() {
		for _, ln := range sh.AppendLines(nil, []byte(l)) {
			hs = append(hs, ln.Hash)
		}
	}
	slices.Sort(hs)
	return slices.Compact(hs)
}
