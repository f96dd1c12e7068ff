package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/minhash"
)

// DefaultShadowQueue is the default of ShadowOptions.QueueSize.
const DefaultShadowQueue = 1024

// DefaultShadowApplyWait is the default of ShadowOptions.ApplyWait.
const DefaultShadowApplyWait = 5 * time.Second

// ShadowOptions configure a shadow index (Options.Shadow): an index with
// other bands, params, spec or key that receives every acknowledged write
// and answers every check beside the primary, off the latency path, so that
// its answers can be compared with the primary's before it is promoted
// (PromoteShadow). The zero value is not usable: Index and Journal are
// required.
type ShadowOptions struct {
	// Index is the shadow index. The Server does not own it: close it after
	// Serve returns (or after Server.Close). Required.
	Index index.Index
	// Journal is the path of the shadow journal, where the server keeps
	// every write it acknowledges (synced before the answer) until it is
	// applied to the shadow; JournalPath(dir) for a shadow in dir. A
	// journal left by an earlier run is applied first. Required.
	Journal string
	// QueueSize is the most checks waiting for the shadow; a check that
	// finds the queue full is not run on the shadow and is counted in
	// neardup_shadow_dropped_total. Default 1024 (DefaultShadowQueue);
	// range 1..1<<20.
	QueueSize int
	// ApplyWait bounds how long a check waits, from when it is queued, for
	// the shadow to apply the writes acknowledged before it (the journal
	// up to its position then), so that the shadow is compared on the
	// documents the primary had. A check still waiting at the bound is not
	// run on the shadow and is counted in neardup_shadow_stale_total
	// (ShadowReport.Stale): a shadow that lags the journal by this much
	// cannot be compared fairly. Default 5 s (DefaultShadowApplyWait);
	// range 1 ms..1 h.
	ApplyWait time.Duration
}

// ShadowReport is the comparison of the primary and the shadow so far, the
// answer of GET /v1/shadow. A plain value.
type ShadowReport struct {
	// Primary and Shadow describe the two indexes' configurations
	// (index.Config.String).
	Primary string `json:"primary"`
	Shadow  string `json:"shadow"`
	// Checks counts the checks run on both; Dropped those not run on the
	// shadow because its queue was full; Stale those not run on it because
	// it had not applied the writes acknowledged before them within
	// ShadowOptions.ApplyWait; Failed those whose shadow query failed (not
	// in Checks).
	Checks  int64 `json:"checks"`
	Dropped int64 `json:"dropped"`
	Stale   int64 `json:"stale"`
	Failed  int64 `json:"failed"`
	// Agreements counts the checks whose verdict (duplicate or new) was the
	// same; Agreement is Agreements/Checks (0 with no check).
	Agreements int64   `json:"agreements"`
	Agreement  float64 `json:"agreement"`
	// Verdicts splits the checks by the two verdicts.
	Verdicts ShadowVerdicts `json:"verdicts"`
	// Matches counts the matched documents found by both, by the primary
	// only and by the shadow only.
	Matches ShadowMatches `json:"matches"`
	// Candidates is the mean candidates per checked document of each.
	Candidates ShadowPair `json:"candidates"`
	// QueueDepth is the checks waiting for the shadow now.
	QueueDepth int `json:"queue_depth"`
	// InsertsApplied and DeletesApplied count the journal's records applied
	// to the shadow; InsertsFailed the inserts it failed to apply (each
	// failure, including those retried).
	InsertsApplied int64 `json:"inserts_applied"`
	DeletesApplied int64 `json:"deletes_applied"`
	InsertsFailed  int64 `json:"inserts_failed"`
	// JournalBytes is the size of the journal's records not yet applied
	// and removed: 0 when the shadow holds every acknowledged write.
	JournalBytes int64 `json:"journal_bytes"`
}

// ShadowVerdicts is the 2×2 table of the verdicts of the checks.
type ShadowVerdicts struct {
	BothDuplicate int64 `json:"both_duplicate"`
	BothNew       int64 `json:"both_new"`
	PrimaryOnly   int64 `json:"primary_only"`
	ShadowOnly    int64 `json:"shadow_only"`
}

