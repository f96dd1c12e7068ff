package progress

import (
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// term is a fake terminal: it records what the bar writes and splits it
// into frames, each ended by a carriage-return redraw or a newline.
type term struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (t *term) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.Write(p)
}

func (t *term) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}

// frames returns every drawn line, without the leading \r.
func (t *term) frames() []string {
	var out []string
	for _, f := range strings.Split(t.String(), "\r") {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// waitFor polls until some frame satisfies ok, or fails after five seconds.
func (t *term) waitFor(tb testing.TB, what string, ok func(string) bool) string {
	tb.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, f := range t.frames() {
			if ok(f) {
				return f
			}
		}
		time.Sleep(time.Millisecond)
	}
	tb.Fatalf("no frame %s; got %q", what, t.String())
	return ""
}

func newTestBar(w *term) *Bar {
	b := New(w)
	b.every = time.Millisecond
	return b
}

var (
	// "sign             42 docs     1234 docs/s     5.6 MB/s [====    ]  50% ETA 1s   "
	frameRE = regexp.MustCompile(`^(\S+) +(\d+) docs +\d+ docs/s +[\d.]+ MB/s`)
	barRE   = regexp.MustCompile(`\[(=*)( *)\] +(\d+)%`)
)

func TestNilBarIsNoOp(t *testing.T) {
	var b *Bar
	b.Stage("sign", 100, nil)
	b.Add(1, 1)
	b.Finish()
}

// TestKnownTotal: with a known total, frames show the stage, documents,
// rates, a bar with the percentage and an ETA; the final line ends the
// stage with a newline, 100 % and the elapsed time, and no ETA.
func TestKnownTotal(t *testing.T) {
	w := &term{}
	b := newTestBar(w)
	b.Stage("sign", 1000, nil)
	b.Add(42, 500)
	f := w.waitFor(t, "at 50%", func(f string) bool { return strings.Contains(f, " 50%") })
	m := frameRE.FindStringSubmatch(f)
	if m == nil || m[1] != "sign" || m[2] != "42" {
		t.Errorf("frame %q; want stage sign, 42 docs, docs/s and MB/s", f)
	}
	bar := barRE.FindStringSubmatch(f)
	if bar == nil || len(bar[1]) != 12 || len(bar[1])+len(bar[2]) != 24 {
		t.Errorf("frame %q; want a 24-wide bar half full", f)
	}
	if !strings.Contains(f, "ETA ") || strings.HasSuffix(f, "\n") {
		t.Errorf("frame %q; want an ETA and no newline while running", f)
	}
	b.Add(58, 500)
	b.Finish()
	frames := w.frames()
	last := frames[len(frames)-1]
	if !strings.HasSuffix(last, "s\n") || strings.Contains(last, "ETA") || !strings.Contains(last, "100%") {
		t.Errorf("final line %q; want 100%%, no ETA, the elapsed time and a newline", last)
	}
	if m := frameRE.FindStringSubmatch(last); m == nil || m[2] != "100" {
		t.Errorf("final line %q; want 100 docs", last)
	}
	if n := strings.Count(w.String(), "\n"); n != 1 {
		t.Errorf("%d newlines; want exactly one, at the end of the stage", n)
	}
	b.Finish() // a second Finish draws nothing
	if got := w.frames(); len(got) != len(frames) {
		t.Errorf("Finish after Finish drew %d more frames", len(got)-len(frames))
	}
}

// TestUnknownTotal: without a total there is no bar and no ETA.
func TestUnknownTotal(t *testing.T) {
	w := &term{}
	b := newTestBar(w)
	b.Stage("verify", -1, nil)
	b.Add(7, 0)
	w.waitFor(t, "with 7 docs", func(f string) bool { return strings.Contains(f, " 7 docs") })
	b.Finish()
	for _, f := range w.frames() {
		if strings.Contains(f, "[") || strings.Contains(f, "ETA") || strings.Contains(f, "%") {
			t.Errorf("frame %q; want no bar, percentage or ETA without a total", f)
		}
	}
}

// TestReadOverridesBytes: a read function, not Add's bytes, drives the bar
// (compressed input consumed against the compressed size).
func TestReadOverridesBytes(t *testing.T) {
	w := &term{}
	b := newTestBar(w)
	var mu sync.Mutex
	read := int64(0)
	b.Stage("sign", 400, func() int64 { mu.Lock(); defer mu.Unlock(); return read })
	b.Add(1, 10_000) // ignored for the bar
	mu.Lock()
	read = 100
	mu.Unlock()
	w.waitFor(t, "at 25%", func(f string) bool { return strings.Contains(f, " 25%") })
	b.Finish()
}

// TestUnit: SetUnit renames what the count and its rate are in.
func TestUnit(t *testing.T) {
	w := &term{}
	b := newTestBar(w)
	b.SetUnit("postings")
	b.Stage("repack", 90, nil)
	b.Add(10, 90)
	b.Finish()
	frames := w.frames()
	last := frames[len(frames)-1]
	if !regexp.MustCompile(`^repack +10 postings +\d+ postings/s +[\d.]+ MB/s`).MatchString(last) || strings.Contains(last, "docs") {
		t.Errorf("final frame %q; want 10 postings and postings/s", last)
	}
	var off *Bar
	off.SetUnit("postings") // a no-op
}

// TestStages: a new stage ends the previous one (its final line) and
// restarts the counts.
func TestStages(t *testing.T) {
	w := &term{}
	b := newTestBar(w)
	b.Stage("sign", -1, nil)
	b.Add(5, 0)
	b.Stage("candidates", -1, nil)
	b.Add(3, 0)
	b.Finish()
	lines := strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines; want 2 (one per stage): %q", len(lines), w.String())
	}
	for i, want := range []struct {
		stage, docs string
	}{{"sign", "5"}, {"candidates", "3"}} {
		frames := strings.Split(lines[i], "\r")
		m := frameRE.FindStringSubmatch(frames[len(frames)-1])
		if m == nil || m[1] != want.stage || m[2] != want.docs {
			t.Errorf("stage %d final frame %q; want %s with %s docs", i, frames[len(frames)-1], want.stage, want.docs)
		}
	}
}

