package server

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/neardup/neardup/internal/drift"
	"github.com/neardup/neardup/shingle"
)

// TestDriftHistograms checks, request by request, what the drift histograms
// hold: one best-match similarity per checked document (checks,
// check-and-inserts, batch lines; 0 for a new one, the answer's best
// similarity for a duplicate; nothing for an error), and the bytes and
// features (counted independently with the index's shingler) of every
// signed document.
func TestDriftHistograms(t *testing.T) {
	idx := openIndex(t, "pebble", nil)
	ts := newTestServer(t, idx, nil)
	sh, err := shingle.New(idx.Config().Spec)
	if err != nil {
		t.Fatal(err)
	}
	g := newTextGen(3)
	base, other, third := g.text(80), g.text(50), g.text(20)
	near := g.variant(base, 2)

	var wantBest []float64 // per checked document
	var signedBytes, signedFeatures float64
	var signed int
	sign := func(text string) {
		signed++
		signedBytes += float64(len(text))
		signedFeatures += float64(len(sh.AppendFeatures(nil, []byte(text))))
	}
	answer := func(r CheckResult) {
		best := 0.0
		if len(r.Duplicates) > 0 {
			best = r.Duplicates[0].Similarity
		}
		wantBest = append(wantBest, best)
	}
	for _, c := range []struct {
		path string
		doc  map[string]any
	}{
		{"/v1/documents", map[string]any{"id": "a", "text": base}},
		{"/v1/documents", map[string]any{"id": "b", "text": base}},
		{"/v1/check", map[string]any{"text": near}},
		{"/v1/check", map[string]any{"text": other}},
	} {
		r := ts.post(c.path, c.doc)
		var res CheckResult
		r.decode(t, &res)
		sign(c.doc["text"].(string))
		answer(res)
	}
	// A text without features is signed, then refused: bytes and features
	// (0) observed, no best match.
	if r := ts.post("/v1/check", map[string]any{"text": "!!! ???"}); r.status != http.StatusBadRequest {
		t.Fatalf("check of a featureless text: %d %s", r.status, r.body)
	}
	sign("!!! ???")
	// A batch: two documents and a line that fails to parse (not signed).
	batch := `{"id": "c", "text": "` + near + `"}
{"id": "d", "text": "` + third + `"}
{"id": "e", "text": ""}
`
	r := ts.call(http.MethodPost, "/v1/documents:batch", typeNDJSON, []byte(batch))
	if r.status != http.StatusOK {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}
	lines := strings.Split(strings.TrimSpace(string(r.body)), "\n")
	for i, text := range []string{near, third} {
		var res CheckResult
		response{body: []byte(lines[i])}.decode(t, &res)
		sign(text)
		answer(res)
	}
	if len(lines) != 3 || !strings.Contains(lines[2], `"error"`) {
		t.Fatalf("batch answered %q; want two results and an error", lines)
	}

	best := histogramOf(t, ts.s.Registry(), "neardup_check_best_similarity")
	var sum float64
	zeros := 0
	for _, b := range wantBest {
		sum += b
		if b == 0 {
			zeros++
		}
	}
	if zeros == 0 || zeros == len(wantBest) {
		t.Fatalf("best similarities %v; the test needs new and duplicate answers", wantBest)
	}
	if best.GetSampleCount() != uint64(len(wantBest)) || best.GetSampleSum() != sum ||
		best.GetBucket()[0].GetUpperBound() != 0 || best.GetBucket()[0].GetCumulativeCount() != uint64(zeros) {
		t.Errorf("neardup_check_best_similarity: count %d, sum %v, bucket[0] ≤%v: %d; want %d, %v, ≤0: %d",
			best.GetSampleCount(), best.GetSampleSum(), best.GetBucket()[0].GetUpperBound(), best.GetBucket()[0].GetCumulativeCount(),
			len(wantBest), sum, zeros)
	}
	for _, c := range []struct {
		name  string
		count int
		sum   float64
	}{
		{"neardup_document_bytes", signed, signedBytes},
		{"neardup_document_features", signed, signedFeatures},
	} {
		h := histogramOf(t, ts.s.Registry(), c.name)
		if h.GetSampleCount() != uint64(c.count) || h.GetSampleSum() != c.sum {
			t.Errorf("%s: count %d, sum %v; want %d, %v", c.name, h.GetSampleCount(), h.GetSampleSum(), c.count, c.sum)
		}
	}
}

// TestDriftBucketsAreTheReportBins: the drift histograms' buckets are
// internal/drift's bounds, bound for bound, so that a scrape bins as
// report.json's drift section does.
func TestDriftBucketsAreTheReportBins(t *testing.T) {
	reg := prometheus.NewRegistry()
	newDriftMetrics(reg)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float64{
		"neardup_check_best_similarity": drift.SimilarityBounds,
		"neardup_document_features":     drift.FeatureBounds,
		"neardup_document_bytes":        drift.ByteBounds,
	}
	for _, mf := range mfs {
		w, ok := want[mf.GetName()]
		if !ok {
			continue
		}
		delete(want, mf.GetName())
		var got []float64
		for _, b := range mf.GetMetric()[0].GetHistogram().GetBucket() {
			got = append(got, b.GetUpperBound())
		}
		if !slices.Equal(got, w) {
			t.Errorf("%s buckets %v; want drift's bounds %v", mf.GetName(), got, w)
		}
	}
	for name := range want {
		t.Errorf("%s not registered", name)
	}
}
