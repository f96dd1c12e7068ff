package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/minhash"

	"go.yaml.in/yaml/v3"
)

// exportedFamilies serves an index with a shadow index (another k and
// banding), golden monitoring and the periodic repack on, runs the golden set
// (on both indexes, through Options.Shadow), checks a document and makes one
// failed request (so that the labeled series exist), and returns the metric
// families /metrics shows, by name, with their types.
func exportedFamilies(t *testing.T) map[string]string {
	t.Helper()
	idx := openIndex(t, "pebble", nil)
	shadow := openIndex(t, "pebble", &index.Options{Params: minhash.Params{K: 64}})
	set := goldenFixture(t, idx, shadow)
	ts := newTestServer(t, idx, &Options{Golden: set, RepackInterval: time.Hour,
		Shadow: &ShadowOptions{Index: shadow, Journal: JournalPath(t.TempDir())}})
	t.Cleanup(func() { ts.s.Close() })
	res, err := ts.s.GoldenRun(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[1].Index != GoldenShadow || res[1].Score.Recall != 0.5 || res[1].Score.Precision != 0.5 {
		t.Fatalf("golden run with Options.Shadow: %+v; want the primary's and the shadow's, recall and precision 0.5", res)
	}
	ts.post("/v1/check", map[string]any{"text": set.Docs[0].Text})
	waitShadow(t, ts.s)
	ts.call(http.MethodGet, "/v1/nothing", "", nil)
	resp, err := http.Get(ts.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	fams := map[string]string{}
	for _, line := range strings.Split(string(body), "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			fams[f[2]] = f[3]
		}
	}
	return fams
}

var metricName = regexp.MustCompile(`\bneardup_[a-z0-9_]+`)

// unknownNames returns what is wrong with the metric names of an expression:
// every name the server does not export (a family, or a histogram's
// _bucket, _sum or _count series), or that it names none.
func unknownNames(fams map[string]string, expr string) []string {
	names := metricName.FindAllString(expr, -1)
	if len(names) == 0 {
		return []string{"names no neardup metric"}
	}
	var bad []string
	for _, n := range names {
		if _, ok := fams[n]; ok {
			continue
		}
		found := false
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(n, suffix); ok {
				found = found || fams[base] == "histogram"
			}
		}
		if !found {
			bad = append(bad, n+" is not a metric the server exports")
		}
	}
	return bad
}

// checkNames reports what unknownNames finds in expr.
func checkNames(t *testing.T, fams map[string]string, where, expr string) {
	t.Helper()
	for _, e := range unknownNames(fams, expr) {
		t.Errorf("%s: %q: %s", where, expr, e)
	}
}

// TestDeployMetricNames checks deploy/grafana/neardup.json (a dashboard: a
// title and uid, panels with unique ids, a type, a title, a place on the
// grid and queries) and deploy/prometheus/alerts.yml (every rule an alert
// with an expression, a severity and a summary), and that every metric their
// queries and expressions name is one a server with golden monitoring
// exports (histogram series mapped to their family). promtool checks the PromQL itself
// (.ci/run).
func TestDeployMetricNames(t *testing.T) {
	fams := exportedFamilies(t)
	for _, want := range []string{"neardup_golden_recall", "neardup_check_best_similarity", "neardup_document_features", "neardup_index_bucket_size_documents", "neardup_shadow_candidates"} {
		if _, ok := fams[want]; !ok {
			t.Fatalf("/metrics lacks %s; exported: %v", want, fams)
		}
	}

	data, err := os.ReadFile("../deploy/grafana/neardup.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			ID      int    `json:"id"`
			Type    string `json:"type"`
			Title   string `json:"title"`
			GridPos struct {
				H, W, X, Y *int
			} `json:"gridPos"`
			Targets []struct {
				RefID string `json:"refId"`
				Expr  string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("neardup.json: %v", err)
	}
	if dash.Title == "" || dash.UID == "" || len(dash.Panels) == 0 {
		t.Fatalf("neardup.json: title %q, uid %q, %d panels; want all three", dash.Title, dash.UID, len(dash.Panels))
	}
	ids := map[int]bool{}
	queries := 0
	for _, p := range dash.Panels {
		where := "panel " + p.Title
		if ids[p.ID] || p.ID == 0 || p.Title == "" || p.Type == "" || p.GridPos.H == nil || p.GridPos.W == nil || p.GridPos.X == nil || p.GridPos.Y == nil {
			t.Errorf("%s: id %d (repeated or 0?), type %q, grid %+v; want a unique id, a title, a type and a grid position", where, p.ID, p.Type, p.GridPos)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("%s has no query", where)
		}
		for _, q := range p.Targets {
			if q.RefID == "" {
				t.Errorf("%s: a query without a refId", where)
			}
			checkNames(t, fams, where, q.Expr)
			queries++
		}
	}

	data, err = os.ReadFile("../deploy/prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(data, &rules); err != nil {
		t.Fatalf("alerts.yml: %v", err)
	}
	var alerts []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			where := "alert " + r.Alert
			if r.Alert == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
				t.Errorf("%s (group %s): want an alert name, a severity label and a summary", where, g.Name)
			}
			checkNames(t, fams, where, r.Expr)
			alerts = append(alerts, r.Alert)
		}
	}
	// The seed's list (issue 14): each has its alert.
	for _, want := range []string{"NeardupCandidatesPerDocumentHigh", "NeardupBucketSizeP99High", "NeardupVerifyDropRateRising",
		"NeardupEmptyBinRateRising", "NeardupGoldenRecallLow", "NeardupShadowAgreementLow", "NeardupErrorRateHigh", "NeardupLatencyP99High"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("alerts.yml lacks %s", want)
		}
	}
	t.Logf("%d panels, %d queries, %d alerts checked against %d exported families", len(dash.Panels), queries, len(alerts), len(fams))
}

// TestUnknownNames: the name check itself, on names it must accept and
// refuse.
func TestUnknownNames(t *testing.T) {
	fams := map[string]string{"neardup_a_total": "counter", "neardup_h": "histogram"}
	for _, c := range []struct {
		expr string
		ok   bool
	}{
		{`rate(neardup_a_total[5m])`, true},
		{`histogram_quantile(0.99, sum by (le) (rate(neardup_h_bucket[5m])))`, true},
		{`neardup_h_sum / neardup_h_count`, true},
		{`neardup_a_total_bucket`, false}, // a counter has no buckets
		{`neardup_b_total`, false},
		{`up`, false}, // names no neardup metric
	} {
		if bad := unknownNames(fams, c.expr); (len(bad) == 0) != c.ok {
			t.Errorf("unknownNames(%q) = %q; want ok = %v", c.expr, bad, c.ok)
		}
	}
}