// ShadowMatches counts matched documents by who found them.
type ShadowMatches struct {
	Both        int64 `json:"both"`
	PrimaryOnly int64 `json:"primary_only"`
	ShadowOnly  int64 `json:"shadow_only"`
}

// ShadowPair is a value for each index.
type ShadowPair struct {
	Primary float64 `json:"primary"`
	Shadow  float64 `json:"shadow"`
}

// shadowCheck is a check waiting for the shadow: the text, the query (its
// threshold and limit as the request gave them, zero for each index's
// default), the primary's matches, and the journal position the shadow
// must have applied before it runs the check.
type shadowCheck struct {
	text    string
	q       index.QueryOptions
	primary []string
	// pos is the journal's position (journal.pos) when the check was
	// queued: every write acknowledged before the primary answered is
	// below it. deadline is when the worker stops waiting for it.
	pos      int64
	deadline time.Time
	// The primary's query time and candidates.
	primaryDur  time.Duration
	primaryCand uint64
}

// shadowMetrics are the neardup_shadow_* collectors (names agreed with the
// alert rules and the dashboard).
type shadowMetrics struct {
	checks, dropped, stale, agreements, insertsFailed prometheus.Counter
	matches                                           *prometheus.CounterVec
	queueDepth                                        prometheus.GaugeFunc
	candidates, duration                              *prometheus.HistogramVec
	candPrimary, candShadow                           prometheus.Observer
	durPrimary, durShadow                             prometheus.Observer
	both, primaryOnly, shadowOnly                     prometheus.Counter
}

// shadow runs the shadow index beside the primary: the journal and its
// applier, the queue of checks and its worker, and the comparison.
type shadow struct {
	idx     index.Index
	cfg     index.Config
	primary index.Config
	j       *journal
	queue   chan shadowCheck
	log     *slog.Logger
	m       shadowMetrics
	wait    time.Duration // ShadowOptions.ApplyWait
	signers sync.Pool     // *index.Signer under the shadow's config

	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup

	// idle is signalled (broadcast) whenever the worker or the applier
	// finishes a step, for waitIdle.
	mu         sync.Mutex
	idle       *sync.Cond
	pending    int // checks queued or taken by the worker, not yet compared
	applying   bool
	appliedOff int64 // the journal's records before this offset are applied
	appliedPos int64 // the same as a journal position (journal.pos)
	rep        ShadowReport
	candSum    ShadowPair
}

// newShadow opens the journal and starts the applier and the worker.
func newShadow(o *ShadowOptions, primary index.Config, reg *prometheus.Registry, log *slog.Logger) (*shadow, error) {
	cfg := o.Index.Config()
	if _, err := cfg.NewSigner(); err != nil {
		return nil, err
	}
	j, err := openJournal(o.Journal)
	if err != nil {
		return nil, err
	}
	sh := &shadow{idx: o.Index, cfg: cfg, primary: primary, j: j, queue: make(chan shadowCheck, o.QueueSize),
		log: log, wait: o.ApplyWait, stop: make(chan struct{})}
	sh.idle = sync.NewCond(&sh.mu)
	sh.signers.New = func() any {
		sg, _ := cfg.NewSigner()
		return sg
	}
	sh.rep.Primary, sh.rep.Shadow = primary.String(), cfg.String()
	sh.m = newShadowMetrics(reg, sh)
	sh.wg.Go(sh.applyLoop)
	sh.wg.Go(sh.checkLoop)
	return sh, nil
}

