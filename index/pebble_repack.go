package index

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// repackBatchBytes is the size at which Repack commits a batch: big enough
// that the fsync of each costs little per posting, small enough that memory
// stays bounded and a delete waits for one batch at most.
const repackBatchBytes = 4 << 20

// RepackStats report what Repack did. A plain value.
type RepackStats struct {
	// Own and Packed are the postings of their own and the packed postings
	// the index held when Repack started.
	Own, Packed int64
	// Postings is the number of postings of their own moved into packed
	// values. When the group bits changed, it includes the Unpacked ones:
	// packed postings first moved out of their values (into keys of their
	// own) so that they could be packed again under the new group bits.
	Postings, Unpacked int64
	// Groups is the number of packed values written (new or rewritten).
	Groups int64
	// Batches is the number of Pebble batches committed.
	Batches int64
	// OldGroupBits and GroupBits are the packed group bits G before and
	// after (0: no packed postings).
	OldGroupBits, GroupBits int
	// TableBytesBefore and TableBytesAfter are the bytes of the index's live
	// sstables, its data, when Repack started (after a flush of the
	// memtable) and when it ended (after the compaction of the postings).
	TableBytesBefore, TableBytesAfter int64
	// BytesBefore and BytesAfter are the index's whole size on disk at the
	// same moments (as Stats.Bytes): also the write-ahead log, which
	// Repack's batches grow, and files that Pebble has yet to remove.
	BytesBefore, BytesAfter int64
	// PostingBytesBefore and PostingBytesAfter are Pebble's estimate of the
	// bytes on disk of the postings, of both kinds, before and after.
	PostingBytesBefore, PostingBytesAfter int64
	// Seconds is the wall time of the whole Repack; CompactSeconds the part
	// of it spent compacting the postings' key range at the end.
	Seconds, CompactSeconds float64
}

// repackTuning is what tests change: the batch size, and a hook called
// after each durable write (each batch, and the change of the group bits);
// an error from it stops the repack there, as a crash would.
type repackTuning struct {
	batchBytes int
	afterWrite func() error
}

// Repack moves every posting of its own (written by Insert and
// CheckAndInsert, 7.6 bytes a posting on disk) into the packed values a bulk
// build writes (about 4 bytes a posting), then compacts the postings' key
// range so that the space is reclaimed. Queries answer exactly as before;
// postings dropped at full buckets stay dropped. See "Repack" in the package
// doc.
//
// If the index holds no packed postings yet, Repack first chooses the group
// bits G from the number of postings and records them in the meta record
// (the index becomes layout version 2). If it holds packed postings under a
// G that has become too small (groups would average more than twice their
// target of 32 postings), it first moves the packed postings back into keys
// of their own and then packs everything under a new G.
//
// Each group is rewritten in one batch with the deletes of the keys it
// absorbs, and batches are committed (synced, unless Options.NoSync) a few
// MiB at a time: memory stays bounded, and a crash or an error at any moment
// leaves a consistent index holding every posting once; running Repack again
// finishes the work. A second Repack with nothing new to pack writes
// nothing.
//
// Repack may run while the DB serves readers and writers: queries and
// inserts proceed, deletes wait for the batch in progress, and when G
// changes (on the first repack of an index) the change waits for the
// operations in flight and holds new ones for a moment. Two Repacks run one
// after the other; during a bulk build Repack fails. The in-memory bucket
// filters are kept up to date, so the DB need not be reopened. progress, if
// not nil, is called with the postings done and the total to do, first with
// done = 0 and then after each batch, from the calling goroutine. The
// context is checked between batches. Repack returns what it did, also when
// it fails.
func (d *DB) Repack(ctx context.Context, progress func(done, total int64)) (RepackStats, error) {
	return d.repack(ctx, progress, repackTuning{batchBytes: repackBatchBytes})
}

