package dedup

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/internal/htmlreport"
)

// Sample clusters shown in report.html, and how their texts are compared.
const (
	htmlSamples      = 4
	htmlContextWords = 12
	htmlMaxWords     = 3000
)

// writeHTML writes report.html: the report's charts and tables and a few
// sample clusters, whose texts it reads back from the inputs (stopping at the
// last one needed).
func (r *run) writeHTML(ctx context.Context, path string) error {
	rep := r.rep
	c := rep.Counts
	d := &htmlreport.Data{
		Title:  "neardup dedup report",
		Inputs: rep.Inputs,
		Summary: []htmlreport.Row{
			row("documents", group(c.Documents)),
			row("candidate pairs", group(c.Candidates)),
			row("verified pairs", group(c.VerifiedPairs)),
			row("clusters", group(c.Clusters)),
			row("removed", group(c.Removed)),
			row("kept", group(c.Kept)),
			row("recall at t (S-curve)", strconv.FormatFloat(rep.ExpectedRecall, 'f', 4, 64)),
		},
		Config: []htmlreport.Row{
			row("shingle spec", rep.Config.Spec),
			row("signature params", rep.Config.Params),
			row("threshold", strconv.FormatFloat(rep.Config.Threshold, 'g', -1, 64)),
			row("bands × rows", fmt.Sprintf("%d × %d (probe %d); recall target %v", rep.Config.Bands, rep.Config.Rows, rep.Config.Probe, rep.Config.RecallTarget)),
			row("verify / cluster / keep", rep.Config.Verify+" / "+rep.Config.Cluster+" / "+rep.Config.Keep),
			row("workers / memory budget", fmt.Sprintf("%d / %.1f MiB", rep.Config.Workers, float64(rep.Config.MemoryBytes)/(1<<20))),
			row("empty / bad documents", group(c.Empty)+" / "+group(c.Bad)),
			row("exact duplicates (not signed)", exactRow(rep)),
			row("features / empty bin rate", group(rep.Signatures.Features)+" / "+strconv.FormatFloat(rep.Signatures.EmptyBinRate, 'f', 4, 64)),
		},
		Threshold:      r.job.Threshold,
		Bands:          r.job.Sketch.Bands.Bands,
		Rows:           r.job.Sketch.Bands.Rows,
		Curve:          eval.SCurve(r.job.Sketch.Bands, r.job.Sketch.Params.Bits),
		ExpectedRecall: rep.ExpectedRecall,
		PairLower:      rep.PairSim.Lower,
		PairEstimate:   rep.PairSim.Estimate,
		PairExact:      rep.PairSim.Exact,
		BucketCap:      r.job.BucketCap,
		WallSeconds:    rep.WallSeconds,
		PeakRSSBytes:   rep.PeakRSSBytes,
	}
	if sc := rep.Config.SimHash; sc != nil {
		// No bands: the candidate test is the Hamming distance, and the
		// curve the unit-weight model's P(distance ≤ k).
		d.Config[3] = row("SimHash", fmt.Sprintf("%s weights, Hamming distance ≤ %d, %d blocks (%d tables)", sc.Weight, sc.Hamming, sc.Blocks, sc.Tables))
		d.Summary[6] = row("recall at t (model)", strconv.FormatFloat(rep.ExpectedRecall, 'f', 4, 64))
		d.Curve = r.job.Sketch.CandidateProbability
		d.CurveLabel = fmt.Sprintf("SimHash, distance ≤ %d: the unit-weight model", sc.Hamming)
	}
	if c.Skipped > 0 {
		d.Config = append(d.Config, row("WARC records not documents", group(c.Skipped)))
	}
	d.Boilerplate = boilerplateView(rep)
	if c.Documents > 0 {
		d.Summary = append(d.Summary, htmlreport.Row{Name: "removed share", Value: strconv.FormatFloat(100*float64(c.Removed)/float64(c.Documents), 'f', 2, 64) + "%"})
	}
	var sizes []int
	var counts []int64
	for _, s := range rep.Sizes {
		sizes, counts = append(sizes, s.Size), append(counts, int64(s.Count))
	}
	d.ClusterSizes = htmlreport.SizeBins(sizes, counts)
	b := rep.Buckets
	d.BucketStats = []htmlreport.Row{
		row("band-key entries", group(b.Entries)), row("buckets", group(b.Buckets)), row("shared buckets", group(b.SharedBuckets)),
		row("pairs emitted", group(b.PairsEmitted)), row("capped buckets", group(b.CappedBuckets)), row("members of capped buckets", group(b.CappedMembers)),
	}
	// Top is every shared bucket's largest; a report without it (made by
	// another driver) lists only the capped ones.
	top := b.Top
	if len(top) == 0 {
		top = b.Largest
	}
	for _, lb := range top {
		d.Largest = append(d.Largest, htmlreport.Bucket{Size: lb.Size, First: lb.First, Key: lb.Key, Capped: lb.Size > r.job.BucketCap})
	}
	for _, t := range rep.Timings {
		d.Timings = append(d.Timings, htmlreport.Timing{Stage: t.Stage, Seconds: t.Seconds})
	}
	if g := rep.Golden; g != nil {
		d.Golden = goldenView(g)
	}
	if !r.sampled { // sampled in the write stage
		var err error
		if r.samples, err = r.sampleClusters(ctx); err != nil {
			return err
		}
		r.sampled = true
	}
	d.Samples = r.samples
	d.SamplesNote = "The largest cluster and the clusters holding the least similar verified pairs; for each, its least similar pair."
	return r.out.write(path, func(w *bufio.Writer) error { return htmlreport.Write(w, d) })
}

