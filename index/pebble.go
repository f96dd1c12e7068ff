package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	iofs "io/fs"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/neardup/neardup/minhash"
)

// DB is an Index on Pebble in one directory, for one process (Pebble locks
// the directory). See the package doc for the layout and the durability
// guarantee.
//
// A DB is safe for concurrent use. Its zero value is not usable: call Open.
type DB struct {
	db   *pebble.DB
	lock *pebble.Lock // of dir, closed after db
	po   *pebble.Options
	dir  string
	cfg  Config
	sync bool
	ro   bool
	h    *health // storage faults met (see health)

	// incomplete: the meta record says a bulk build is in progress (opened
	// with ForBuild, or a Builder has started); cleared when one finishes.
	incomplete bool

	locks  *lockTable
	filter *bucketFilter // bucket keys of postings of their own; nil when off
	ids    *bucketFilter // of idFilterKey; nil when off
	next   atomic.Uint64 // next document number
	docs   atomic.Int64
	dur    durability // which document numbers are durable
	m      metrics

	// Packed postings (written by a bulk build or Repack; see packed.go).
	// packed is set before packedBits is stored and read after it is
	// loaded; Repack changes both only with closeMu held exclusively.
	packedBits  atomic.Int32  // high bucket-key bits naming a group; 0: none
	packed      *bucketFilter // bucket keys of packed postings; nil when off
	packMu      sync.Mutex    // held by a delete or a repack batch while it rewrites packed values
	repackMu    sync.Mutex    // held by Repack: one at a time
	filterBytes int           // Options.FilterBytes, for the packed filter

	// closeMu is held shared by every operation and exclusively by Close,
	// so Close waits for writes in flight (and by NewBuilder and a change of
	// the packed group bits, which wait for them too).
	closeMu  sync.RWMutex
	closed   bool
	building bool // a Builder owns the index

	pool sync.Pool // *scratch
}

// scratch is one operation's reusable buffers.
type scratch struct {
	keys    []uint32 // bucket keys of one document
	slots   []uint64
	keys64  []uint64
	cands   []uint32 // document numbers met in buckets
	counts  []int    // bucket sizes seen (capped)
	stripes []uint32
	sig     minhash.Signature
	kbuf    []byte
}

// Open opens the index in directory dir, creating it if it does not exist
// (unless opts.MustExist or opts.ReadOnly: ErrNoIndex). Opening an index made
// under another spec, params or banding than opts asks for fails with
// ErrSpecMismatch, ErrParamsMismatch or ErrBandsMismatch; one whose bulk
// build was interrupted with ErrIncomplete (unless opts.ForBuild); one open
// in another process with ErrLocked. See Options.
func Open(dir string, opts *Options) (*DB, error) {
	var fs vfs.FS
	if opts != nil {
		fs = opts.FS
	}
	return open(dir, opts, fs)
}

// open is Open on filesystem fs (nil: the operating system's); tests pass
// a crashable in-memory one.
func open(dir string, opts *Options, fs vfs.FS) (*DB, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if fs == nil {
		fs = vfs.Default
	}
	if o.MustExist || o.ReadOnly {
		if ok, err := pebbleExists(fs, dir); err != nil || !ok {
			if err == nil {
				err = fmt.Errorf("%w at %s", ErrNoIndex, dir)
			}
			return nil, err
		}
	}
	h := newHealth(o.Logger)
	po := &pebble.Options{
		MemTableSize:       uint64(o.MemTableSize),
		FormatMajorVersion: pebble.FormatNewest,
		Logger:             pebbleLogger{h},
		EventListener:      h.eventListener(),
		FS:                 &faultFS{FS: fs, h: h},
		ReadOnly:           o.ReadOnly,
		ErrorIfNotExists:   o.ReadOnly || o.MustExist,
		// Up to two compactions when L0 backs up (after a bulk build or a
		// burst of writes).
		CompactionConcurrencyRange: func() (int, int) { return 1, 2 },
	}
	// zstd at the bottom levels: the signatures are random bytes and do not
	// compress, but the postings' document numbers and the ids gain from
	// zstd's entropy coding (about 15% of the postings).
	po.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.DBCompressionGood })
	pdb, lock, err := openPebble(dir, po, o.CacheSize)
	if err != nil {
		if !errors.Is(err, ErrLocked) {
			err = h.surface(err) // a damaged manifest or table: one line
		}
		return nil, fmt.Errorf("index: open %s: %w", dir, err)
	}
	d := &DB{db: pdb, lock: lock, po: po, dir: dir, sync: !o.NoSync, ro: o.ReadOnly, h: h, locks: new(lockTable), filter: newBucketFilter(o.FilterBytes),
		ids: newBucketFilter(o.FilterBytes / 4), filterBytes: o.FilterBytes}
	d.dur.next = &d.next
	if err := d.init(&o); err != nil {
		pdb.Close()
		lock.Close()
		if !errors.Is(err, ErrNoIndex) && !errors.Is(err, ErrIncomplete) {
			err = h.surface(err)
		}
		return nil, fmt.Errorf("index: open %s: %w", dir, err)
	}
	return d, nil
}