func (d *DB) repack(ctx context.Context, progress func(done, total int64), tu repackTuning) (st RepackStats, err error) {
	defer d.surface(&err)
	start := time.Now()
	defer func() { st.Seconds = time.Since(start).Seconds() }()
	d.repackMu.Lock()
	defer d.repackMu.Unlock()
	if progress == nil {
		progress = func(int64, int64) {}
	}

	// Count what there is.
	g, err := d.repackSurvey(ctx, &st)
	if err != nil {
		return st, err
	}
	st.OldGroupBits, st.GroupBits = g, g
	if st.Own == 0 {
		st.TableBytesAfter, st.BytesAfter, st.PostingBytesAfter = st.TableBytesBefore, st.BytesBefore, st.PostingBytesBefore
		return st, nil // nothing to pack (packed postings, if any, stay as they are)
	}
	// G+2 bits are wanted when groups under G would average over 64
	// postings: a query then decodes twice what it should for each bucket.
	want := packedGroupBits(st.Own + st.Packed)
	regroup := st.Packed > 0 && want >= g+2
	total := st.Own
	if regroup {
		total += 2 * st.Packed
	}
	var done int64
	progress(0, total)
	afterBatch := func(n int64) error {
		st.Batches++
		done += n
		progress(done, total)
		if tu.afterWrite != nil {
			return tu.afterWrite()
		}
		return nil
	}

	// Move packed postings out first if their groups are to change.
	if regroup {
		from := []byte{prefixPacked}
		for from != nil {
			if err := ctx.Err(); err != nil {
				return st, err
			}
			var n int64
			from, n, err = d.unpackBatch(ctx, from, uint(g), tu.batchBytes)
			if err != nil {
				return st, err
			}
			if n == 0 {
				break
			}
			st.Unpacked += n
			if err := afterBatch(n); err != nil {
				return st, err
			}
		}
	}
	if g == 0 || regroup || st.Packed == 0 && g != want {
		if err := d.setGroupBits(want); err != nil {
			return st, err
		}
		g = want
		st.GroupBits = g
		if tu.afterWrite != nil {
			if err := tu.afterWrite(); err != nil {
				return st, err
			}
		}
	}

	// Pack the postings of their own, group by group.
	from := []byte{prefixPosting}
	for from != nil {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		var n, groups int64
		from, n, groups, err = d.packBatch(ctx, from, uint(g), tu.batchBytes)
		if err != nil {
			return st, err
		}
		if n == 0 {
			break
		}
		st.Postings += n
		st.Groups += groups
		if err := afterBatch(n); err != nil {
			return st, err
		}
	}

	// Reclaim the space of the keys deleted.
	cstart := time.Now()
	err = d.compactPostings(ctx)
	st.CompactSeconds = time.Since(cstart).Seconds()
	if err != nil {
		return st, err
	}
	st.TableBytesAfter, st.BytesAfter, st.PostingBytesAfter, err = d.repackSizes(ctx)
	return st, err
}

// repackSurvey flushes the memtable (so that Pebble's size estimates cover
// every posting), counts the postings of both kinds into st and measures
// the index's size. It returns the current group bits.
func (d *DB) repackSurvey(ctx context.Context, st *RepackStats) (int, error) {
	done, err := d.enter(ctx, true)
	if err != nil {
		return 0, err
	}
	defer done()
	if err := d.db.Flush(); err != nil {
		return 0, err
	}
	// G is read once: it changes only under closeMu held exclusively (and
	// by this repack, which holds repackMu).
	g := int(d.packedBits.Load())
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixPosting}, UpperBound: []byte{prefixPosting + 1}})
	if err != nil {
		return 0, err
	}
	for ok := it.First(); ok; ok = it.Next() {
		st.Own++
		if st.Own%(1<<16) == 0 {
			if err := ctx.Err(); err != nil {
				it.Close()
				return 0, err
			}
		}
	}
	if err := it.Close(); err != nil {
		return 0, err
	}
	if it, err = d.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixPacked}, UpperBound: []byte{prefixPacked + 1}}); err != nil {
		return 0, err
	}
	defer it.Close()
	var pi packedIter
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err == nil && g == 0 {
			err = fmt.Errorf("%w: packed postings under key %x in an index without group bits", ErrCorrupt, it.Key())
		}
		if err == nil {
			err = pi.init(v, packedLowBits(d.cfg.BucketKeyBytes, uint(g)))
		}
		if err != nil {
			return 0, err
		}
		st.Packed += int64(pi.left)
	}
	if err := it.Error(); err != nil {
		return 0, err
	}
	st.TableBytesBefore, st.BytesBefore, st.PostingBytesBefore, err = d.sizes()
	return g, err
}

// repackSizes is sizes within an operation.
func (d *DB) repackSizes(ctx context.Context) (tables, total, postings int64, err error) {
	done, err := d.enter(ctx, false)
	if err != nil {
		return 0, 0, 0, err
	}
	defer done()
	return d.sizes()
}

// sizes returns the bytes of the index's live sstables, its bytes on disk,
// and Pebble's estimate of the bytes on disk of its postings (keys p and q).
func (d *DB) sizes() (tables, total, postings int64, err error) {
	p, err := d.db.EstimateDiskUsage([]byte{prefixPosting}, []byte{prefixPacked + 1})
	m := d.db.Metrics()
	return int64(m.Table.Local.LiveSize), int64(m.DiskSpaceUsage()), int64(p), err
}

