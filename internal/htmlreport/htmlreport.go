// Package htmlreport renders a deduplication run as one self-contained HTML
// page: inline SVG charts (the S-curve with the chosen bands, pair
// similarities estimated and exact, cluster sizes, stage timings), tables of
// counts, buckets and golden-set scores, and sample clusters with the words
// two members do not share highlighted. The page loads nothing from the
// network and runs no script. Output is deterministic for its Data.
package htmlreport

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strconv"
)

//go:embed report.html.tmpl
var pageTemplate string

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"group": groupInt,
	"pct":   func(x float64) string { return strconv.FormatFloat(100*x, 'f', 2, 64) + "%" },
	"f4":    func(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) },
	"f2":    func(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) },
	"bytes": formatBytes,
	"plural": func(n int, one, many string) string {
		if n == 1 {
			return one
		}
		return many
	},
}).Parse(pageTemplate))

// Row is one line of a two-column table.
type Row struct{ Name, Value string }

// Bucket is one of the largest LSH buckets: its size in documents, its first
// member's id and its key; Capped when it was over the cap (its members
// linked to the first rather than all paired).
type Bucket struct {
	Size   int
	First  string
	Key    string
	Capped bool
}

// BandScore is the measured and predicted recall of one similarity band.
type BandScore struct {
	Lo, Hi          float64
	Truth, Found    int64
	Recall          float64
	Predicted       float64
	HasPrediction   bool
	MeanSimilarity  float64
	HasMeasurements bool
}

// Golden is a run's score against a labelled truth file.
type Golden struct {
	Truth                      string
	Metrics                    []Row
	Bands                      []BandScore
	PredictedRecall, Recall    float64
	HasPrediction, HasClusters bool
}

// Sample is one sample cluster: two of its members compared.
type Sample struct {
	Cluster, Size int
	Kept          string
	A, B          string // the compared members' ids
	Similarity    float64
	Comparison    Comparison
}

// Data is everything the page shows. Zero fields are left out.
type Data struct {
	Title  string
	Inputs []string
	// Summary and Config are shown as tables.
	Summary, Config []Row
	// Threshold, Bands and Rows define the S-curve; Curve gives P(J) (slot
	// width included); ExpectedRecall is P(Threshold). CurveLabel, when
	// set, names the curve instead of the bands and rows (a sketch without
	// bands).
	Threshold      float64
	Bands, Rows    int
	Curve          func(j float64) float64
	CurveLabel     string
	ExpectedRecall float64
	// PairLower, PairEstimate and PairExact are the pair-similarity
	// histogram (PairExact nil without exact verification).
	PairLower               []float64
	PairEstimate, PairExact []int64
	// ClusterSizes are (size, count) bars.
	ClusterSizes []SizeBin
	// BucketStats is the bucket counts; Largest the largest shared
	// buckets, capped or not, by size descending; BucketCap the cap.
	BucketStats []Row
	Largest     []Bucket
	BucketCap   int
	Timings     []Timing
	Golden      *Golden
	// Boilerplate, when not nil, shows the lines the run dropped.
	Boilerplate   *Boilerplate
	Samples       []Sample
	WallSeconds   float64
	PeakRSSBytes  int64
	SamplesNote   string
	MeasuredNotes string
}

// Boilerplate is the section on boilerplate lines: why N was chosen, a
// few counts, and the most frequent lines.
type Boilerplate struct {
	Reason  string
	Summary []Row
	Lines   []BoilerplateLine
}

// BoilerplateLine is one dropped line and the number of documents it is in.
type BoilerplateLine struct {
	Docs int64
	Hash string
	Text string
}

// AnyCapped reports whether a bucket of Largest was over the cap.
func (d *Data) AnyCapped() bool {
	for _, b := range d.Largest {
		if b.Capped {
			return true
		}
	}
	return false
}

// view is what the template sees: Data plus the rendered charts.
type view struct {
	*Data
	SCurve, PairHist, Sizes, TimingChart template.HTML
}

// Write renders d as a self-contained HTML page to w.
func Write(w io.Writer, d *Data) error {
	v := view{Data: d}
	if d.Curve != nil {
		var pts []Point
		if d.Golden != nil {
			for _, b := range d.Golden.Bands {
				if b.Truth > 0 && b.HasMeasurements {
					pts = append(pts, Point{J: b.MeanSimilarity, Recall: b.Recall,
						Label: fmt.Sprintf("J %.2f–%.2f: %d of %d found", b.Lo, b.Hi, b.Found, b.Truth)})
				}
			}
		}
		label := fmt.Sprintf("b = %d bands × r = %d rows", d.Bands, d.Rows)
		if d.CurveLabel != "" {
			label = d.CurveLabel
		}
		v.SCurve = sCurveSVG(d.Curve, d.Threshold, label, pts)
	}
	if len(d.PairLower) > 0 {
		v.PairHist = histogramSVG(d.PairLower, d.PairEstimate, d.PairExact, d.Threshold)
	}
	if len(d.ClusterSizes) > 0 {
		v.Sizes = barsSVG("Clusters by size (log scale)", d.ClusterSizes, "cluster size (documents)", "clusters")
	}
	if len(d.Timings) > 0 {
		v.TimingChart = timingsSVG(d.Timings)
	}
	return page.Execute(w, v)
}

// SizeBins turns (size, count) pairs, ascending by size, into at most 30
// bars: one per size while there are few, else sizes grouped in powers of
// two.
func SizeBins(sizes []int, counts []int64) []SizeBin {
	if len(sizes) <= 30 {
		out := make([]SizeBin, len(sizes))
		for i := range sizes {
			out[i] = SizeBin{strconv.Itoa(sizes[i]), counts[i]}
		}
		return out
	}
	var out []SizeBin
	for lo := 2; ; lo *= 2 {
		hi := 2*lo - 1
		var c int64
		any := false
		for i, s := range sizes {
			if s >= lo && s <= hi {
				c += counts[i]
				any = true
			}
		}
		if !any && lo > sizes[len(sizes)-1] {
			return out
		}
		out = append(out, SizeBin{fmt.Sprintf("%d–%d", lo, hi), c})
	}
}

func formatBytes(n int64) string {
	f := float64(n)
	switch {
	case f >= 1<<30:
		return strconv.FormatFloat(f/(1<<30), 'f', 2, 64) + " GiB"
	case f >= 1<<20:
		return strconv.FormatFloat(f/(1<<20), 'f', 1, 64) + " MiB"
	case f >= 1<<10:
		return strconv.FormatFloat(f/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " B"
}