func newShadowMetrics(reg *prometheus.Registry, sh *shadow) shadowMetrics {
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	m := shadowMetrics{
		checks:        counter("neardup_shadow_checks_total", "Checks also run on the shadow index."),
		dropped:       counter("neardup_shadow_dropped_total", "Checks not run on the shadow because its queue was full."),
		stale:         counter("neardup_shadow_stale_total", "Checks not run on the shadow because it had not applied the writes acknowledged before them in time."),
		agreements:    counter("neardup_shadow_agreements_total", "Checks whose verdict (duplicate or new) the shadow shared with the primary."),
		insertsFailed: counter("neardup_shadow_inserts_failed_total", "Inserts the shadow failed to apply (each attempt)."),
		matches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "neardup_shadow_matches_total", Help: "Matched documents of the checks, by who found them (both, primary_only, shadow_only).",
		}, []string{"side"}),
		queueDepth: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "neardup_shadow_queue_depth", Help: "Checks waiting for the shadow.",
		}, func() float64 { return float64(len(sh.queue)) }),
		candidates: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "neardup_shadow_candidates", Help: "Candidates per checked document, of the primary and of the shadow.",
			Buckets: []float64{0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096},
		}, []string{"index"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "neardup_shadow_check_duration_seconds", Help: "Time of the index query of a check, on the primary and on the shadow.",
			Buckets: []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1},
		}, []string{"index"}),
	}
	m.candPrimary, m.candShadow = m.candidates.WithLabelValues("primary"), m.candidates.WithLabelValues("shadow")
	m.durPrimary, m.durShadow = m.duration.WithLabelValues("primary"), m.duration.WithLabelValues("shadow")
	m.both, m.primaryOnly, m.shadowOnly = m.matches.WithLabelValues("both"), m.matches.WithLabelValues("primary_only"), m.matches.WithLabelValues("shadow_only")
	reg.MustRegister(m.checks, m.dropped, m.stale, m.agreements, m.insertsFailed, m.matches, m.queueDepth, m.candidates, m.duration)
	return m
}

// close stops the worker and the applier (a batch being applied is
// finished; the rest stays in the journal for the next start) and closes
// the journal. Checks still queued are not run.
func (sh *shadow) close() error {
	sh.stopOnce.Do(func() { close(sh.stop) })
	sh.mu.Lock()
	sh.idle.Broadcast() // a worker waiting in waitApplied
	sh.mu.Unlock()
	sh.wg.Wait()
	sh.mu.Lock()
	applied := sh.appliedOff
	sh.mu.Unlock()
	if _, err := sh.j.reset(applied, false); err != nil { // all applied: leave it empty
		sh.j.close()
		return err
	}
	return sh.j.close()
}

// probe is what a check records of the primary before its query.
type probe struct {
	start      time.Time
	candidates uint64
}

// begin is called before the primary's query of a check. The primary's
// candidates of the check are the growth of its candidate count over the
// query: exact when checks do not overlap, an over-estimate when they do.
func (sh *shadow) begin(primary index.Index) probe {
	return probe{start: time.Now(), candidates: primary.Metrics().Candidates}
}

// offer queues a check for the shadow, after the primary answered it with
// ms, or counts it dropped if the queue is full; it never blocks.
func (sh *shadow) offer(p probe, primary index.Index, text string, q index.QueryOptions, ms []index.Match) {
	c := shadowCheck{text: text, q: q, primaryDur: time.Since(p.start), primaryCand: primary.Metrics().Candidates - p.candidates,
		pos: sh.j.pos(), deadline: time.Now().Add(sh.wait)}
	c.primary = make([]string, len(ms))
	for i := range ms {
		c.primary[i] = ms[i].ID
	}
	sh.mu.Lock()
	sh.pending++
	sh.mu.Unlock()
	select {
	case sh.queue <- c:
	default:
		sh.m.dropped.Inc()
		sh.mu.Lock()
		sh.pending--
		sh.rep.Dropped++
		sh.mu.Unlock()
	}
}

