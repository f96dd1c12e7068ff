package tune

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/neardup/neardup/plan"
)

// String renders the result as neardup tune prints it: a line on the
// signatures, one on the truth, the targets, a table with one row per
// banding (S-curve at the threshold, measured recall beside the S-curve's
// prediction, precision before verification, candidates, band-index
// memory, whether it meets the targets), the recall per similarity band of
// every banding, and the notes.
func (r *Result) String() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	sigs := r.Signatures
	if sigs == "" {
		sigs = "signatures"
	}
	w("signatures %s: %d documents (%d without features), k = %d, %d-bit slots, params %s, spec %s",
		sigs, r.Documents, r.Empty, r.K, r.Bits, r.Params, r.Spec)
	truth := "truth"
	if r.Truth != "" {
		truth += " " + r.Truth
	}
	switch {
	case r.TruthComplete:
		truth += fmt.Sprintf(": complete (every pair at J ≥ %v)", r.TruthThreshold)
	case r.TruthThreshold > 0:
		truth += fmt.Sprintf(": pairs at J ≥ %v only", r.TruthThreshold)
	default:
		truth += ": a labelled sample"
	}
	w("%s; %d pairs count at J ≥ %v, %d with their similarity, %d with an id not in the signatures",
		truth, r.TruthPairs, r.Threshold, r.TruthKnownJ, r.TruthMissing)
	var targets []string
	if r.Recall > 0 {
		targets = append(targets, fmt.Sprintf("recall ≥ %v", r.Recall))
	}
	if r.Precision > 0 {
		targets = append(targets, fmt.Sprintf("precision ≥ %v before verification", r.Precision))
	}
	if len(targets) > 0 {
		w("targets: %s; \"yes\" marks the bandings that meet them", strings.Join(targets, ", "))
	}
	w("bucket cap %d documents; candidates are the distinct pairs sharing a band key, before verification", r.BucketCap)
	w("")

	head := []string{"banding", "keys/doc", fmt.Sprintf("P(%v)", r.Threshold), "recall", "S-curve", "precision",
		"cand/doc", "candidates", "capped", "dedup mem", "index mem"}
	if len(targets) > 0 {
		head = append(head, "meets")
	}
	rows := [][]string{head}
	for _, x := range r.Bandings {
		pred := "-"
		if x.Pairs.PredictedRecall != nil {
			pred = fmt.Sprintf("%.4f", *x.Pairs.PredictedRecall)
		}
		row := []string{x.Label, fmt.Sprint(x.KeysPerDoc), fmt.Sprintf("%.4f", x.RecallAtThreshold),
			fmt.Sprintf("%.4f", x.Pairs.Recall), pred, fmt.Sprintf("%.4f", x.Pairs.Precision),
			fmt.Sprintf("%.3f", x.CandidatesPerDoc), fmt.Sprint(x.Candidates), fmt.Sprint(x.CappedBuckets),
			plan.FormatBytes(x.DedupBytes), plan.FormatBytes(x.IndexBytes)}
		if len(targets) > 0 {
			row = append(row, yesNo(x.Meets))
		}
		rows = append(rows, row)
	}
	table(&b, rows)
	w("  P(t): the S-curve at the threshold; recall: the truth pairs found among the candidates; S-curve: its")
	w("  prediction over the truth pairs with a similarity; precision: truth pairs among the candidates")
	if !r.TruthComplete {
		w("  (a lower bound: the truth does not list every pair at J ≥ %v)", r.Threshold)
	}
	w("  memory: postings × %d B in dedup's sorted runs, × %d B in a packed index", DedupPostingBytes, IndexPostingBytes)

	if len(r.Bandings) > 0 && len(r.Bandings[0].Pairs.Bands) > 0 {
		w("")
		w("recall by similarity band: measured (S-curve prediction)")
		head := []string{"band", "truth"}
		for _, x := range r.Bandings {
			head = append(head, x.Label)
		}
		rows := [][]string{head}
		for i, band := range r.Bandings[0].Pairs.Bands {
			row := []string{fmt.Sprintf("%.3f–%.3f", band.Lo, band.Hi), fmt.Sprint(band.Truth)}
			for _, x := range r.Bandings {
				br := x.Pairs.Bands[i]
				cell := "-"
				if br.Truth > 0 {
					cell = fmt.Sprintf("%.4f", br.Recall)
					if br.Predicted != nil {
						cell += fmt.Sprintf(" (%.4f)", *br.Predicted)
					}
				}
				row = append(row, cell)
			}
			rows = append(rows, row)
		}
		row := []string{"all", fmt.Sprint(r.TruthKnownJ)}
		for _, x := range r.Bandings {
			cell := "-"
			if x.Pairs.PredictedRecall != nil {
				cell = fmt.Sprintf("%.4f (%.4f)", knownRecall(x), *x.Pairs.PredictedRecall)
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
		table(&b, rows)
	}
	if len(r.Notes) > 0 {
		w("")
		for _, n := range r.Notes {
			w("note: %s", n)
		}
	}
	return b.String()
}

// knownRecall is the recall over the truth pairs with a similarity (those
// in the bands), which the S-curve's overall prediction is set beside.
func knownRecall(x Banding) float64 {
	var truth, found int64
	for _, b := range x.Pairs.Bands {
		truth += b.Truth
		found += b.Found
	}
	if truth == 0 {
		return 1
	}
	return float64(found) / float64(truth)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// table writes rows as aligned columns, two spaces apart, indented by two:
// the first column left-aligned, the others right-aligned.
func table(b *strings.Builder, rows [][]string) {
	var width []int
	for _, row := range rows {
		for i, c := range row {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, row := range rows {
		var line strings.Builder
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i == 0 {
				line.WriteString("  " + c + pad)
			} else {
				line.WriteString("  " + pad + c)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteString("\n")
	}
}