func row(name, value string) htmlreport.Row { return htmlreport.Row{Name: name, Value: value} }

// exactRow is the configuration row of the exact-duplicate pass.
func exactRow(rep *Report) string {
	if !rep.Config.ExactPass {
		return "pass off"
	}
	return group(rep.Counts.ExactDuplicates)
}

// boilerplateView is report.html's section on the boilerplate lines the run
// dropped, or nil.
func boilerplateView(rep *Report) *htmlreport.Boilerplate {
	b := rep.Boilerplate
	if b == nil {
		return nil
	}
	n := "—"
	if b.MinDocs > 0 {
		n = strconv.Itoa(b.MinDocs)
	}
	v := &htmlreport.Boilerplate{Reason: b.Reason, Summary: []htmlreport.Row{
		row("N: a line in at least N documents is boilerplate", n),
		row("boilerplate lines", group(int64(b.Lines))),
		row("(document, line) pairs dropped", group(b.Dropped)),
		row("distinct lines / documents counted", group(b.Distinct)+" / "+group(b.Documents)),
	}}
	for _, l := range b.Top {
		v.Lines = append(v.Lines, htmlreport.BoilerplateLine{Docs: l.Docs, Hash: l.Hash, Text: l.Text})
	}
	return v
}

func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

func goldenView(g *eval.Score) *htmlreport.Golden {
	p := g.Pairs
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }
	v := &htmlreport.Golden{Truth: g.Truth, Recall: p.Recall}
	v.Metrics = []htmlreport.Row{
		row("truth pairs (J ≥ t)", group(p.Truth)), row("predicted pairs", group(p.Predicted)),
		row("true / false positives", group(p.TruePositives)+" / "+group(p.FalsePositives)),
		row("false negatives", group(p.FalseNegatives)),
		row("precision", f(p.Precision)), row("recall", f(p.Recall)), row("F1", f(p.F1)),
	}
	if p.PredictedRecall != nil {
		v.HasPrediction, v.PredictedRecall = true, *p.PredictedRecall
		v.Metrics = append(v.Metrics, htmlreport.Row{Name: "recall the S-curve predicts", Value: f(*p.PredictedRecall)})
	}
	if c := g.Clusters; c != nil {
		v.HasClusters = true
		v.Metrics = append(v.Metrics,
			htmlreport.Row{Name: "adjusted Rand index", Value: f(c.ARI)},
			htmlreport.Row{Name: "cluster pair precision / recall / F1", Value: f(c.PairPrecision) + " / " + f(c.PairRecall) + " / " + f(c.PairF1)},
		)
	}
	for _, b := range p.Bands {
		bs := htmlreport.BandScore{Lo: b.Lo, Hi: b.Hi, Truth: b.Truth, Found: b.Found, Recall: b.Recall,
			MeanSimilarity: b.MeanJ, HasMeasurements: b.Truth > 0}
		if b.Predicted != nil {
			bs.HasPrediction, bs.Predicted = true, *b.Predicted
		}
		v.Bands = append(v.Bands, bs)
	}
	return v
}

