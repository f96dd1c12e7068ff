package dedup

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

var updateReport = flag.Bool("update-report", false, "rewrite testdata/report/*.json from this run")

// normalizeReport rewrites the fields of a report.json that vary from run to
// run or machine to machine — stage timings, wall time, peak RSS, the worker
// count (GOMAXPROCS) and input directories — to fixed values, and returns it
// re-indented. Everything else (counts, configuration, fingerprints, bands,
// histograms, buckets, spill sizes) is deterministic.
func normalizeReport(t *testing.T, data []byte) []byte {
	t.Helper()
	var rep Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	for i, in := range rep.Inputs {
		rep.Inputs[i] = path.Base(filepath.ToSlash(in))
	}
	for i := range rep.Timings {
		rep.Timings[i].Seconds = 0
	}
	rep.WallSeconds, rep.PeakRSSBytes, rep.Config.Workers = 0, 0, 0
	out, err := json.MarshalIndent(&rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// TestReportGolden compares report.json for the bundled sample, volatile
// fields normalised, with testdata/report/articles_1000*.json. After an
// intended change (new fields, other signatures), regenerate with
//
//	go test ./dedup -run TestReportGolden -update-report
//
// and review the diff.
func TestReportGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"articles_1000", Options{}},
		{"articles_1000-estimate-star", Options{Verify: VerifyEstimate, Cluster: Star}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			out, _ := runDedup(t, []string{"../testdata/articles_1000.jsonl"}, &o)
			data, err := os.ReadFile(filepath.Join(out, ReportFile))
			if err != nil {
				t.Fatal(err)
			}
			got := normalizeReport(t, data)
			golden := filepath.Join("testdata", "report", tc.name+".json")
			if *updateReport {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update-report once)", err)
			}
			if !bytes.Equal(got, want) {
				g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
				for i := 0; i < max(len(g), len(w)); i++ {
					if i >= len(g) || i >= len(w) || g[i] != w[i] {
						t.Errorf("report.json (normalised) differs from %s at line %d:\ngot  %q\nwant %q\n(whole report:\n%s)",
							golden, i+1, g[min(i, len(g)-1)], w[min(i, len(w)-1)], got)
						break
					}
				}
			}
		})
	}
}
