package server

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/neardup/neardup/index"
)

// slowApplyIndex is a shadow whose every Insert (the journal's applier)
// first waits delay: the journal is applied well after the writes it holds
// were acknowledged.
type slowApplyIndex struct {
	index.Index
	delay time.Duration
}

func (s *slowApplyIndex) Insert(ctx context.Context, docs []index.Doc) error {
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.Index.Insert(ctx, docs)
}

// TestShadowCheckSeesEarlierWrites inserts documents into a server whose
// shadow (the primary's config: they must agree on everything) applies the
// journal slowly, and checks each one again right after its insert is
// acknowledged. The check must be compared once the shadow holds the
// insert: every check agrees, both say duplicate. Before checks waited for
// the journal position they were offered at, the shadow answered "new"
// while the insert was still in the journal, a disagreement.
func TestShadowCheckSeesEarlierWrites(t *testing.T) {
	const docs = 8
	primary, _ := openPebble(t, index.Options{Threshold: 0.5})
	inner, shadowDir := openPebble(t, index.Options{Threshold: 0.5})
	ts := newShadowServer(t, primary, &slowApplyIndex{Index: inner, delay: 20 * time.Millisecond}, shadowDir, docs)

	g := newTextGen(7)
	for i := range docs {
		text := g.text(60)
		if r := ts.post("/v1/documents", Document{ID: fmt.Sprintf("d%d", i), Text: text}); r.status != http.StatusCreated {
			t.Fatalf("insert %d: status %d: %s", i, r.status, r.body)
		}
		var res CheckResult
		ts.post("/v1/check", Document{Text: text}).decode(t, &res)
		if res.Status != StatusDuplicate {
			t.Fatalf("check %d: the primary answered %s; want duplicate", i, res.Status)
		}
	}
	waitShadow(t, ts.s)
	rep := ts.s.shadow.report()
	if rep.Checks != docs || rep.Agreements != docs || rep.Verdicts.BothDuplicate != docs || rep.Stale != 0 {
		t.Errorf("report %+v; want %d checks, all agreeing (both duplicate), none stale", rep, docs)
	}
}

// TestShadowCheckGivesUpWhenStale checks, with a shadow stuck on applying
// an acknowledged insert, that a check offered after it waits at most
// ApplyWait and is then not compared but counted stale (in the report and in
// neardup_shadow_stale_total), and that checks go on being compared once
// the shadow moves. It waits on the stuck shadow, never on a timer.
func TestShadowCheckGivesUpWhenStale(t *testing.T) {
	primary, _ := openPebble(t, index.Options{Threshold: 0.5})
	inner, shadowDir := openPebble(t, index.Options{Threshold: 0.5})
	stuck := &stuckIndex{Index: inner, gate: make(chan struct{})}
	defer stuck.release()
	ts := newTestServer(t, primary, &Options{Shadow: &ShadowOptions{Index: stuck, Journal: JournalPath(shadowDir), ApplyWait: 10 * time.Millisecond}})
	t.Cleanup(func() { ts.s.Close() })

	g := newTextGen(3)
	text := g.text(60)
	if r := ts.post("/v1/documents", Document{ID: "d", Text: text}); r.status != http.StatusCreated {
		t.Fatalf("insert: status %d: %s", r.status, r.body)
	}
	ts.post("/v1/check", Document{Text: text})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ts.s.shadow.mu.Lock()
	for ts.s.shadow.pending > 0 && ctx.Err() == nil { // the check given up
		ts.s.shadow.idle.Wait()
	}
	rep := ts.s.shadow.rep
	ts.s.shadow.mu.Unlock()
	if rep.Stale != 1 || rep.Checks != 0 || rep.InsertsApplied != 0 {
		t.Fatalf("with the shadow stuck: %+v; want the check stale, none compared, nothing applied", rep)
	}
	if got := metricValue(t, ts, "neardup_shadow_stale_total", ""); got != 1 {
		t.Errorf("neardup_shadow_stale_total = %v; want 1", got)
	}
	stuck.release()
	waitShadow(t, ts.s) // the insert applied: the next check need not wait
	ts.post("/v1/check", Document{Text: text})
	waitShadow(t, ts.s)
	if rep := ts.s.shadow.report(); rep.Stale != 1 || rep.Checks != 1 || rep.Agreements != 1 {
		t.Errorf("after the shadow moved: %+v; want the second check compared and agreeing", rep)
	}
}
