package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/neardup/neardup/minhash"
)

// engine is the index's algorithm over a backend's storage (storage.go):
// Insert, CheckAndInsert, Query, Get and Delete, written once. A backend
// embeds it, so that these are the backend's methods, and calls setup when
// it opens. Its zero value is not usable. It is safe for concurrent use.
type engine[R ref] struct {
	st    storage[R]
	cfg   Config
	locks *lockTable
	m     metrics

	// closeMu is held shared by every operation and exclusively by Close,
	// so that Close waits for the operations in flight (a backend takes it
	// exclusively for other changes that must wait for them too).
	closeMu sync.RWMutex
	closed  bool

	pool sync.Pool // *scratch[R]
}

// setup readies e for storage st; the backend sets e.cfg when it opens.
func (e *engine[R]) setup(st storage[R]) {
	e.st, e.locks = st, new(lockTable)
}

// scratch is one operation's reusable buffers.
type scratch[R ref] struct {
	kb     keyBuf   // the bucket keys of one document
	all    []uint64 // the bucket keys of every document of a write, concatenated
	ends   []int    // document i's keys are all[ends[i-1]:ends[i]]
	ids    []string // the ids of the valid documents of a write
	found  []bool   // whether ids[i] is stored
	counts []int    // bucket sizes read (up to the cap)
	cands  []R      // documents met in buckets
	v      verifier[R]
	w      writes[R]
	stripe []uint32
}

func (e *engine[R]) scratch() *scratch[R] {
	if s, ok := e.pool.Get().(*scratch[R]); ok {
		return s
	}
	return &scratch[R]{}
}

// keyBuf computes the distinct bucket keys of signatures, reusing its
// buffers.
type keyBuf struct {
	keys, slots []uint64
}

// of returns the distinct bucket keys of sig under c, ascending; the slice
// is valid until the next call.
func (k *keyBuf) of(c *Config, sig minhash.Signature) []uint64 {
	k.keys, k.slots = c.keysOf(k.keys[:0], k.slots, sig)
	slices.Sort(k.keys)
	k.keys = slices.Compact(k.keys)
	return k.keys
}

// Config returns what the index was made with and the defaults in force.
func (e *engine[R]) Config() Config { return e.cfg }

// Metrics returns what this handle has counted since the index was opened.
func (e *engine[R]) Metrics() Metrics { return e.m.snapshot() }

// start starts an operation (write: one that writes); finish ends it.
func (e *engine[R]) start(ctx context.Context, write bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	e.closeMu.RLock()
	if e.closed {
		e.closeMu.RUnlock()
		return ErrClosed
	}
	if err := e.st.admit(write); err != nil {
		e.closeMu.RUnlock()
		return err
	}
	return nil
}

// finish ends an operation that start started.
func (e *engine[R]) finish() { e.closeMu.RUnlock() }

// enter is start, returning the function that ends the operation, for a
// backend's own operations.
func (e *engine[R]) enter(ctx context.Context, write bool) (func(), error) {
	if err := e.start(ctx, write); err != nil {
		return nil, err
	}
	return e.finish, nil
}

// surface turns an error of an operation into what the caller gets (see
// storage.fault); every exported method defers it.
func (e *engine[R]) surface(err *error) {
	if *err != nil {
		*err = e.st.fault(*err)
	}
}

// shut closes the index once the operations in flight have ended: it calls
// release the first time and returns its error.
func (e *engine[R]) shut(release func() error) error {
	e.closeMu.Lock()
	defer e.closeMu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	return release()
}

// lock takes the stripes of ids and bucket keys, in ascending order, then the
// backend's locks, and returns the function that releases them all; calling
// it again does nothing, so that it can be both deferred and called early (a
// commit releases the locks before it waits for its sync).
func (e *engine[R]) lock(ctx context.Context, s *scratch[R], ids []string, keys []uint64, del bool) (func(), error) {
	stripes := s.stripe[:0]
	for _, id := range ids {
		stripes = append(stripes, idStripe(id))
	}
	for _, bk := range keys {
		stripes = append(stripes, bucketStripe(bk))
	}
	stripes = e.locks.lock(stripes)
	s.stripe = stripes
	release, err := e.st.acquire(ctx, ids, keys, del)
	if err != nil {
		e.locks.unlock(stripes)
		return nil, err
	}
	locked := true
	return func() {
		if locked {
			locked = false
			release()
			e.locks.unlock(stripes)
		}
	}, nil
}