// openPebble locks directory dir (made if missing, unless po.ReadOnly) and
// opens the Pebble database in it with a block cache of cacheSize bytes. A
// lock held elsewhere fails with ErrLocked; the caller closes the lock after
// the database.
func openPebble(dir string, po *pebble.Options, cacheSize int64) (*pebble.DB, *pebble.Lock, error) {
	if !po.ReadOnly {
		if err := po.FS.MkdirAll(dir, 0o755); err != nil {
			return nil, nil, err
		}
	}
	lock, err := pebble.LockDirectory(dir, po.FS)
	if err != nil {
		var pe *iofs.PathError
		if errors.As(err, &pe) {
			return nil, nil, err // the lock file could not be made
		}
		return nil, nil, fmt.Errorf("%w (%v)", ErrLocked, err)
	}
	po.Lock = lock
	po.Cache = pebble.NewCache(cacheSize)
	defer po.Cache.Unref() // Pebble holds its own reference
	pdb, err := pebble.Open(dir, po)
	if err != nil {
		lock.Close()
		return nil, nil, err
	}
	return pdb, lock, nil
}

// pebbleExists reports whether directory dir holds a Pebble database (its
// manifest marker), without creating anything.
func pebbleExists(fs vfs.FS, dir string) (bool, error) {
	names, err := fs.List(dir)
	if errors.Is(err, iofs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("index: %w", err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "marker.manifest.") || n == "CURRENT" {
			return true, nil
		}
	}
	return false, nil
}

func (d *DB) init(o *Options) error {
	stored, closer, err := d.db.Get(metaKey)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		stored = nil
	case err != nil:
		return err
	default:
		stored = bytes.Clone(stored)
		closer.Close()
	}
	if stored == nil {
		it, err := d.db.NewIter(nil)
		if err != nil {
			return err
		}
		nonEmpty := it.First()
		it.Close()
		if nonEmpty {
			return fmt.Errorf("%w: a Pebble database without a neardup meta record", ErrCorrupt)
		}
		if d.ro || o.MustExist {
			return fmt.Errorf("%w at %s (an empty Pebble database)", ErrNoIndex, d.dir)
		}
	}
	d.cfg, err = resolveConfig(o, stored)
	if err != nil {
		return err
	}
	if stored == nil {
		meta := encodeMeta(d.cfg)
		if o.ForBuild {
			// Marked before anything else is written: a build killed at any
			// moment leaves an index that says so.
			if meta, err = withBuilding(meta, true); err != nil {
				return err
			}
			d.incomplete = true
		}
		b := d.db.NewBatch()
		if d.cfg.needsDF() {
			// The table the meta record names, in the same batch.
			data, err := o.SimHash.DF.MarshalBinary()
			if err != nil {
				return err
			}
			b.Set(dfKey, data, nil)
		}
		b.Set(metaKey, meta, nil)
		if err := b.Commit(pebble.Sync); err != nil {
			return err
		}
	} else if _, m, err := decodeMeta(stored); err == nil {
		if m.Building {
			if !o.ForBuild {
				return fmt.Errorf("%w (the process was killed or the build failed): build the index again with neardup index build", ErrIncomplete)
			}
			d.incomplete = true
		}
		if m.PackedGroupBits > 0 {
			d.packed = newBucketFilter(o.FilterBytes)
			d.packedBits.Store(int32(m.PackedGroupBits))
		}
		if d.cfg.needsDF() {
			data, closer, err := d.db.Get(dfKey)
			if errors.Is(err, pebble.ErrNotFound) {
				return fmt.Errorf("%w: a TF-IDF SimHash index without its document-frequency table", ErrCorrupt)
			}
			if err != nil {
				return err
			}
			err = d.cfg.SimHash.decodeDF(data)
			closer.Close()
			if err != nil {
				return err
			}
		}
	}
	// The next document number follows the last stored signature; the
	// number of documents is the number of ids.
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixID}, UpperBound: []byte{prefixID + 1}})
	if err != nil {
		return err
	}
	var n int64
	for ok := it.First(); ok; ok = it.Next() {
		n++
		if d.ids != nil {
			d.ids.set(idFilterKey(string(it.Key()[1:])))
		}
	}
	if err := it.Close(); err != nil {
		return err
	}
	d.docs.Store(n)
	if err := d.fillFilters(); err != nil {
		return err
	}
	last, err := d.lastDocNum()
	if err != nil {
		return err
	}
	d.next.Store(uint64(last) + 1)
	// Pebble flushes the WAL it replays at open to synced sstables, so
	// whatever the index holds now is durable.
	d.dur.reset()
	return nil
}

