package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
)

// TestShadowJournalTornTail: a journal whose last record is torn (a crash in
// the middle of an append, never acknowledged) or damaged opens with the
// whole records before it, and appends go on after them.
func TestShadowJournalTornTail(t *testing.T) {
	for _, tail := range []struct {
		name string
		cut  func(whole []byte) []byte
	}{
		{"half a header", func(b []byte) []byte { return b[:4] }},
		{"half a payload", func(b []byte) []byte { return b[:len(b)-3] }},
		{"a flipped byte", func(b []byte) []byte { c := slices.Clone(b); c[len(c)-1] ^= 1; return c }},
		{"a zero length", func(b []byte) []byte { return make([]byte, 8) }},
	} {
		t.Run(tail.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "j")
			recs := []journalRecord{
				{op: opInsert, id: "a", meta: []byte(`{"x":1}`), sig: minhash.Signature{1, 2, 3}},
				{op: opDelete, id: "a"},
				{op: opInsert, id: "b", sig: minhash.Signature{4}},
			}
			j, err := openJournal(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := j.appendRecords(recs); err != nil {
				t.Fatal(err)
			}
			whole := j.end()
			j.close()
			f, _ := os.OpenFile(path, os.O_WRONLY, 0)
			f.WriteAt(tail.cut(appendJournalRecord(nil, &journalRecord{op: opInsert, id: "torn", sig: minhash.Signature{9, 0xfffefdfcfbfaf9f8}})), whole)
			f.Close()

			j, err = openJournal(path)
			if err != nil {
				t.Fatal(err)
			}
			defer j.close()
			if got := j.end(); got != whole {
				t.Fatalf("reopened at %d bytes; want the %d of the whole records", got, whole)
			}
			if err := j.appendRecords([]journalRecord{{op: opDelete, id: "b"}}); err != nil {
				t.Fatal(err)
			}
			want := append(slices.Clone(recs), journalRecord{op: opDelete, id: "b"})
			var off int64
			for i, w := range want {
				r, next, err := j.readRecord(off)
				if err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
				if r.op != w.op || r.id != w.id || string(r.meta) != string(w.meta) || !slices.Equal(r.sig, w.sig) {
					t.Errorf("record %d: got %+v; want %+v", i, r, w)
				}
				off = next
			}
			if off != j.end() {
				t.Errorf("records end at %d; the journal at %d", off, j.end())
			}
		})
	}
}

// failingIndex fails every Insert and Delete after the first n.
type failingIndex struct {
	index.Index
	n int
}

var errInjected = errors.New("injected failure")

func (f *failingIndex) step() error {
	if f.n <= 0 {
		return fmt.Errorf("%w: %w", index.ErrStorage, errInjected)
	}
	f.n--
	return nil
}

func (f *failingIndex) Insert(ctx context.Context, docs []index.Doc) error {
	if err := f.step(); err != nil {
		return err
	}
	return f.Index.Insert(ctx, docs)
}

func (f *failingIndex) Delete(ctx context.Context, id string) error {
	if err := f.step(); err != nil {
		return err
	}
	return f.Index.Delete(ctx, id)
}

