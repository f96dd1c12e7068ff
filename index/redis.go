package index

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/minhash"
)

// Defaults of RedisOptions.
const (
	// DefaultRedisAddr is the default RedisOptions.Addrs.
	DefaultRedisAddr = "127.0.0.1:6379"
	// DefaultRedisPrefix is the default RedisOptions.Prefix.
	DefaultRedisPrefix = "neardup:"
	// DefaultLockTTL is the default RedisOptions.LockTTL.
	DefaultLockTTL = 10 * time.Second
)

// RedisOptions configure OpenRedis. The zero value, and nil, ask for the
// defaults: a standalone server on 127.0.0.1:6379, keys under "neardup:".
type RedisOptions struct {
	// Options hold the index definition (Spec, Params, Bands, Threshold,
	// Recall, BucketCap), resolved against the stored one as for Open.
	// CacheSize, MemTableSize, NoSync and ReadOnly do not apply.
	Options
	// Addrs are the servers: one for a standalone server, several (or
	// Cluster) for a Redis Cluster, whose slots the keys spread over.
	// Default ["127.0.0.1:6379"].
	Addrs []string
	// Cluster makes a cluster client even for one address. Default false.
	Cluster bool
	// Username and Password authenticate to Redis. Default none.
	Username, Password string
	// DB selects the database of a standalone server. Default 0.
	DB int
	// Prefix starts every key, so that several indexes share servers.
	// Default "neardup:".
	Prefix string
	// LockTTL bounds how long a crashed writer's bucket locks outlive it;
	// it must exceed the longest write (a batch under load). Default 10 s.
	LockTTL time.Duration
	// Client, if set, is used instead of a client made from Addrs (which
	// are then ignored), and is not closed by Close. Default nil.
	Client redis.UniversalClient
}

// EnsureDefaults fills zero fields with their defaults and returns o; a nil o
// yields new RedisOptions with every default.
func (o *RedisOptions) EnsureDefaults() *RedisOptions {
	if o == nil {
		o = &RedisOptions{}
	}
	o.Options.EnsureDefaults()
	if len(o.Addrs) == 0 && o.Client == nil {
		o.Addrs = []string{DefaultRedisAddr}
	}
	if o.Prefix == "" {
		o.Prefix = DefaultRedisPrefix
	}
	if o.LockTTL == 0 {
		o.LockTTL = DefaultLockTTL
	}
	return o
}

// Validate reports whether o (after defaults) is usable; errors wrap
// ErrInvalidOptions. It is nil-safe.
func (o *RedisOptions) Validate() error {
	var c RedisOptions
	if o != nil {
		c = *o
	}
	c.EnsureDefaults()
	if err := validateSketch(c.Spec, c.Params, c.Bands, c.Threshold, c.Recall, c.BucketCap); err != nil {
		return err
	}
	if err := validateSimHash(c.Sketch, &c.SimHash); err != nil {
		return err
	}
	if c.LockTTL < 100*time.Millisecond {
		return fmt.Errorf("%w: LockTTL = %v; must be at least 100ms", ErrInvalidOptions, c.LockTTL)
	}
	return nil
}

// Redis is an Index on Redis (standalone or Cluster), shared by every
// process that opens it with the same servers and prefix. See the package
// doc for its keys, its locking and its durability, which is Redis's.
//
// A Redis is safe for concurrent use. Its zero value is not usable: call
// OpenRedis.
type Redis struct {
	c      redis.UniversalClient
	own    bool
	prefix string
	ttl    time.Duration
	cfg    Config
	locks  *lockTable
	m      metrics

	closeMu sync.RWMutex
	closed  bool
}

// Redis keys, after the prefix.
const (
	redisMeta    = "meta"
	redisDF      = "df:" // + the table's fingerprint, 16 hex digits → a TF-IDF index's document-frequency table
	redisCount   = "n"
	redisDoc     = "d:"   // + id → record
	redisBucket  = "b:"   // + 4-byte bucket key → set of ids
	redisLockB   = "l:b:" // + bucket key → lock token
	redisLockID  = "l:i:" // + id → lock token
	redisScanMax = 1000
)

