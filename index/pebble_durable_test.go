package index

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/neardup/neardup/internal/faultfs"
)

// gatedFS is a filesystem whose WAL syncs wait while mu is held by the test:
// a write is then visible (applied) but not durable for as long as the test
// likes.
type gatedFS struct {
	faultfs.FS
	mu sync.Mutex
}

func newGatedFS(fs vfs.FS) *gatedFS {
	g := &gatedFS{}
	g.FS = faultfs.FS{FS: fs, Hook: func(ev faultfs.Event) error {
		if ev.Op == faultfs.Sync && strings.HasSuffix(ev.Name, ".log") {
			g.mu.Lock()
			g.mu.Unlock() //nolint:staticcheck // an empty critical section: wait for the gate
		}
		return nil
	}}
	return g
}

// TestDuplicateAnswersAreDurable holds the WAL's syncs while a document is
// inserted, so that it is visible but not durable, and checks that no answer
// naming it (a check, a check-and-insert's "duplicate") is given before it is
// durable: at the moment each answer arrives, a crash of the machine (a
// clone of the filesystem with only synced data) keeps the document. An
// answer that names only durable documents does not wait.
func TestDuplicateAnswersAreDurable(t *testing.T) {
	ctx := context.Background()
	mem := vfs.NewCrashableMem()
	fs := newGatedFS(mem)
	opts := &Options{CacheSize: 8 << 20, MemTableSize: 4 << 20}
	db, err := open("idx", opts, fs)
	if err != nil {
		t.Fatal(err)
	}
	held := false
	defer func() {
		if held {
			fs.mu.Unlock()
		}
		db.Close()
	}()
	c := db.Config()
	g := newTextGen(5)
	oldText, freshText := g.text(150), g.text(150)
	if err := db.Insert(ctx, []Doc{docOf(t, c, "old", oldText)}); err != nil {
		t.Fatal(err)
	}

	// crashHolds reports whether a crash now would keep document id.
	crashHolds := func(id string) bool {
		t.Helper()
		clone := mem.CrashClone(vfs.CrashCloneCfg{})
		x, err := open("idx", &Options{CacheSize: 8 << 20, ReadOnly: true}, clone)
		if err != nil {
			t.Fatalf("opening the crash clone: %v", err)
		}
		defer x.Close()
		_, err = x.Get(ctx, id)
		if err != nil && !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}

	fs.mu.Lock() // hold WAL syncs
	held = true
	inserted := make(chan error, 1)
	go func() {
		_, err := db.CheckAndInsert(ctx, []Doc{docOf(t, c, "fresh", freshText)}, nil)
		inserted <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := db.Get(ctx, "fresh"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the insert never became visible")
		}
	}
	if crashHolds("fresh") {
		t.Fatal("the document is durable already: the test's WAL gate does not hold syncs")
	}

	// A check that names only the old, durable document answers at once.
	barriers := db.Metrics().SyncBarriers
	ms, err := db.Query(ctx, signOf(t, c, g.variant(oldText, 1)), nil)
	if err != nil || len(ms) != 1 || ms[0].ID != "old" {
		t.Fatalf("query of a near copy of the old document: %v %v; want old", ms, err)
	}
	if got := db.Metrics().SyncBarriers; got != barriers {
		t.Errorf("a query matching only durable documents waited for %d sync barriers; want 0", got-barriers)
	}

	// Answers that name the fresh document.
	type answer struct {
		what string
		ids  []string
		err  error
	}
	answers := make(chan answer, 2)
	near := signOf(t, c, g.variant(freshText, 1))
	go func() {
		ms, err := db.Query(ctx, near, nil)
		var ids []string
		for _, m := range ms {
			ids = append(ids, m.ID)
		}
		answers <- answer{"check", ids, err}
	}()
	go func() {
		rs, err := db.CheckAndInsert(ctx, []Doc{{ID: "copy", Sig: near}}, nil)
		var ids []string
		if err == nil {
			if rs[0].Status != Duplicate {
				err = errors.New("status " + rs[0].Status.String())
			}
			for _, m := range rs[0].Matches {
				ids = append(ids, m.ID)
			}
		}
		answers <- answer{"check-and-insert", ids, err}
	}()
	got := 0
	check := func(a answer) {
		t.Helper()
		got++
		if a.err != nil || len(a.ids) != 1 || a.ids[0] != "fresh" {
			t.Fatalf("%s of a near copy: %v %v; want fresh", a.what, a.ids, a.err)
		}
		if !crashHolds("fresh") {
			t.Errorf("%s answered duplicate of fresh before fresh was durable: a crash now loses it", a.what)
		}
	}
	select {
	case a := <-answers:
		check(a)
	case <-time.After(200 * time.Millisecond):
	}
	fs.mu.Unlock()
	held = false
	for got < 2 {
		check(<-answers)
	}
	if err := <-inserted; err != nil {
		t.Fatal(err)
	}
	if db.Metrics().SyncBarriers == barriers {
		t.Error("no sync barrier was counted")
	}
}