// TestReplayShadowJournalResumes interrupts the replay of a journal (an id
// inserted, deleted and inserted again with another text, another deleted)
// after each of its steps, then replays it again in full: whatever the
// interruption, the index ends as one uninterrupted replay leaves it, and
// the journal is emptied.
func TestReplayShadowJournalResumes(t *testing.T) {
	g := newTextGen(3)
	probe, _ := openPebble(t, index.Options{})
	sg, _ := probe.Config().NewSigner()
	sig := func(text string) minhash.Signature { s, _ := sg.Sign(nil, []byte(text)); return s }
	a, b1, b2, c := g.text(40), g.text(40), g.text(40), g.text(40)
	recs := []journalRecord{
		{op: opInsert, id: "a", sig: sig(a)},
		{op: opInsert, id: "b", sig: sig(b1), meta: []byte(`{"v":1}`)},
		{op: opInsert, id: "c", sig: sig(c)},
		{op: opDelete, id: "b"},
		{op: opInsert, id: "b", sig: sig(b2), meta: []byte(`{"v":2}`)},
		{op: opDelete, id: "a"},
		{op: opInsert, id: "a", sig: sig(a)},
		{op: opDelete, id: "a"},
	}
	want := map[string]minhash.Signature{"b": sig(b2), "c": sig(c)}
	for stop := range len(recs) + 1 {
		t.Run(fmt.Sprintf("stopped after %d", stop), func(t *testing.T) {
			x, dir := openPebble(t, index.Options{})
			path := JournalPath(dir)
			j, err := openJournal(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := j.appendRecords(recs); err != nil {
				t.Fatal(err)
			}
			j.close()
			_, err = ReplayShadowJournal(context.Background(), &failingIndex{Index: x, n: stop}, path)
			if err == nil && stop < 6 { // 6 steps: inserts a, b, c as one; then one each
				t.Fatalf("the replay stopped after %d steps did not fail", stop)
			}
			if _, err := ReplayShadowJournal(context.Background(), x, path); err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{"a", "b", "c"} {
				d, err := x.Get(context.Background(), id)
				switch {
				case want[id] == nil && !errors.Is(err, index.ErrNotFound):
					t.Errorf("%s: %v, %v; want it absent", id, d.ID, err)
				case want[id] != nil && (err != nil || !slices.Equal(d.Sig, want[id])):
					t.Errorf("%s: %v; want it stored with its last signature", id, err)
				}
			}
			if st, _ := os.Stat(path); st == nil || st.Size() != 0 {
				t.Errorf("the journal after a full replay: %v; want it empty", st)
			}
		})
	}
}

// TestShadowFollowsWrites: a batch's new documents, a retried insert and a
// delete reach the shadow; GET /v1/shadow without a shadow answers 404.
func TestShadowFollowsWrites(t *testing.T) {
	primary, _ := openPebble(t, index.Options{})
	shadow, dir := openPebble(t, index.Options{Threshold: 0.6})
	ts := newShadowServer(t, primary, shadow, dir, 8)
	g := newTextGen(9)
	x, y := g.text(50), g.text(50)
	body := fmt.Sprintf("{\"id\":\"x\",\"text\":%q}\n{\"id\":\"x2\",\"text\":%q}\n{\"id\":\"y\",\"text\":%q}\n", x, x, y)
	r := ts.call(http.MethodPost, "/v1/documents:batch", typeNDJSON, []byte(body))
	if r.status != http.StatusOK || strings.Count(string(r.body), `"new"`) != 2 {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}
	if r := ts.post("/v1/documents", Document{ID: "y", Text: y}); r.status != http.StatusOK {
		t.Fatalf("retry of y: %d %s", r.status, r.body)
	}
	if r := ts.call(http.MethodDelete, "/v1/documents/x", "", nil); r.status != http.StatusNoContent {
		t.Fatalf("delete x: %d %s", r.status, r.body)
	}
	waitShadow(t, ts.s)
	for id, present := range map[string]bool{"x": false, "x2": false, "y": true} {
		_, err := shadow.Get(context.Background(), id)
		if present != (err == nil) {
			t.Errorf("shadow Get(%s): %v; want present %v", id, err, present)
		}
	}
	rep := ts.s.shadow.report()
	if rep.InsertsApplied != 3 || rep.DeletesApplied != 1 || rep.InsertsFailed != 0 { // y twice: the retry journals it again
		t.Errorf("report %+v; want 3 inserts applied (x, y, y again), 1 delete, none failed", rep)
	}
	plain := newTestServer(t, primary, nil)
	if r := plain.call(http.MethodGet, "/v1/shadow", "", nil); r.status != http.StatusNotFound || r.errorCode() != CodeNotFound {
		t.Errorf("GET /v1/shadow without a shadow: %d %s; want 404 not_found", r.status, r.body)
	}
}

// TestShadowJournalAppliedAtNextStart: writes acknowledged while the shadow
// was stuck stay in the journal when the server stops, and the next server
// over the same shadow applies them before anything else.
func TestShadowJournalAppliedAtNextStart(t *testing.T) {
	primary, _ := openPebble(t, index.Options{})
	inner, dir := openPebble(t, index.Options{Bands: lsh.Params{Bands: 32, Rows: 4}})
	stuck := &stuckIndex{Index: inner, gate: make(chan struct{})}
	ts := newShadowServer(t, primary, stuck, dir, 4)
	g := newTextGen(21)
	for i := range 10 {
		if r := ts.post("/v1/documents", Document{ID: fmt.Sprintf("s%d", i), Text: g.text(40)}); r.status != http.StatusCreated {
			t.Fatalf("insert %d: %d %s", i, r.status, r.body)
		}
	}
	if r := ts.call(http.MethodDelete, "/v1/documents/s3", "", nil); r.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if err := ts.s.Close(); err != nil { // the applier gives up its stuck insert
		t.Fatal(err)
	}
	if st, _ := inner.Stats(context.Background()); st.Documents != 0 {
		t.Fatalf("the stuck shadow holds %d documents; want 0", st.Documents)
	}
	if st, err := os.Stat(JournalPath(dir)); err != nil || st.Size() == 0 {
		t.Fatalf("journal after stopping: %v, %v; want the 11 writes", st, err)
	}
	ts2 := newShadowServer(t, primary, inner, dir, 4)
	waitShadow(t, ts2.s)
	for i := range 10 {
		_, err := inner.Get(context.Background(), fmt.Sprintf("s%d", i))
		if (i == 3) != errors.Is(err, index.ErrNotFound) {
			t.Errorf("s%d in the shadow: %v", i, err)
		}
	}
}

// TestJournalPosGoesOn checks that a journal position never goes back when
// the journal is emptied: a check queued before the reset waits for a
// position the applier's (base+offset) reaches.
func TestJournalPosGoesOn(t *testing.T) {
	j, err := openJournal(filepath.Join(t.TempDir(), "j"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.close()
	rec := []journalRecord{{op: opDelete, id: "a"}}
	if err := j.appendRecords(rec); err != nil {
		t.Fatal(err)
	}
	first := j.pos()
	if first != j.end() || first == 0 {
		t.Fatalf("pos %d, end %d; want equal and past 0 before any reset", first, j.end())
	}
	if done, err := j.reset(first, true); !done || err != nil {
		t.Fatalf("reset: %v, %v; want done", done, err)
	}
	if got := j.pos(); got != first {
		t.Errorf("pos after reset = %d; want %d (where the emptied records ended)", got, first)
	}
	if err := j.appendRecords(rec); err != nil {
		t.Fatal(err)
	}
	if got, want := j.pos(), first+j.end(); got != want || j.end() != first {
		t.Errorf("pos after an append = %d (end %d); want %d", got, j.end(), want)
	}
}