// checkLoop is the worker: it runs the queued checks on the shadow, one at
// a time (so that the shadow's candidate count of each is exact), and
// compares.
func (sh *shadow) checkLoop() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-sh.stop
		cancel()
	}()
	signer, _ := sh.cfg.NewSigner()
	var sig minhash.Signature
	for {
		var c shadowCheck
		select {
		case <-sh.stop:
			return
		case c = <-sh.queue:
		}
		if !sh.waitApplied(c.pos, c.deadline) {
			select {
			case <-sh.stop:
				return
			default:
			}
			sh.m.stale.Inc()
			sh.mu.Lock()
			sh.pending--
			sh.rep.Stale++
			sh.mu.Unlock()
			sh.idle.Broadcast()
			continue
		}
		var empty bool
		sig, empty = signer.Sign(sig[:0], []byte(c.text))
		var ms []index.Match
		var err error
		var cand uint64
		start := time.Now()
		if !empty { // a text without features under the shadow's spec matches nothing
			before := sh.idx.Metrics().Candidates
			ms, err = sh.idx.Query(ctx, sig, &c.q)
			cand = sh.idx.Metrics().Candidates - before
		}
		dur := time.Since(start)
		sh.mu.Lock()
		sh.pending--
		if err != nil {
			sh.rep.Failed++
			sh.mu.Unlock()
			if ctx.Err() == nil {
				sh.log.Warn("shadow check failed", "err", err)
			}
			sh.idle.Broadcast()
			continue
		}
		sh.compare(&c, ms, cand)
		sh.mu.Unlock()
		sh.m.durPrimary.Observe(c.primaryDur.Seconds())
		sh.m.candPrimary.Observe(float64(c.primaryCand))
		sh.m.durShadow.Observe(dur.Seconds())
		sh.m.candShadow.Observe(float64(cand))
		sh.idle.Broadcast()
	}
}

// waitApplied waits until the shadow has applied the journal up to pos, and
// reports whether it has: false once deadline passes or the shadow stops.
func (sh *shadow) waitApplied(pos int64, deadline time.Time) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.appliedPos >= pos {
		return true
	}
	t := time.AfterFunc(time.Until(deadline), func() {
		sh.mu.Lock()
		sh.idle.Broadcast()
		sh.mu.Unlock()
	})
	defer t.Stop()
	for sh.appliedPos < pos {
		select {
		case <-sh.stop:
			return false
		default:
		}
		if !time.Now().Before(deadline) {
			return false
		}
		sh.idle.Wait()
	}
	return true
}

// compare counts one check's comparison; sh.mu is held.
func (sh *shadow) compare(c *shadowCheck, ms []index.Match, cand uint64) {
	primary := c.primary
	r := &sh.rep
	r.Checks++
	sh.m.checks.Inc()
	sh.candSum.Primary += float64(c.primaryCand)
	sh.candSum.Shadow += float64(cand)
	pd, sd := len(primary) > 0, len(ms) > 0
	switch {
	case pd && sd:
		r.Verdicts.BothDuplicate++
	case !pd && !sd:
		r.Verdicts.BothNew++
	case pd:
		r.Verdicts.PrimaryOnly++
	default:
		r.Verdicts.ShadowOnly++
	}
	if pd == sd {
		r.Agreements++
		sh.m.agreements.Inc()
	}
	var both int
	for _, m := range ms {
		for _, id := range primary {
			if id == m.ID {
				both++
				break
			}
		}
	}
	po, so := len(primary)-both, len(ms)-both
	r.Matches.Both += int64(both)
	r.Matches.PrimaryOnly += int64(po)
	r.Matches.ShadowOnly += int64(so)
	sh.m.both.Add(float64(both))
	sh.m.primaryOnly.Add(float64(po))
	sh.m.shadowOnly.Add(float64(so))
}

// report returns the comparison so far.
func (sh *shadow) report() ShadowReport {
	sh.mu.Lock()
	r, applied := sh.rep, sh.appliedOff
	if r.Checks > 0 {
		r.Agreement = float64(r.Agreements) / float64(r.Checks)
		r.Candidates.Primary = sh.candSum.Primary / float64(r.Checks)
		r.Candidates.Shadow = sh.candSum.Shadow / float64(r.Checks)
	}
	sh.mu.Unlock()
	r.QueueDepth = len(sh.queue)
	r.JournalBytes = sh.j.end() - applied
	return r
}

