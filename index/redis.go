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
	engine[string] // the algorithm; Redis is its storage (see storage.go)

	c      redis.UniversalClient
	own    bool
	prefix string
	ttl    time.Duration
}

// Redis keys, after the prefix.
const (
	redisMeta    = "meta"
	redisDF      = "df:" // + the table's fingerprint, 16 hex digits → a TF-IDF index's document-frequency table
	redisCount   = "n"
	redisDoc     = "d:"   // + id → record
	redisBucket  = "b:"   // + bucket key (Config.BucketKeyBytes bytes) → set of ids
	redisLockB   = "l:b:" // + bucket key → lock token
	redisLockID  = "l:i:" // + id → lock token
	redisScanMax = 1000
)

// unlockScript deletes a lock only if it still holds our token.
var unlockScript = redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`)

// OpenRedis connects to the servers and opens the index under opts.Prefix,
// creating it if there is none. Mismatched definitions fail as for Open.
func OpenRedis(ctx context.Context, opts *RedisOptions) (*Redis, error) {
	o, err := resolved(opts)
	if err != nil {
		return nil, err
	}
	r := &Redis{c: o.Client, prefix: o.Prefix, ttl: o.LockTTL}
	r.setup(r)
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

// bucketName is the name of bucket bk (left-aligned) in the index's
// width, big-endian.
func (r *Redis) bucketName(bk uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], bk)
	return string(b[:r.cfg.BucketKeyBytes])
}

// Client returns the Redis client.
func (r *Redis) Client() redis.UniversalClient { return r.c }

// Close closes the client (if OpenRedis made it) after operations in flight.
func (r *Redis) Close() error {
	return r.shut(func() error {
		if r.own {
			return r.c.Close()
		}
		return nil
	})
}

// docKeys returns the distinct bucket keys of sig, ascending.
func (r *Redis) docKeys(sig minhash.Signature) []uint64 {
	var kb keyBuf
	return kb.of(&r.cfg, sig)
}

// The storage of the engine (see storage.go). A document is named by its
// id.
var _ storage[string] = (*Redis)(nil)

func (r *Redis) admit(bool) error      { return nil }
func (r *Redis) fault(err error) error { return err }
func (r *Redis) durable(string) bool   { return true } // see "Redis" in the package doc
func (r *Redis) syncBarrier() error    { return nil }
func (r *Redis) begin(ctx context.Context) (txn[string], error) {
	return &redisTxn{r: r, ctx: ctx}, nil
}

// acquire takes the Redis lock keys of ids and buckets, which every
// process that shares the index takes (the engine's stripes serialise this
// process's writers): all at once, SET NX PX in one pipeline; if any is
// taken, it releases those it got, waits a random, growing time and tries
// again, until ctx ends (ErrLockTimeout). Locks expire after LockTTL, so a
// crashed writer blocks no one for longer.
func (r *Redis) acquire(ctx context.Context, ids []string, buckets []uint64, _ bool) (func(), error) {
	names := make([]string, 0, len(ids)+len(buckets))
	for _, id := range ids {
		names = append(names, r.key(redisLockID, id))
	}
	for _, bk := range buckets {
		names = append(names, r.key(redisLockB, r.bucketName(bk)))
	}
	slices.Sort(names)
	names = slices.Compact(names)
	var tok [16]byte
	rand.Read(tok[:])
	token := hex.EncodeToString(tok[:])
	wait := 200 * time.Microsecond
	for {
		cmds := make([]*redis.BoolCmd, len(names))
		_, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, n := range names {
				cmds[i] = p.SetNX(ctx, n, token, r.ttl)
			}
			return nil
		})
		got := 0
		for _, c := range cmds {
			if c.Val() {
				got++
			}
		}
		if err == nil && got == len(names) {
			return func() { r.unlock(ctx, names, token, nil) }, nil
		}
		if err != nil {
			r.unlock(ctx, names, token, nil) // replies lost: release whatever the token may hold
		} else {
			r.unlock(ctx, names, token, cmds)
		}
		if err != nil && !errors.Is(err, redis.Nil) {
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
			return nil, fmt.Errorf("%w: %v", ErrLockTimeout, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, 20*time.Millisecond)
	}
}

// unlock deletes the lock keys names that still hold token (all, or those
// whose SetNX in got succeeded).
func (r *Redis) unlock(ctx context.Context, names []string, token string, got []*redis.BoolCmd) {
	ctx = context.WithoutCancel(ctx)
	r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, n := range names {
			if got == nil || got[i].Val() {
				unlockScript.Eval(ctx, p, []string{n}, token)
			}
		}
		return nil
	})
}

// redisTxn is an operation on a Redis index: reads go to the servers at
// once, pipelined; writes are collected and sent by commit.
type redisTxn struct {
	r       *Redis
	ctx     context.Context
	postKey []string // bucket names, per posting
	postID  []string
	recKey  []string
	recVal  [][]byte
	delID   []string // removed documents
	delPost []string // bucket names of their postings
	delPID  []string
}

func (t *redisTxn) has(ids []string, found []bool) error {
	r, ctx := t.r, t.ctx
	cmds := make([]*redis.IntCmd, len(ids))
	_, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.Exists(ctx, r.key(redisDoc, id))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, c := range cmds {
		found[i] = c.Val() > 0
	}
	return nil
}

func (t *redisTxn) lookup(id string) (string, []byte, bool, error) {
	rec, err := t.r.c.Get(t.ctx, t.r.key(redisDoc, id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return "", nil, false, nil
	}
	if err != nil {
		return "", nil, false, err
	}
	return id, rec, true, nil
}

// buckets reads the buckets' sizes (SCARD) or members (SMEMBERS), in one
// pipeline. A set has no order: past the cap, its smallest ids are read.
func (t *redisTxn) buckets(keys []uint64, limit int, collect bool, counts []int, cands []string) ([]string, error) {
	r, ctx := t.r, t.ctx
	var members []*redis.StringSliceCmd
	var cards []*redis.IntCmd
	_, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, bk := range keys {
			if collect {
				members = append(members, p.SMembers(ctx, r.key(redisBucket, r.bucketName(bk))))
			} else {
				cards = append(cards, p.SCard(ctx, r.key(redisBucket, r.bucketName(bk))))
			}
		}
		return nil
	})
	if err != nil {
		return cands, err
	}
	for i := range keys {
		if collect {
			ids := members[i].Val()
			if limit != Unlimited && len(ids) > limit {
				slices.Sort(ids)
				ids = ids[:limit]
			}
			cands = append(cands, ids...)
			counts[i] = len(ids)
		} else {
			n := int(cards[i].Val())
			if limit != Unlimited {
				n = min(n, limit)
			}
			counts[i] = n
		}
	}
	return cands, nil
}

// records fetches the records of ids in one pipeline.
func (t *redisTxn) records(ids []string, fn func(string, []byte) error) error {
	if len(ids) == 0 {
		return nil
	}
	r, ctx := t.r, t.ctx
	cmds := make([]*redis.StringCmd, len(ids))
	_, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.Get(ctx, r.key(redisDoc, id))
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	for i, c := range cmds {
		rec, err := c.Bytes()
		if errors.Is(err, redis.Nil) {
			continue // deleted, or a posting whose record was never written
		}
		if err != nil {
			return err
		}
		if err := fn(ids[i], rec); err != nil {
			return err
		}
	}
	return nil
}

func (t *redisTxn) insert(id string, post []uint64, rec []byte) error {
	for _, bk := range post {
		t.postKey = append(t.postKey, t.r.key(redisBucket, t.r.bucketName(bk)))
		t.postID = append(t.postID, id)
	}
	t.recKey = append(t.recKey, t.r.key(redisDoc, id))
	t.recVal = append(t.recVal, slices.Clone(rec))
	return nil
}

func (t *redisTxn) remove(_ string, id string, post []uint64) error {
	t.delID = append(t.delID, id)
	for _, bk := range post {
		t.delPost = append(t.delPost, t.r.key(redisBucket, t.r.bucketName(bk)))
		t.delPID = append(t.delPID, id)
	}
	return nil
}

// commit writes in an order that leaves a writer that dies halfway with
// postings but no record, which reads skip and Check reports: the postings
// of new documents before their records and the count; the records of
// removed documents and the count before their postings. Redis executes
// each pipeline as it comes; the writes are acknowledged once it has.
func (t *redisTxn) commit(func()) error {
	r := t.r
	ctx := context.WithoutCancel(t.ctx) // do not stop halfway
	if len(t.delID) > 0 {
		if _, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, id := range t.delID {
				p.Del(ctx, r.key(redisDoc, id))
			}
			p.DecrBy(ctx, r.key(redisCount), int64(len(t.delID)))
			return nil
		}); err != nil {
			return err
		}
		if _, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := range t.delPost {
				p.SRem(ctx, t.delPost[i], t.delPID[i])
			}
			return nil
		}); err != nil {
			return err
		}
	}
	if len(t.recKey) == 0 {
		return nil
	}
	if _, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range t.postKey {
			p.SAdd(ctx, t.postKey[i], t.postID[i])
		}
		return nil
	}); err != nil {
		return err
	}
	_, err := r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range t.recKey {
			p.Set(ctx, t.recKey[i], t.recVal[i], 0)
		}
		p.IncrBy(ctx, r.key(redisCount), int64(len(t.recKey)))
		return nil
	})
	return err
}

func (t *redisTxn) abort() {}

// Stats counts the documents (a counter kept with every write) and the
// memory the Redis servers use (all their data, not only this index's).
func (r *Redis) Stats(ctx context.Context) (Stats, error) {
	done, err := r.enter(ctx, false)
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
	done, err := r.enter(ctx, false)
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
	keysOf := map[string][]uint64{}
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
				cmds[i] = pl.SIsMember(ctx, r.key(redisBucket, r.bucketName(bk)), id)
			}
			return nil
		}); err != nil {
			return rep, err
		}
		for i, bk := range keys {
			rep.posting(id, bk, cmds[i].Val(), rr.droppedAt(i))
		}
	}
	// Postings → records.
	for _, bkKey := range bucketKeys {
		name := strings.TrimPrefix(bkKey, r.prefix+redisBucket)
		if len(name) != r.cfg.BucketKeyBytes {
			rep.problem("bad bucket key %q", bkKey)
			continue
		}
		var nb [8]byte
		copy(nb[:], name)
		bk := binary.BigEndian.Uint64(nb[:])
		ids, err := r.c.SMembers(ctx, bkKey).Result()
		if err != nil {
			return rep, err
		}
		for _, id := range ids {
			rep.Postings++
			keys, ok := keysOf[id]
			if !ok {
				rep.problem("posting in bucket %016x names %q, which has no record", bk, id)
				continue
			}
			if !slices.Contains(keys, bk) {
				rep.problem("posting in bucket %016x names %q, whose signature has no such key", bk, id)
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
