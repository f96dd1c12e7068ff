package htmlreport_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/shingle"
)

var screenshot = flag.String("screenshot", "", "also write the report's screenshot to this PNG file (for the README: ../../docs/report.png)")

// chromium returns the path of a Chromium binary, or skips the test when
// there is none and CI is unset; under CI a missing browser fails the test.
func chromium(t *testing.T) string {
	t.Helper()
	names := []string{"chromium", "chromium-browser", "google-chrome", "headless_shell"}
	if p := os.Getenv("NEARDUP_CHROMIUM"); p != "" {
		names = []string{p}
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("CI is set but no Chromium found (tried %v); .ci/run installs Debian's chromium", names)
	}
	t.Skipf("no Chromium found (tried %v) and CI unset: skipping the browser test; apt-get install chromium to run it", names)
	return ""
}

// runChromium runs headless Chromium on a file URL with args and returns its
// standard output and error. The flags keep it off the network.
func runChromium(t *testing.T, bin, page string, args ...string) (stdout, stderr []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), "file://"+page)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errb.Bytes())
	}
	return out.Bytes(), errb.Bytes()
}

// consoleLines returns the page's console messages from Chromium's log.
func consoleLines(log []byte) []string {
	var out []string
	for _, l := range strings.Split(string(log), "\n") {
		if strings.Contains(l, ":CONSOLE") {
			out = append(out, l)
		}
	}
	return out
}