// sampleClusters picks up to htmlSamples clusters — the largest, then those
// whose least similar verified pair is least similar — and compares the two
// documents of that pair.
func (r *run) sampleClusters(ctx context.Context) ([]htmlreport.Sample, error) {
	cl := r.result.Clusters
	if len(cl) == 0 {
		return nil, nil
	}
	// The least similar verified pair inside each cluster, the first in
	// (a, b) order of those as weak: one pass over the pairs.
	weakest := make([]edge, len(cl))
	has := make([]bool, len(cl))
	if err := r.eachEdge(func(e edge) error {
		ca := r.result.ClusterOf(e.a)
		if ca < 0 || ca != r.result.ClusterOf(e.b) {
			return nil
		}
		if !has[ca] || e.Sim() < weakest[ca].Sim() {
			weakest[ca], has[ca] = e, true
		}
		return nil
	}); err != nil {
		return nil, err
	}
	var pick []int
	largest := -1
	for i, c := range cl {
		if has[i] && (largest < 0 || len(c.Members) > len(cl[largest].Members)) {
			largest = i
		}
	}
	if largest < 0 {
		return nil, nil
	}
	pick = append(pick, largest)
	pick = appendWeakest(pick, weakest, has, largest, htmlSamples-1)

	// Texts by input record: a reference document's (numbered below
	// r.ref.m) is not read again.
	m := int64(r.ref.m)
	want := map[int64][]byte{}
	for _, ci := range pick {
		e := weakest[ci]
		for _, d := range []int64{int64(e.a), int64(e.b)} {
			if d >= m {
				want[d-m] = nil
			}
		}
	}
	if err := r.readTexts(ctx, want); err != nil {
		return nil, err
	}
	var out []htmlreport.Sample
	for _, ci := range pick {
		e := weakest[ci]
		out = append(out, htmlreport.Sample{
			Cluster: ci, Size: len(cl[ci].Members), Kept: string(r.docs.id(cl[ci].Kept)),
			A: string(r.docs.id(e.a)), B: string(r.docs.id(e.b)), Similarity: e.Sim(),
			Comparison: htmlreport.Compare(string(want[int64(e.a)-m]), string(want[int64(e.b)-m]), htmlContextWords, htmlMaxWords),
		})
	}
	return out, nil
}

// appendWeakest appends to dst the k clusters (other than skip, and with
// has set) whose weakest pair is least similar, in the order of a stable
// sort by that similarity (ties by cluster number). It selects them in one
// pass, keeping the k best in order, rather than sorting every cluster: at
// 5M short documents the sort of the 0.4M clusters was 0.09 CPU-s of the
// write stage, for the three it keeps.
func appendWeakest(dst []int, weakest []edge, has []bool, skip, k int) []int {
	if k <= 0 {
		return dst
	}
	// less is the sort's order: by similarity, then by number (the
	// stable sort's tie-break, as clusters are visited by number).
	less := func(x, y int) bool {
		sx, sy := weakest[x].Sim(), weakest[y].Sim()
		switch {
		case sx < sy:
			return true
		case sx > sy:
			return false
		}
		return x < y
	}
	best := make([]int, 0, k)
	for i := range weakest {
		if !has[i] || i == skip {
			continue
		}
		if len(best) == k && !less(i, best[k-1]) {
			continue
		}
		j := len(best)
		if j < k {
			best = append(best, i)
		}
		for j > 0 && less(i, best[j-1]) {
			if j < k {
				best[j] = best[j-1]
			}
			j--
		}
		best[j] = i
	}
	return append(dst, best...)
}

// readTexts fills want[i] with the text of record i, for every key of want,
// reading the inputs again up to the last record needed.
func (r *run) readTexts(ctx context.Context, want map[int64][]byte) error {
	last := int64(math.MinInt64)
	for i := range want {
		last = max(last, i)
	}
	reader, err := corpus.NewReader(r.inputs, &r.opts.Corpus)
	if err != nil {
		return err
	}
	defer reader.Close()
	parser, err := corpus.NewParser(&r.opts.Corpus)
	if err != nil {
		return err
	}
	var b corpus.Batch
	var doc corpus.Document
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := reader.Next(&b)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		for i := range b.Records {
			rec := &b.Records[i]
			if _, ok := want[rec.Index]; !ok {
				continue
			}
			if err := parser.Parse(rec, &doc); err != nil {
				return err
			}
			want[rec.Index] = append([]byte(nil), doc.Text...)
		}
		if n := len(b.Records); n > 0 && b.Records[n-1].Index >= last {
			return nil
		}
	}
}