// sign signs text under the shadow's config for the journal; empty reports
// a text without features under the shadow's spec.
func (sh *shadow) sign(text string) (sig minhash.Signature, empty bool) {
	sg := sh.signers.Get().(*index.Signer)
	defer sh.signers.Put(sg)
	return sg.Sign(nil, []byte(text))
}

// inserted journals documents the primary stored (or had stored: a retry)
// and is about to acknowledge; texts[i] is the text of docs[i]. It returns
// once the records are durable. A text the shadow's spec gives no feature
// cannot be stored in the shadow: it is counted as a failed insert.
func (sh *shadow) inserted(docs []index.Doc, texts []string) error {
	recs := make([]journalRecord, 0, len(docs))
	for i := range docs {
		sig, empty := sh.sign(texts[i])
		if empty {
			sh.insertFailed()
			sh.log.Warn("shadow: a document has no features under the shadow's spec; not stored in the shadow", "id", docs[i].ID)
			continue
		}
		recs = append(recs, journalRecord{op: opInsert, id: docs[i].ID, meta: docs[i].Meta, sig: sig})
	}
	return sh.j.appendRecords(recs)
}

// deleting journals a delete before it is made on the primary.
func (sh *shadow) deleting(id string) error {
	return sh.j.appendRecords([]journalRecord{{op: opDelete, id: id}})
}

func (sh *shadow) insertFailed() {
	sh.m.insertsFailed.Inc()
	sh.mu.Lock()
	sh.rep.InsertsFailed++
	sh.mu.Unlock()
}

// applyBatch is the most journal records applied at once.
const applyBatch = 256

// applyLoop applies the journal to the shadow as it grows, and empties it
// once everything in it is applied and it has passed journalChunk. A record
// the shadow fails to apply (a full disk, a closed connection, a refusal) is
// retried every second until it is applied: the shadow never skips an
// acknowledged write.
func (sh *shadow) applyLoop() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-sh.stop
		cancel()
	}()
	var off, base int64 // applied up to offset off, position base+off
	for {
		select {
		case <-sh.stop:
			return
		case <-sh.j.notify:
		}
		sh.setApplying(true, off, base)
		for {
			next, err := applyJournal(ctx, sh.j, off, sh.idx, applyBatch, sh)
			if err != nil {
				if ctx.Err() != nil {
					sh.setApplying(false, off, base)
					return
				}
				sh.log.Warn("shadow: applying the journal failed; retrying in 1s", "err", err)
				select {
				case <-sh.stop:
					sh.setApplying(false, off, base)
					return
				case <-time.After(time.Second):
				}
				continue
			}
			if next == off {
				break // all applied; an append since has sent a notification
			}
			off = next
			sh.setApplying(true, off, base)
		}
		if off >= journalChunk { // all applied: start again at 0
			done, err := sh.j.reset(off, true)
			if err != nil {
				sh.log.Warn("shadow: emptying the journal failed", "err", err)
			}
			if done { // positions go on: base grows by what was emptied
				base, off = base+off, 0
			}
		}
		sh.setApplying(false, off, base)
	}
}

// setApplying records that the journal is applied up to offset applied
// (position base+applied) and wakes the waiters.
func (sh *shadow) setApplying(v bool, applied, base int64) {
	sh.mu.Lock()
	sh.applying, sh.appliedOff, sh.appliedPos = v, applied, base+applied
	sh.mu.Unlock()
	sh.idle.Broadcast()
}

// applyCounter counts applied and failed records (nil: not counted).
type applyCounter interface {
	applied(inserts, deletes int)
	insertFailed()
}

func (sh *shadow) applied(inserts, deletes int) {
	sh.mu.Lock()
	sh.rep.InsertsApplied += int64(inserts)
	sh.rep.DeletesApplied += int64(deletes)
	sh.mu.Unlock()
}

