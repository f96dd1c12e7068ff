package index

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/neardup/neardup/internal/extsort"
)

// DefaultBuildMemory is the default BuildOptions.Memory.
const DefaultBuildMemory = 512 << 20

// tableTarget is the size at which a Builder starts a new sstable.
const tableTarget = 128 << 20

// BuildOptions configure a Builder. The zero value, and nil, ask for the
// defaults.
type BuildOptions struct {
	// Memory is the budget, in bytes, for the postings and ids held before
	// they are sorted; past it they spill to sorted runs on disk. Signatures
	// stream straight to sstables. Default 512 MiB.
	Memory int64
	// TempDir holds the runs and the sstables before they are ingested; on
	// the index's filesystem, ingestion links the files instead of copying
	// them. Default: a directory build.tmp inside the index directory.
	TempDir string
}

// EnsureDefaults fills zero fields with their defaults and returns o; a nil o
// yields new BuildOptions with every default.
func (o *BuildOptions) EnsureDefaults() *BuildOptions {
	if o == nil {
		o = &BuildOptions{}
	}
	if o.Memory == 0 {
		o.Memory = DefaultBuildMemory
	}
	return o
}

// Validate reports whether o is usable; errors wrap ErrInvalidOptions.
func (o *BuildOptions) Validate() error {
	var c BuildOptions
	if o != nil {
		c = *o
	}
	c.EnsureDefaults()
	if c.Memory < 16<<20 {
		return fmt.Errorf("%w: build Memory = %d; must be at least 16 MiB", ErrInvalidOptions, c.Memory)
	}
	return nil
}

// BuildStats report a finished bulk build.
type BuildStats struct {
	// Documents is the number of documents stored.
	Documents int64
	// Postings is the number written; DroppedPostings those dropped at full
	// buckets. PackedGroups is the number of values they were packed into
	// (see "Layout" in the package doc).
	Postings, DroppedPostings, PackedGroups int64
	// Tables is the number of sstables ingested.
	Tables int
	// SpilledBytes is the bytes of sorted runs written on the way; 0 if
	// everything fit in BuildOptions.Memory.
	SpilledBytes int64
	// Seconds is the wall time from NewBuilder to the end of Finish.
	Seconds float64
}

// Builder loads documents into an empty DB much faster than Insert: it
// writes sorted sstables and ingests them, with no WAL, memtable or
// compaction on the way. Postings are radix-sorted (spilling past
// BuildOptions.Memory); signatures stream to sstables in document order.
// The result is the same index Insert would make of the documents in the same
// order, bar document numbers.
//
// While a Builder is open, writes to the DB fail; reads see the index as it
// was. Nothing is visible until Finish returns; Abort (or a failed Finish)
// leaves the index empty. The index's meta record is marked "build in
// progress" from NewBuilder until Finish succeeds, so a build killed at any
// moment (or a Finish that failed after part of the index was written)
// leaves an index that Open refuses with ErrIncomplete; Options.ForBuild
// opens it to be built again, and that build removes the killed one's
// temporary files. A Builder is not safe for concurrent use.
type Builder struct {
	d         *DB
	opts      BuildOptions
	tmp       string
	next      uint32
	docs      int64
	sigs      *tableWriter
	tables    []string
	post      *extsort.Sorter     // postings of 4-byte keys: key | document
	wide      *extsort.WideSorter // postings of 8-byte keys
	pairs     []uint64            // a document's wide postings, for wide.Add
	ids       idSorter
	kb        keyBuf
	kbuf      []byte
	vbuf      []byte
	done      bool
	iterating bool // the postings' iterator was opened (it removes the runs)
	ownTemp   bool // TempDir was defaulted: remove it when done
	ingested  bool // tables were ingested: the index is no longer empty
	// wasIncomplete: the index was marked "build in progress" before this
	// build (opened with ForBuild), so Abort leaves the mark.
	wasIncomplete bool
	first         uint32 // the first document number of the build
	started       time.Time
}

// DuplicateIDError is the error of a bulk build given the same id twice. It
// wraps ErrDuplicateID (check with errors.Is; errors.As gives the details).
type DuplicateIDError struct {
	// ID is the repeated id.
	ID string
	// First and Second are the positions of its first two occurrences among
	// the documents added to the Builder, from 0.
	First, Second int64
}

