package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSmoke runs every phase on a small corpus (2,000 documents, 1 s
// phases, 4 clients): the corpus is generated, the index built, and each
// phase answers its requests without errors, so that a change that breaks
// the load generator or the service under it shows in CI. About 10 s.
func TestSmoke(t *testing.T) {
	dir := t.TempDir()
	resultsPath := filepath.Join(dir, "results.json")
	var out bytes.Buffer
	c := config{
		docs: 2000, clients: 4, duration: time.Second, dir: dir, bits: 8, cacheSize: 16 << 20,
		phases: "build,check,insert", checkRate: 400, insertRate: 200, dupRate: 0.5, seed: 1,
		jsonOut: resultsPath, out: &out, errOut: &out,
	}
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := run(c); err != nil {
		t.Fatalf("run: %v\n%s", err, out.Bytes())
	}
	t.Logf("%.1fs:\n%s", time.Since(start).Seconds(), out.Bytes())
	b, err := os.ReadFile(resultsPath)
	if err != nil {
		t.Fatal(err)
	}
	var res results
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatalf("%s: %v", resultsPath, err)
	}
	if br := res.Build; br == nil || br.Documents != 2000 || br.Bytes <= 0 || br.DocsPerSecond <= 0 || br.CorpusBytes <= 0 {
		t.Errorf("build: %+v; want 2000 documents, a size and a rate", br)
	}
	want := []string{"check (max)", "check @400/s", "insert @200/s", "insert (max)"}
	if len(res.Phases) != len(want) {
		t.Fatalf("%d phases; want %v", len(res.Phases), want)
	}
	for i, p := range res.Phases {
		if p.Name != want[i] {
			t.Errorf("phase %d is %q; want %q", i, p.Name, want[i])
		}
		if p.Errors != 0 {
			t.Errorf("%s: %d errors; want 0", p.Name, p.Errors)
		}
		// How many requests a 1 s phase completes depends on the machine
		// and its load (an open-loop client behind its schedule stops at
		// the deadline): some, not a number.
		if p.Requests < 10 || p.PerSecond <= 0 || p.P50ms <= 0 || p.P99ms < p.P50ms {
			t.Errorf("%s: %+v; want requests, a rate and ordered latencies", p.Name, p)
		}
		// Half of the checks and a fifth of the inserts are near copies of
		// indexed documents.
		if p.Duplicates == 0 || p.Duplicates == p.Requests {
			t.Errorf("%s: %d duplicates in %d requests; want some, not all", p.Name, p.Duplicates, p.Requests)
		}
		// A paced phase never runs ahead of its schedule: each client sends
		// at most ⌈rate·duration/clients⌉ requests, due in [start, deadline),
		// so at most rate·duration + clients in all, however fast the
		// machine (a client that did not wait would send far more: the
		// check phase's maximum is thousands a second).
		// Nor far behind it, unless the machine is: it reaches a quarter of
		// its schedule or of what the same requests reached unpaced (the
		// (max) phase beside it), whichever is less.
		if rate := map[string]float64{"check @400/s": c.checkRate, "insert @200/s": c.insertRate}[p.Name]; rate > 0 {
			if limit := int64(rate*c.duration.Seconds()) + int64(c.clients); p.Requests > limit {
				t.Errorf("%s: %d requests in a paced %v phase; want at most %d", p.Name, p.Requests, c.duration, limit)
			}
			var unpaced float64
			for _, q := range res.Phases {
				if q.Name == p.Name[:strings.Index(p.Name, " ")]+" (max)" {
					unpaced = q.PerSecond
				}
			}
			if least := min(rate, unpaced) * c.duration.Seconds() / 4; float64(p.Requests) < least {
				t.Errorf("%s: %d requests in a paced %v phase (%.0f/s unpaced); want at least %.0f", p.Name, p.Requests, c.duration, unpaced, least)
			}
		}
	}
}

// TestFailedRunLeavesNoProfile: the CPU profile and the trace appear only
// when the run succeeds (before, a run that failed at its end left both,
// written with os.Create), and the results file only when complete.
func TestFailedRunLeavesNoProfile(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	c := config{
		docs: 500, clients: 2, duration: 200 * time.Millisecond, dir: dir, bits: 8, cacheSize: 16 << 20,
		phases: "build,check", dupRate: 0.5, seed: 1, out: &out, errOut: &out,
		cpuProfile: filepath.Join(dir, "cpu.pprof"), trace: filepath.Join(dir, "trace.out"),
		jsonOut: filepath.Join(dir, "missing", "results.json"), // fails at the end
	}
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	if err := run(c); err == nil {
		t.Fatal("run with its results in a missing directory: no error")
	}
	names := func() []string {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range ents {
			got = append(got, e.Name())
		}
		return got
	}
	for _, n := range names() {
		if n == "cpu.pprof" || n == "trace.out" || strings.HasPrefix(n, ".") {
			t.Errorf("a failed run left %s in %q", n, names())
		}
	}
	c.jsonOut = filepath.Join(dir, "results.json")
	if err := run(c); err != nil {
		t.Fatalf("run: %v\n%s", err, out.Bytes())
	}
	for _, n := range []string{"cpu.pprof", "trace.out", "results.json"} {
		if st, err := os.Stat(filepath.Join(dir, n)); err != nil || st.Size() == 0 {
			t.Errorf("%s after a run that succeeded: %v; want a file", n, err)
		}
	}
	for _, n := range names() {
		if strings.HasPrefix(n, ".") {
			t.Errorf("temporary file %s left in %q", n, names())
		}
	}
}

func TestCheckLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:8080", true},
		{"127.3.2.1:80", true},
		{"[::1]:8080", true},
		{"localhost:8080", true},
		{"LocalHost:1", true},
		{"[::ffff:127.0.0.1]:80", true},
		{"10.0.0.1:8080", false},
		{"0.0.0.0:8080", false},
		{"[::]:8080", false},
		{":8080", false},
		{"example.com:80", false},
		{"localhost.example.com:80", false},
		{"127.0.0.1", false},
		{"127.0.0.1:http", false},
		{"127.0.0.1:70000", false},
	} {
		err := checkLoopback(tc.addr)
		if (err == nil) != tc.ok {
			t.Errorf("checkLoopback(%q) = %v; want ok %v", tc.addr, err, tc.ok)
		}
	}
	c := config{docs: 1, clients: 1, duration: time.Second, addr: "192.168.1.5:8080"}
	if err := c.validate(); err == nil || !strings.Contains(err.Error(), "--addr") {
		t.Errorf("validate with a remote --addr: %v; want an --addr error", err)
	}
}
