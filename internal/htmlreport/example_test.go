package htmlreport_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/neardup/neardup/internal/htmlreport"
)

// Write renders a run's Data as one HTML page. This example renders a small
// run and lists what the page holds: its title, its inline SVG charts and the
// two documents of its sample cluster, their
// differing words marked and the text escaped.
func ExampleWrite() {
	d := &htmlreport.Data{
		Title:          "neardup report",
		Inputs:         []string{"docs.jsonl"},
		Summary:        []htmlreport.Row{{Name: "documents", Value: "3"}, {Name: "removed", Value: "1"}},
		Threshold:      0.8,
		Bands:          9,
		Rows:           13,
		Curve:          func(j float64) float64 { return j * j },
		ExpectedRecall: 0.64,
		PairLower:      []float64{0.8, 0.9},
		PairEstimate:   []int64{0, 1},
		ClusterSizes:   htmlreport.SizeBins([]int{2}, []int64{1}),
		Timings:        []htmlreport.Timing{{Stage: "sign", Seconds: 0.01}, {Stage: "verify", Seconds: 0.002}},
		Samples: []htmlreport.Sample{{Cluster: 0, Size: 2, Kept: "a", A: "a", B: "b", Similarity: 0.9,
			Comparison: htmlreport.Compare("the quick brown fox & the dog", "the quick red fox & the dog", 2, 100)}},
	}
	var page bytes.Buffer
	if err := htmlreport.Write(&page, d); err != nil {
		fmt.Println(err)
		return
	}
	html := page.String()
	fmt.Println(regexp.MustCompile(`<title>.*</title>`).FindString(html))
	fmt.Println("charts:", strings.Count(html, "<svg"))
	fmt.Println("S-curve:", strings.Contains(html, "b = 9 bands × r = 13 rows"))
	for _, doc := range regexp.MustCompile(`<div class="doc">.*?</div>`).FindAllString(html, -1) {
		fmt.Println(doc)
	}
	fmt.Println("scripts:", strings.Count(html, "<script"))
	// Output:
	// <title>neardup report</title>
	// charts: 4
	// S-curve: true
	// <div class="doc"><h3>a</h3>the quick <mark class="del">brown</mark> fox &amp; the dog </div>
	// <div class="doc"><h3>b</h3>the quick <mark class="ins">red</mark> fox &amp; the dog </div>
	// scripts: 0
}

// Compare aligns two texts word by word; runs of shared words longer than
// 2·context are cut to a gap.
func ExampleCompare() {
	c := htmlreport.Compare(
		"the cat sat on the mat in the sun all day long",
		"the cat sat on the mat in the shade all day long", 2, 100)
	show := func(spans []htmlreport.Span) {
		var out []string
		for _, s := range spans {
			out = append(out, fmt.Sprintf("[%s: %s]", s.Kind, s.Text))
		}
		fmt.Println(strings.Join(out, " "))
	}
	show(c.A)
	show(c.B)
	fmt.Println("changed words:", c.Changed)
	// Output:
	// [gap: … 6 shared words …] [same: in the] [diff: sun] [same: all day long]
	// [gap: … 6 shared words …] [same: in the] [diff: shade] [same: all day long]
	// changed words: 2
}

// SizeBins gives one bar per cluster size while there are at most 30 sizes,
// else bars for sizes grouped in powers of two.
func ExampleSizeBins() {
	fmt.Println(htmlreport.SizeBins([]int{2, 3, 7}, []int64{40, 9, 1}))
	var sizes []int
	var counts []int64
	for s := 2; s < 40; s++ {
		sizes, counts = append(sizes, s), append(counts, 1)
	}
	fmt.Println(htmlreport.SizeBins(sizes, counts))
	// Output:
	// [{2 40} {3 9} {7 1}]
	// [{2–3 2} {4–7 4} {8–15 8} {16–31 16} {32–63 8}]
}
