package jobspec

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/drift"
)

// goldenReport is a report.json the dedup driver wrote (its golden).
const goldenReport = "../../dedup/testdata/report/articles_1000.json"

func readGolden(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(goldenReport)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestReadReportRoundTrip: a report reads back as written.
func TestReadReportRoundTrip(t *testing.T) {
	data := readGolden(t)
	rep, err := ReadReport(bytes.NewReader(data), "report.json")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Drift.TextBytes.N() != int64(rep.Counts.Documents) || rep.Drift.BestSimilarity.N() == 0 {
		t.Errorf("drift: %d lengths for %d documents, %d best matches", rep.Drift.TextBytes.N(), rep.Counts.Documents, rep.Drift.BestSimilarity.N())
	}
	again, err := EncodeReport(rep)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, data) {
		t.Errorf("report.json does not round-trip through ReadReport and EncodeReport")
	}
}

func TestReadReportErrors(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"syntax", "{\n\"counts\": {\n,\n}", "r.json:3:"},
		{"type", `{"counts": {"documents": "many"}}`, "documents"},
		{"trailing", `{} {}`, "data after"},
		{"huge", `{"tool": "` + strings.Repeat("x", MaxReportBytes) + `"}`, "larger than"},
	} {
		_, err := ReadReport(strings.NewReader(tc.data), "r.json")
		if !errors.Is(err, ErrReport) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "r.json") {
			t.Errorf("%s: %v; want ErrReport naming r.json and %q", tc.name, err, tc.want)
		}
	}
}

// TestDiffReports: a report against itself moved nowhere; a shift of the
// text lengths is found there only; different configurations are listed;
// bins that do not match are an error, a distribution one report lacks is
// listed as missing.
func TestDiffReports(t *testing.T) {
	data := readGolden(t)
	read := func() *Report {
		r, err := ReadReport(bytes.NewReader(data), "golden")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	old, cur := read(), read()
	d, err := DiffReports(old, cur)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Distributions) != 6 || len(d.Missing) != 0 || len(d.Config) != 0 || len(d.Moved()) != 0 {
		t.Errorf("a report against itself: %+v; want 6 distributions, none moved, missing or configured otherwise", d)
	}
	for _, x := range d.Distributions {
		if x.D != 0 || x.P != 1 || x.PSI != 0 {
			t.Errorf("%s against itself: %+v; want D 0, p 1, PSI 0", x.Name, x.Comparison)
		}
	}

	// Every document 4 times as long: one bin an octave apart is four bins.
	h := &cur.Drift.TextBytes
	shifted := make([]int64, len(h.Counts))
	for i, c := range h.Counts {
		shifted[min(i+4, len(shifted)-1)] += c
	}
	h.Counts = shifted
	cur.Config.Bands++
	d, err = DiffReports(old, cur)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Moved(); !slices.Equal(got, []string{"drift.text_bytes"}) {
		t.Errorf("lengths ×4: moved %v; want drift.text_bytes only", got)
	}
	if len(d.Config) != 1 || !strings.HasPrefix(d.Config[0], "bands ") {
		t.Errorf("config differences %v; want bands", d.Config)
	}
	if s := d.String(); !strings.Contains(s, "MOVED") || !strings.Contains(s, "configured differently") {
		t.Errorf("String():\n%s\nwant a MOVED line and the configuration", s)
	}

	cur.Drift.Features = drift.New(drift.ByteBounds)
	if _, err := DiffReports(old, cur); !errors.Is(err, ErrReport) || !errors.Is(err, drift.ErrBins) || !strings.Contains(err.Error(), "drift.features") {
		t.Errorf("other bins: %v; want ErrReport and drift.ErrBins naming drift.features", err)
	}
	cur.Drift = drift.Distributions{}
	cur.PairSim.Exact = nil
	if d, err = DiffReports(old, cur); err != nil || !slices.Equal(d.Missing, []string{"drift.best_similarity", "drift.features", "drift.text_bytes", "pair_similarity.exact"}) {
		t.Errorf("without drift nor exact: %v, missing %v", err, d.Missing)
	}
}

// FuzzReadDiff: whatever the bytes, ReadReport and DiffReports return an
// error or a diff, never panic; a report read without error compares with
// itself without a move.
func FuzzReadDiff(f *testing.F) {
	f.Add(readGolden(f))
	f.Add([]byte(`{"drift":{"features":{"upper":[1,2],"counts":[1,2,3]}},"pair_similarity":{"estimate":[]}}`))
	f.Add([]byte(`{"pair_similarity":{"estimate":[5],"exact":[1,2]},"cluster_sizes":[{"size":-3,"count":2}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := ReadReport(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		golden, _ := ReadReport(bytes.NewReader(readGolden(t)), "golden")
		DiffReports(golden, rep)
		DiffReports(rep, golden)
		d, err := DiffReports(rep, rep)
		if err == nil && len(d.Moved()) != 0 {
			t.Errorf("a report against itself moved: %v", d.Moved())
		}
		_ = d.String()
	})
}
