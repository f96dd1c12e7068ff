package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/minhash"
)

// gatheredValue returns the value of the gauge or counter name whose labels
// include want (name=value pairs), or NaN if the registry has none.
func gatheredValue(t *testing.T, reg prometheus.Gatherer, name string, want ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(want); i += 2 {
				found := false
				for _, lp := range m.GetLabel() {
					found = found || lp.GetName() == want[i] && lp.GetValue() == want[i+1]
				}
				if !found {
					continue next
				}
			}
			switch {
			case m.Gauge != nil:
				return m.GetGauge().GetValue()
			case m.Counter != nil:
				return m.GetCounter().GetValue()
			}
		}
	}
	return math.NaN()
}

// histogramOf returns the histogram name from reg (nil if absent).
func histogramOf(t *testing.T, reg prometheus.Gatherer, name string) *dto.Histogram {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetHistogram()
		}
	}
	return nil
}

// goldenFixture stores, in idx, golden documents whose answer is known
// whatever the banding: a and a2 are the same text (estimated similarity 1,
// a candidate under any banding), so are e and e2; c and d share nothing.
// The truth says (a, a2) and (c, d): the index finds (a, a2) and (e, e2), so
// recall is 1/2 and precision 1/2. x, also a copy of a, is in the index but
// not in the golden set: its matches are not labeled and must not count.
func goldenFixture(t *testing.T, idxs ...index.Index) *GoldenSet {
	t.Helper()
	g := newTextGen(41)
	ta, tc, td, te := g.text(60), g.text(60), g.text(60), g.text(60)
	set := &GoldenSet{
		Docs: []GoldenDoc{{"a", ta}, {"a2", ta}, {"c", tc}, {"d", td}, {"e", te}, {"e2", te}},
		// Unsorted and reversed on purpose: New sorts its copy.
		Truth: []eval.LabeledPair{{A: "d", B: "c", J: math.NaN()}, {A: "a", B: "a2", J: math.NaN()}},
	}
	for _, idx := range idxs {
		cfg := idx.Config()
		sg, err := cfg.NewSigner()
		if err != nil {
			t.Fatal(err)
		}
		var docs []index.Doc
		for _, d := range append(set.Docs, GoldenDoc{"x", ta}) {
			sig, _ := sg.Sign(nil, []byte(d.Text))
			docs = append(docs, index.Doc{ID: d.ID, Sig: sig})
		}
		if err := idx.Insert(context.Background(), docs); err != nil {
			t.Fatal(err)
		}
	}
	return set
}

// fakeClock is a goldenClock whose timers fire when the test says.
type fakeClock struct {
	now    atomic.Int64 // Unix nanoseconds
	timers chan *fakeTimer
}

type fakeTimer struct {
	d       time.Duration
	c       chan time.Time
	stopped atomic.Bool
}

func (f *fakeClock) Now() time.Time { return time.Unix(0, f.now.Load()) }

func (f *fakeClock) NewTimer(d time.Duration) (<-chan time.Time, func() bool) {
	tm := &fakeTimer{d: d, c: make(chan time.Time, 1)}
	f.timers <- tm
	return tm.c, func() bool { return !tm.stopped.Swap(true) }
}

type goldenRun struct {
	res []GoldenResult
	err error
}