// lockDocs computes the bucket keys of the valid docs (s.all, s.ends) and
// their ids (s.ids), and locks them. Invalid documents are skipped (they are
// rejected later).
func (e *engine[R]) lockDocs(ctx context.Context, s *scratch[R], docs []Doc) (func(), error) {
	s.all, s.ends, s.ids = s.all[:0], s.ends[:0], s.ids[:0]
	for i := range docs {
		if validateDoc(&e.cfg, &docs[i]) == nil {
			s.ids = append(s.ids, docs[i].ID)
			s.all = append(s.all, s.kb.of(&e.cfg, docs[i].Sig)...)
		}
		s.ends = append(s.ends, len(s.all))
	}
	return e.lock(ctx, s, s.ids, s.all, false)
}

// docKeys returns the bucket keys lockDocs computed for document i.
func (s *scratch[R]) docKeys(i int) []uint64 {
	start := 0
	if i > 0 {
		start = s.ends[i-1]
	}
	return s.all[start:s.ends[i]]
}

// readStored sets s.found: whether the ids of s.ids are stored.
func (s *scratch[R]) readStored(t txn[R]) error {
	s.found = slices.Grow(s.found[:0], len(s.ids))[:len(s.ids)]
	return t.has(s.ids, s.found)
}

// readBuckets reads the buckets of keys into s.counts and, with collect,
// their documents into s.cands, and counts what it read.
func (e *engine[R]) readBuckets(t txn[R], s *scratch[R], keys []uint64, collect bool) error {
	s.counts = slices.Grow(s.counts[:0], len(keys))[:len(keys)]
	s.cands = s.cands[:0]
	var err error
	if s.cands, err = t.buckets(keys, e.cfg.BucketCap, collect, s.counts, s.cands); err != nil {
		return err
	}
	capacity := e.cfg.BucketCap
	for _, n := range s.counts {
		if capacity != Unlimited && n >= capacity {
			e.m.fullBuckets.Add(1)
		}
		e.m.bucketSize.observe(n)
	}
	e.m.bucketsRead.Add(uint64(len(keys)))
	return nil
}

// verify turns s.cands into the matches of sig, appended to dst unsorted.
// fresh reports whether a match names a document that may not be durable
// yet: an answer naming it must wait for a sync barrier.
func (e *engine[R]) verify(dst []Match, t txn[R], s *scratch[R], sig minhash.Signature, q *QueryOptions) (_ []Match, fresh bool, err error) {
	slices.Sort(s.cands)
	s.cands = slices.Compact(s.cands)
	v := &s.v
	if v.visit == nil {
		v.visit = v.record
	}
	v.e, v.sig, v.q, v.ms, v.fresh = e, sig, *q, dst, false
	err = t.records(s.cands, v.visit)
	dst, fresh = v.ms, v.fresh
	v.sig, v.ms, v.q = nil, nil, QueryOptions{} // s is pooled
	if err != nil {
		return dst, fresh, err
	}
	e.m.candidates.Add(uint64(len(s.cands)))
	e.m.candidatesPerQuery.observe(len(s.cands))
	e.m.queries.Add(1)
	return dst, fresh, nil
}

// verifier is the state of verify. Its visit is its record method, made
// once per scratch: a closure passed to an interface method would be
// allocated at every call.
type verifier[R ref] struct {
	e     *engine[R]
	sig   minhash.Signature // the query's
	q     QueryOptions
	buf   minhash.Signature // a candidate's
	ms    []Match
	fresh bool
	visit func(R, []byte) error
}

// record verifies one candidate.
func (v *verifier[R]) record(r R, rec []byte) error {
	p := &v.e.cfg.Params
	d, err := decodeRecord(v.buf[:0], p, rec)
	if err != nil {
		return fmt.Errorf("document %s: %w", refString(r), err)
	}
	v.buf = d.sig
	sim := v.e.cfg.similarity(v.sig, d.sig)
	if sim < v.q.Threshold {
		v.e.m.dropped.Add(1)
		return nil
	}
	if v.q.Exclude != "" && string(d.id) == v.q.Exclude {
		return nil
	}
	m := Match{ID: string(d.id), Similarity: sim}
	if len(d.meta) > 0 {
		m.Meta = bytes.Clone(d.meta)
	}
	v.ms = append(v.ms, m)
	v.fresh = v.fresh || !v.e.st.durable(r)
	return nil
}