// fillFilters sets the filter bits of every stored posting.
func (d *DB) fillFilters() error {
	if d.filter != nil {
		it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixPosting}, UpperBound: []byte{prefixPosting + 1}})
		if err != nil {
			return err
		}
		var last uint32
		first := true
		for ok := it.First(); ok; ok = it.Next() {
			if bk, _, ok := parsePostingKey(it.Key()); ok && (first || bk != last) {
				d.filter.set(bk)
				last, first = bk, false
			}
		}
		if err := it.Close(); err != nil {
			return err
		}
	}
	g := uint(d.packedBits.Load())
	if d.packed == nil || g == 0 {
		return nil
	}
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixPacked}, UpperBound: []byte{prefixPacked + 1}})
	if err != nil {
		return err
	}
	var pi packedIter
	for ok := it.First(); ok; ok = it.Next() {
		group, okKey := parseGroupKey(it.Key())
		v, err := it.ValueAndErr()
		if err == nil && !okKey {
			err = fmt.Errorf("%w: a key of the wrong length", ErrCorrupt)
		}
		if err == nil {
			err = pi.init(v, 32-g)
		}
		for err == nil {
			var low uint32
			if low, _, ok, err = pi.next(); !ok {
				break
			}
			d.packed.set(group<<(32-g) | low)
		}
		if err != nil {
			err = fmt.Errorf("packed postings %x: %w", it.Key(), err)
			it.Close()
			return err
		}
	}
	return it.Close()
}

// lastDocNum returns the highest stored document number, 0 if none.
func (d *DB) lastDocNum() (uint32, error) {
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixSig}, UpperBound: []byte{prefixSig + 1}})
	if err != nil {
		return 0, err
	}
	defer it.Close()
	if !it.Last() {
		return 0, it.Error()
	}
	doc, ok := parseSigKey(it.Key())
	if !ok {
		return 0, fmt.Errorf("%w: signature key %x", ErrCorrupt, it.Key())
	}
	return doc, nil
}

// Config returns the index's configuration.
func (d *DB) Config() Config { return d.cfg }

// Metrics returns what the index has counted since it was opened.
func (d *DB) Metrics() Metrics {
	m := d.m.snapshot()
	m.Corruptions, m.StorageFaults = d.h.corruptions.Load(), d.h.faults.Load()
	return m
}

// Pebble returns the underlying Pebble database, for its metrics and for
// tools. Writing to it directly breaks the index.
func (d *DB) Pebble() *pebble.DB { return d.db }

// enter starts an operation; the returned function ends it.
func (d *DB) enter(ctx context.Context, write bool) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.closeMu.RLock()
	if d.closed {
		d.closeMu.RUnlock()
		return nil, ErrClosed
	}
	if write && d.ro {
		d.closeMu.RUnlock()
		return nil, fmt.Errorf("%w: index opened read-only", ErrInvalidOptions)
	}
	if write && d.building {
		d.closeMu.RUnlock()
		return nil, fmt.Errorf("%w: a bulk build is in progress", ErrInvalidOptions)
	}
	if err := d.h.refuse(write); err != nil {
		d.closeMu.RUnlock()
		return nil, err
	}
	return d.closeMu.RUnlock, nil
}

// surface turns an error of an operation into what the caller gets (see
// health.surface); every exported method defers it.
func (d *DB) surface(err *error) { *err = d.h.surface(*err) }

// Health reports what is wrong with the storage under the index, nil if
// nothing: an error wrapping ErrStorage once a write to the disk has failed
// (writes are refused from then on) or Pebble reported a fatal error, or
// wrapping ErrCorrupt once a damaged block was met (reads of its range
// fail). It stays set until the index is reopened.
func (d *DB) Health() error { return d.h.err() }

func (d *DB) getScratch() *scratch {
	if s, ok := d.pool.Get().(*scratch); ok {
		return s
	}
	return &scratch{}
}

// Close waits for operations in flight, then closes the database.
func (d *DB) Close() error {
	d.closeMu.Lock()
	defer d.closeMu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	if d.h.poisoned.Load() {
		// Pebble panicked holding its commit lock: closing would wait for it
		// for ever. The process should exit.
		return fmt.Errorf("%w: not closed after a panic of Pebble's; exit the process", ErrStorage)
	}
	err := d.db.Close()
	if lerr := d.lock.Close(); err == nil {
		err = lerr
	}
	return err
}

// newIter returns an iterator over ids, postings and signatures: one
// consistent view for a whole operation.
func (d *DB) newIter() (*pebble.Iterator, error) {
	return d.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixID}, UpperBound: []byte{prefixSig + 1}})
}

// docKeys fills s.keys with the distinct bucket keys of sig.
func (d *DB) docKeys(s *scratch, sig minhash.Signature) {
	s.keys, s.slots, s.keys64 = d.cfg.keysOf(s.keys[:0], s.slots, s.keys64, sig)
	slices.Sort(s.keys)
	s.keys = slices.Compact(s.keys)
}

