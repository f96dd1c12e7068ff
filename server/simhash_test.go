package server

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/sketch"
)

// TestShadowAndGoldenSimHash: a SimHash shadow beside a MinHash primary, and
// a MinHash shadow beside a SimHash primary, each signs the journaled texts
// and the checks under its own sketch: inserted texts checked again are
// duplicates on both sides, new texts new on both. A golden run scores each
// index under its own sketch (the fixture's identical texts found, the
// unrelated pair missed).
func TestShadowAndGoldenSimHash(t *testing.T) {
	simOpts := index.Options{Sketch: sketch.SimHash, SimHash: index.SimHashOptions{Hamming: 3}}
	for _, c := range []struct {
		name            string
		primary, shadow index.Options
	}{
		{"minhash-primary", index.Options{}, simOpts},
		{"simhash-primary", simOpts, index.Options{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			const n = 20
			primary, _ := openPebble(t, c.primary)
			shadow, shadowDir := openPebble(t, c.shadow)
			if (primary.Config().Sketch == sketch.SimHash) == (shadow.Config().Sketch == sketch.SimHash) {
				t.Fatalf("primary %s, shadow %s: the test needs one index of each sketch", primary.Config(), shadow.Config())
			}
			ts := newShadowServer(t, primary, shadow, shadowDir, 2*n)
			g := newTextGen(7)
			bases := make([]string, n)
			for i := range bases {
				bases[i] = g.text(80)
				if r := ts.post("/v1/documents", Document{ID: fmt.Sprintf("b%03d", i), Text: bases[i]}); r.status != http.StatusCreated {
					t.Fatalf("insert %d: status %d: %s", i, r.status, r.body)
				}
			}
			waitShadow(t, ts.s)
			if st, _ := shadow.Stats(context.Background()); st.Documents != n {
				t.Fatalf("shadow holds %d documents; want %d", st.Documents, n)
			}
			for i, b := range bases {
				var res CheckResult
				ts.post("/v1/check", Document{Text: b}).decode(t, &res)
				if res.Status != StatusDuplicate || res.Duplicates[0].ID != fmt.Sprintf("b%03d", i) || res.Duplicates[0].Similarity != 1 {
					t.Fatalf("check of b%03d's text: %+v", i, res)
				}
				ts.post("/v1/check", Document{Text: g.text(80)}).decode(t, &res)
				if res.Status != StatusNew {
					t.Fatalf("check of a new text: %+v", res)
				}
			}
			waitShadow(t, ts.s)
			var rep ShadowReport
			ts.call("GET", "/v1/shadow", "", nil).decode(t, &rep)
			v := rep.Verdicts
			if rep.Checks != 2*n || rep.Failed != 0 || rep.Dropped != 0 || v.BothDuplicate != n || v.BothNew != n || rep.Agreements != 2*n {
				t.Errorf("shadow report %+v; want %d checks, %d duplicates and %d new on both sides", rep, 2*n, n, n)
			}
		})
		t.Run(c.name+"-golden", func(t *testing.T) {
			primary, _ := openPebble(t, c.primary)
			shadow, _ := openPebble(t, c.shadow)
			set := goldenFixture(t, primary, shadow)
			ts := newTestServer(t, primary, &Options{Golden: set})
			ts.s.golden.shadow = func() index.Index { return shadow }
			res, err := ts.s.GoldenRun(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != 2 {
				t.Fatalf("golden run: %+v; want primary and shadow", res)
			}
			for _, r := range res {
				if r.Score.Recall != 0.5 || r.Score.Precision != 0.5 || len(r.Pairs) != 2 || r.Pairs[0].A != "a" || r.Pairs[1].A != "e" {
					t.Errorf("%s: recall %v, precision %v, pairs %v; want 0.5, 0.5, (a, a2) and (e, e2)", r.Index, r.Score.Recall, r.Score.Precision, r.Pairs)
				}
			}
		})
	}
}