// unlockScript deletes a lock only if it still holds our token.
var unlockScript = redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`)

// OpenRedis connects to the servers and opens the index under opts.Prefix,
// creating it if there is none. Mismatched definitions fail as for Open.
func OpenRedis(ctx context.Context, opts *RedisOptions) (*Redis, error) {
	var o RedisOptions
	if opts != nil {
		o = *opts
	}
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	r := &Redis{c: o.Client, prefix: o.Prefix, ttl: o.LockTTL, locks: new(lockTable)}
	if r.c == nil {
		r.own = true
		r.c = redis.NewUniversalClient(&redis.UniversalOptions{
			Addrs: o.Addrs, IsClusterMode: o.Cluster, Username: o.Username, Password: o.Password, DB: o.DB,
			PoolSize: 64,
		})
	}
	fail := func(err error) (*Redis, error) {
		if r.own {
			r.c.Close()
		}
		return nil, fmt.Errorf("index: open redis %v%s: %w", o.Addrs, o.Prefix, err)
	}
	if err := r.c.Ping(ctx).Err(); err != nil {
		return fail(err)
	}
	stored, err := r.c.Get(ctx, r.key(redisMeta)).Bytes()
	if errors.Is(err, redis.Nil) {
		stored = nil
	} else if err != nil {
		return fail(err)
	}
	if stored == nil {
		// Create: the first instance to set the meta record wins; the
		// others check their options against it.
		cfg, err := resolveConfig(&o.Options, nil)
		if err != nil {
			return fail(err)
		}
		if cfg.needsDF() {
			// Under its fingerprint, before the meta record that names it:
			// an instance that loses the race below leaves a table no
			// meta record names, never a wrong one.
			data, err := o.SimHash.DF.MarshalBinary()
			if err != nil {
				return fail(err)
			}
			if err := r.c.Set(ctx, r.dfKey(cfg.SimHash.Params.DFFingerprint), data, 0).Err(); err != nil {
				return fail(err)
			}
		}
		ok, err := r.c.SetNX(ctx, r.key(redisMeta), encodeMeta(cfg), 0).Result()
		if err != nil {
			return fail(err)
		}
		if !ok {
			if stored, err = r.c.Get(ctx, r.key(redisMeta)).Bytes(); err != nil {
				return fail(err)
			}
		}
	}
	if r.cfg, err = resolveConfig(&o.Options, stored); err != nil {
		return fail(err)
	}
	if r.cfg.needsDF() {
		data, err := r.c.Get(ctx, r.dfKey(r.cfg.SimHash.Params.DFFingerprint)).Bytes()
		if errors.Is(err, redis.Nil) {
			return fail(fmt.Errorf("%w: a TF-IDF SimHash index without its document-frequency table", ErrCorrupt))
		}
		if err != nil {
			return fail(err)
		}
		if err := r.cfg.SimHash.decodeDF(data); err != nil {
			return fail(err)
		}
	}
	return r, nil
}

// dfKey is the key of the document-frequency table of fingerprint fp.
func (r *Redis) dfKey(fp uint64) string { return r.key(redisDF, fmt.Sprintf("%016x", fp)) }

func (r *Redis) key(parts ...string) string {
	return r.prefix + strings.Join(parts, "")
}

func bucketName(bk uint32) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], bk)
	return string(b[:])
}

// Config returns the index's configuration.
func (r *Redis) Config() Config { return r.cfg }

// Metrics returns what this process's handle has counted.
func (r *Redis) Metrics() Metrics { return r.m.snapshot() }

// Client returns the Redis client.
func (r *Redis) Client() redis.UniversalClient { return r.c }

// Close closes the client (if OpenRedis made it) after operations in flight.
func (r *Redis) Close() error {
	r.closeMu.Lock()
	defer r.closeMu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	if r.own {
		return r.c.Close()
	}
	return nil
}

func (r *Redis) enter(ctx context.Context) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.closeMu.RLock()
	if r.closed {
		r.closeMu.RUnlock()
		return nil, ErrClosed
	}
	return r.closeMu.RUnlock, nil
}

// docKeys returns the distinct bucket keys of sig, ascending.
func (r *Redis) docKeys(sig minhash.Signature) []uint32 {
	keys, _, _ := r.cfg.keysOf(nil, nil, nil, sig)
	slices.Sort(keys)
	return slices.Compact(keys)
}

// redisLocks is a set of held locks: local stripes, then Redis keys.
type redisLocks struct {
	r       *Redis
	stripes []uint32
	names   []string
	token   string
}

// lock takes the locks of ids and bucket keys: first this process's
// stripes, then the Redis lock keys, all at once (SET NX PX in one
// pipeline); if any is taken, it releases those it got, waits a random,
// growing time and tries again, until ctx ends (ErrLockTimeout).
func (r *Redis) lock(ctx context.Context, ids []string, buckets []uint32) (*redisLocks, error) {
	l := &redisLocks{r: r}
	for _, id := range ids {
		l.stripes = append(l.stripes, idStripe(id))
		l.names = append(l.names, r.key(redisLockID, id))
	}
	for _, bk := range buckets {
		l.stripes = append(l.stripes, bucketStripe(bk))
		l.names = append(l.names, r.key(redisLockB, bucketName(bk)))
	}
	slices.Sort(l.names)
	l.names = slices.Compact(l.names)
	var tok [16]byte
	rand.Read(tok[:])
	l.token = hex.EncodeToString(tok[:])
	l.stripes = r.locks.lock(l.stripes)
	wait := 200 * time.Microsecond
	for {
		cmds := make([]*redis.BoolCmd, len(l.names))
		_, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, n := range l.names {
				cmds[i] = p.SetNX(ctx, n, l.token, r.ttl)
			}
			return nil
		})
		got := 0
		for _, c := range cmds {
			if c.Val() {
				got++
			}
		}
		if err == nil && got == len(l.names) {
			return l, nil
		}
		if err != nil {
			l.release(ctx, nil) // replies lost: release whatever the token may hold
		} else {
			l.release(ctx, cmds)
		}
		if err != nil && !errors.Is(err, redis.Nil) {
			r.locks.unlock(l.stripes)
			if ctx.Err() != nil {
				// The context ended during an attempt rather than between
				// two: still a timeout waiting for the locks.
				return nil, fmt.Errorf("%w: %v", ErrLockTimeout, ctx.Err())
			}
			return nil, err
		}
		t := time.NewTimer(wait/2 + time.Duration(mrand.Int64N(int64(wait))))
		select {
		case <-ctx.Done():
			t.Stop()
			r.locks.unlock(l.stripes)
			return nil, fmt.Errorf("%w: %v", ErrLockTimeout, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, 20*time.Millisecond)
	}
}

// release deletes the Redis locks we hold (all, or those whose SetNX in
// got succeeded).
func (l *redisLocks) release(ctx context.Context, got []*redis.BoolCmd) {
	ctx = context.WithoutCancel(ctx)
	l.r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, n := range l.names {
			if got == nil || got[i].Val() {
				unlockScript.Eval(ctx, p, []string{n}, l.token)
			}
		}
		return nil
	})
}

func (l *redisLocks) unlock(ctx context.Context) {
	l.release(ctx, nil)
	l.r.locks.unlock(l.stripes)
}

// bucketRead is what scanning a document's buckets found.
type bucketRead struct {
	keys   []uint32
	counts []int
	cands  []string
}

// readBuckets reads the buckets of keys: their sizes and, if collect, their
// members (at most the cap of each, the smallest ids first).
func (r *Redis) readBuckets(ctx context.Context, keys []uint32, collect bool) (bucketRead, error) {
	br := bucketRead{keys: keys, counts: make([]int, len(keys))}
	capacity := r.cfg.BucketCap
	var members []*redis.StringSliceCmd
	var cards []*redis.IntCmd
	_, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, bk := range keys {
			if collect {
				members = append(members, p.SMembers(ctx, r.key(redisBucket, bucketName(bk))))
			} else {
				cards = append(cards, p.SCard(ctx, r.key(redisBucket, bucketName(bk))))
			}
		}
		return nil
	})
	if err != nil {
		return br, err
	}
	for i := range keys {
		n := 0
		if collect {
			ids := members[i].Val()
			if capacity != Unlimited && len(ids) > capacity {
				slices.Sort(ids)
				ids = ids[:capacity]
			}
			br.cands = append(br.cands, ids...)
			n = len(ids)
		} else {
			n = int(cards[i].Val())
		}
		if capacity != Unlimited && n >= capacity {
			r.m.fullBuckets.Add(1)
		}
		br.counts[i] = n
		r.m.bucketSize.observe(n)
	}
	r.m.bucketsRead.Add(uint64(len(keys)))
	return br, nil
}

// getRecords fetches the records of ids (nil where absent).
func (r *Redis) getRecords(ctx context.Context, ids []string) ([][]byte, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	cmds := make([]*redis.StringCmd, len(ids))
	_, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.Get(ctx, r.key(redisDoc, id))
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	out := make([][]byte, len(ids))
	for i, c := range cmds {
		b, err := c.Bytes()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// verify turns candidate ids into matches of sig.
func (r *Redis) verify(ctx context.Context, dst []Match, cands []string, sig minhash.Signature, q *QueryOptions) ([]Match, error) {
	slices.Sort(cands)
	cands = slices.Compact(cands)
	recs, err := r.getRecords(ctx, cands)
	if err != nil {
		return dst, err
	}
	p := &r.cfg.Params
	var buf minhash.Signature
	for i, rec := range recs {
		if rec == nil {
			continue // deleted, or a posting whose record was never written
		}
		rr, err := decodeRecord(buf[:0], p, rec)
		if err != nil {
			return dst, fmt.Errorf("document %q: %w", cands[i], err)
		}
		buf = rr.sig
		sim := r.cfg.similarity(sig, rr.sig)
		if sim < q.Threshold {
			r.m.dropped.Add(1)
			continue
		}
		if cands[i] == q.Exclude {
			continue
		}
		m := Match{ID: cands[i], Similarity: sim}
		if len(rr.meta) > 0 {
			m.Meta = rr.meta
		}
		dst = append(dst, m)
	}
	r.m.candidates.Add(uint64(len(cands)))
	r.m.candidatesPerQuery.observe(len(cands))
	r.m.queries.Add(1)
	return dst, nil
}

// Query returns the stored documents similar to sig.
func (r *Redis) Query(ctx context.Context, sig minhash.Signature, q *QueryOptions) ([]Match, error) {
	done, err := r.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	qo, err := q.resolve(&r.cfg)
	if err != nil {
		return nil, err
	}
	if len(sig) != r.cfg.Params.Words() {
		return nil, fmt.Errorf("%w: signature of %d words, params %s make %d", ErrInvalidDocument, len(sig), r.cfg.Params, r.cfg.Params.Words())
	}
	br, err := r.readBuckets(ctx, r.docKeys(sig), true)
	if err != nil {
		return nil, err
	}
	ms, err := r.verify(ctx, nil, br.cands, sig, &qo)
	if err != nil {
		return nil, err
	}
	ms = sortMatches(ms, qo.Limit)
	r.m.matches.Add(uint64(len(ms)))
	return ms, nil
}

// Get returns the stored document id.
func (r *Redis) Get(ctx context.Context, id string) (Doc, error) {
	done, err := r.enter(ctx)
	if err != nil {
		return Doc{}, err
	}
	defer done()
	return r.get(ctx, id)
}

func (r *Redis) get(ctx context.Context, id string) (Doc, error) {
	rec, err := r.c.Get(ctx, r.key(redisDoc, id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return Doc{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return Doc{}, err
	}
	rr, err := decodeRecord(nil, &r.cfg.Params, rec)
	if err != nil {
		return Doc{}, err
	}
	d := Doc{ID: id, Sig: rr.sig}
	if len(rr.meta) > 0 {
		d.Meta = rr.meta
	}
	return d, nil
}

// redisWrite collects the writes of one operation.
type redisWrite struct {
	r       *Redis
	pending []pendingDoc
	byKey   map[uint32][]int
	ids     map[string]bool
	postKey []string // bucket names, per posting
	postID  []string
	recKey  []string
	recVal  [][]byte
}

func (r *Redis) newWrite() *redisWrite {
	return &redisWrite{r: r, byKey: map[uint32][]int{}, ids: map[string]bool{}}
}

func (w *redisWrite) add(doc *Doc, br *bucketRead) {
	r := w.r
	capacity := r.cfg.BucketCap
	idx := len(w.pending)
	var dropped []int
	for i, bk := range br.keys {
		if capacity != Unlimited && br.counts[i]+len(w.byKey[bk]) >= capacity {
			r.m.droppedPost.Add(1)
			dropped = append(dropped, i)
			continue
		}
		w.postKey = append(w.postKey, r.key(redisBucket, bucketName(bk)))
		w.postID = append(w.postID, doc.ID)
		w.byKey[bk] = append(w.byKey[bk], idx)
	}
	w.recKey = append(w.recKey, r.key(redisDoc, doc.ID))
	w.recVal = append(w.recVal, appendRecord(nil, &r.cfg.Params, doc.Sig, doc.ID, dropped, doc.Meta))
	w.pending = append(w.pending, pendingDoc{id: doc.ID, sig: slices.Clone(doc.Sig), meta: doc.Meta})
	w.ids[doc.ID] = true
}

// commit writes the postings, then the records and the count: a writer
// that dies in between leaves postings without a record, which queries skip
// and Check reports.
func (w *redisWrite) commit(ctx context.Context) error {
	r := w.r
	if len(w.recKey) == 0 {
		return nil
	}
	ctx = context.WithoutCancel(ctx) // do not stop halfway
	if _, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range w.postKey {
			p.SAdd(ctx, w.postKey[i], w.postID[i])
		}
		return nil
	}); err != nil {
		return err
	}
	if _, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range w.recKey {
			p.Set(ctx, w.recKey[i], w.recVal[i], 0)
		}
		p.IncrBy(ctx, r.key(redisCount), int64(len(w.recKey)))
		return nil
	}); err != nil {
		return err
	}
	r.m.commits.Add(1)
	r.m.inserts.Add(uint64(len(w.recKey)))
	return nil
}

// verifyPending adds matches among the operation's own earlier documents.
func (w *redisWrite) verifyPending(ms []Match, keys []uint32, sig minhash.Signature, q *QueryOptions) []Match {
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
		if sim := w.r.cfg.similarity(sig, pd.sig); sim >= q.Threshold && pd.id != q.Exclude {
			ms = append(ms, Match{ID: pd.id, Similarity: sim, Meta: slices.Clone(pd.meta)})
		}
	}
	return ms
}

// lockDocs locks the ids and buckets of the valid docs.
func (r *Redis) lockDocs(ctx context.Context, docs []Doc) (*redisLocks, [][]uint32, error) {
	var ids []string
	var all []uint32
	keys := make([][]uint32, len(docs))
	for i := range docs {
		if validateDoc(&r.cfg, &docs[i]) != nil {
			continue
		}
		ids = append(ids, docs[i].ID)
		keys[i] = r.docKeys(docs[i].Sig)
		all = append(all, keys[i]...)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	l, err := r.lock(ctx, ids, all)
	return l, keys, err
}

// existing reports which of the ids are stored.
func (r *Redis) existing(ctx context.Context, docs []Doc) ([]bool, error) {
	cmds := make([]*redis.IntCmd, len(docs))
	_, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range docs {
			cmds[i] = p.Exists(ctx, r.key(redisDoc, docs[i].ID))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(docs))
	for i, c := range cmds {
		out[i] = c.Val() > 0
	}
	return out, nil
}

// Insert stores docs without checking them; all or nothing among writers
// that follow the protocol (a Redis failure halfway can leave part).
func (r *Redis) Insert(ctx context.Context, docs []Doc) error {
	done, err := r.enter(ctx)
	if err != nil {
		return err
	}
	defer done()
	for i := range docs {
		if err := validateDoc(&r.cfg, &docs[i]); err != nil {
			return err
		}
	}
	l, keys, err := r.lockDocs(ctx, docs)
	if err != nil {
		return err
	}
	defer l.unlock(ctx)
	exists, err := r.existing(ctx, docs)
	if err != nil {
		return err
	}
	w := r.newWrite()
	for i := range docs {
		if exists[i] || w.ids[docs[i].ID] {
			return fmt.Errorf("%w: %q", ErrDuplicateID, docs[i].ID)
		}
		br, err := r.readBuckets(ctx, keys[i], false)
		if err != nil {
			return err
		}
		w.add(&docs[i], &br)
	}
	return w.commit(ctx)
}

// CheckAndInsert checks each doc against the index and the docs before it,
// and stores those without a match.
func (r *Redis) CheckAndInsert(ctx context.Context, docs []Doc, q *QueryOptions) ([]Result, error) {
	done, err := r.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	qo, err := q.resolve(&r.cfg)
	if err != nil {
		return nil, err
	}
	l, keys, err := r.lockDocs(ctx, docs)
	if err != nil {
		return nil, err
	}
	defer l.unlock(ctx)
	exists, err := r.existing(ctx, docs)
	if err != nil {
		return nil, err
	}
	w := r.newWrite()
	results := make([]Result, len(docs))
	var dupes uint64
	for i := range docs {
		doc := &docs[i]
		res := &results[i]
		res.ID = doc.ID
		if err := validateDoc(&r.cfg, doc); err != nil {
			res.Err = err
			continue
		}
		if exists[i] || w.ids[doc.ID] {
			res.Err = fmt.Errorf("%w: %q", ErrDuplicateID, doc.ID)
			continue
		}
		br, err := r.readBuckets(ctx, keys[i], true)
		if err != nil {
			return nil, err
		}
		// Bucket sizes for the cap: the members read, which the cap bounds.
		ms, err := r.verify(ctx, nil, br.cands, doc.Sig, &qo)
		if err != nil {
			return nil, err
		}
		ms = w.verifyPending(ms, keys[i], doc.Sig, &qo)
		if len(ms) > 0 {
			res.Status, res.Matches = Duplicate, sortMatches(ms, qo.Limit)
			r.m.matches.Add(uint64(len(res.Matches)))
			dupes++
			continue
		}
		w.add(doc, &br)
		res.Status = New
	}
	if err := w.commit(ctx); err != nil {
		return nil, err
	}
	r.m.duplicates.Add(dupes)
	return results, nil
}

// Delete removes document id and its postings.
func (r *Redis) Delete(ctx context.Context, id string) error {
	done, err := r.enter(ctx)
	if err != nil {
		return err
	}
	defer done()
	for attempt := 0; ; attempt++ {
		doc, err := r.get(ctx, id)
		if err != nil {
			return err
		}
		keys := r.docKeys(doc.Sig)
		l, err := r.lock(ctx, []string{id}, keys)
		if err != nil {
			return err
		}
		err = r.deleteLocked(ctx, id, doc.Sig, keys)
		l.unlock(ctx)
		if errors.Is(err, errRetry) && attempt < 10 {
			continue
		}
		return err
	}
}

func (r *Redis) deleteLocked(ctx context.Context, id string, sig minhash.Signature, keys []uint32) error {
	rec, err := r.c.Get(ctx, r.key(redisDoc, id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return err
	}
	rr, err := decodeRecord(nil, &r.cfg.Params, rec)
	if err != nil {
		return err
	}
	if !slices.Equal(rr.sig, sig) {
		return errRetry
	}
	ctx = context.WithoutCancel(ctx)
	// The record first: a writer that dies halfway leaves postings without
	// a record, as an interrupted insert does.
	if _, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, r.key(redisDoc, id))
		p.DecrBy(ctx, r.key(redisCount), 1)
		return nil
	}); err != nil {
		return err
	}
	if _, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, bk := range keys {
			if !rr.droppedAt(i) {
				p.SRem(ctx, r.key(redisBucket, bucketName(bk)), id)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	r.m.deletes.Add(1)
	return nil
}

// Stats counts the documents (a counter kept with every write) and the
// memory the Redis servers use (all their data, not only this index's).
func (r *Redis) Stats(ctx context.Context) (Stats, error) {
	done, err := r.enter(ctx)
	if err != nil {
		return Stats{}, err
	}
	defer done()
	n, err := r.c.Get(ctx, r.key(redisCount)).Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		return Stats{}, err
	}
	st := Stats{Documents: n}
	var mu sync.Mutex
	err = r.eachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		info, err := c.Info(ctx, "memory").Result()
		if err != nil {
			return err
		}
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
				b, _ := strconv.ParseInt(v, 10, 64)
				mu.Lock()
				st.Bytes += b
				mu.Unlock()
			}
		}
		return nil
	})
	return st, err
}

// eachMaster calls fn with each master of a cluster, or the one server.
func (r *Redis) eachMaster(ctx context.Context, fn func(context.Context, *redis.Client) error) error {
	switch c := r.c.(type) {
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, fn)
	case *redis.Client:
		return fn(ctx, c)
	}
	return fmt.Errorf("index: unsupported redis client %T", r.c)
}

// scanKeys calls fn with every key matching the pattern, on every master.
func (r *Redis) scanKeys(ctx context.Context, pattern string, fn func(key string) error) error {
	var mu sync.Mutex
	return r.eachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		it := c.Scan(ctx, 0, pattern, redisScanMax).Iterator()
		for it.Next(ctx) {
			mu.Lock()
			err := fn(it.Val())
			mu.Unlock()
			if err != nil {
				return err
			}
		}
		return it.Err()
	})
}

// Check verifies that records and postings agree (see Index.Check), and
// that the document counter matches the records. Run it when no writer is
// active: Redis offers no snapshot.
func (r *Redis) Check(ctx context.Context) (CheckReport, error) {
	done, err := r.enter(ctx)
	if err != nil {
		return CheckReport{}, err
	}
	defer done()
	var rep CheckReport
	var docKeys, bucketKeys []string
	if err := r.scanKeys(ctx, escapeGlob(r.prefix+redisDoc)+"*", func(k string) error {
		docKeys = append(docKeys, k)
		return nil
	}); err != nil {
		return rep, err
	}
	if err := r.scanKeys(ctx, escapeGlob(r.prefix+redisBucket)+"*", func(k string) error {
		bucketKeys = append(bucketKeys, k)
		return nil
	}); err != nil {
		return rep, err
	}
	slices.Sort(docKeys)
	slices.Sort(bucketKeys)
	// Records → postings.
	keysOf := map[string][]uint32{}
	p := &r.cfg.Params
	for _, dk := range docKeys {
		id := strings.TrimPrefix(dk, r.prefix+redisDoc)
		rec, err := r.c.Get(ctx, dk).Bytes()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return rep, err
		}
		rep.Documents++
		rr, err := decodeRecord(nil, p, rec)
		if err != nil {
			rep.problem("document %q: %v", id, err)
			continue
		}
		if string(rr.id) != id {
			rep.problem("record of %q carries id %q", id, rr.id)
		}
		keys := r.docKeys(rr.sig)
		keysOf[id] = keys
		cmds := make([]*redis.BoolCmd, len(keys))
		if _, err := r.c.Pipelined(ctx, func(pl redis.Pipeliner) error {
			for i, bk := range keys {
				cmds[i] = pl.SIsMember(ctx, r.key(redisBucket, bucketName(bk)), id)
			}
			return nil
		}); err != nil {
			return rep, err
		}
		for i, bk := range keys {
			switch present, dropped := cmds[i].Val(), rr.droppedAt(i); {
			case dropped && present:
				rep.problem("document %q has a posting in bucket %08x that its record says was dropped", id, bk)
			case dropped:
				rep.CappedPostings++
			case !present:
				rep.problem("document %q lacks its posting in bucket %08x", id, bk)
			}
		}
	}
	// Postings → records.
	for _, bkKey := range bucketKeys {
		name := strings.TrimPrefix(bkKey, r.prefix+redisBucket)
		if len(name) != 4 {
			rep.problem("bad bucket key %q", bkKey)
			continue
		}
		bk := binary.BigEndian.Uint32([]byte(name))
		ids, err := r.c.SMembers(ctx, bkKey).Result()
		if err != nil {
			return rep, err
		}
		for _, id := range ids {
			rep.Postings++
			keys, ok := keysOf[id]
			if !ok {
				rep.problem("posting in bucket %08x names %q, which has no record", bk, id)
				continue
			}
			if !slices.Contains(keys, bk) {
				rep.problem("posting in bucket %08x names %q, whose signature has no such key", bk, id)
			}
		}
	}
	n, err := r.c.Get(ctx, r.key(redisCount)).Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		return rep, err
	}
	if n != rep.Documents {
		rep.problem("document counter %d, records %d", n, rep.Documents)
	}
	return rep, nil
}

// escapeGlob escapes the glob characters of a key prefix for SCAN MATCH.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		switch c {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Drop deletes every key of the index (its meta record too). For tests and
// tools; no other process may use the index meanwhile.
func (r *Redis) Drop(ctx context.Context) error {
	var keys []string
	if err := r.scanKeys(ctx, escapeGlob(r.prefix)+"*", func(k string) error {
		keys = append(keys, k)
		return nil
	}); err != nil {
		return err
	}
	_, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			p.Del(ctx, k)
		}
		return nil
	})
	return err
}