// scanBuckets reads the buckets of s.keys: their sizes (up to the cap) go to
// s.counts and, if collect, their document numbers to s.cands. A bucket's
// packed postings come first: a bulk build fills an empty index, so they
// are its oldest documents, and the cap keeps the oldest.
func (d *DB) scanBuckets(it *pebble.Iterator, s *scratch, collect bool) error {
	capacity := d.cfg.BucketCap
	full := func(n int) bool { return capacity != Unlimited && n >= capacity }
	g := uint(d.packedBits.Load())
	s.counts = s.counts[:0]
	for _, bk := range s.keys {
		n := 0
		if g > 0 && d.packed.mayHold(bk) {
			var err error
			if n, err = d.scanPacked(it, s, bk, g, collect); err != nil {
				return err
			}
		}
		if !full(n) && d.filter.mayHold(bk) {
			s.kbuf = appendBucketPrefix(s.kbuf[:0], bk)
			for ok := it.SeekGE(s.kbuf); ok && bytes.HasPrefix(it.Key(), s.kbuf); ok = it.Next() {
				if full(n) {
					break
				}
				if collect {
					_, doc, _ := parsePostingKey(it.Key())
					s.cands = append(s.cands, doc)
				}
				n++
			}
			// The next seek clears the iterator's error: a read that
			// failed (a damaged block) must fail the operation now rather
			// than lose the bucket's postings.
			if err := it.Error(); err != nil {
				return err
			}
		}
		if full(n) {
			d.m.fullBuckets.Add(1)
		}
		s.counts = append(s.counts, n)
		d.m.bucketSize.observe(n)
	}
	d.m.bucketsRead.Add(uint64(len(s.keys)))
	return it.Error()
}

// scanPacked reads the packed postings of bucket bk (up to the cap), given g
// group bits: it returns their number and, if collect, appends their
// documents to s.cands.
func (d *DB) scanPacked(it *pebble.Iterator, s *scratch, bk uint32, g uint, collect bool) (int, error) {
	s.kbuf = appendGroupKey(s.kbuf[:0], bk>>(32-g))
	if !it.SeekGE(s.kbuf) || !bytes.Equal(it.Key(), s.kbuf) {
		return 0, it.Error()
	}
	v, err := it.ValueAndErr()
	if err != nil {
		return 0, err
	}
	var pi packedIter
	if err := pi.init(v, 32-g); err != nil {
		return 0, fmt.Errorf("group %x: %w", s.kbuf[1:], err)
	}
	want := bk & (1<<(32-g) - 1)
	n := 0
	for capacity := d.cfg.BucketCap; capacity == Unlimited || n < capacity; {
		low, doc, ok, err := pi.next()
		if err != nil {
			return n, fmt.Errorf("group %x: %w", s.kbuf[1:], err)
		}
		if !ok || low > want {
			break
		}
		if low == want {
			if collect {
				s.cands = append(s.cands, doc)
			}
			n++
		}
	}
	return n, nil
}

// hasPacked reports whether document num has a packed posting in bucket bk.
func (d *DB) hasPacked(it *pebble.Iterator, s *scratch, bk, num uint32) (bool, error) {
	g := uint(d.packedBits.Load())
	if g == 0 {
		return false, nil
	}
	s.kbuf = appendGroupKey(s.kbuf[:0], bk>>(32-g))
	if !it.SeekGE(s.kbuf) || !bytes.Equal(it.Key(), s.kbuf) {
		return false, it.Error()
	}
	v, err := it.ValueAndErr()
	if err != nil {
		return false, err
	}
	var pi packedIter
	if err := pi.init(v, 32-g); err != nil {
		return false, err
	}
	want := bk & (1<<(32-g) - 1)
	for {
		low, doc, ok, err := pi.next()
		if err != nil || !ok || low > want || low == want && doc >= num {
			return ok && low == want && doc == num, err
		}
	}
}

// readRecord positions it on document doc's record and returns its value
// (valid until the iterator moves), or nil if there is none.
func (d *DB) readRecord(it *pebble.Iterator, s *scratch, doc uint32) ([]byte, error) {
	s.kbuf = appendSigKey(s.kbuf[:0], doc)
	if !it.SeekGE(s.kbuf) || !bytes.Equal(it.Key(), s.kbuf) {
		return nil, it.Error()
	}
	return it.ValueAndErr()
}

// lookupID returns the document number of id, if stored.
func (d *DB) lookupID(it *pebble.Iterator, s *scratch, id string) (uint32, bool, error) {
	if !d.ids.mayHold(idFilterKey(id)) {
		return 0, false, nil
	}
	s.kbuf = appendIDKey(s.kbuf[:0], id)
	if !it.SeekGE(s.kbuf) || !bytes.Equal(it.Key(), s.kbuf) {
		return 0, false, it.Error()
	}
	v, err := it.ValueAndErr()
	if err != nil {
		return 0, false, err
	}
	if len(v) != docNumBytes {
		return 0, false, fmt.Errorf("%w: id %q maps to %d bytes", ErrCorrupt, id, len(v))
	}
	return binary.BigEndian.Uint32(v), true, nil
}

