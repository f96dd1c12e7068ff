package htmlreport

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// Chart geometry, in SVG user units: the plot area sits inside margins for
// the axes' labels.
const (
	chartW, chartH       = 640, 300
	marginL, marginR     = 56, 16
	marginT, marginB     = 16, 44
	plotW, plotH         = chartW - marginL - marginR, chartH - marginT - marginB
	colorCurve           = "#2563eb"
	colorEstimate        = "#f59e0b"
	colorExact           = "#0891b2"
	colorThreshold       = "#dc2626"
	colorFP, colorFN     = "#fee2e2", "#dbeafe"
	colorMeasured        = "#16a34a"
	colorBar             = "#7c3aed"
	colorTiming          = "#64748b"
	colorGrid, colorAxis = "#e5e7eb", "#374151"
	fontAttrs            = `font-family="system-ui, sans-serif" font-size="12" fill="#374151"`
)

type svgBuf struct{ b strings.Builder }

func (s *svgBuf) f(format string, args ...any) { fmt.Fprintf(&s.b, format, args...) }

func num(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

func esc(s string) string { return html.EscapeString(s) }

func itoa(n int) string { return groupInt(int64(n)) }

// groupInt renders n with thousands separators.
func groupInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

func (s *svgBuf) open(title, label string) {
	s.f(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s" class="chart">`,
		chartW, chartH, chartW, chartH, esc(label))
	s.f(`<title>%s</title>`, esc(title))
}

func (s *svgBuf) close() template.HTML {
	s.b.WriteString(`</svg>`)
	return template.HTML(s.b.String())
}

// axes draws the frame, horizontal grid lines at yTicks (values in [0, 1] of
// the plot height, with labels) and x labels at xTicks.
func (s *svgBuf) axes(xTicks []float64, xLabel func(float64) string, yTicks []float64, yLabel func(float64) string, xTitle, yTitle string) {
	for _, y := range yTicks {
		py := marginT + plotH*(1-y)
		s.f(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="%s"/>`, marginL, num(py), marginL+plotW, num(py), colorGrid)
		s.f(`<text x="%d" y="%s" text-anchor="end" %s>%s</text>`, marginL-6, num(py+4), fontAttrs, esc(yLabel(y)))
	}
	for _, x := range xTicks {
		px := marginL + plotW*x
		s.f(`<text x="%s" y="%d" text-anchor="middle" %s>%s</text>`, num(px), marginT+plotH+16, fontAttrs, esc(xLabel(x)))
	}
	s.f(`<path d="M%d %d V%d H%d" fill="none" stroke="%s"/>`, marginL, marginT, marginT+plotH, marginL+plotW, colorAxis)
	s.f(`<text x="%d" y="%d" text-anchor="middle" %s>%s</text>`, marginL+plotW/2, chartH-6, fontAttrs, esc(xTitle))
	s.f(`<text transform="translate(14 %d) rotate(-90)" text-anchor="middle" %s>%s</text>`, marginT+plotH/2, fontAttrs, esc(yTitle))
}

func px(x float64) float64 { return marginL + plotW*x }
func py(y float64) float64 { return marginT + plotH*(1-y) }

func fixed(d int) func(float64) string {
	return func(x float64) string { return strconv.FormatFloat(x, 'f', d, 64) }
}

func ticks(n int) []float64 {
	t := make([]float64, n+1)
	for i := range t {
		t[i] = float64(i) / float64(n)
	}
	return t
}

// Point is a measured recall on the S-curve chart: the mean similarity of a
// band's truth pairs and the share found.
type Point struct {
	J, Recall float64
	Label     string
}

// sCurveSVG draws P(j) over [0, 1] with the threshold marked, the areas of
// false positives (under the curve left of t) and false negatives (over it
// right of t) shaded, and measured recalls as dots.
func sCurveSVG(curve func(float64) float64, t float64, label string, points []Point) template.HTML {
	var s svgBuf
	s.open("S-curve: probability that a pair becomes a candidate, by Jaccard similarity", "S-curve "+label)
	s.axes(ticks(10), fixed(1), ticks(4), fixed(2), "Jaccard similarity J", "P(candidate)")
	const steps = 400
	var fp, fn, line strings.Builder
	fp.WriteString(fmt.Sprintf("M%s %s", num(px(0)), num(py(0))))
	fn.WriteString(fmt.Sprintf("M%s %s", num(px(t)), num(py(1))))
	for i := 0; i <= steps; i++ {
		j := float64(i) / steps
		p := curve(j)
		cmd := "L"
		if i == 0 {
			cmd = "M"
		}
		fmt.Fprintf(&line, "%s%s %s ", cmd, num(px(j)), num(py(p)))
		if j <= t {
			fmt.Fprintf(&fp, " L%s %s", num(px(j)), num(py(p)))
		}
	}
	fmt.Fprintf(&fp, " L%s %s L%s %s Z", num(px(t)), num(py(curve(t))), num(px(t)), num(py(0)))
	for i := 0; i <= steps; i++ {
		j := t + (1-t)*float64(i)/steps
		fmt.Fprintf(&fn, " L%s %s", num(px(j)), num(py(curve(j))))
	}
	fmt.Fprintf(&fn, " L%s %s Z", num(px(1)), num(py(1)))
	s.f(`<path class="area-fp" d="%s" fill="%s"/>`, fp.String(), colorFP)
	s.f(`<path class="area-fn" d="%s" fill="%s"/>`, fn.String(), colorFN)
	s.f(`<path class="curve" d="%s" fill="none" stroke="%s" stroke-width="3"/>`, strings.TrimSpace(line.String()), colorCurve)
	pt := curve(t)
	s.f(`<path class="threshold" d="M%s %d V%d" stroke="%s" stroke-width="1.5" stroke-dasharray="5 4"/>`, num(px(t)), marginT, marginT+plotH, colorThreshold)
	s.f(`<circle cx="%s" cy="%s" r="4" fill="%s"/>`, num(px(t)), num(py(pt)), colorThreshold)
	s.f(`<text x="%s" y="%s" text-anchor="end" %s>t = %s, P(t) = %s</text>`, num(px(t)-8), num(py(pt)+16), fontAttrs, fixed(2)(t), fixed(4)(pt))
	for _, p := range points {
		s.f(`<circle class="measured" cx="%s" cy="%s" r="4.5" fill="none" stroke="%s" stroke-width="2"><title>%s</title></circle>`,
			num(px(p.J)), num(py(p.Recall)), colorMeasured, esc(p.Label))
	}
	s.f(`<text x="%d" y="%d" %s>%s</text>`, marginL+10, marginT+16, fontAttrs, esc(label))
	legendY := marginT + 34
	s.f(`<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d" %s>false positives below t</text>`, marginL+10, legendY, colorFP, marginL+28, legendY+10, fontAttrs)
	s.f(`<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d" %s>misses above t</text>`, marginL+10, legendY+18, colorFN, marginL+28, legendY+28, fontAttrs)
	if len(points) > 0 {
		s.f(`<circle cx="%d" cy="%d" r="5" fill="none" stroke="%s" stroke-width="2"/><text x="%d" y="%d" %s>measured recall (golden set)</text>`,
			marginL+16, legendY+42, colorMeasured, marginL+28, legendY+46, fontAttrs)
	}
	return s.close()
}

// histogramSVG draws paired bars per bin: the estimate and, when given, the
// exact similarity, over bins of equal width covering [0, 1].
func histogramSVG(lower []float64, estimate, exact []int64, t float64) template.HTML {
	var s svgBuf
	s.open("Similarity of verified pairs: signature estimate and exact Jaccard", "pair similarity histogram")
	var top int64 = 1
	for i := range estimate {
		top = max(top, estimate[i])
		if exact != nil {
			top = max(top, exact[i])
		}
	}
	yt := niceTicks(float64(top))
	ymax := yt[len(yt)-1]
	norm := make([]float64, len(yt))
	for i, v := range yt {
		norm[i] = v / ymax
	}
	s.axes(ticks(10), fixed(1), norm, func(y float64) string { return groupInt(int64(math.Round(y * ymax))) }, "similarity", "pairs")
	n := len(lower)
	bw := plotW / float64(n)
	series := 1
	if exact != nil {
		series = 2
	}
	for i := range n {
		x0 := px(float64(i) / float64(n))
		w := (bw - 4) / float64(series)
		bar := func(k int, v int64, color, class string) {
			if v == 0 {
				return
			}
			h := plotH * float64(v) / ymax
			s.f(`<path class="%s" d="M%s %s h%s v%s h-%s Z" fill="%s"><title>%s–%s: %s pairs</title></path>`, class,
				num(x0+2+float64(k)*w), num(marginT+plotH), num(w), num(-h), num(w), color,
				fixed(2)(float64(i)/float64(n)), fixed(2)(float64(i+1)/float64(n)), groupInt(v))
		}
		bar(0, estimate[i], colorEstimate, "bar-estimate")
		if exact != nil {
			bar(1, exact[i], colorExact, "bar-exact")
		}
	}
	s.f(`<path class="threshold" d="M%s %d V%d" stroke="%s" stroke-width="1.5" stroke-dasharray="5 4"/>`, num(px(t)), marginT, marginT+plotH, colorThreshold)
	s.f(`<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d" %s>estimate</text>`, marginL+10, marginT+6, colorEstimate, marginL+28, marginT+16, fontAttrs)
	if exact != nil {
		s.f(`<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d" %s>exact</text>`, marginL+10, marginT+24, colorExact, marginL+28, marginT+34, fontAttrs)
	}
	return s.close()
}

// SizeBin is one bar of the cluster-size chart.
type SizeBin struct {
	Label string
	Count int64
}

// barsSVG draws one bar per bin on a logarithmic count axis (cluster sizes
// fall off steeply).
func barsSVG(title string, bins []SizeBin, xTitle, yTitle string) template.HTML {
	var s svgBuf
	s.open(title, title)
	var top int64 = 1
	for _, b := range bins {
		top = max(top, b.Count)
	}
	decades := max(1, int(math.Ceil(math.Log10(float64(top)+1))))
	var yt []float64
	for d := 0; d <= decades; d++ {
		yt = append(yt, float64(d)/float64(decades))
	}
	ylab := func(y float64) string { return groupInt(int64(math.Round(math.Pow(10, y*float64(decades))))) }
	s.axes(nil, nil, yt, ylab, xTitle, yTitle)
	n := max(1, len(bins))
	bw := plotW / float64(n)
	for i, b := range bins {
		x0 := marginL + bw*float64(i)
		if b.Count > 0 {
			h := plotH * math.Log10(float64(b.Count)+1) / float64(decades)
			h = max(h, 2)
			s.f(`<path class="bar" d="M%s %d h%s v%s h-%s Z" fill="%s"><title>%s: %s</title></path>`,
				num(x0+2), marginT+plotH, num(bw-4), num(-h), num(bw-4), colorBar, esc(b.Label), groupInt(b.Count))
		}
		if n <= 24 || i%((n+23)/24) == 0 {
			s.f(`<text x="%s" y="%d" text-anchor="middle" %s>%s</text>`, num(x0+bw/2), marginT+plotH+16, fontAttrs, esc(b.Label))
		}
	}
	return s.close()
}

// Timing is one stage's wall time.
type Timing struct {
	Stage   string
	Seconds float64
}

// timingsSVG draws horizontal bars of stage wall times.
func timingsSVG(ts []Timing) template.HTML {
	var s svgBuf
	rowH := 26
	h := marginT + rowH*max(1, len(ts)) + 20
	s.f(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="timings" class="chart">`, chartW, h, chartW, h)
	s.f(`<title>Wall time per stage</title>`)
	top := 1e-9
	for _, t := range ts {
		top = max(top, t.Seconds)
	}
	labelW := 110
	barW := float64(chartW - labelW - 90)
	for i, t := range ts {
		y := marginT + rowH*i
		w := max(2, barW*t.Seconds/top)
		s.f(`<text x="%d" y="%d" text-anchor="end" %s>%s</text>`, labelW-8, y+15, fontAttrs, esc(t.Stage))
		s.f(`<path class="bar" d="M%d %d h%s v18 h-%s Z" fill="%s"/>`, labelW, y+2, num(w), num(w), colorTiming)
		s.f(`<text x="%s" y="%d" %s>%s s</text>`, num(float64(labelW)+w+6), y+15, fontAttrs, strconv.FormatFloat(t.Seconds, 'f', 3, 64))
	}
	return s.close()
}

// niceTicks returns 0 and round steps up to at least top. The axes count
// pairs, so steps are whole numbers: 2.5 is a step only from 25 up (a step of
// 2.5 labelled 0, 3, 5, 8, 10 would misplace every other label).
func niceTicks(top float64) []float64 {
	if top <= 0 {
		top = 1
	}
	raw := top / 4
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag != math.Trunc(m*mag) {
			continue
		}
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	step = max(1, step)
	var t []float64
	for v := 0.0; ; v += step {
		t = append(t, v)
		if v >= top {
			return t
		}
	}
}
