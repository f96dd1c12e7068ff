package htmlreport

import (
	"bytes"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestWriteEscapes: ids and texts are data, never markup.
func TestWriteEscapes(t *testing.T) {
	d := &Data{
		Title: "t", Inputs: []string{"<in>"}, Threshold: 0.8, Bands: 2, Rows: 3,
		Curve:     func(j float64) float64 { return j },
		PairLower: []float64{0, 0.5}, PairEstimate: []int64{1, 2}, PairExact: []int64{0, 3},
		ClusterSizes: SizeBins([]int{2, 3}, []int64{5, 1}),
		Timings:      []Timing{{"sign", 1}},
		Samples: []Sample{{Cluster: 0, Size: 2, Kept: "<k>", A: "<a>", B: "b&",
			Comparison: Compare("x <script>alert(1)</script> y", "x z y", 2, 100)}},
	}
	var b bytes.Buffer
	if err := Write(&b, d); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, bad := range []string{"<script>", "<in>", "<a>", "<k>"} {
		if strings.Contains(out, bad) {
			t.Errorf("output contains unescaped %q", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;", `<mark class="del">`, `<mark class="ins">z</mark>`, "S-curve b = 2 bands × r = 3 rows"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestSizeBins(t *testing.T) {
	sizes := make([]int, 40)
	counts := make([]int64, 40)
	for i := range sizes {
		sizes[i], counts[i] = i+2, 1
	}
	bins := SizeBins(sizes, counts)
	var total int64
	for _, b := range bins {
		total += b.Count
	}
	if total != 40 || bins[0].Label != "2–3" || bins[len(bins)-1].Label != "32–63" {
		t.Errorf("bins %+v; want powers of two from 2–3 to 32–63 holding all 40 clusters", bins)
	}
}

// TestLargestBuckets: the largest buckets are listed whether or not any is
// over the cap, capped ones marked, with the note that fits.
func TestLargestBuckets(t *testing.T) {
	render := func(d *Data) string {
		t.Helper()
		var b bytes.Buffer
		if err := Write(&b, d); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	uncapped := render(&Data{BucketCap: 1000, Largest: []Bucket{{Size: 7, First: "doc-a", Key: "00000000aa000000"}, {Size: 3, First: "doc-b", Key: "00000000bb000000"}}})
	capped := render(&Data{BucketCap: 5, Largest: []Bucket{{Size: 7, First: "doc-a", Key: "00000000aa000000", Capped: true}, {Size: 3, First: "doc-b", Key: "00000000bb000000"}}})
	none := render(&Data{BucketCap: 1000})
	for _, c := range []struct {
		name, out string
		want, not []string
	}{
		{"uncapped", uncapped, []string{"Largest buckets", "doc-a", "doc-b", "00000000bb000000", "No bucket exceeded the cap of 1000"}, []string{"over the cap</b>"}},
		{"capped", capped, []string{"Largest buckets", "doc-a", "doc-b", "<b>over the cap</b>", "over the cap of 5 documents"}, []string{"No bucket exceeded"}},
		{"none", none, []string{"No bucket was shared"}, []string{"Largest buckets", "No bucket exceeded"}},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.out, w) {
				t.Errorf("%s: page lacks %q", c.name, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(c.out, n) {
				t.Errorf("%s: page contains %q", c.name, n)
			}
		}
	}
	if n := strings.Count(capped, "over the cap</b>"); n != 1 {
		t.Errorf("capped: %d buckets marked over the cap; want 1", n)
	}
}

// TestHistogramAxisLabels: every y-axis label of the pair histogram is the
// exact count at its grid line. With 10 pairs at most, steps of 2.5 were
// labelled 0, 3, 5, 8, 10.
func TestHistogramAxisLabels(t *testing.T) {
	label := regexp.MustCompile(`<line x1="\d+" y1="([\d.]+)" x2="\d+" y2="[\d.]+" stroke="[^"]+"/><text x="\d+" y="[\d.]+" text-anchor="end" [^>]*>([\d,]+)</text>`)
	for top := int64(1); top <= 2000; top++ {
		svg := string(histogramSVG([]float64{0, 0.5}, []int64{top, 1}, nil, 0.8))
		ms := label.FindAllStringSubmatch(svg, -1)
		if len(ms) < 2 {
			t.Fatalf("top %d: %d y labels in %.300s", top, len(ms), svg)
		}
		// Labels are evenly spaced values: label i is i times label 1, and
		// grid lines are evenly spaced too.
		val := func(i int) float64 {
			v, err := strconv.ParseFloat(strings.ReplaceAll(ms[i][2], ",", ""), 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		ypos := func(i int) float64 { y, _ := strconv.ParseFloat(ms[i][1], 64); return y }
		step := val(1) - val(0)
		for i := range ms {
			if val(i) != float64(i)*step {
				t.Fatalf("top %d: labels %v; want multiples of %v", top, ms, step)
			}
			if d := (ypos(0) - ypos(i)) - float64(i)*(ypos(0)-ypos(1)); math.Abs(d) > 0.2 {
				t.Fatalf("top %d: grid lines unevenly spaced", top)
			}
		}
		if last := val(len(ms) - 1); last < float64(top) {
			t.Fatalf("top %d: axis ends at %v", top, last)
		}
	}
}

// TestWordsDifferPlural: one changed word reads "1 word differs".
func TestWordsDifferPlural(t *testing.T) {
	for _, c := range []struct {
		a, b, want string
	}{
		{"x y z", "x w z", "2 words differ"},
		{"x y z", "x z", "1 word differs"},
	} {
		var b bytes.Buffer
		d := &Data{Samples: []Sample{{Cluster: 0, Size: 2, Kept: "k", A: "a", B: "b", Comparison: Compare(c.a, c.b, 2, 100)}}, BucketCap: 1,
			Largest: []Bucket{{Size: 2, First: "a", Key: "00"}}}
		if err := Write(&b, d); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.want) || strings.Contains(b.String(), "1 words") {
			t.Errorf("%q vs %q: page lacks %q", c.a, c.b, c.want)
		}
		if !strings.Contains(b.String(), "cap of 1 document:") {
			t.Errorf("page lacks %q", "cap of 1 document:")
		}
	}
}
