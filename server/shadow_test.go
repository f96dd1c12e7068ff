package server

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
)

// openPebble opens a new Pebble index in a temporary directory.
func openPebble(t *testing.T, o index.Options) (*index.DB, string) {
	t.Helper()
	o.CacheSize, o.MemTableSize = 16<<20, 4<<20
	dir := filepath.Join(t.TempDir(), "index")
	x, err := index.Open(dir, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x, dir
}

// newShadowServer serves primary with shadow (in shadowDir) and a queue of
// queue checks.
func newShadowServer(t *testing.T, primary, shadow index.Index, shadowDir string, queue int) *testServer {
	t.Helper()
	ts := newTestServer(t, primary, &Options{Shadow: &ShadowOptions{Index: shadow, Journal: JournalPath(shadowDir), QueueSize: queue}})
	t.Cleanup(func() { ts.s.Close() })
	return ts
}

// waitShadow waits until the server's shadow has caught up.
func waitShadow(t *testing.T, s *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.shadow.waitIdle(ctx); err != nil {
		t.Fatalf("the shadow did not catch up: %v", err)
	}
}

// pFound is the probability that a check finds a stored document whose
// features have Jaccard similarity j with its own, under k 64-bit KHash slots
// (each agreeing independently with probability j), banded into bands×rows
// (the first bands·rows slots), and verified at threshold t (at least t·k
// slots agree): the banding's S-curve joined with verification, computed
// exactly over (slots agreeing so far, some band agreed).
func pFound(j float64, k, bands, rows int, t float64) float64 {
	binom := func(n int) []float64 {
		p := make([]float64, n+1)
		for x := 0; x <= n; x++ {
			lc, _ := math.Lgamma(float64(n + 1))
			a, _ := math.Lgamma(float64(x + 1))
			b, _ := math.Lgamma(float64(n - x + 1))
			p[x] = math.Exp(lc-a-b) * math.Pow(j, float64(x)) * math.Pow(1-j, float64(n-x))
		}
		return p
	}
	dp := make([][2]float64, k+1)
	dp[0][0] = 1
	band := binom(rows)
	for range bands {
		next := make([][2]float64, k+1)
		for m := range dp {
			for f := range 2 {
				if dp[m][f] == 0 {
					continue
				}
				for x, px := range band {
					nf := f
					if x == rows {
						nf = 1
					}
					next[m+x][nf] += dp[m][f] * px
				}
			}
		}
		dp = next
	}
	if rest := k - bands*rows; rest > 0 {
		next := make([][2]float64, k+1)
		for m := range dp {
			for x, px := range binom(rest) {
				if m+x <= k {
					next[m+x][1] += dp[m][1] * px
				}
			}
		}
		dp = next
	}
	var p float64
	for m := range dp {
		if float64(m)/float64(k) >= t {
			p += dp[m][1]
		}
	}
	return p
}

func TestPFoundIsTheSCurveWithoutVerification(t *testing.T) {
	for _, j := range []float64{0.1, 0.4, 0.6, 0.8, 0.95} {
		for _, b := range []lsh.Params{{Bands: 16, Rows: 8}, {Bands: 32, Rows: 4}, {Bands: 20, Rows: 5}} {
			got, want := pFound(j, 128, b.Bands, b.Rows, 1e-9), b.Probability(j)
			if math.Abs(got-want) > 1e-9 {
				t.Errorf("pFound(%v, %v) = %v; want the S-curve's %v", j, b, got, want)
			}
		}
	}
}

// TestShadowAgreementSCurves feeds a primary (16 bands of 8 rows) and a
// shadow (32 of 4, another seed) the same inserts through the server, checks
// variants of the stored documents, and compares what each found, and how
// often they agreed, with what the two bandings' S-curves (joined with
// verification at the threshold) predict for the variants' true Jaccard
// similarities. The sides' hash functions are independent (other seeds), so
// the chance that they agree on check i is a_i = p_i·q_i + (1−p_i)(1−q_i);
// the agreements are a sum of independent Bernoullis, and the tolerance is 4
// standard deviations √Σa_i(1−a_i) (the false-failure chance of each of the
// three comparisons is about 6e-5).
func TestShadowAgreementSCurves(t *testing.T) {
	const (
		k         = 128
		threshold = 0.5
		n         = 300
		words     = 100
	)
	spec := shingle.Prose
	pb, sb := lsh.Params{Bands: 16, Rows: 8}, lsh.Params{Bands: 32, Rows: 4}
	primary, _ := openPebble(t, index.Options{Spec: spec, Params: minhash.Params{K: k, Scheme: minhash.KHash, Bits: 64, Seed: 1},
		Bands: pb, Threshold: threshold, BucketCap: index.Unlimited})
	shadow, shadowDir := openPebble(t, index.Options{Spec: spec, Params: minhash.Params{K: k, Scheme: minhash.KHash, Bits: 64, Seed: 2},
		Bands: sb, Threshold: threshold, BucketCap: index.Unlimited})
	ts := newShadowServer(t, primary, shadow, shadowDir, n)

	sh, err := shingle.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	jaccard := func(a, b string) float64 {
		set := func(s string) map[uint64]bool {
			m := map[uint64]bool{}
			for _, f := range sh.AppendFeatures(nil, []byte(s)) {
				m[f] = true
			}
			return m
		}
		sa, sb := set(a), set(b)
		var inter int
		for f := range sa {
			if sb[f] {
				inter++
			}
		}
		return float64(inter) / float64(len(sa)+len(sb)-inter)
	}

	g := newTextGen(11)
	bases, queries := make([]string, n), make([]string, n)
	var wantP, varP, wantS, varS, wantA, varA float64
	for i := range n {
		bases[i] = g.text(words)
		queries[i] = g.variant(bases[i], 1+i%9)
		j := jaccard(bases[i], queries[i])
		p, q := pFound(j, k, pb.Bands, pb.Rows, threshold), pFound(j, k, sb.Bands, sb.Rows, threshold)
		a := p*q + (1-p)*(1-q)
		wantP, varP = wantP+p, varP+p*(1-p)
		wantS, varS = wantS+q, varS+q*(1-q)
		wantA, varA = wantA+a, varA+a*(1-a)
	}
	for i, b := range bases {
		if r := ts.post("/v1/documents", Document{ID: fmt.Sprintf("b%03d", i), Text: b}); r.status != http.StatusCreated {
			t.Fatalf("insert %d: status %d: %s", i, r.status, r.body)
		}
	}
	waitShadow(t, ts.s) // the shadow holds every insert before the checks
	if st, _ := shadow.Stats(context.Background()); st.Documents != n {
		t.Fatalf("shadow holds %d documents; want %d", st.Documents, n)
	}
	var primaryFound int
	for i, q := range queries {
		r := ts.post("/v1/check", Document{Text: q})
		var res CheckResult
		r.decode(t, &res)
		if res.Status == StatusDuplicate {
			primaryFound++
			if res.Duplicates[0].ID != fmt.Sprintf("b%03d", i) {
				t.Errorf("check %d found %s; want b%03d", i, res.Duplicates[0].ID, i)
			}
		}
	}
	waitShadow(t, ts.s)
	var rep ShadowReport
	ts.call("GET", "/v1/shadow", "", nil).decode(t, &rep)
	if rep.Checks != n || rep.Dropped != 0 || rep.Failed != 0 {
		t.Fatalf("report %+v; want %d checks, none dropped or failed", rep, n)
	}
	v := rep.Verdicts
	shadowFound := v.BothDuplicate + v.ShadowOnly
	if got := v.BothDuplicate + v.PrimaryOnly; got != int64(primaryFound) {
		t.Errorf("report says the primary found %d; the answers said %d", got, primaryFound)
	}
	within := func(what string, got int64, want, variance float64) {
		t.Helper()
		tol := 4 * math.Sqrt(variance)
		t.Logf("%s: got %d; predicted %.1f ± %.1f", what, got, want, tol)
		if math.Abs(float64(got)-want) > tol {
			t.Errorf("%s: got %d; want %.1f ± %.1f (4σ)", what, got, want, tol)
		}
	}
	within("primary found", int64(primaryFound), wantP, varP)
	within("shadow found", shadowFound, wantS, varS)
	within("agreements", rep.Agreements, wantA, varA)
	if rep.Agreements != v.BothDuplicate+v.BothNew {
		t.Errorf("agreements %d; want both_duplicate + both_new = %d", rep.Agreements, v.BothDuplicate+v.BothNew)
	}
	// The bandings differ enough for the test to mean something.
	if math.Abs(wantP-wantS) < 0.2*n {
		t.Fatalf("the predicted hits %.1f and %.1f are too close to tell the bandings apart", wantP, wantS)
	}
	for name, want := range map[string]float64{
		"neardup_shadow_checks_total":                       float64(rep.Checks),
		"neardup_shadow_agreements_total":                   float64(rep.Agreements),
		"neardup_shadow_dropped_total":                      0,
		"neardup_shadow_queue_depth":                        0,
		"neardup_shadow_candidates_count{index=\"shadow\"}": float64(rep.Checks),
	} {
		name, labels, _ := strings.Cut(strings.TrimSuffix(name, "}"), "{")
		if got := metricValue(t, ts, name, labels); got != want {
			t.Errorf("%s{%s} = %v; want %v", name, labels, got, want)
		}
	}
	if got := metricValue(t, ts, "neardup_shadow_matches_total", `side="both"`); got != float64(rep.Matches.Both) {
		t.Errorf(`neardup_shadow_matches_total{side="both"} = %v; want %d`, got, rep.Matches.Both)
	}
}

// metricValue returns the value of the series name{labels} (labels as
// /metrics prints them, "" for none) from the server's /metrics.
func metricValue(t *testing.T, ts *testServer, name, labels string) float64 {
	t.Helper()
	r := ts.call(http.MethodGet, "/metrics", "", nil)
	series := name
	if labels != "" {
		series += "{" + labels + "}"
	}
	for _, line := range strings.Split(string(r.body), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("/metrics has no series %s", series)
	return 0
}

// stuckIndex is a shadow that blocks every Query and Insert until release.
type stuckIndex struct {
	index.Index
	gate chan struct{}
	once sync.Once
}

func (s *stuckIndex) release() { s.once.Do(func() { close(s.gate) }) }

func (s *stuckIndex) wait(ctx context.Context) error {
	select {
	case <-s.gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *stuckIndex) Query(ctx context.Context, sig minhash.Signature, q *index.QueryOptions) ([]index.Match, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.Index.Query(ctx, sig, q)
}

func (s *stuckIndex) Insert(ctx context.Context, docs []index.Doc) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.Index.Insert(ctx, docs)
}

// TestShadowOverloadNeverBlocks serves with a shadow that answers nothing
// until the end: every check and insert is answered while it is stuck (the
// test would hang otherwise), each check exactly as the primary alone
// answers it, the checks past the queue are dropped and counted, and once
// the shadow moves it catches up with every acknowledged insert. It asserts
// on counts and order, never on times.
func TestShadowOverloadNeverBlocks(t *testing.T) {
	const queue, checks, inserts = 4, 40, 20
	primary, _ := openPebble(t, index.Options{Threshold: 0.5})
	inner, shadowDir := openPebble(t, index.Options{Threshold: 0.5, Bands: lsh.Params{Bands: 32, Rows: 4}})
	slow := &stuckIndex{Index: inner, gate: make(chan struct{})}
	defer slow.release()
	// The checks wait for the stuck shadow to apply the inserts before them
	// (ShadowOptions.ApplyWait): a bound this test never reaches.
	ts := newTestServer(t, primary, &Options{Shadow: &ShadowOptions{Index: slow, Journal: JournalPath(shadowDir), QueueSize: queue, ApplyWait: time.Hour}})
	t.Cleanup(func() { ts.s.Close() })

	g := newTextGen(5)
	texts := make([]string, inserts)
	for i := range texts {
		texts[i] = g.text(60)
		if r := ts.post("/v1/documents", Document{ID: fmt.Sprintf("d%02d", i), Text: texts[i]}); r.status != http.StatusCreated {
			t.Fatalf("insert %d with the shadow stuck: status %d: %s", i, r.status, r.body)
		}
	}
	sg, _ := primary.Config().NewSigner()
	for i := range checks {
		text := g.variant(texts[i%inserts], i%4)
		r := ts.post("/v1/check", Document{Text: text})
		var got CheckResult
		r.decode(t, &got)
		sig, _ := sg.Sign(nil, []byte(text))
		ms, err := primary.Query(context.Background(), sig, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Duplicates) != len(ms) || len(ms) > 0 && got.Duplicates[0].ID != ms[0].ID {
			t.Errorf("check %d: %+v; the primary alone answers %+v", i, got.Duplicates, ms)
		}
	}
	rep := ts.s.shadow.report()
	// The worker holds at most one check, the queue `queue`: the rest were
	// dropped, none was compared yet.
	if rep.Checks != 0 || rep.Dropped < checks-queue-1 || rep.Dropped > checks-queue {
		t.Errorf("with the shadow stuck: %d compared, %d dropped; want 0 and %d..%d", rep.Checks, rep.Dropped, checks-queue-1, checks-queue)
	}
	if got := metricValue(t, ts, "neardup_shadow_dropped_total", ""); got != float64(rep.Dropped) {
		t.Errorf("neardup_shadow_dropped_total = %v; want %d", got, rep.Dropped)
	}
	if rep.JournalBytes == 0 || rep.InsertsApplied != 0 {
		t.Errorf("with the shadow stuck: journal %d bytes, %d applied; want the inserts waiting in the journal", rep.JournalBytes, rep.InsertsApplied)
	}
	slow.release()
	waitShadow(t, ts.s)
	rep = ts.s.shadow.report()
	if rep.Checks != checks-rep.Dropped || rep.Stale != 0 || rep.InsertsApplied < inserts || rep.JournalBytes != 0 {
		t.Errorf("after the shadow moved: %+v; want %d checks compared, %d inserts applied, the journal empty", rep, checks-rep.Dropped, inserts)
	}
	for i := range inserts {
		if _, err := inner.Get(context.Background(), fmt.Sprintf("d%02d", i)); err != nil {
			t.Errorf("the shadow lacks acknowledged insert d%02d: %v", i, err)
		}
	}
}