// compactPostings compacts the key range of the postings into the bottom
// level, dropping the deleted keys of their own and the packed values
// rewritten.
func (d *DB) compactPostings(ctx context.Context) error {
	done, err := d.enter(ctx, true)
	if err != nil {
		return err
	}
	defer done()
	return d.db.Compact(ctx, []byte{prefixPosting}, []byte{prefixPacked + 1}, true)
}

// setGroupBits records g packed group bits in the meta record (synced) and
// in memory, with an empty packed filter. It holds closeMu exclusively: no
// operation is in flight, so no reader decodes a packed value under the old
// G after the change; and it fails if any packed value exists, so that none
// was written under another G.
func (d *DB) setGroupBits(g int) error {
	d.closeMu.Lock()
	defer d.closeMu.Unlock()
	switch {
	case d.closed:
		return ErrClosed
	case d.ro:
		return fmt.Errorf("%w: index opened read-only", ErrInvalidOptions)
	case d.building:
		return fmt.Errorf("%w: a bulk build is in progress", ErrInvalidOptions)
	}
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixPacked}, UpperBound: []byte{prefixPacked + 1}})
	if err != nil {
		return err
	}
	found := it.First()
	key := slices.Clone(it.Key())
	if err := it.Close(); err != nil {
		return err
	}
	if found {
		return fmt.Errorf("index: repack: packed values (%x) appeared while changing the group bits", key)
	}
	stored, closer, err := d.db.Get(metaKey)
	if err != nil {
		return err
	}
	meta, err := withPackedBits(stored, g)
	closer.Close()
	if err != nil {
		return err
	}
	if err := d.db.Set(metaKey, meta, pebble.Sync); err != nil {
		return err
	}
	d.packed = newBucketFilter(d.filterBytes) // no packed posting exists
	d.packedBits.Store(int32(g))
	return nil
}

// sameGroupBits fails unless the group bits are still g: only a bulk build
// changes them behind a repack's back (of an index emptied meanwhile).
func (d *DB) sameGroupBits(g uint) error {
	if now := uint(d.packedBits.Load()); now != g {
		return fmt.Errorf("index: repack: the group bits changed from %d to %d (a bulk build?)", g, now)
	}
	return nil
}

// lockPacking readies a repack batch: it enters the DB as a writer, checks
// that the group bits are still g and takes packMu. The unlock it returns
// releases both and may be called more than once.
func (d *DB) lockPacking(ctx context.Context, g uint) (unlock func(), err error) {
	done, err := d.enter(ctx, true)
	if err != nil {
		return nil, err
	}
	if err := d.sameGroupBits(g); err != nil {
		done()
		return nil, err
	}
	d.packMu.Lock()
	locked := true
	return func() {
		if locked {
			d.packMu.Unlock()
			done()
			locked = false
		}
	}, nil
}

// repackCommit applies batch b, releases unlock once it is visible and
// returns once it is durable (as writeBatch.commit does).
func (d *DB) repackCommit(b *pebble.Batch, unlock func()) error {
	defer b.Close()
	if !d.sync {
		err := b.Commit(pebble.NoSync)
		unlock()
		return err
	}
	err := d.db.ApplyNoSyncWait(b, pebble.Sync)
	unlock()
	if err != nil {
		return err
	}
	return b.SyncWait()
}