// applyJournal applies at most max records of j from off to idx and returns
// the offset after the last applied (off if none was left). An insert of a
// stored id and a delete of an absent one are applied by doing nothing (see
// the journal's doc). An error is returned with nothing after off counted
// as applied; the records it applied are applied again next time, which
// changes nothing.
func applyJournal(ctx context.Context, j *journal, off int64, idx index.Index, max int, c applyCounter) (int64, error) {
	end := j.end()
	var recs []journalRecord
	next := off
	for next < end && len(recs) < max {
		r, n, err := j.readRecord(next)
		if err != nil {
			return off, fmt.Errorf("shadow journal %s at offset %d: %w", j.path, next, err)
		}
		recs = append(recs, r)
		next = n
	}
	for i := 0; i < len(recs); {
		if recs[i].op == opDelete {
			err := idx.Delete(ctx, recs[i].id)
			if err != nil && !errors.Is(err, index.ErrNotFound) {
				return off, err
			}
			if c != nil {
				c.applied(0, 1)
			}
			i++
			continue
		}
		k := i
		var docs []index.Doc
		for k < len(recs) && recs[k].op == opInsert {
			docs = append(docs, index.Doc{ID: recs[k].id, Sig: recs[k].sig, Meta: recs[k].meta})
			k++
		}
		err := idx.Insert(ctx, docs)
		if errors.Is(err, index.ErrDuplicateID) {
			err = nil
			for _, d := range docs { // one at a time: skip those already stored
				if e := idx.Insert(ctx, []index.Doc{d}); e != nil && !errors.Is(e, index.ErrDuplicateID) {
					err = e
					break
				}
			}
		}
		if errors.Is(err, index.ErrInvalidDocument) {
			err = fmt.Errorf("shadow journal %s: %w (a signature not made under the shadow's config: was the journal written for another index?)", j.path, err)
		}
		if err != nil {
			if c != nil {
				c.insertFailed()
			}
			return off, err
		}
		if c != nil {
			c.applied(len(docs), 0)
		}
		i = k
	}
	return next, nil
}

// waitIdle waits until the queue of checks is empty, the worker idle and the
// journal applied, or ctx ends (tests, benchmarks).
func (sh *shadow) waitIdle(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		sh.mu.Lock()
		sh.idle.Broadcast()
		sh.mu.Unlock()
	})
	defer stop()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for sh.pending > 0 || sh.applying || sh.appliedOff != sh.j.end() {
		if err := ctx.Err(); err != nil {
			return err
		}
		sh.idle.Wait()
	}
	return nil
}

// handleShadow: GET /v1/shadow — the comparison so far.
func (s *Server) handleShadow(w http.ResponseWriter, r *http.Request) error {
	if s.shadow == nil {
		return errorf(CodeNotFound, "no shadow index (neardup serve --shadow-data DIR)")
	}
	s.writeJSON(w, http.StatusOK, s.shadow.report())
	return nil
}

// Close stops the shadow index's background work (Options.Shadow), leaving
// what it has not applied in the journal for the next start, and closes the
// journal; it does not close the indexes. Serve calls it before it returns;
// a caller that mounts Handler itself calls it once done. Without a shadow it
// does nothing. Safe to call more than once.
func (s *Server) Close() error {
	if s.shadow == nil {
		return nil
	}
	return s.shadow.close()
}

// routeShadow is the route label of GET /v1/shadow.
const routeShadow = "shadow"

// shadowInserted journals, with a shadow, documents the primary stored and
// the server is about to answer "new"; the answer waits for the journal's
// sync. An error answers the request 503: the primary has the documents,
// and a retry is answered "new" and journals them.
func (s *Server) shadowInserted(docs []index.Doc, texts []string) error {
	if s.shadow == nil {
		return nil
	}
	if err := s.shadow.inserted(docs, texts); err != nil {
		return errorf(CodeUnavailable, "the document is stored but could not be journaled for the shadow index (retry): %v", err)
	}
	return nil
}

// shadowDeleting journals, with a shadow, a delete before the primary makes
// it: a delete the server acknowledges is in the journal. An error answers
// 503 and nothing is deleted.
func (s *Server) shadowDeleting(id string) error {
	if s.shadow == nil {
		return nil
	}
	if err := s.shadow.deleting(id); err != nil {
		return errorf(CodeUnavailable, "the delete could not be journaled for the shadow index: %v", err)
	}
	return nil
}