// TestGoldenServeInterval serves with a golden set and a fake clock: Serve
// runs the golden set at once, then waits for a timer of GoldenInterval and
// runs again only when it fires, exporting recall, precision, runs and the
// time of the run; shutdown stops the pending timer and Serve returns. No
// sleep: the fake clock's timers fire when the test says. Run with
// -count=20 -cpu 1,2.
func TestGoldenServeInterval(t *testing.T) {
	idx := openIndex(t, "pebble", nil)
	set := goldenFixture(t, idx)
	s, err := New(idx, &Options{Golden: set, GoldenInterval: 90 * time.Minute, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{timers: make(chan *fakeTimer)}
	clock.now.Store(time.Date(2026, 11, 26, 3, 0, 0, 5e8, time.UTC).UnixNano())
	s.golden.clock = clock
	runs := make(chan goldenRun, 4)
	s.golden.ran = func(res []GoldenResult, err error) { runs <- goldenRun{res, err} }
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()

	reg := s.Registry()
	wantRun := func(n int, at time.Time) {
		t.Helper()
		r := <-runs
		if r.err != nil || len(r.res) != 1 || r.res[0].Index != GoldenPrimary {
			t.Fatalf("run %d: %+v", n, r)
		}
		sc := r.res[0].Score
		if sc.Truth != 2 || sc.Predicted != 2 || sc.TruePositives != 1 || sc.Recall != 0.5 || sc.Precision != 0.5 {
			t.Errorf("run %d: truth %d, predicted %d, TP %d, recall %v, precision %v; want 2, 2, 1, 0.5, 0.5 (pairs %v)",
				n, sc.Truth, sc.Predicted, sc.TruePositives, sc.Recall, sc.Precision, r.res[0].Pairs)
		}
		for _, c := range []struct {
			name   string
			labels []string
			want   float64
		}{
			{"neardup_golden_recall", []string{"index", GoldenPrimary}, 0.5},
			{"neardup_golden_precision", []string{"index", GoldenPrimary}, 0.5},
			{"neardup_golden_runs_total", nil, float64(n)},
			{"neardup_golden_failures_total", nil, 0},
			{"neardup_golden_last_run_timestamp_seconds", nil, float64(at.UnixNano()) / 1e9},
		} {
			if got := gatheredValue(t, reg, c.name, c.labels...); got != c.want {
				t.Errorf("after run %d: %s%v = %v; want %v", n, c.name, c.labels, got, c.want)
			}
		}
	}
	wantTimer := func(n int) *fakeTimer {
		t.Helper()
		tm := <-clock.timers
		if tm.d != 90*time.Minute {
			t.Errorf("timer after run %d: %v; want the interval, 90m", n, tm.d)
		}
		select {
		case r := <-runs:
			t.Fatalf("a run (%+v) before the timer after run %d fired", r, n)
		default:
		}
		return tm
	}

	wantRun(1, clock.Now())
	tm := wantTimer(1)
	clock.now.Add(int64(90 * time.Minute))
	tm.c <- clock.Now()
	wantRun(2, clock.Now())
	tm = wantTimer(2)
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if !tm.stopped.Load() {
		t.Error("the pending timer was not stopped at shutdown")
	}
	select {
	case r := <-runs:
		t.Errorf("a run (%+v) after shutdown", r)
	default:
	}
}

// goldenFailingIndex fails its queries while fail is set.
type goldenFailingIndex struct {
	index.Index
	fail atomic.Bool
}

var errGoldenQuery = errors.New("injected query failure")

func (f *goldenFailingIndex) Query(ctx context.Context, sig minhash.Signature, q *index.QueryOptions) ([]index.Match, error) {
	if f.fail.Load() {
		return nil, errGoldenQuery
	}
	return f.Index.Query(ctx, sig, q)
}

// TestGoldenRunShadowReadOnlyAndFailure: through the shadow hook, a golden
// run checks a second index with another banding and another signature
// length (so it must sign under the shadow's own config) and exports both;
// neither index changes; a failing query counts a failure and leaves the
// gauges and the time of the last good run as they were.
func TestGoldenRunShadowReadOnlyAndFailure(t *testing.T) {
	primary := &goldenFailingIndex{Index: openIndex(t, "pebble", nil)}
	shadow := openIndex(t, "pebble", &index.Options{Params: minhash.Params{K: 64}})
	if pc, sc := primary.Config(), shadow.Config(); pc.Params.K == sc.Params.K || pc.Bands == sc.Bands {
		t.Fatalf("shadow %s, primary %s; the test needs other k and bands", sc, pc)
	}
	set := goldenFixture(t, primary, shadow)
	ts := newTestServer(t, primary, &Options{Golden: set})
	s := ts.s
	var withShadow atomic.Bool
	s.golden.shadow = func() index.Index {
		if withShadow.Load() {
			return shadow
		}
		return nil
	}
	before := ts.state()
	ctx := context.Background()
	if _, err := s.GoldenRun(ctx); err != nil {
		t.Fatal(err)
	}
	if v := gatheredValue(t, s.Registry(), "neardup_golden_recall", "index", GoldenShadow); !math.IsNaN(v) {
		t.Errorf("without a shadow: shadow recall %v exported; want none", v)
	}
	withShadow.Store(true)
	res, err := s.GoldenRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Index != GoldenPrimary || res[1].Index != GoldenShadow {
		t.Fatalf("golden run with a shadow: %+v; want primary and shadow", res)
	}
	for _, r := range res {
		if r.Score.Recall != 0.5 || r.Score.Precision != 0.5 || len(r.Pairs) != 2 || r.Pairs[0].A != "a" || r.Pairs[1].A != "e" {
			t.Errorf("%s: recall %v, precision %v, pairs %v; want 0.5, 0.5, (a, a2) and (e, e2)", r.Index, r.Score.Recall, r.Score.Precision, r.Pairs)
		}
		if got := gatheredValue(t, s.Registry(), "neardup_golden_recall", "index", r.Index); got != 0.5 {
			t.Errorf("neardup_golden_recall{index=%q} = %v; want 0.5", r.Index, got)
		}
	}
	if after := ts.state(); after != before {
		t.Errorf("golden runs changed the primary: %+v → %+v", before, after)
	}
	if m := shadow.Metrics(); m.Inserts != uint64(len(set.Docs)+1) || m.Deletes != 0 {
		t.Errorf("golden runs wrote to the shadow: %+v", m)
	}

	last := gatheredValue(t, s.Registry(), "neardup_golden_last_run_timestamp_seconds")
	primary.fail.Store(true)
	if _, err := s.GoldenRun(ctx); !errors.Is(err, errGoldenQuery) || !strings.Contains(err.Error(), "primary") {
		t.Fatalf("golden run over a failing index: %v; want the injected error, naming the primary", err)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"neardup_golden_runs_total", nil, 3},
		{"neardup_golden_failures_total", nil, 1},
		{"neardup_golden_recall", []string{"index", GoldenPrimary}, 0.5},
		{"neardup_golden_last_run_timestamp_seconds", nil, last},
	} {
		if got := gatheredValue(t, s.Registry(), c.name, c.labels...); got != c.want {
			t.Errorf("after a failed run: %s%v = %v; want %v", c.name, c.labels, got, c.want)
		}
	}
}

// TestGoldenOptions: a malformed golden set, or a truth that cannot score
// the index's threshold, is refused by New; a server without one refuses
// GoldenRun; the interval defaults to an hour.
func TestGoldenOptions(t *testing.T) {
	idx := openIndex(t, "pebble", nil)
	docs := []GoldenDoc{{"a", "some text here"}, {"b", "other text there"}}
	for _, c := range []struct {
		set  *GoldenSet
		want string
	}{
		{&GoldenSet{}, "no document"},
		{&GoldenSet{Docs: []GoldenDoc{{"a", "x"}, {"a", "y"}}}, `"a" appears twice`},
		{&GoldenSet{Docs: []GoldenDoc{{"", "x"}}}, "id of 0 bytes"},
		{&GoldenSet{Docs: docs, Truth: []eval.LabeledPair{{A: "a", B: "z"}}}, `names "z"`},
		{&GoldenSet{Docs: docs, TruthThreshold: 0.9}, "cannot score the index's threshold 0.8"},
	} {
		_, err := New(idx, &Options{Golden: c.set})
		if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New with %+v: %v; want ErrInvalidOptions saying %q", c.set, err, c.want)
		}
	}
	if err := (&Options{Golden: &GoldenSet{Docs: docs}, GoldenInterval: time.Millisecond}).Validate(); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("GoldenInterval 1ms: %v; want ErrInvalidOptions", err)
	}
	if o := (&Options{Golden: &GoldenSet{Docs: docs}}).EnsureDefaults(); o.GoldenInterval != DefaultGoldenInterval {
		t.Errorf("default GoldenInterval %v; want %v", o.GoldenInterval, DefaultGoldenInterval)
	}
	s, err := New(idx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.GoldenRun(context.Background()); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("GoldenRun without a golden set: %v; want ErrInvalidOptions", err)
	}
}
