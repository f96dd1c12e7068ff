package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/neardup/neardup/index"
)

// lockedBuffer is a bytes.Buffer safe for the logger's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// servedRepack is a Server with Options.RepackInterval serving a Pebble
// index on a real listener until stop.
type servedRepack struct {
	s      *Server
	db     *index.DB
	c      *Client
	url    string
	log    *lockedBuffer
	cancel context.CancelFunc
	served chan error
}

// serveRepacking starts Serve over a new Pebble index with repacks every
// interval; progress, if not nil, is passed to each Repack. before, if not
// nil, is called before Serve starts (so before any repack) with a client
// of the same Server's Handler, which never repacks: what it stores is in
// the index when the first repack runs.
func serveRepacking(t *testing.T, interval time.Duration, progress func(ctx context.Context, done, total int64), before func(c *Client)) *servedRepack {
	t.Helper()
	db := openIndex(t, "pebble", nil).(*index.DB)
	logs := &lockedBuffer{}
	s, err := New(db, &Options{RepackInterval: interval, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if progress != nil {
		s.repackProgress = func(done, total int64) { progress(ctx, done, total) }
	}
	if before != nil {
		hs := httptest.NewServer(s.Handler())
		before(NewClient(hs.URL, "", nil))
		hs.Close()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sr := &servedRepack{s: s, db: db, url: "http://" + ln.Addr().String(), log: logs, cancel: cancel, served: make(chan error, 1)}
	sr.c = NewClient(sr.url, "", nil)
	go func() { sr.served <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		<-sr.served
	})
	return sr
}

// stop cancels Serve and returns its error and how long it took to return.
func (sr *servedRepack) stop(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	sr.cancel()
	select {
	case err := <-sr.served:
		sr.served <- err // for the cleanup
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return 20 s after its context ended")
	}
	return time.Since(start)
}

// gathered returns the value of the counter or the sample count of the
// histogram name on reg, and whether it is registered.
func gathered(t *testing.T, reg *prometheus.Registry, name string) (float64, bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		m := mf.GetMetric()[0]
		if h := m.GetHistogram(); h != nil {
			return float64(h.GetSampleCount()), true
		}
		return m.GetCounter().GetValue(), true
	}
	return 0, false
}

// scraped returns the value of the sample name (no labels) in the
// server's /metrics exposition.
func scraped(t *testing.T, url, name string) float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err != nil {
				t.Fatalf("/metrics line %q: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("/metrics has no %s", name)
	return 0
}

// waitFor polls cond every 10 ms until it holds, failing after 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// repackDocs are texts with near copies among them (answered duplicate,
// not stored).
func repackDocs(seed uint64, n int) []Document {
	g := newTextGen(seed)
	var docs []Document
	for i := range n {
		text := g.text(120)
		if i%4 == 3 {
			text = g.variant(docs[i-1].Text, 2)
		}
		docs = append(docs, Document{ID: fmt.Sprintf("s%d-%d", seed, i), Text: text})
	}
	return docs
}

// insertAll inserts docs through each client and fails unless every
// server answers alike.
func insertAll(t *testing.T, docs []Document, cs ...*Client) {
	t.Helper()
	for _, d := range docs {
		var first string
		for i, c := range cs {
			res, err := c.Insert(context.Background(), d, Query{})
			if err != nil {
				t.Fatalf("insert %s: %v", d.ID, err)
			}
			got, _ := json.Marshal(res)
			if i == 0 {
				first = string(got)
			} else if string(got) != first {
				t.Fatalf("insert %s: got %s; want %s (as the server that does not repack)", d.ID, got, first)
			}
		}
	}
}

// sameAnswers fails unless both clients answer every text alike (at a low
// threshold, so that answers hold many matches).
func sameAnswers(t *testing.T, docs []Document, got, want *Client) {
	t.Helper()
	q := Query{Threshold: 0.3, Limit: 50}
	for _, d := range docs {
		a, err := got.Check(context.Background(), Document{Text: d.Text}, q)
		if err != nil {
			t.Fatal(err)
		}
		b, err := want.Check(context.Background(), Document{Text: d.Text}, q)
		if err != nil {
			t.Fatal(err)
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) {
			t.Fatalf("check of %s: got %s; want %s (as the server that does not repack)", d.ID, ja, jb)
		}
	}
}

// checkClean fails unless DB.Check finds the index consistent with docs
// documents.
func checkClean(t *testing.T, db *index.DB, docs int64) {
	t.Helper()
	r, err := db.Check(context.Background())
	if err != nil || !r.OK() || r.Documents != docs {
		t.Fatalf("Check: %v, %v; want OK with %d documents", r, err, docs)
	}
}

// TestRepackInterval serves a Pebble index that repacks every 50 ms while
// documents are inserted, checked and deleted through the API, beside an
// index that does not repack: every answer matches, the metrics and the log
// show postings moved, and after shutdown the index is consistent with
// every posting packed.
func TestRepackInterval(t *testing.T) {
	sr := serveRepacking(t, 50*time.Millisecond, nil, nil)
	ref := newTestServer(t, openIndex(t, "pebble", nil), nil)
	rc := NewClient(ref.url, "", nil)
	moved := func() float64 { return scraped(t, sr.url, "neardup_index_repack_postings_total") }
	runs := func() float64 { return scraped(t, sr.url, "neardup_index_repacks_total") }

	// First half: wait for a repack to move postings.
	docs := repackDocs(1, 80)
	insertAll(t, docs[:40], sr.c, rc)
	waitFor(t, "a repack to move postings", func() bool { return moved() > 0 })
	sameAnswers(t, docs[:40], sr.c, rc)

	// Second half, into packed groups, and a delete; then wait for two
	// more repacks, so that one started after the last write.
	insertAll(t, docs[40:], sr.c, rc)
	for _, c := range []*Client{sr.c, rc} {
		if err := c.Delete(context.Background(), docs[0].ID); err != nil {
			t.Fatal(err)
		}
	}
	n := runs()
	waitFor(t, "two more repacks", func() bool { return runs() >= n+2 })
	sameAnswers(t, docs, sr.c, rc)
	if f := scraped(t, sr.url, "neardup_index_repacks_failed_total"); f != 0 {
		t.Errorf("neardup_index_repacks_failed_total %v; want 0\n%s", f, sr.log)
	}
	if c := scraped(t, sr.url, "neardup_index_repack_duration_seconds_count"); c < n+2 {
		t.Errorf("neardup_index_repack_duration_seconds_count %v; want at least %v", c, n+2)
	}
	if g := scraped(t, sr.url, "neardup_index_repack_groups_total"); g <= 0 {
		t.Errorf("neardup_index_repack_groups_total %v; want > 0", g)
	}

	sr.stop(t)
	stored, err := ref.idx.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkClean(t, sr.db, stored.Documents)
	// Every posting is packed: one more repack finds none of its own.
	st, err := sr.db.Repack(context.Background(), nil)
	if err != nil || st.Own != 0 || st.Packed == 0 {
		t.Errorf("repack after serving: %+v, %v; want no posting of its own, some packed", st, err)
	}
	logs := sr.log.String()
	if !strings.Contains(logs, "msg=repacked postings=") || !strings.Contains(logs, "seconds=") {
		t.Errorf("log has no repack line:\n%s", logs)
	}
}

// TestRepackShutdown stops the server while a repack is in progress (held
// after it counted the postings): Serve returns promptly, the repack is
// logged as interrupted and not counted as failed, the index is consistent
// and answers as before, and a later repack finishes the work.
//
// The documents are stored before Serve starts, so the first repack is the
// one held: it has postings to pack. (Stored while serving, a repack could
// run first on the empty index, return "nothing to pack" before the hook
// and be counted too: the test failed about 30% of the time.)
func TestRepackShutdown(t *testing.T) {
	started := make(chan struct{})
	var once sync.Once
	ref := newTestServer(t, openIndex(t, "pebble", nil), nil)
	rc := NewClient(ref.url, "", nil)
	docs := repackDocs(2, 40)
	sr := serveRepacking(t, 50*time.Millisecond, func(ctx context.Context, done, total int64) {
		if done == 0 {
			once.Do(func() { close(started) })
			<-ctx.Done() // hold the repack until shutdown
		}
	}, func(c *Client) { insertAll(t, docs, c, rc) })
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("no repack started within 20 s")
	}

	if d := sr.stop(t); d > 5*time.Second {
		t.Errorf("Serve took %v to return with a repack in progress; want well under 5 s", d)
	}
	reg := sr.s.Registry()
	if v, _ := gathered(t, reg, "neardup_index_repacks_total"); v != 1 {
		t.Errorf("neardup_index_repacks_total %v; want 1", v)
	}
	if v, _ := gathered(t, reg, "neardup_index_repacks_failed_total"); v != 0 {
		t.Errorf("neardup_index_repacks_failed_total %v; want 0 (an interrupted repack is no failure)", v)
	}
	if logs := sr.log.String(); !strings.Contains(logs, `msg="repack interrupted by shutdown"`) || !strings.Contains(logs, "context canceled") {
		t.Errorf("log has no interrupted repack:\n%s", logs)
	}

	stored, err := ref.idx.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkClean(t, sr.db, stored.Documents)
	// The same answers, from a server over the interrupted index.
	after := newTestServer(t, sr.db, nil)
	sameAnswers(t, docs, NewClient(after.url, "", nil), rc)
	// The interrupted repack left the postings for the next one.
	st, err := sr.db.Repack(context.Background(), nil)
	if err != nil || st.Postings == 0 || st.Postings != st.Own {
		t.Errorf("repack after the interrupted one: %+v, %v; want every posting of its own moved", st, err)
	}
	checkClean(t, sr.db, stored.Documents)
}

// TestRepackIntervalZero: without RepackInterval, Serve starts no repack
// and registers no repack metric.
func TestRepackIntervalZero(t *testing.T) {
	sr := serveRepacking(t, 0, func(context.Context, int64, int64) { t.Error("a repack ran with RepackInterval 0") }, nil)
	if sr.s.repack != nil {
		t.Fatal("RepackInterval 0: the server holds a repacker")
	}
	docs := repackDocs(3, 20)
	insertAll(t, docs, sr.c)
	sr.stop(t)
	for _, name := range []string{"neardup_index_repacks_total", "neardup_index_repack_postings_total", "neardup_index_repack_duration_seconds"} {
		if _, ok := gathered(t, sr.s.Registry(), name); ok {
			t.Errorf("%s registered with RepackInterval 0", name)
		}
	}
	st, err := sr.db.Repack(context.Background(), nil)
	if err != nil || st.Packed != 0 || st.Own == 0 {
		t.Errorf("repack after serving: %+v, %v; want every posting still of its own", st, err)
	}
}

// TestRepackOptions: a negative interval is invalid, and an index that
// cannot repack (Redis) is refused rather than silently not repacked.
func TestRepackOptions(t *testing.T) {
	if err := (&Options{RepackInterval: -time.Second}).Validate(); !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), "RepackInterval") {
		t.Errorf("RepackInterval -1s: %v; want ErrInvalidOptions naming RepackInterval", err)
	}
	for _, backend := range []string{"redis", "redis-cluster"} {
		t.Run(backend, func(t *testing.T) {
			idx := openIndex(t, backend, nil)
			_, err := New(idx, &Options{RepackInterval: time.Hour})
			if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), "no packed postings") {
				t.Errorf("New over %s with RepackInterval: %v; want ErrInvalidOptions (no packed postings)", backend, err)
			}
			if _, err := New(idx, &Options{}); err != nil {
				t.Errorf("New over %s without RepackInterval: %v", backend, err)
			}
		})
	}
}