// verify turns s.cands into matches of sig appended to dst (unsorted).
// fresh reports whether a match is a document that may not be durable yet
// (see durability): an answer that names it must wait for a sync barrier.
func (d *DB) verify(dst []Match, it *pebble.Iterator, s *scratch, sig minhash.Signature, q *QueryOptions) (_ []Match, fresh bool, err error) {
	slices.Sort(s.cands)
	s.cands = slices.Compact(s.cands)
	p := &d.cfg.Params
	for _, doc := range s.cands {
		rec, err := d.readRecord(it, s, doc)
		if err != nil {
			return dst, fresh, err
		}
		if rec == nil {
			continue // deleted since the posting was read
		}
		r, err := decodeRecord(s.sig[:0], p, rec)
		if err != nil {
			return dst, fresh, fmt.Errorf("document %d: %w", doc, err)
		}
		s.sig = r.sig
		id, meta := r.id, r.meta
		sim := d.cfg.similarity(sig, s.sig)
		if sim < q.Threshold {
			d.m.dropped.Add(1)
			continue
		}
		if q.Exclude != "" && string(id) == q.Exclude {
			continue
		}
		m := Match{ID: string(id), Similarity: sim}
		if len(meta) > 0 {
			m.Meta = bytes.Clone(meta)
		}
		dst = append(dst, m)
		fresh = fresh || !d.dur.durable(doc)
	}
	d.m.candidates.Add(uint64(len(s.cands)))
	d.m.candidatesPerQuery.observe(len(s.cands))
	d.m.queries.Add(1)
	return dst, fresh, nil
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

// Query returns the stored documents similar to sig.
func (d *DB) Query(ctx context.Context, sig minhash.Signature, q *QueryOptions) (_ []Match, err error) {
	defer d.surface(&err)
	done, err := d.enter(ctx, false)
	if err != nil {
		return nil, err
	}
	defer done()
	qo, err := q.resolve(&d.cfg)
	if err != nil {
		return nil, err
	}
	if len(sig) != d.cfg.Params.Words() {
		return nil, fmt.Errorf("%w: signature of %d words, params %s make %d", ErrInvalidDocument, len(sig), d.cfg.Params, d.cfg.Params.Words())
	}
	s := d.getScratch()
	defer d.pool.Put(s)
	d.docKeys(s, sig)
	it, err := d.newIter()
	if err != nil {
		return nil, err
	}
	defer it.Close()
	s.cands = s.cands[:0]
	if err := d.scanBuckets(it, s, true); err != nil {
		return nil, err
	}
	ms, fresh, err := d.verify(nil, it, s, sig, &qo)
	if err != nil {
		return nil, err
	}
	ms = sortMatches(ms, qo.Limit)
	if fresh {
		// A match may name a document whose batch is visible but not yet
		// synced: answer only once it is durable.
		if err := d.syncBarrier(); err != nil {
			return nil, err
		}
	}
	d.m.matches.Add(uint64(len(ms)))
	return ms, nil
}

// Get returns the stored document id.
func (d *DB) Get(ctx context.Context, id string) (_ Doc, err error) {
	defer d.surface(&err)
	done, err := d.enter(ctx, false)
	if err != nil {
		return Doc{}, err
	}
	defer done()
	s := d.getScratch()
	defer d.pool.Put(s)
	return d.get(s, id)
}

func (d *DB) get(s *scratch, id string) (Doc, error) {
	it, err := d.newIter()
	if err != nil {
		return Doc{}, err
	}
	defer it.Close()
	doc, ok, err := d.lookupID(it, s, id)
	if err != nil {
		return Doc{}, err
	}
	if !ok {
		return Doc{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	rec, err := d.readRecord(it, s, doc)
	if err != nil {
		return Doc{}, err
	}
	if rec == nil {
		return Doc{}, fmt.Errorf("%w: id %q maps to document %d, which has no record", ErrCorrupt, id, doc)
	}
	r, err := decodeRecord(nil, &d.cfg.Params, rec)
	if err != nil {
		return Doc{}, err
	}
	out := Doc{ID: id, Sig: r.sig}
	if len(r.meta) > 0 {
		out.Meta = bytes.Clone(r.meta)
	}
	return out, nil
}

// pendingDoc is a document written by the current batch.
type pendingDoc struct {
	id   string
	sig  minhash.Signature
	meta []byte
}

// writeBatch collects one operation's writes.
type writeBatch struct {
	d       *DB
	b       *pebble.Batch
	kbuf    []byte
	vbuf    []byte
	pending []pendingDoc
	byKey   map[uint32][]int // bucket key → pending documents in it
	ids     map[string]bool
	dropped []int
	inserts int
	listed  bool   // first is listed in d.dur
	first   uint32 // the batch's first document number
}

func (d *DB) newWriteBatch() *writeBatch {
	return &writeBatch{d: d, b: d.db.NewBatch(), byKey: map[uint32][]int{}, ids: map[string]bool{}}
}

// add stores doc under a new document number; s.keys and s.counts are the
// document's bucket keys and their current sizes.
func (w *writeBatch) add(s *scratch, doc *Doc) error {
	d := w.d
	num, ok := d.dur.assign(w)
	if !ok {
		return ErrFull
	}
	d.ids.set(idFilterKey(doc.ID)) // before the batch is applied: see bucketFilter
	w.kbuf = appendIDKey(w.kbuf[:0], doc.ID)
	var nb [docNumBytes]byte
	binary.BigEndian.PutUint32(nb[:], num)
	w.b.Set(w.kbuf, nb[:], nil)
	capacity := d.cfg.BucketCap
	idx := len(w.pending)
	w.dropped = w.dropped[:0]
	for i, bk := range s.keys {
		if capacity != Unlimited && s.counts[i]+len(w.byKey[bk]) >= capacity {
			d.m.droppedPost.Add(1)
			w.dropped = append(w.dropped, i)
			continue
		}
		w.kbuf = appendPostingKey(w.kbuf[:0], bk, num)
		w.b.Set(w.kbuf, nil, nil)
		w.byKey[bk] = append(w.byKey[bk], idx)
		d.filter.set(bk) // before the batch is applied: see bucketFilter
	}
	w.kbuf = appendSigKey(w.kbuf[:0], num)
	w.vbuf = appendRecord(w.vbuf[:0], &d.cfg.Params, doc.Sig, doc.ID, w.dropped, doc.Meta)
	w.b.Set(w.kbuf, w.vbuf, nil)
	w.pending = append(w.pending, pendingDoc{id: doc.ID, sig: slices.Clone(doc.Sig), meta: doc.Meta})
	w.ids[doc.ID] = true
	w.inserts++
	return nil
}

// commit applies the batch, calls unlock once it is visible, and returns once
// it is durable. A synced commit is also a sync barrier: every batch applied
// before it is durable when it returns.
func (w *writeBatch) commit(unlock func()) error {
	d := w.d
	defer w.b.Close()
	if w.b.Empty() {
		unlock()
		d.dur.release(w)
		return nil
	}
	// Checked again here, just before the WAL write: a storage failure may
	// have been met since the operation started, and Pebble panics on a
	// commit after a failed WAL write.
	if err := d.h.refuse(true); err != nil {
		unlock()
		d.dur.release(w) // never applied
		return err
	}
	if !d.sync {
		err := d.h.guard(func() error { return w.b.Commit(pebble.NoSync) })
		unlock()
		d.dur.release(w) // durable as far as NoSync promises
		if err == nil {
			d.commitDone(w)
		}
		return err
	}
	// Applied (visible) before the WAL sync: release the locks then, so
	// that writers of other documents share the sync (group commit).
	if err := d.h.guard(func() error { return d.db.ApplyNoSyncWait(w.b, pebble.Sync) }); err != nil {
		unlock()
		d.dur.release(w) // never applied
		return err
	}
	unlock()
	if err := w.b.SyncWait(); err != nil {
		return err // the batch stays listed: see durability
	}
	d.dur.release(w)
	d.commitDone(w)
	return nil
}

// abort drops a batch that was never applied.
func (w *writeBatch) abort() {
	w.b.Close()
	w.d.dur.release(w)
}

func (d *DB) commitDone(w *writeBatch) {
	d.m.commits.Add(1)
	d.m.inserts.Add(uint64(w.inserts))
	d.docs.Add(int64(w.inserts))
}

// lockDocs takes the stripes of the ids and buckets of docs and returns the
// function that releases them; calling it again does nothing, so it can be
// both deferred and called early (a write batch releases the locks before
// waiting for its fsync). Invalid documents are skipped (they are rejected
// later).
func (d *DB) lockDocs(s *scratch, docs []Doc) (unlock func()) {
	s.stripes = s.stripes[:0]
	for i := range docs {
		if validateDoc(&d.cfg, &docs[i]) != nil {
			continue
		}
		s.stripes = append(s.stripes, idStripe(docs[i].ID))
		d.docKeys(s, docs[i].Sig)
		for _, bk := range s.keys {
			s.stripes = append(s.stripes, bucketStripe(bk))
		}
	}
	stripes := d.locks.lock(s.stripes)
	s.stripes = stripes
	locked := true
	return func() {
		if locked {
			d.locks.unlock(stripes)
			locked = false
		}
	}
}

// Insert stores docs without checking them; all or nothing.
func (d *DB) Insert(ctx context.Context, docs []Doc) (err error) {
	defer d.surface(&err)
	done, err := d.enter(ctx, true)
	if err != nil {
		return err
	}
	defer done()
	for i := range docs {
		if err := validateDoc(&d.cfg, &docs[i]); err != nil {
			return err
		}
	}
	s := d.getScratch()
	defer d.pool.Put(s)
	unlock := d.lockDocs(s, docs)
	defer unlock()
	it, err := d.newIter()
	if err != nil {
		return err
	}
	w := d.newWriteBatch()
	for i := range docs {
		doc := &docs[i]
		_, exists, err := d.lookupID(it, s, doc.ID)
		if err == nil && (exists || w.ids[doc.ID]) {
			err = fmt.Errorf("%w: %q", ErrDuplicateID, doc.ID)
		}
		if err == nil {
			d.docKeys(s, doc.Sig)
			if err = d.scanBuckets(it, s, false); err == nil {
				err = w.add(s, doc)
			}
		}
		if err != nil {
			it.Close()
			w.abort()
			return err
		}
	}
	if err := it.Close(); err != nil {
		w.abort()
		return err
	}
	return w.commit(unlock)
}

// CheckAndInsert checks each doc against the index and the docs before it,
// and stores those without a match.
func (d *DB) CheckAndInsert(ctx context.Context, docs []Doc, q *QueryOptions) (_ []Result, err error) {
	defer d.surface(&err)
	done, err := d.enter(ctx, true)
	if err != nil {
		return nil, err
	}
	defer done()
	qo, err := q.resolve(&d.cfg)
	if err != nil {
		return nil, err
	}
	s := d.getScratch()
	defer d.pool.Put(s)
	unlock := d.lockDocs(s, docs)
	defer unlock()
	// The iterator is made under the locks: it sees every write of the
	// writers that held them before.
	it, err := d.newIter()
	if err != nil {
		return nil, err
	}
	w := d.newWriteBatch()
	results := make([]Result, len(docs))
	var dupes uint64
	fresh := false // a Duplicate names a document that may not be durable yet
	for i := range docs {
		doc := &docs[i]
		r := &results[i]
		r.ID = doc.ID
		if err := validateDoc(&d.cfg, doc); err != nil {
			r.Err = err
			continue
		}
		_, exists, err := d.lookupID(it, s, doc.ID)
		if err != nil {
			it.Close()
			w.abort()
			return nil, err
		}
		if exists || w.ids[doc.ID] {
			r.Err = fmt.Errorf("%w: %q", ErrDuplicateID, doc.ID)
			continue
		}
		d.docKeys(s, doc.Sig)
		s.cands = s.cands[:0]
		err = d.scanBuckets(it, s, true)
		var ms []Match
		var f bool
		if err == nil {
			ms, f, err = d.verify(nil, it, s, doc.Sig, &qo)
		}
		if err != nil {
			it.Close()
			w.abort()
			return nil, err
		}
		ms = w.verifyPending(ms, s, doc.Sig, &qo)
		if len(ms) > 0 {
			fresh = fresh || f
			r.Status, r.Matches = Duplicate, sortMatches(ms, qo.Limit)
			d.m.matches.Add(uint64(len(r.Matches)))
			dupes++
			continue
		}
		if err := w.add(s, doc); err != nil {
			it.Close()
			w.abort()
			return nil, err
		}
		r.Status = New
	}
	if err := it.Close(); err != nil {
		w.abort()
		return nil, err
	}
	// Matches among the batch's own documents are durable once the commit
	// returns; so are those among other writers' documents, if the batch
	// wrote anything: its sync covers every batch applied before it, and
	// the iterator that found them was made before it.
	synced := !w.b.Empty()
	if err := w.commit(unlock); err != nil {
		return nil, err
	}
	if fresh && !synced {
		if err := d.syncBarrier(); err != nil {
			return nil, err
		}
	}
	d.m.duplicates.Add(dupes)
	return results, nil
}

// verifyPending adds the matches among the batch's own earlier documents.
func (w *writeBatch) verifyPending(ms []Match, s *scratch, sig minhash.Signature, q *QueryOptions) []Match {
	if len(w.pending) == 0 {
		return ms
	}
	var seen []int
	for _, bk := range s.keys {
		seen = append(seen, w.byKey[bk]...)
	}
	slices.Sort(seen)
	seen = slices.Compact(seen)
	for _, i := range seen {
		pd := &w.pending[i]
		if sim := w.d.cfg.similarity(sig, pd.sig); sim >= q.Threshold && pd.id != q.Exclude {
			ms = append(ms, Match{ID: pd.id, Similarity: sim, Meta: bytes.Clone(pd.meta)})
		}
	}
	return ms
}

// Delete removes document id and its postings.
func (d *DB) Delete(ctx context.Context, id string) (err error) {
	defer d.surface(&err)
	done, err := d.enter(ctx, true)
	if err != nil {
		return err
	}
	defer done()
	s := d.getScratch()
	defer d.pool.Put(s)
	for attempt := 0; ; attempt++ {
		// Read the document's buckets without locks, then lock them and
		// check that the id still names the same document.
		doc, err := d.get(s, id)
		if err != nil {
			return err
		}
		s.stripes = append(s.stripes[:0], idStripe(id))
		d.docKeys(s, doc.Sig)
		for _, bk := range s.keys {
			s.stripes = append(s.stripes, bucketStripe(bk))
		}
		stripes := d.locks.lock(s.stripes)
		err = d.deleteLocked(s, id, doc.Sig, stripes)
		if errors.Is(err, errRetry) && attempt < 10 {
			continue
		}
		return err
	}
}

var errRetry = errors.New("index: retry")

func (d *DB) deleteLocked(s *scratch, id string, sig minhash.Signature, stripes []uint32) error {
	// Packed values hold the postings of many buckets, whose stripes a
	// delete does not hold: rewriting one takes packMu too, after the
	// stripes (check-and-insert never takes it, so there is no cycle).
	g := uint(d.packedBits.Load())
	if g > 0 {
		d.packMu.Lock()
	}
	locked := true
	unlock := func() {
		if locked {
			if g > 0 {
				d.packMu.Unlock()
			}
			d.locks.unlock(stripes)
			locked = false
		}
	}
	defer unlock()
	it, err := d.newIter() // under packMu: it sees every packed rewrite before
	if err != nil {
		return err
	}
	num, ok, err := d.lookupID(it, s, id)
	var rec []byte
	if err == nil && ok {
		rec, err = d.readRecord(it, s, num)
	}
	if err != nil {
		it.Close()
		return err
	}
	if !ok {
		it.Close()
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	var cur record
	if rec != nil {
		// A copy: the iterator moves (to find the postings) while cur is in use.
		cur, err = decodeRecord(nil, &d.cfg.Params, bytes.Clone(rec))
	}
	if err != nil {
		it.Close()
		return err
	}
	if rec == nil || !slices.Equal(cur.sig, sig) {
		it.Close()
		return errRetry // replaced between the read and the lock
	}
	b := d.db.NewBatch()
	b.Delete(appendIDKey(nil, id), nil)
	b.Delete(appendSigKey(nil, num), nil)
	d.docKeys(s, sig)
	var packed []uint32 // bucket keys of the document's packed postings
	for i, bk := range s.keys {
		if cur.droppedAt(i) {
			continue
		}
		k := appendPostingKey(s.kbuf[:0], bk, num)
		if g > 0 && !(it.SeekGE(k) && bytes.Equal(it.Key(), k)) {
			if err = it.Error(); err != nil {
				break
			}
			packed = append(packed, bk)
			continue
		}
		b.Delete(k, nil)
	}
	if err == nil && len(packed) > 0 {
		err = d.unpack(b, it, g, packed, num)
	}
	it.Close()
	if err != nil {
		b.Close()
		return err
	}
	w := &writeBatch{d: d, b: b}
	if err := w.commit(unlock); err != nil {
		return err
	}
	d.docs.Add(-1)
	d.m.deletes.Add(1)
	return nil
}

// unpack adds to b the rewrites of the packed values that drop document
// num's postings in buckets bks (ascending), given g group bits; a value
// left empty is deleted. The caller holds packMu.
func (d *DB) unpack(b *pebble.Batch, it *pebble.Iterator, g uint, bks []uint32, num uint32) error {
	shift := 32 - g
	mask := uint32(1)<<shift - 1
	var keep []posting
	for i := 0; i < len(bks); {
		group := bks[i] >> shift
		j := i + 1
		for j < len(bks) && bks[j]>>shift == group {
			j++
		}
		key := appendGroupKey(nil, group)
		if !it.SeekGE(key) || !bytes.Equal(it.Key(), key) {
			if err := it.Error(); err != nil {
				return err
			}
			i = j
			continue
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		var pi packedIter
		if err := pi.init(v, shift); err != nil {
			return fmt.Errorf("group %x: %w", key[1:], err)
		}
		keep = keep[:0]
		for {
			low, doc, ok, err := pi.next()
			if err != nil {
				return fmt.Errorf("group %x: %w", key[1:], err)
			}
			if !ok {
				break
			}
			if doc == num && slices.ContainsFunc(bks[i:j], func(bk uint32) bool { return bk&mask == low }) {
				continue
			}
			keep = append(keep, posting{low, doc})
		}
		if len(keep) == 0 {
			b.Delete(key, nil)
		} else {
			b.Set(key, appendPacked(nil, keep), nil)
		}
		i = j
	}
	return nil
}

// Stats counts the documents and the bytes on disk.
func (d *DB) Stats(ctx context.Context) (_ Stats, err error) {
	defer d.surface(&err)
	done, err := d.enter(ctx, false)
	if err != nil {
		return Stats{}, err
	}
	defer done()
	return Stats{Documents: d.docs.Load(), Bytes: int64(d.db.Metrics().DiskSpaceUsage())}, nil
}

// Preload reads the whole index once, so that its blocks are in the block
// cache (as far as Options.CacheSize holds them) before the first queries:
// a service answers from memory at once instead of after hours of traffic.
// It returns the bytes of keys and values read.
func (d *DB) Preload(ctx context.Context) (_ int64, err error) {
	defer d.surface(&err)
	done, err := d.enter(ctx, false)
	if err != nil {
		return 0, err
	}
	defer done()
	it, err := d.newIter()
	if err != nil {
		return 0, err
	}
	var n int64
	for ok := it.First(); ok; ok = it.Next() {
		n += int64(len(it.Key()) + len(it.Value()))
		if n&(1<<20-1) < 64 && ctx.Err() != nil {
			it.Close()
			return n, ctx.Err()
		}
	}
	return n, it.Close()
}

// Flush writes the memtable to an sstable and waits for it; Compact
// (compact true) then rewrites the whole index into its final levels, so
// that Stats measures the settled size.
func (d *DB) Flush(ctx context.Context, compact bool) (err error) {
	defer d.surface(&err)
	done, err := d.enter(ctx, true)
	if err != nil {
		return err
	}
	defer done()
	if err := d.db.Flush(); err != nil {
		return err
	}
	if compact {
		return d.db.Compact(ctx, []byte{0}, []byte{0xff}, true)
	}
	return nil
}