// refString renders a ref for an error message.
func refString[R ref](r R) string {
	if s, ok := any(r).(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(r)
}

// sortMatches orders matches best first, ties by id, and keeps limit.
func sortMatches(ms []Match, limit int) []Match {
	slices.SortFunc(ms, func(a, b Match) int {
		switch {
		case a.Similarity > b.Similarity:
			return -1
		case a.Similarity < b.Similarity:
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	if len(ms) > limit {
		ms = ms[:limit]
	}
	return ms
}

// writes are one operation's inserts: what they wrote, so that each
// document of a batch is also checked against those before it.
type writes[R ref] struct {
	e       *engine[R]
	t       txn[R]
	pending []pendingDoc
	byKey   map[uint64][]int // bucket key → pending documents posted under it
	ids     map[string]bool
	post    []uint64
	dropped []int
	rec     []byte
}

// pendingDoc is a document written by the current operation.
type pendingDoc struct {
	id   string
	sig  minhash.Signature
	meta []byte
}

// writes returns s.w, emptied, for an operation of e through t.
func (s *scratch[R]) writes(e *engine[R], t txn[R]) *writes[R] {
	w := &s.w
	if w.byKey == nil {
		w.byKey, w.ids = map[uint64][]int{}, map[string]bool{}
	} else {
		clear(w.byKey)
		clear(w.ids)
	}
	clear(w.pending) // drop the last operation's signatures
	w.e, w.t, w.pending = e, t, w.pending[:0]
	return w
}

// add stores doc, whose bucket keys are keys and whose buckets hold counts
// documents: a posting into a bucket full with them and the operation's
// earlier documents is dropped, and the record lists it.
func (w *writes[R]) add(doc *Doc, keys []uint64, counts []int) error {
	e := w.e
	capacity := e.cfg.BucketCap
	w.post, w.dropped = w.post[:0], w.dropped[:0]
	for i, bk := range keys {
		if capacity != Unlimited && counts[i]+len(w.byKey[bk]) >= capacity {
			w.dropped = append(w.dropped, i)
			continue
		}
		w.post = append(w.post, bk)
	}
	w.rec = appendRecord(w.rec[:0], &e.cfg.Params, doc.Sig, doc.ID, w.dropped, doc.Meta)
	if err := w.t.insert(doc.ID, w.post, w.rec); err != nil {
		return err
	}
	e.m.droppedPost.Add(uint64(len(w.dropped)))
	idx := len(w.pending)
	for _, bk := range w.post {
		w.byKey[bk] = append(w.byKey[bk], idx)
	}
	w.pending = append(w.pending, pendingDoc{id: doc.ID, sig: slices.Clone(doc.Sig), meta: doc.Meta})
	w.ids[doc.ID] = true
	return nil
}

// verifyPending adds the matches among the operation's earlier documents.
func (w *writes[R]) verifyPending(ms []Match, keys []uint64, sig minhash.Signature, q *QueryOptions) []Match {
	if len(w.pending) == 0 {
		return ms
	}
	var seen []int
	for _, bk := range keys {
		seen = append(seen, w.byKey[bk]...)
	}
	slices.Sort(seen)
	seen = slices.Compact(seen)
	for _, i := range seen {
		pd := &w.pending[i]
		if sim := w.e.cfg.similarity(sig, pd.sig); sim >= q.Threshold && pd.id != q.Exclude {
			ms = append(ms, Match{ID: pd.id, Similarity: sim, Meta: bytes.Clone(pd.meta)})
		}
	}
	return ms
}

// commit commits the transaction and counts it.
func (w *writes[R]) commit(unlock func()) error {
	if err := w.t.commit(unlock); err != nil {
		return err
	}
	if n := len(w.pending); n > 0 {
		w.e.m.commits.Add(1)
		w.e.m.inserts.Add(uint64(n))
	}
	return nil
}

// Insert stores docs without checking them for near duplicates; all or
// nothing (see Index.Insert).
func (e *engine[R]) Insert(ctx context.Context, docs []Doc) (err error) {
	defer e.surface(&err)
	if err := e.start(ctx, true); err != nil {
		return err
	}
	defer e.finish()
	for i := range docs {
		if err := validateDoc(&e.cfg, &docs[i]); err != nil {
			return err
		}
	}
	s := e.scratch()
	defer e.pool.Put(s)
	unlock, err := e.lockDocs(ctx, s, docs)
	if err != nil {
		return err
	}
	defer unlock()
	// The view is opened under the locks: it sees every write of the
	// writers that held them before.
	t, err := e.st.begin(ctx)
	if err != nil {
		return err
	}
	ended := false // by the commit
	defer func() {
		if !ended {
			t.abort()
		}
	}()
	if err := s.readStored(t); err != nil {
		return err
	}
	w := s.writes(e, t)
	for i := range docs {
		doc := &docs[i]
		if s.found[i] || w.ids[doc.ID] {
			return fmt.Errorf("%w: %q", ErrDuplicateID, doc.ID)
		}
		keys := s.docKeys(i)
		if err := e.readBuckets(t, s, keys, false); err != nil {
			return err
		}
		if err := w.add(doc, keys, s.counts); err != nil {
			return err
		}
	}
	ended = true
	return w.commit(unlock)
}

// CheckAndInsert checks each doc against the index and the docs before it,
// and stores those without a match (see Index.CheckAndInsert).
func (e *engine[R]) CheckAndInsert(ctx context.Context, docs []Doc, q *QueryOptions) (_ []Result, err error) {
	defer e.surface(&err)
	if err := e.start(ctx, true); err != nil {
		return nil, err
	}
	defer e.finish()
	qo, err := q.resolve(&e.cfg)
	if err != nil {
		return nil, err
	}
	s := e.scratch()
	defer e.pool.Put(s)
	unlock, err := e.lockDocs(ctx, s, docs)
	if err != nil {
		return nil, err
	}
	defer unlock()
	t, err := e.st.begin(ctx) // under the locks, as in Insert
	if err != nil {
		return nil, err
	}
	ended := false // by the commit
	defer func() {
		if !ended {
			t.abort()
		}
	}()
	if err := s.readStored(t); err != nil {
		return nil, err
	}
	w := s.writes(e, t)
	results := make([]Result, len(docs))
	var dupes uint64
	fresh := false // a Duplicate names a document that may not be durable yet
	valid := 0     // index of the next valid document in s.ids
	for i := range docs {
		doc := &docs[i]
		r := &results[i]
		r.ID = doc.ID
		if err := validateDoc(&e.cfg, doc); err != nil {
			r.Err = err
			continue
		}
		stored := s.found[valid]
		valid++
		if stored || w.ids[doc.ID] {
			r.Err = fmt.Errorf("%w: %q", ErrDuplicateID, doc.ID)
			continue
		}
		keys := s.docKeys(i)
		if err := e.readBuckets(t, s, keys, true); err != nil {
			return nil, err
		}
		ms, f, err := e.verify(nil, t, s, doc.Sig, &qo)
		if err != nil {
			return nil, err
		}
		ms = w.verifyPending(ms, keys, doc.Sig, &qo)
		if len(ms) > 0 {
			fresh = fresh || f
			r.Status, r.Matches = Duplicate, sortMatches(ms, qo.Limit)
			e.m.matches.Add(uint64(len(r.Matches)))
			dupes++
			continue
		}
		if err := w.add(doc, keys, s.counts); err != nil {
			return nil, err
		}
		r.Status = New
	}
	// Matches among the operation's own documents are durable once the
	// commit returns; so are those among other writers' documents if it
	// wrote anything: its durable commit covers every write visible before
	// it, and the view that found them was opened before it.
	wrote := len(w.pending) > 0
	ended = true
	if err := w.commit(unlock); err != nil {
		return nil, err
	}
	if fresh && !wrote {
		if err := e.st.syncBarrier(); err != nil {
			return nil, err
		}
	}
	e.m.duplicates.Add(dupes)
	return results, nil
}

// Query returns the stored documents similar to sig (see Index.Query).
func (e *engine[R]) Query(ctx context.Context, sig minhash.Signature, q *QueryOptions) (_ []Match, err error) {
	defer e.surface(&err)
	if err := e.start(ctx, false); err != nil {
		return nil, err
	}
	defer e.finish()
	qo, err := q.resolve(&e.cfg)
	if err != nil {
		return nil, err
	}
	if len(sig) != e.cfg.Params.Words() {
		return nil, fmt.Errorf("%w: signature of %d words, params %s make %d", ErrInvalidDocument, len(sig), e.cfg.Params, e.cfg.Params.Words())
	}
	s := e.scratch()
	defer e.pool.Put(s)
	keys := s.kb.of(&e.cfg, sig)
	t, err := e.st.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer t.abort()
	if err := e.readBuckets(t, s, keys, true); err != nil {
		return nil, err
	}
	ms, fresh, err := e.verify(nil, t, s, sig, &qo)
	if err != nil {
		return nil, err
	}
	ms = sortMatches(ms, qo.Limit)
	if fresh {
		// A match may name a document whose write is visible but not yet
		// durable: answer only once it is.
		if err := e.st.syncBarrier(); err != nil {
			return nil, err
		}
	}
	e.m.matches.Add(uint64(len(ms)))
	return ms, nil
}

// Get returns the stored document id (see Index.Get).
func (e *engine[R]) Get(ctx context.Context, id string) (_ Doc, err error) {
	defer e.surface(&err)
	if err := e.start(ctx, false); err != nil {
		return Doc{}, err
	}
	defer e.finish()
	t, err := e.st.begin(ctx)
	if err != nil {
		return Doc{}, err
	}
	defer t.abort()
	return e.get(t, id)
}

func (e *engine[R]) get(t txn[R], id string) (Doc, error) {
	_, rec, ok, err := t.lookup(id)
	if err != nil {
		return Doc{}, err
	}
	if !ok {
		return Doc{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	r, err := decodeRecord(nil, &e.cfg.Params, rec)
	if err != nil {
		return Doc{}, err
	}
	out := Doc{ID: id, Sig: r.sig}
	if len(r.meta) > 0 {
		out.Meta = bytes.Clone(r.meta)
	}
	return out, nil
}

// errRetry: the document changed between a delete's read and its locks.
var errRetry = errors.New("index: retry")

// Delete removes document id and its postings (see Index.Delete).
func (e *engine[R]) Delete(ctx context.Context, id string) (err error) {
	defer e.surface(&err)
	if err := e.start(ctx, true); err != nil {
		return err
	}
	defer e.finish()
	s := e.scratch()
	defer e.pool.Put(s)
	for attempt := 0; ; attempt++ {
		// Read the document's buckets without locks, then lock them and
		// check that the id still names the same document.
		t, err := e.st.begin(ctx)
		if err != nil {
			return err
		}
		doc, err := e.get(t, id)
		t.abort()
		if err != nil {
			return err
		}
		keys := s.kb.of(&e.cfg, doc.Sig)
		unlock, err := e.lock(ctx, s, []string{id}, keys, true)
		if err != nil {
			return err
		}
		err = e.deleteLocked(ctx, id, doc.Sig, keys, unlock)
		unlock()
		if errors.Is(err, errRetry) && attempt < 10 {
			continue
		}
		return err
	}
}

func (e *engine[R]) deleteLocked(ctx context.Context, id string, sig minhash.Signature, keys []uint64, unlock func()) error {
	t, err := e.st.begin(ctx) // under the locks: it sees every write before
	if err != nil {
		return err
	}
	ended := false // by the commit
	defer func() {
		if !ended {
			t.abort()
		}
	}()
	r, rec, ok, err := t.lookup(id)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	// A copy: rec is valid only until the view moves.
	cur, err := decodeRecord(nil, &e.cfg.Params, bytes.Clone(rec))
	if err != nil {
		return err
	}
	if !slices.Equal(cur.sig, sig) {
		return errRetry // replaced between the read and the lock
	}
	post := make([]uint64, 0, len(keys))
	for i, bk := range keys {
		if !cur.droppedAt(i) {
			post = append(post, bk)
		}
	}
	if err := t.remove(r, id, post); err != nil {
		return err
	}
	ended = true
	if err := t.commit(unlock); err != nil {
		return err
	}
	e.m.commits.Add(1)
	e.m.deletes.Add(1)
	return nil
}