// packBatch packs, in one batch of about limit bytes, the postings of their
// own of the groups (of g group bits) from the posting key from on: for
// each group it merges them into the group's packed value and deletes their
// keys. It returns where the next batch starts (nil at the end), the
// postings moved and the values written. It holds packMu from before it
// reads until its batch is applied, so no delete rewrites a packed value
// meanwhile; postings that writers add meanwhile are either in its view
// (and moved) or not (and stay).
func (d *DB) packBatch(ctx context.Context, from []byte, g uint, limit int) (next []byte, moved, groups int64, err error) {
	unlock, err := d.lockPacking(ctx, g)
	if err != nil {
		return nil, 0, 0, err
	}
	defer unlock()
	pit, err := d.db.NewIter(&pebble.IterOptions{LowerBound: from, UpperBound: []byte{prefixPosting + 1}})
	if err != nil {
		return nil, 0, 0, err
	}
	defer pit.Close()
	qit, err := d.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixPacked}, UpperBound: []byte{prefixPacked + 1}})
	if err != nil {
		return nil, 0, 0, err
	}
	defer qit.Close()
	b := d.db.NewBatch()
	w := d.cfg.BucketKeyBytes
	shift := packedLowBits(w, g)
	var (
		cur        uint32
		own, ps    []posting
		kbuf, vbuf []byte
		pi         packedIter
	)
	flush := func() error {
		kbuf = appendGroupKey(kbuf[:0], cur)
		ps = ps[:0]
		if qit.SeekGE(kbuf) && bytes.Equal(qit.Key(), kbuf) {
			v, err := qit.ValueAndErr()
			if err == nil {
				err = pi.init(v, shift)
			}
			for err == nil {
				low, doc, ok, e := pi.next()
				if err = e; !ok {
					break
				}
				ps = append(ps, posting{low, doc})
			}
			if err != nil {
				return fmt.Errorf("group %x: %w", kbuf[1:], err)
			}
		} else if err := qit.Error(); err != nil {
			return err
		}
		for _, p := range own {
			bk := packedJoin(cur, p.low, w, g)
			d.packed.set(bk) // before the batch is applied: see bucketFilter
			if err := b.Delete(appendPostingKey(vbuf[:0], bk, p.doc, w), nil); err != nil {
				return err
			}
		}
		ps = append(ps, own...)
		slices.SortFunc(ps, func(a, b posting) int {
			return cmp.Or(cmp.Compare(a.low, b.low), cmp.Compare(a.doc, b.doc))
		})
		// A posting both packed and of its own is a fault Check reports
		// ("two postings in bucket"); merging keeps one, which repairs it.
		ps = slices.Compact(ps)
		vbuf = appendPacked(vbuf[:0], ps)
		moved += int64(len(own))
		groups++
		return b.Set(kbuf, vbuf, nil)
	}
	for ok := pit.First(); ok; ok = pit.Next() {
		bk, doc, okKey := parsePostingKey(pit.Key(), w)
		group, low := packedSplit(bk, w, g)
		if !okKey {
			b.Close()
			return nil, 0, 0, fmt.Errorf("%w: posting key %x", ErrCorrupt, pit.Key())
		}
		if len(own) > 0 && group != cur {
			if err := flush(); err != nil {
				b.Close()
				return nil, 0, 0, err
			}
			own = own[:0]
			if b.Len() >= limit {
				next = appendBucketPrefix(nil, packedJoin(group, 0, w, g), w)
				break
			}
		}
		cur = group
		own = append(own, posting{low, doc})
	}
	if err := pit.Error(); err != nil {
		b.Close()
		return nil, 0, 0, err
	}
	if len(own) > 0 {
		if err := flush(); err != nil {
			b.Close()
			return nil, 0, 0, err
		}
	}
	if b.Empty() {
		b.Close()
		return nil, 0, 0, nil
	}
	return next, moved, groups, d.repackCommit(b, unlock)
}

// unpackBatch moves, in one batch of about limit bytes, the packed postings
// of the values (of g group bits) from the key from on into keys of their
// own, and deletes the values. It returns where the next batch starts (nil
// at the end) and the postings moved. Like packBatch, it holds packMu until
// its batch is applied.
func (d *DB) unpackBatch(ctx context.Context, from []byte, g uint, limit int) (next []byte, moved int64, err error) {
	unlock, err := d.lockPacking(ctx, g)
	if err != nil {
		return nil, 0, err
	}
	defer unlock()
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: from, UpperBound: []byte{prefixPacked + 1}})
	if err != nil {
		return nil, 0, err
	}
	defer it.Close()
	b := d.db.NewBatch()
	w := d.cfg.BucketKeyBytes
	shift := packedLowBits(w, g)
	var kbuf []byte
	var pi packedIter
	for ok := it.First(); ok; ok = it.Next() {
		if b.Len() >= limit {
			next = slices.Clone(it.Key())
			break
		}
		group, okKey := parseGroupKey(it.Key())
		v, err := it.ValueAndErr()
		if err == nil && !okKey {
			err = fmt.Errorf("%w: packed postings under key %x", ErrCorrupt, it.Key())
		}
		if err == nil {
			err = pi.init(v, shift)
		}
		for err == nil {
			low, doc, ok, e := pi.next()
			if err = e; !ok {
				break
			}
			bk := packedJoin(group, low, w, g)
			d.filter.set(bk) // before the batch is applied: see bucketFilter
			kbuf = appendPostingKey(kbuf[:0], bk, doc, w)
			err = b.Set(kbuf, nil, nil)
			moved++
		}
		if err == nil {
			err = b.Delete(it.Key(), nil)
		}
		if err != nil {
			b.Close()
			return nil, 0, fmt.Errorf("packed postings %x: %w", it.Key(), err)
		}
	}
	if err := it.Error(); err != nil {
		b.Close()
		return nil, 0, err
	}
	if b.Empty() {
		b.Close()
		return nil, 0, nil
	}
	return next, moved, d.repackCommit(b, unlock)
}