// demoRun deduplicates the bundled articles with planted near duplicates,
// scored against their exact truth, and returns the output directory.
func demoRun(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../testdata/articles_1000.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	type doc struct {
		ID   string `json:"id"`
		Text string `json:"text"`
	}
	var base []doc
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var d doc
		if err := json.Unmarshal(line, &d); err != nil {
			t.Fatal(err)
		}
		base = append(base, d)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	var docs []doc
	for _, d := range base[:600] {
		docs = append(docs, d)
		for c := range []int{0, 0, 1, 2, 3, 5}[rng.IntN(6)] {
			rate := rng.Float64() * 0.08
			var w []string
			for _, x := range strings.Fields(d.Text) {
				if rng.Float64() >= rate {
					w = append(w, x)
					continue
				}
				switch rng.IntN(3) {
				case 0:
					w = append(w, fmt.Sprintf("w%d", rng.IntN(1e6)))
				case 2:
					w = append(w, x, fmt.Sprintf("x%d", rng.IntN(1e6)))
				}
			}
			docs = append(docs, doc{fmt.Sprintf("%s-v%d", d.ID, c), strings.Join(w, " ")})
		}
	}
	rng.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
	dir := t.TempDir()
	in := filepath.Join(dir, "demo.jsonl")
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	sh := shingle.MustNew(shingle.Prose)
	sets := make([][]uint64, len(docs))
	for i, d := range docs {
		enc.Encode(d)
		sets[i] = eval.Normalize(sh.AppendFeatures(nil, []byte(d.Text)))
	}
	os.WriteFile(in, b.Bytes(), 0o644)
	pairs, err := eval.AllPairs(sets, 0.5, nil)
	if err != nil {
		t.Fatal(err)
	}
	truth := filepath.Join(dir, "truth.tsv")
	tf, _ := os.Create(truth)
	w := bufio.NewWriter(tf)
	eval.WriteTruthHeader(w, eval.TruthHeader{Threshold: 0.5, Documents: int64(len(docs)), Spec: shingle.Prose.String()})
	for _, p := range pairs {
		w.Write(eval.AppendPairLine(nil, min(docs[p.A].ID, docs[p.B].ID), max(docs[p.A].ID, docs[p.B].ID), p.Jaccard))
	}
	w.Flush()
	tf.Close()
	out := filepath.Join(dir, "out")
	if _, err := dedup.Run(context.Background(), []string{in}, out, &dedup.Options{Golden: truth, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReportInChromium opens a real run's report.html in headless Chromium:
// no console errors, every chart is an SVG with non-empty paths in the laid-
// out DOM, and the screenshot shows each chart's colours (the S-curve, its
// threshold and false-positive area, the histogram's bars, the cluster-size
// bars). A page with a script error checks that console errors are caught.
func TestReportInChromium(t *testing.T) {
	bin := chromium(t)
	out := demoRun(t)
	page := filepath.Join(out, dedup.HTMLFile)
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	// Self-contained: no script, no external resource.
	for _, bad := range []string{"<script", "src=", "href=", "@import", "url("} {
		if bytes.Contains(html, []byte(bad)) {
			t.Errorf("report.html contains %q; it must be self-contained and script-free", bad)
		}
	}

	// The negative control: the detector sees a console error.
	badPage := filepath.Join(t.TempDir(), "bad.html")
	os.WriteFile(badPage, []byte(`<!DOCTYPE html><p>x</p><script>console.error("planted"); notDefined();</script>`), 0o644)
	if _, log := runChromium(t, bin, badPage, "--dump-dom"); len(consoleLines(log)) < 2 {
		t.Fatalf("console errors of a broken page not detected; log:\n%s", log)
	}

	dom, log := runChromium(t, bin, page, "--dump-dom")
	if c := consoleLines(log); len(c) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(c, "\n"))
	}
	svgRe := regexp.MustCompile(`(?s)<svg[^>]*aria-label="([^"]*)"[^>]*>(.*?)</svg>`)
	pathRe := regexp.MustCompile(`<path[^>]*\sd="([^"]*)"`)
	charts := map[string]int{}
	for _, m := range svgRe.FindAllSubmatch(dom, -1) {
		n := 0
		for _, p := range pathRe.FindAllSubmatch(m[2], -1) {
			if len(bytes.TrimSpace(p[1])) > 4 {
				n++
			}
		}
		charts[string(m[1])] = n
	}
	for _, want := range []string{"S-curve b = 16 bands × r = 6 rows", "pair similarity histogram", "Clusters by size (log scale)", "timings"} {
		if charts[want] < 2 {
			t.Errorf("chart %q: %d non-empty paths in the DOM; want at least 2 (charts: %v)", want, charts[want], charts)
		}
	}
	if !bytes.Contains(dom, []byte(`<mark class="del">`)) || !bytes.Contains(dom, []byte(`<mark class="ins">`)) {
		t.Error("no highlighted differences in the sample clusters")
	}
	if !bytes.Contains(dom, []byte("Largest buckets")) || !bytes.Contains(dom, []byte("every shared bucket was paired in full")) {
		t.Error("no table of the largest buckets (no bucket is over the cap here, and the table must still be shown)")
	}

	shot := filepath.Join(t.TempDir(), "report.png")
	runChromium(t, bin, page, "--hide-scrollbars", "--window-size=1400,2400", "--screenshot="+shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		r, g, b uint8
		min     int
	}{
		{"S-curve line", 0x25, 0x63, 0xeb, 500},
		{"threshold marker", 0xdc, 0x26, 0x26, 100},
		{"false-positive area", 0xfe, 0xe2, 0xe2, 2000},
		{"estimate bars", 0xf5, 0x9e, 0x0b, 500},
		{"cluster-size bars", 0x7c, 0x3a, 0xed, 2000},
	} {
		n := countColor(img, c.r, c.g, c.b)
		t.Logf("%s: %d pixels", c.name, n)
		if n < c.min {
			t.Errorf("screenshot: %d pixels of the %s colour #%02x%02x%02x; want at least %d (is the chart drawn?)", n, c.name, c.r, c.g, c.b, c.min)
		}
	}
	if *screenshot != "" {
		data, _ := os.ReadFile(shot)
		if err := os.WriteFile(*screenshot, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// countColor counts the pixels within 6 of (r, g, b) in every channel.
func countColor(img image.Image, r, g, b uint8) int {
	n := 0
	bounds := img.Bounds()
	near := func(x uint32, y uint8) bool { d := int(x>>8) - int(y); return d >= -6 && d <= 6 }
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			pr, pg, pb, _ := img.At(x, y).RGBA()
			if near(pr, r) && near(pg, g) && near(pb, b) {
				n++
			}
		}
	}
	return n
}
