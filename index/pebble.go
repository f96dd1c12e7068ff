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
)

// DB is an Index on Pebble in one directory, for one process (Pebble locks
// the directory). See the package doc for the layout and the durability
// guarantee.
//
// A DB is safe for concurrent use. Its zero value is not usable: call Open.
type DB struct {
	engine[uint32] // the algorithm; DB is its storage (see storage.go)

	db   *pebble.DB
	lock *pebble.Lock // of dir, closed after db
	po   *pebble.Options
	dir  string
	sync bool
	ro   bool
	h    *health // storage faults met (see health)

	// incomplete: the meta record says a bulk build is in progress (opened
	// with ForBuild, or a Builder has started); cleared when one finishes.
	incomplete bool

	filter *bucketFilter // bucket keys of postings of their own; nil when off
	ids    *bucketFilter // of idFilterKey; nil when off
	next   atomic.Uint64 // next document number
	docs   atomic.Int64
	dur    durability // which document numbers are durable

	// Packed postings (written by a bulk build or Repack; see packed.go).
	// packed is set before packedBits is stored and read after it is
	// loaded; Repack changes both only with closeMu held exclusively.
	packedBits  atomic.Int32  // high bucket-key bits naming a group; 0: none
	packed      *bucketFilter // bucket keys of packed postings; nil when off
	packMu      sync.Mutex    // held by a delete or a repack batch while it rewrites packed values
	repackMu    sync.Mutex    // held by Repack: one at a time
	filterBytes int           // Options.FilterBytes, for the packed filter

	// building: a Builder owns the index. It changes with closeMu (the
	// engine's) held exclusively, as do the packed group bits: NewBuilder
	// and a change of the group bits wait for the operations in flight.
	building bool

	txns sync.Pool // *pebbleTxn
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
	o, err := resolved(opts)
	if err != nil {
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
	d := &DB{db: pdb, lock: lock, po: po, dir: dir, sync: !o.NoSync, ro: o.ReadOnly, h: h, filter: newBucketFilter(o.FilterBytes),
		ids: newBucketFilter(o.FilterBytes / 4), filterBytes: o.FilterBytes}
	d.setup(d)
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
		var last uint64
		first := true
		w := d.cfg.BucketKeyBytes
		for ok := it.First(); ok; ok = it.Next() {
			if bk, _, ok := parsePostingKey(it.Key(), w); ok && (first || bk != last) {
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
		w := d.cfg.BucketKeyBytes
		if err == nil {
			err = pi.init(v, packedLowBits(w, g))
		}
		for err == nil {
			var low uint64
			if low, _, ok, err = pi.next(); !ok {
				break
			}
			d.packed.set(packedJoin(group, low, w, g))
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

// Metrics returns what the index has counted since it was opened.
func (d *DB) Metrics() Metrics {
	m := d.engine.Metrics()
	m.Corruptions, m.StorageFaults = d.h.corruptions.Load(), d.h.faults.Load()
	return m
}

// Pebble returns the underlying Pebble database, for its metrics and for
// tools. Writing to it directly breaks the index.
func (d *DB) Pebble() *pebble.DB { return d.db }

// Health reports what is wrong with the storage under the index, nil if
// nothing: an error wrapping ErrStorage once a write to the disk has failed
// (writes are refused from then on) or Pebble reported a fatal error, or
// wrapping ErrCorrupt once a damaged block was met (reads of its range
// fail). It stays set until the index is reopened.
func (d *DB) Health() error { return d.h.err() }

// Close waits for operations in flight, then closes the database.
func (d *DB) Close() error {
	return d.shut(func() error {
		if d.h.poisoned.Load() {
			// Pebble panicked holding its commit lock: closing would wait
			// for it for ever. The process should exit.
			return fmt.Errorf("%w: not closed after a panic of Pebble's; exit the process", ErrStorage)
		}
		err := d.db.Close()
		if lerr := d.lock.Close(); err == nil {
			err = lerr
		}
		return err
	})
}

// The storage of the engine (see storage.go).
var _ storage[uint32] = (*DB)(nil)

func (d *DB) admit(write bool) error {
	if write && d.ro {
		return fmt.Errorf("%w: index opened read-only", ErrInvalidOptions)
	}
	if write && d.building {
		return fmt.Errorf("%w: a bulk build is in progress", ErrInvalidOptions)
	}
	return d.h.refuse(write)
}

func (d *DB) fault(err error) error { return d.h.surface(err) }

func (d *DB) durable(num uint32) bool { return d.dur.durable(num) }

// acquire takes, for a delete of a document with packed postings, packMu:
// packed values hold the postings of many buckets, whose stripes a delete
// does not hold. It is taken after the stripes, and check-and-insert never
// takes it, so there is no cycle. The group bits do not change while an
// operation is in flight.
func (d *DB) acquire(_ context.Context, _ []string, _ []uint64, del bool) (func(), error) {
	if del && d.packedBits.Load() > 0 {
		d.packMu.Lock()
		return d.packMu.Unlock, nil
	}
	return noUnlock, nil
}

func noUnlock() {}

// begin opens an iterator over ids, postings and signatures: one consistent
// view for the whole operation. Writes go to a Pebble batch, applied
// atomically.
func (d *DB) begin(context.Context) (txn[uint32], error) {
	it, err := d.newIter()
	if err != nil {
		return nil, err
	}
	t, ok := d.txns.Get().(*pebbleTxn)
	if !ok {
		t = &pebbleTxn{}
	}
	t.d, t.it = d, it
	return t, nil
}

// newIter returns an iterator over ids, postings and signatures.
func (d *DB) newIter() (*pebble.Iterator, error) {
	return d.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixID}, UpperBound: []byte{prefixSig + 1}})
}

// pebbleReader reads ids, postings and records through one iterator.
type pebbleReader struct {
	d    *DB
	it   *pebble.Iterator
	kbuf []byte
}

// lookupID returns the document number of id, if stored.
func (r *pebbleReader) lookupID(id string) (uint32, bool, error) {
	if !r.d.ids.mayHold(idFilterKey(id)) {
		return 0, false, nil
	}
	it := r.it
	r.kbuf = appendIDKey(r.kbuf[:0], id)
	if !it.SeekGE(r.kbuf) || !bytes.Equal(it.Key(), r.kbuf) {
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

// readRecord positions the iterator on document num's record and returns
// its value (valid until the iterator moves), or nil if there is none.
func (r *pebbleReader) readRecord(num uint32) ([]byte, error) {
	r.kbuf = appendSigKey(r.kbuf[:0], num)
	if !r.it.SeekGE(r.kbuf) || !bytes.Equal(r.it.Key(), r.kbuf) {
		return nil, r.it.Error()
	}
	return r.it.ValueAndErr()
}

// scanPacked reads the packed postings of bucket bk (up to limit), given g
// group bits: it returns their number and, if collect, appends their
// documents to cands.
func (r *pebbleReader) scanPacked(bk uint64, g uint, limit int, collect bool, cands []uint32) (int, []uint32, error) {
	it, w := r.it, r.d.cfg.BucketKeyBytes
	group, want := packedSplit(bk, w, g)
	r.kbuf = appendGroupKey(r.kbuf[:0], group)
	if !it.SeekGE(r.kbuf) || !bytes.Equal(it.Key(), r.kbuf) {
		return 0, cands, it.Error()
	}
	v, err := it.ValueAndErr()
	if err != nil {
		return 0, cands, err
	}
	var pi packedIter
	if err := pi.init(v, packedLowBits(w, g)); err != nil {
		return 0, cands, fmt.Errorf("group %x: %w", r.kbuf[1:], err)
	}
	n := 0
	for limit == Unlimited || n < limit {
		low, doc, ok, err := pi.next()
		if err != nil {
			return n, cands, fmt.Errorf("group %x: %w", r.kbuf[1:], err)
		}
		if !ok || low > want {
			break
		}
		if low == want {
			if collect {
				cands = append(cands, doc)
			}
			n++
		}
	}
	return n, cands, nil
}

// hasPacked reports whether document num has a packed posting in bucket bk.
func (r *pebbleReader) hasPacked(bk uint64, num uint32) (bool, error) {
	g := uint(r.d.packedBits.Load())
	if g == 0 {
		return false, nil
	}
	it, w := r.it, r.d.cfg.BucketKeyBytes
	group, want := packedSplit(bk, w, g)
	r.kbuf = appendGroupKey(r.kbuf[:0], group)
	if !it.SeekGE(r.kbuf) || !bytes.Equal(it.Key(), r.kbuf) {
		return false, it.Error()
	}
	v, err := it.ValueAndErr()
	if err != nil {
		return false, err
	}
	var pi packedIter
	if err := pi.init(v, packedLowBits(w, g)); err != nil {
		return false, err
	}
	for {
		low, doc, ok, err := pi.next()
		if err != nil || !ok || low > want || low == want && doc >= num {
			return ok && low == want && doc == num, err
		}
	}
}

// pebbleTxn is an operation on a DB: its iterator and its batch.
type pebbleTxn struct {
	pebbleReader
	b       *pebble.Batch // nil until the first write
	inserts int           // documents added
	removes int           // documents removed
	packed  []uint64      // remove: bucket keys of packed postings
	listed  bool          // first is listed in d.dur
	first   uint32        // the first document number of the batch
}

func (t *pebbleTxn) batch() *pebble.Batch {
	if t.b == nil {
		t.b = t.d.db.NewBatch()
	}
	return t.b
}

func (t *pebbleTxn) has(ids []string, found []bool) error {
	for i, id := range ids {
		_, ok, err := t.lookupID(id)
		if err != nil {
			return err
		}
		found[i] = ok
	}
	return nil
}

func (t *pebbleTxn) lookup(id string) (uint32, []byte, bool, error) {
	num, ok, err := t.lookupID(id)
	if err != nil || !ok {
		return 0, nil, false, err
	}
	rec, err := t.readRecord(num)
	if err != nil {
		return 0, nil, false, err
	}
	if rec == nil {
		return 0, nil, false, fmt.Errorf("%w: id %q maps to document %d, which has no record", ErrCorrupt, id, num)
	}
	return num, rec, true, nil
}

// buckets reads a bucket's packed postings first: a bulk build fills an empty
// index, so they are its oldest documents, and the cap keeps the oldest.
// The bucket filters spare the seeks of buckets that hold none.
func (t *pebbleTxn) buckets(keys []uint64, limit int, collect bool, counts []int, cands []uint32) ([]uint32, error) {
	d, it := t.d, t.it
	full := func(n int) bool { return limit != Unlimited && n >= limit }
	g := uint(d.packedBits.Load())
	for i, bk := range keys {
		n := 0
		if g > 0 && d.packed.mayHold(bk) {
			var err error
			if n, cands, err = t.scanPacked(bk, g, limit, collect, cands); err != nil {
				return cands, err
			}
		}
		if !full(n) && d.filter.mayHold(bk) {
			t.kbuf = appendBucketPrefix(t.kbuf[:0], bk, d.cfg.BucketKeyBytes)
			for ok := it.SeekGE(t.kbuf); ok && bytes.HasPrefix(it.Key(), t.kbuf); ok = it.Next() {
				if full(n) {
					break
				}
				if collect {
					_, doc, _ := parsePostingKey(it.Key(), d.cfg.BucketKeyBytes)
					cands = append(cands, doc)
				}
				n++
			}
			// The next seek clears the iterator's error: a read that
			// failed (a damaged block) must fail the operation now rather
			// than lose the bucket's postings.
			if err := it.Error(); err != nil {
				return cands, err
			}
		}
		counts[i] = n
	}
	return cands, it.Error()
}

func (t *pebbleTxn) records(nums []uint32, fn func(uint32, []byte) error) error {
	for _, num := range nums {
		rec, err := t.readRecord(num)
		if err != nil {
			return err
		}
		if rec == nil {
			continue // deleted since the posting was read
		}
		if err := fn(num, rec); err != nil {
			return err
		}
	}
	return nil
}

// insert gives the document the next number and writes its id, postings
// and record.
func (t *pebbleTxn) insert(id string, post []uint64, rec []byte) error {
	d := t.d
	num, ok := d.dur.assign(t)
	if !ok {
		return ErrFull
	}
	b := t.batch()
	d.ids.set(idFilterKey(id)) // before the batch is applied: see bucketFilter
	t.kbuf = appendIDKey(t.kbuf[:0], id)
	var nb [docNumBytes]byte
	binary.BigEndian.PutUint32(nb[:], num)
	b.Set(t.kbuf, nb[:], nil)
	for _, bk := range post {
		t.kbuf = appendPostingKey(t.kbuf[:0], bk, num, d.cfg.BucketKeyBytes)
		b.Set(t.kbuf, nil, nil)
		d.filter.set(bk) // before the batch is applied: see bucketFilter
	}
	t.kbuf = appendSigKey(t.kbuf[:0], num)
	b.Set(t.kbuf, rec, nil)
	t.inserts++
	return nil
}

// remove deletes the document's id and record, its postings of their own,
// and its packed postings by rewriting their values (the engine holds
// packMu for it: see acquire).
func (t *pebbleTxn) remove(num uint32, id string, post []uint64) error {
	d, it := t.d, t.it
	b := t.batch()
	b.Delete(appendIDKey(t.kbuf[:0], id), nil)
	b.Delete(appendSigKey(t.kbuf[:0], num), nil)
	g := uint(d.packedBits.Load())
	t.packed = t.packed[:0]
	for _, bk := range post {
		k := appendPostingKey(t.kbuf[:0], bk, num, d.cfg.BucketKeyBytes)
		if g > 0 && !(it.SeekGE(k) && bytes.Equal(it.Key(), k)) {
			if err := it.Error(); err != nil {
				return err
			}
			t.packed = append(t.packed, bk)
			continue
		}
		b.Delete(k, nil)
	}
	if len(t.packed) > 0 {
		if err := d.unpack(b, it, g, t.packed, num); err != nil {
			return err
		}
	}
	t.removes++
	return nil
}

// commit applies the batch, calls unlock once it is visible, and returns once
// it is durable. A synced commit is also a sync barrier: every batch applied
// before it is durable when it returns.
func (t *pebbleTxn) commit(unlock func()) error {
	d := t.d
	defer t.end()
	err := t.it.Close()
	t.it = nil
	if err != nil || t.b == nil || t.b.Empty() {
		unlock()
		d.dur.release(t) // never applied
		return err
	}
	// Checked again here, just before the WAL write: a storage failure may
	// have been met since the operation started, and Pebble panics on a
	// commit after a failed WAL write.
	if err := d.h.refuse(true); err != nil {
		unlock()
		d.dur.release(t) // never applied
		return err
	}
	if !d.sync {
		err := d.h.guard(func() error { return t.b.Commit(pebble.NoSync) })
		unlock()
		d.dur.release(t) // durable as far as NoSync promises
		if err == nil {
			d.docs.Add(int64(t.inserts - t.removes))
		}
		return err
	}
	// Applied (visible) before the WAL sync: release the locks then, so
	// that writers of other documents share the sync (group commit).
	if err := d.h.guard(func() error { return d.db.ApplyNoSyncWait(t.b, pebble.Sync) }); err != nil {
		unlock()
		d.dur.release(t) // never applied
		return err
	}
	unlock()
	if err := t.b.SyncWait(); err != nil {
		return err // the batch stays listed: see durability
	}
	d.dur.release(t)
	d.docs.Add(int64(t.inserts - t.removes))
	return nil
}

// abort drops a batch that was never applied.
func (t *pebbleTxn) abort() {
	if t.d == nil {
		return // ended
	}
	if t.it != nil {
		t.it.Close()
		t.it = nil
	}
	t.d.dur.release(t)
	t.end()
}

// end closes the batch and returns t to the pool.
func (t *pebbleTxn) end() {
	if t.b != nil {
		t.b.Close()
	}
	d := t.d
	*t = pebbleTxn{pebbleReader: pebbleReader{kbuf: t.kbuf[:0]}, packed: t.packed[:0]}
	d.txns.Put(t)
}

// unpack adds to b the rewrites of the packed values that drop document
// num's postings in buckets bks (ascending), given g group bits; a value
// left empty is deleted. The caller holds packMu.
func (d *DB) unpack(b *pebble.Batch, it *pebble.Iterator, g uint, bks []uint64, num uint32) error {
	w := d.cfg.BucketKeyBytes
	shift := packedLowBits(w, g)
	groupOf := func(bk uint64) uint32 { group, _ := packedSplit(bk, w, g); return group }
	var keep []posting
	for i := 0; i < len(bks); {
		group := groupOf(bks[i])
		j := i + 1
		for j < len(bks) && groupOf(bks[j]) == group {
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
			if doc == num && slices.ContainsFunc(bks[i:j], func(bk uint64) bool { _, l := packedSplit(bk, w, g); return l == low }) {
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