// TestConcurrentAdd: Add from many goroutines while the bar redraws (run
// with -race) counts every document.
func TestConcurrentAdd(t *testing.T) {
	w := &term{}
	b := newTestBar(w)
	b.Stage("sign", -1, nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				b.Add(1, 1)
			}
		}()
	}
	wg.Wait()
	b.Finish()
	frames := w.frames()
	if m := frameRE.FindStringSubmatch(frames[len(frames)-1]); m == nil || m[2] != "8000" {
		t.Errorf("final frame %q; want 8000 docs", frames[len(frames)-1])
	}
}

// TestCountStage: a stage counting band keys or pairs shows its own unit and
// no byte rate (before, "candidates 3200000 docs … 0.0 MB/s"), its total is
// a count, and the next Stage is back in the bar's unit with bytes.
func TestCountStage(t *testing.T) {
	w := &term{}
	b := newTestBar(w)
	b.CountStage("candidates", "keys", -1)
	b.Add(3_200_000, 0)
	b.CountStage("verify", "pairs", 200)
	b.Add(50, 0)
	w.waitFor(t, "verify at 25%", func(f string) bool { return strings.HasPrefix(f, "verify") && strings.Contains(f, " 25%") })
	b.Add(150, 0)
	b.Stage("write", -1, nil)
	b.Add(7, 1000)
	b.Finish()
	lines := strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines; want 3: %q", len(lines), w.String())
	}
	for i, want := range []*regexp.Regexp{
		regexp.MustCompile(`^candidates +3200000 keys +\d+ keys/s [\d.]+s\n?$`),
		regexp.MustCompile(`^verify +200 pairs +\d+ pairs/s \[=+\] 100% [\d.]+s$`),
		regexp.MustCompile(`^write +7 docs +\d+ docs/s +[\d.]+ MB/s [\d.]+s$`),
	} {
		frames := strings.Split(lines[i], "\r")
		last := frames[len(frames)-1]
		if !want.MatchString(last) {
			t.Errorf("stage %d final frame %q; want it to match %s", i, last, want)
		}
	}
	var off *Bar
	off.CountStage("verify", "pairs", 10) // a no-op
}
