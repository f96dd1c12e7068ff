package index

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// durability tracks which document numbers are durable, so that an answer
// that names a document waits for a WAL sync only when that document's batch
// may not be synced yet (see "Durability" in the package doc).
//
// Every document number is given out under mu, and the first number of each
// write batch is listed in inflight until the batch's WAL sync completes (or
// the batch is dropped without being applied). mark is the smallest listed
// number, or the next number to give out if none is listed: a document
// numbered below mark was either made durable or never became visible. mark
// never decreases: a newly listed number is the next one, at least mark.
//
// A batch whose sync failed stays listed, so that mark stops there and every
// later answer that names a newer document waits for a sync of its own.
type durability struct {
	mu       sync.Mutex
	next     *atomic.Uint64 // the DB's next document number
	inflight []uint32       // first numbers of batches not yet synced; a few, one per writer
	mark     atomic.Uint64
}

// assign gives out the next document number for batch w, listing w's first
// number. It returns false if document numbers are exhausted.
func (t *durability) assign(w *pebbleTxn) (uint32, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.next.Add(1) - 1
	if n > maxDocNum {
		return 0, false
	}
	if !w.listed {
		w.listed, w.first = true, uint32(n)
		t.inflight = append(t.inflight, uint32(n))
	}
	return uint32(n), true
}

// release unlists batch w: its documents are durable, or were never applied.
func (t *durability) release(w *pebbleTxn) {
	if !w.listed {
		return
	}
	w.listed = false
	t.mu.Lock()
	defer t.mu.Unlock()
	if i := slices.Index(t.inflight, w.first); i >= 0 {
		t.inflight = slices.Delete(t.inflight, i, i+1)
	}
	t.update()
}

// reset sets mark past every number given out (at open, and after a bulk
// build, whose tables are synced when they are ingested).
func (t *durability) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.update()
}

func (t *durability) update() {
	m := t.next.Load()
	for _, n := range t.inflight {
		m = min(m, uint64(n))
	}
	t.mark.Store(m)
}

// durable reports whether document num is known durable (if it is visible
// at all).
func (t *durability) durable(num uint32) bool { return uint64(num) < t.mark.Load() }

// syncBarrier returns once every batch applied before the call is durable:
// it writes an empty record to the WAL and waits for the WAL to be synced
// through it. The WAL is one sequence (a rotated log is synced and closed
// before the next one is made), and a batch is in the WAL before it is
// visible, so this covers every batch a reader has seen. Concurrent barriers
// and commits share fsyncs (Pebble's group commit).
func (d *DB) syncBarrier() error {
	if !d.sync {
		return nil
	}
	d.m.barriers.Add(1)
	if err := d.h.refuse(true); err != nil {
		return err // a failed WAL: the write may never be durable
	}
	return d.h.guard(func() error { return d.db.LogData(nil, pebble.Sync) })
}