// Error names the id and the documents.
func (e *DuplicateIDError) Error() string {
	return fmt.Sprintf("%v: %q appears twice in the input (documents %d and %d added to the build)", ErrDuplicateID, e.ID, e.First+1, e.Second+1)
}

// Unwrap returns ErrDuplicateID.
func (e *DuplicateIDError) Unwrap() error { return ErrDuplicateID }

// NewBuilder starts a bulk build of d, which must hold no documents
// (ErrNotEmpty otherwise; ErrIncomplete if an interrupted build left some).
// A build keeps the index's bucket-key width: an index of 8-byte keys (a new
// MinHash index) gets packed postings of 8-byte keys and stays layout
// version 3; an index of 4-byte keys (SimHash, Options.BucketKeyBytes 4, or
// made before version 3) becomes version 2, and Migrate widens it.
// It marks the index "build in progress" (see Builder) and, when
// BuildOptions.TempDir is the default, removes what an interrupted build
// left there.
func (d *DB) NewBuilder(opts *BuildOptions) (_ *Builder, err error) {
	defer d.surface(&err)
	o, err := resolved(opts)
	if err != nil {
		return nil, err
	}
	d.closeMu.Lock() // waits for operations in flight
	defer d.closeMu.Unlock()
	switch {
	case d.closed:
		return nil, ErrClosed
	case d.ro:
		return nil, fmt.Errorf("%w: index opened read-only", ErrInvalidOptions)
	case d.building:
		return nil, fmt.Errorf("%w: a bulk build is in progress", ErrInvalidOptions)
	case d.docs.Load() != 0 && d.incomplete:
		return nil, fmt.Errorf("%w: an interrupted build left %d documents in %s; remove the directory and build again", ErrIncomplete, d.docs.Load(), d.dir)
	case d.docs.Load() != 0:
		return nil, fmt.Errorf("%w: it holds %d documents", ErrNotEmpty, d.docs.Load())
	}
	if err := d.h.refuse(true); err != nil {
		return nil, err
	}
	ownTemp := o.TempDir == ""
	if ownTemp {
		// The index directory is locked: nothing else builds into it, so
		// whatever is here was left by a build that was killed.
		o.TempDir = filepath.Join(d.dir, "build.tmp")
		if err := os.RemoveAll(o.TempDir); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(o.TempDir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(o.TempDir, "build-")
	if err != nil {
		return nil, err
	}
	wasIncomplete := d.incomplete
	if !d.incomplete {
		if err := d.setBuilding(true); err != nil {
			os.RemoveAll(tmp)
			return nil, err
		}
	}
	d.building = true
	// An empty index holds no packed postings (a delete removes emptied
	// values), whatever an earlier build marked: readers skip them until
	// this build's are ingested, under its own group bits.
	d.packedBits.Store(0)
	b := &Builder{d: d, opts: o, tmp: tmp, ownTemp: ownTemp, next: uint32(d.next.Load()), first: uint32(d.next.Load()),
		wasIncomplete: wasIncomplete, started: time.Now()}
	if d.cfg.BucketKeyBytes == WideKeyBytes {
		b.wide = extsort.NewWide(tmp, "postings", int(o.Memory/2/32)) // entries plus sorting scratch
	} else {
		b.post = extsort.New(tmp, "postings", int(o.Memory/2/16)) // values plus sorting scratch
	}
	b.ids = idSorter{dir: tmp, limit: int(o.Memory / 2)}
	return b, nil
}

// Add appends doc. Ids must be unique (Finish reports a repeated id with
// ErrDuplicateID); doc is not retained.
func (b *Builder) Add(doc Doc) error {
	if b.done {
		return fmt.Errorf("%w: builder finished", ErrInvalidOptions)
	}
	d := b.d
	if err := validateDoc(&d.cfg, &doc); err != nil {
		return err
	}
	if b.next == maxDocNum {
		return ErrFull
	}
	num := b.next
	b.next++
	if b.sigs == nil {
		w, err := b.newTable("sigs")
		if err != nil {
			return err
		}
		b.sigs = w
	}
	b.kbuf = appendSigKey(b.kbuf[:0], num)
	b.vbuf = appendRecord(b.vbuf[:0], &d.cfg.Params, doc.Sig, doc.ID, nil, doc.Meta)
	if err := b.sigs.set(b.kbuf, b.vbuf); err != nil {
		return err
	}
	if b.sigs.full() {
		if err := b.sigs.close(); err != nil {
			return err
		}
		b.sigs = nil
	}
	if err := b.addPostings(num, b.kb.of(&d.cfg, doc.Sig)); err != nil {
		return err
	}
	if err := b.ids.add(doc.ID, num); err != nil {
		return err
	}
	b.docs++
	return nil
}

// addPostings adds the postings of document num in buckets bks (keys
// left-aligned in 64 bits) to the sorter of the index's key width.
func (b *Builder) addPostings(num uint32, bks []uint64) error {
	if b.wide == nil {
		for _, bk := range bks {
			if err := b.post.Add(bk | uint64(num)); err != nil { // a narrow key is left-aligned
				return err
			}
		}
		return nil
	}
	b.pairs = b.pairs[:0]
	for _, bk := range bks {
		b.pairs = append(b.pairs, bk, uint64(num))
	}
	return b.wide.Add(b.pairs...)
}

// postingIter yields the sorted postings of a build, whatever the sorter.
type postingIter struct {
	narrow *extsort.Iterator
	wide   *extsort.WideIterator
}

// iterPostings starts the iteration over the sorted postings; the builder
// takes no more.
func (b *Builder) iterPostings() (postingIter, error) {
	var it postingIter
	var err error
	if b.wide != nil {
		it.wide, err = b.wide.Iter()
	} else {
		it.narrow, err = b.post.Iter(true)
	}
	return it, err
}

// next returns the next posting, its bucket key left-aligned in 64 bits, by
// bucket key then document; ok is false at the end or on error (see err).
func (it postingIter) next() (bk uint64, num uint32, ok bool) {
	if it.wide != nil {
		e, ok := it.wide.Next()
		return e.Key, e.Doc, ok
	}
	v, ok := it.narrow.Next()
	return v &^ (1<<32 - 1), uint32(v), ok
}

func (it postingIter) err() error {
	if it.wide != nil {
		return it.wide.Err()
	}
	return it.narrow.Err()
}

func (it postingIter) close() error {
	if it.wide != nil {
		return it.wide.Close()
	}
	return it.narrow.Close()
}

// postingCount and postingSpill are the postings added and the bytes of
// the runs they spilled.
func (b *Builder) postingCount() int64 {
	if b.wide != nil {
		return b.wide.Len()
	}
	return b.post.Len()
}

func (b *Builder) postingSpill() int64 {
	if b.wide != nil {
		return b.wide.SpilledBytes()
	}
	return b.post.SpilledBytes()
}

// Finish sorts and writes the ids and postings, ingests every table into the
// index, clears its "build in progress" mark and returns what was built. A
// repeated id fails it with a *DuplicateIDError.
func (b *Builder) Finish(ctx context.Context) (_ BuildStats, err error) {
	defer b.d.surface(&err)
	if b.done {
		return BuildStats{}, fmt.Errorf("%w: builder finished", ErrInvalidOptions)
	}
	st, err := b.finish(ctx)
	if err == nil {
		err = b.d.setBuilding(false) // the build is complete from here
	} else {
		b.unmark()
	}
	b.cleanup()
	st.Seconds = time.Since(b.started).Seconds()
	return st, err
}

// setBuilding marks the index's meta record "build in progress", or clears
// the mark, in one synced write.
func (d *DB) setBuilding(building bool) error {
	stored, closer, err := d.db.Get(metaKey)
	if err != nil {
		return err
	}
	meta, err := withBuilding(stored, building)
	closer.Close()
	if err != nil {
		return err
	}
	if err := d.db.Set(metaKey, meta, pebble.Sync); err != nil {
		return err
	}
	d.incomplete = building
	return nil
}

func (b *Builder) finish(ctx context.Context) (BuildStats, error) {
	d := b.d
	var st BuildStats
	if b.sigs != nil {
		if err := b.sigs.close(); err != nil {
			return st, err
		}
		b.sigs = nil
	}
	// Ids, sorted: a repeated id fails the build.
	w, err := b.newTable("ids")
	if err != nil {
		return st, err
	}
	var prev []byte
	var nb [docNumBytes]byte
	var prevNum uint32
	err = b.ids.each(func(id []byte, num uint32) error {
		if prev != nil && bytes.Equal(prev, id) {
			// Equal ids come in document order: num is the second.
			return &DuplicateIDError{ID: string(id), First: int64(prevNum - b.first), Second: int64(num - b.first)}
		}
		prev, prevNum = append(prev[:0], id...), num
		b.kbuf = appendIDKey(b.kbuf[:0], string(id))
		d.ids.set(idFilterKey(string(id)))
		binary.BigEndian.PutUint32(nb[:], num)
		if err := w.set(b.kbuf, nb[:]); err != nil {
			return err
		}
		if w.full() {
			if err := w.close(); err != nil {
				return err
			}
			if w, err = b.newTable("ids"); err != nil {
				return err
			}
		}
		return ctx.Err()
	})
	if err == nil {
		err = w.close()
	}
	if err != nil {
		return st, err
	}
	st.SpilledBytes = b.ids.spilled + b.postingSpill()

	// Postings, sorted by bucket then document: buckets past the cap drop
	// their later documents, as Insert in document order would. They are
	// packed, a value per group of buckets (packed.go).
	g := packedGroupBits(b.postingCount())
	kw := d.cfg.BucketKeyBytes
	if d.packed == nil {
		d.packed = newBucketFilter(d.filterBytes) // no reader uses it before packedBits is set
	}
	it, err := b.iterPostings()
	if err != nil {
		return st, err
	}
	b.iterating = true
	defer it.close()
	if w, err = b.newTable("postings"); err != nil {
		return st, err
	}
	var group []posting
	var curGroup uint32
	flush := func() error {
		if len(group) == 0 {
			return nil
		}
		b.kbuf = appendGroupKey(b.kbuf[:0], curGroup)
		b.vbuf = appendPacked(b.vbuf[:0], group)
		if err := w.set(b.kbuf, b.vbuf); err != nil {
			return err
		}
		st.PackedGroups++
		group = group[:0]
		if w.full() {
			if err := w.close(); err != nil {
				return err
			}
			w, err = b.newTable("postings")
			return err
		}
		return nil
	}
	capacity := d.cfg.BucketCap
	var last uint64
	n := 0
	// The dropped postings, by document then bucket key: a key's high 32
	// bits below the document, its low 32 (0 for a 4-byte key) as Doc.
	drops := extsort.NewWide(b.tmp, "drops", 1<<16)
	dropsOpen := true // until recordDrops iterates over them
	defer func() {
		if dropsOpen {
			drops.Close()
		}
	}()
	for bk, num, ok := it.next(); ok; bk, num, ok = it.next() {
		if n == 0 || bk != last {
			last, n = bk, 0
		}
		n++
		if capacity != Unlimited && n > capacity {
			st.DroppedPostings++
			if err := drops.Add(uint64(num)<<32|bk>>32, bk&(1<<32-1)); err != nil {
				return st, err
			}
			continue
		}
		grp, low := packedSplit(bk, kw, uint(g))
		if grp != curGroup || len(group) == 0 {
			if err := flush(); err != nil {
				return st, err
			}
			curGroup = grp
		}
		group = append(group, posting{low, num})
		d.packed.set(bk)
		st.Postings++
		if st.Postings%(1<<20) == 0 {
			if err := ctx.Err(); err != nil {
				return st, err
			}
		}
	}
	if err := it.err(); err != nil {
		return st, err
	}
	if err := flush(); err != nil {
		return st, err
	}
	if err := w.close(); err != nil {
		return st, err
	}
	// The meta record says the index holds packed postings before they are
	// ingested (it is still marked "build in progress" until Finish clears
	// the mark).
	stored, closer, err := d.db.Get(metaKey)
	if err != nil {
		return st, err
	}
	meta, err := withPackedBits(stored, g)
	closer.Close()
	if err != nil {
		return st, err
	}
	if err := d.db.Set(metaKey, meta, pebble.Sync); err != nil {
		return st, err
	}

	// One ingestion: ids, postings and signatures occupy disjoint key
	// ranges, and each is split into tables in key order, so no two tables
	// overlap and each lands in the lowest level.
	var paths []string
	for _, p := range b.tables {
		if p != "" {
			paths = append(paths, p)
		}
	}
	if len(paths) > 0 {
		b.ingested = true // if only partly: the mark stays either way
		if err := d.db.Ingest(ctx, paths); err != nil {
			return st, fmt.Errorf("index: ingest: %w", err)
		}
	}
	d.packedBits.Store(int32(g))
	st.Tables = len(paths)
	dropsOpen = false
	if err := b.recordDrops(drops); err != nil {
		return st, err
	}
	st.Documents = b.docs
	d.next.Store(uint64(b.next))
	d.dur.reset() // the ingested tables are synced
	d.docs.Add(b.docs)
	d.m.inserts.Add(uint64(b.docs))
	d.m.droppedPost.Add(uint64(st.DroppedPostings))
	return st, nil
}

// recordDrops rewrites the records of the documents whose postings were
// dropped at full buckets, so that their records list them (as Insert's do).
// It runs after the ingestion, as ordinary synced batches; such documents are
// few (members of boilerplate buckets past the cap).
func (b *Builder) recordDrops(drops *extsort.WideSorter) error {
	d := b.d
	it, err := drops.Iter()
	if err != nil {
		return err
	}
	defer it.Close()
	batch := d.db.NewBatch()
	defer func() { batch.Close() }()
	var bks []uint64
	flushDoc := func(num uint32) error {
		if len(bks) == 0 {
			return nil
		}
		b.kbuf = appendSigKey(b.kbuf[:0], num)
		rec, closer, err := d.db.Get(b.kbuf)
		if err != nil {
			return fmt.Errorf("index: record of document %d: %w", num, err)
		}
		r, err := decodeRecord(nil, &d.cfg.Params, rec)
		if err != nil {
			closer.Close()
			return err
		}
		var pos []int
		for i, bk := range b.kb.of(&d.cfg, r.sig) {
			if slices.Contains(bks, bk) {
				pos = append(pos, i)
			}
		}
		b.vbuf = appendRecord(b.vbuf[:0], &d.cfg.Params, r.sig, string(r.id), pos, r.meta)
		closer.Close()
		if err := batch.Set(b.kbuf, b.vbuf, nil); err != nil {
			return err
		}
		bks = bks[:0]
		if batch.Len() > 4<<20 {
			if err := batch.Commit(pebble.Sync); err != nil {
				return err
			}
			batch.Close()
			batch = d.db.NewBatch()
		}
		return nil
	}
	var cur uint32
	for e, ok := it.Next(); ok; e, ok = it.Next() {
		num, bk := uint32(e.Key>>32), e.Key<<32|uint64(e.Doc)
		if num != cur {
			if err := flushDoc(cur); err != nil {
				return err
			}
			cur = num
		}
		bks = append(bks, bk)
	}
	if err := it.Err(); err != nil {
		return err
	}
	if err := flushDoc(cur); err != nil {
		return err
	}
	return batch.Commit(pebble.Sync)
}

// Abort drops the build; the index stays empty, and its "build in progress"
// mark is cleared unless the index was marked before (opened with ForBuild).
func (b *Builder) Abort() {
	if !b.done {
		if b.sigs != nil {
			b.sigs.close()
		}
		b.unmark()
		b.cleanup()
	}
}

// unmark clears the "build in progress" mark of a build that failed or was
// aborted, if the index is as it was before the build: empty (nothing
// ingested) and not marked before. Best effort: if the write fails, the
// index stays marked.
func (b *Builder) unmark() {
	if !b.ingested && !b.wasIncomplete {
		b.d.setBuilding(false)
	}
}

func (b *Builder) cleanup() {
	b.done = true
	b.ids.close()
	if b.wide != nil && !b.iterating {
		b.wide.Close() // its runs, and any spill in flight
	}
	os.RemoveAll(b.tmp)
	if b.ownTemp {
		os.Remove(b.opts.TempDir) // only if empty
	}
	b.d.closeMu.Lock()
	b.d.building = false
	b.d.closeMu.Unlock()
}

// tableWriter writes one sstable of the build.
type tableWriter struct {
	w    *sstable.Writer
	path string
	b    *Builder
	idx  int
}

func (b *Builder) newTable(kind string) (*tableWriter, error) {
	path := filepath.Join(b.tmp, fmt.Sprintf("%s-%06d.sst", kind, len(b.tables)))
	f, err := vfs.Default.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, err
	}
	wo := b.d.po.MakeWriterOptions(6, b.d.db.TableFormat())
	b.tables = append(b.tables, "")
	return &tableWriter{w: sstable.NewWriter(objstorageprovider.NewFileWritable(f), wo), path: path, b: b, idx: len(b.tables) - 1}, nil
}

func (t *tableWriter) set(k, v []byte) error { return t.w.Set(k, v) }

func (t *tableWriter) full() bool { return t.w.Raw().EstimatedSize() >= tableTarget }

// close finishes the table; an empty one is removed and not ingested.
func (t *tableWriter) close() error {
	empty := t.w.Raw().EstimatedSize() == 0
	if err := t.w.Close(); err != nil {
		return err
	}
	meta, _ := t.w.Raw().Metadata()
	if empty || meta == nil || meta.Properties.NumEntries == 0 {
		return os.Remove(t.path)
	}
	t.b.tables[t.idx] = t.path
	return nil
}

// idSorter sorts (id, document number) pairs within a memory budget:
// chunks are sorted in memory and, past the budget, written as runs and
// merged.
type idSorter struct {
	dir     string
	limit   int
	arena   []byte
	ents    []idEnt
	runs    []string
	spilled int64
}

type idEnt struct {
	off, n uint32
	num    uint32
}

func (s *idSorter) add(id string, num uint32) error {
	s.ents = append(s.ents, idEnt{off: uint32(len(s.arena)), n: uint32(len(id)), num: num})
	s.arena = append(s.arena, id...)
	if len(s.arena)+16*len(s.ents) >= s.limit || len(s.arena) > 1<<31 {
		return s.spill()
	}
	return nil
}

func (s *idSorter) id(e idEnt) []byte { return s.arena[e.off : e.off+e.n] }

func (s *idSorter) sort() {
	slices.SortFunc(s.ents, func(a, b idEnt) int {
		if c := bytes.Compare(s.id(a), s.id(b)); c != 0 {
			return c
		}
		return int(a.num) - int(b.num)
	})
}

func (s *idSorter) spill() error {
	s.sort()
	f, err := os.CreateTemp(s.dir, "ids-run-*")
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var tmp [binary.MaxVarintLen64 + docNumBytes]byte
	for _, e := range s.ents {
		n := binary.PutUvarint(tmp[:], uint64(e.n))
		binary.BigEndian.PutUint32(tmp[n:], e.num)
		w.Write(tmp[:n+docNumBytes])
		w.Write(s.id(e))
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if st, err := f.Stat(); err == nil {
		s.spilled += st.Size()
	}
	if err := f.Close(); err != nil {
		return err
	}
	s.runs = append(s.runs, f.Name())
	s.arena, s.ents = s.arena[:0], s.ents[:0]
	return nil
}

// each calls fn with every (id, number) in id order; id is valid only
// during the call.
func (s *idSorter) each(fn func(id []byte, num uint32) error) error {
	if len(s.runs) == 0 {
		s.sort()
		for _, e := range s.ents {
			if err := fn(s.id(e), e.num); err != nil {
				return err
			}
		}
		return nil
	}
	if len(s.ents) > 0 {
		if err := s.spill(); err != nil {
			return err
		}
	}
	type run struct {
		r   *bufio.Reader
		f   *os.File
		id  []byte
		num uint32
	}
	var runs []*run
	defer func() {
		for _, r := range runs {
			r.f.Close()
		}
	}()
	next := func(r *run) (bool, error) {
		n, err := binary.ReadUvarint(r.r)
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		var nb [docNumBytes]byte
		if _, err := io.ReadFull(r.r, nb[:]); err != nil {
			return false, err
		}
		r.num = binary.BigEndian.Uint32(nb[:])
		r.id = slices.Grow(r.id[:0], int(n))[:n]
		_, err = io.ReadFull(r.r, r.id)
		return err == nil, err
	}
	for _, name := range s.runs {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		r := &run{r: bufio.NewReaderSize(f, 1<<16), f: f}
		runs = append(runs, r)
		ok, err := next(r)
		if err != nil {
			return err
		}
		if !ok {
			runs = runs[:len(runs)-1]
			f.Close()
		}
	}
	// Few runs: a linear scan for the smallest is as fast as a heap.
	for len(runs) > 0 {
		best := 0
		for i := 1; i < len(runs); i++ {
			if c := bytes.Compare(runs[i].id, runs[best].id); c < 0 || c == 0 && runs[i].num < runs[best].num {
				best = i
			}
		}
		r := runs[best]
		if err := fn(r.id, r.num); err != nil {
			return err
		}
		ok, err := next(r)
		if err != nil {
			return err
		}
		if !ok {
			r.f.Close()
			runs = slices.Delete(runs, best, best+1)
		}
	}
	return nil
}

func (s *idSorter) close() {
	for _, r := range s.runs {
		os.Remove(r)
	}
	s.runs, s.arena, s.ents = nil, nil, nil
}
