package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// Check verifies, on one snapshot, that ids, signatures and postings agree:
// each id maps to a record carrying that id; each record's id maps back to it
// and each of its bucket keys holds a posting for it (of its own or packed,
// not both), unless that bucket is full; each posting names a stored document
// one of whose bucket keys it is under; packed values decode. It reads the
// whole index (and computes every document's keys once per stray posting),
// so it is for tests, tools and after a crash, not for serving.
func (d *DB) Check(ctx context.Context) (_ CheckReport, err error) {
	defer d.surface(&err)
	done, err := d.enter(ctx, false)
	if err != nil {
		return CheckReport{}, err
	}
	defer done()
	snap := d.db.NewSnapshot()
	defer snap.Close()
	var r CheckReport
	iterOpts := func(p byte) *pebble.IterOptions {
		return &pebble.IterOptions{LowerBound: []byte{p}, UpperBound: []byte{p + 1}}
	}
	probe, err := snap.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixID}, UpperBound: []byte{prefixSig + 1}})
	if err != nil {
		return r, err
	}
	defer probe.Close()
	pr := &pebbleReader{d: d, it: probe}
	var kb keyBuf
	p := &d.cfg.Params

	// Ids → records.
	it, err := snap.NewIter(iterOpts(prefixID))
	if err != nil {
		return r, err
	}
	for ok := it.First(); ok; ok = it.Next() {
		if err := ctx.Err(); err != nil {
			it.Close()
			return r, err
		}
		r.Documents++
		id := string(it.Key()[1:])
		v := it.Value()
		if len(v) != docNumBytes {
			r.problem("id %q maps to %d bytes", id, len(v))
			continue
		}
		num := binary.BigEndian.Uint32(v)
		rec, err := pr.readRecord(num)
		if err != nil {
			it.Close()
			return r, err
		}
		if rec == nil {
			r.problem("id %q maps to document %d, which has no record", id, num)
			continue
		}
		if rr, err := decodeRecord(nil, p, rec); err != nil || string(rr.id) != id {
			r.problem("id %q maps to document %d, whose record is for %q (%v)", id, num, rr.id, err)
		}
	}
	if err := it.Close(); err != nil {
		return r, err
	}

	// Records → ids and postings.
	it, err = snap.NewIter(iterOpts(prefixSig))
	if err != nil {
		return r, err
	}
	var records, expected int64
	for ok := it.First(); ok; ok = it.Next() {
		if err := ctx.Err(); err != nil {
			it.Close()
			return r, err
		}
		records++
		num, okKey := parseSigKey(it.Key())
		if !okKey {
			r.problem("bad signature key %x", it.Key())
			continue
		}
		rr, err := decodeRecord(nil, p, it.Value())
		if err != nil {
			r.problem("document %d: %v", num, err)
			continue
		}
		rid := string(rr.id)
		got, found, err := pr.lookupID(rid)
		if err != nil {
			it.Close()
			return r, err
		}
		if !found || got != num {
			r.problem("document %d has id %q, which maps to %d (found %v)", num, rid, got, found)
		}
		for i, bk := range kb.of(&d.cfg, rr.sig) {
			k := appendPostingKey(nil, bk, num, d.cfg.BucketKeyBytes)
			single := probe.SeekGE(k) && bytes.Equal(probe.Key(), k)
			if err := probe.Error(); err != nil {
				it.Close()
				return r, err
			}
			packed, err := pr.hasPacked(bk, num)
			if err != nil && !errors.Is(err, ErrCorrupt) {
				it.Close()
				return r, err
			}
			switch {
			case single && packed:
				r.problem("document %d (%q) has two postings in bucket %016x, one packed", num, rid, bk)
			case r.posting(rid, bk, single || packed, rr.droppedAt(i)):
				expected++
			}
		}
	}
	if err := it.Close(); err != nil {
		return r, err
	}
	if records != r.Documents {
		r.problem("%d ids but %d records", r.Documents, records)
	}

	// Postings → records. Every posting a record expects was found above,
	// once each; if there are no more postings than that, there is no
	// stray one. Otherwise find the strays.
	g := uint(d.packedBits.Load())
	packed, err := d.eachPacked(ctx, snap, g, &r, nil)
	if err != nil {
		return r, err
	}
	it, err = snap.NewIter(iterOpts(prefixPosting))
	if err != nil {
		return r, err
	}
	defer it.Close()
	var singles int64
	for ok := it.First(); ok; ok = it.Next() {
		singles++
	}
	r.Postings = packed + singles
	if r.Postings == expected {
		return r, it.Error()
	}
	if packed > 0 {
		_, err := d.eachPacked(ctx, snap, g, nil, func(bk uint64, num uint32) error {
			rec, err := pr.readRecord(num)
			if err != nil || rec == nil {
				if err == nil {
					r.problem("packed posting in bucket %016x names document %d, which has no record", bk, num)
				}
				return err
			}
			if rr, err := decodeRecord(nil, p, rec); err == nil { // else reported above
				if !slices.Contains(kb.of(&d.cfg, rr.sig), bk) {
					r.problem("packed posting in bucket %016x names document %d, whose signature has no such key", bk, num)
				}
			}
			return nil
		})
		if err != nil {
			return r, err
		}
	}
	r.Postings = packed
	for ok := it.First(); ok; ok = it.Next() {
		if r.Postings%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return r, err
			}
		}
		r.Postings++
		bk, num, okKey := parsePostingKey(it.Key(), d.cfg.BucketKeyBytes)
		if !okKey {
			r.problem("bad posting key %x", it.Key())
			continue
		}
		rec, err := pr.readRecord(num)
		if err != nil {
			return r, err
		}
		if rec == nil {
			r.problem("posting in bucket %016x names document %d, which has no record", bk, num)
			continue
		}
		rr, err := decodeRecord(nil, p, rec)
		if err != nil {
			continue // reported above
		}
		if !slices.Contains(kb.of(&d.cfg, rr.sig), bk) {
			r.problem("posting in bucket %016x names document %d, whose signature has no such key", bk, num)
		}
	}
	return r, it.Error()
}

// eachPacked calls fn (if not nil) with every packed posting and returns
// their number; if r is not nil, it reports the values that do not decode
// (and any value at all if g, the group bits, is 0: no packed postings).
func (d *DB) eachPacked(ctx context.Context, snap *pebble.Snapshot, g uint, r *CheckReport, fn func(bk uint64, num uint32) error) (int64, error) {
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixPacked}, UpperBound: []byte{prefixPacked + 1}})
	if err != nil {
		return 0, err
	}
	defer it.Close()
	problem := func(format string, args ...any) {
		if r != nil {
			r.problem(format, args...)
		}
	}
	var n int64
	var pi packedIter
	for ok := it.First(); ok; ok = it.Next() {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		group, okKey := parseGroupKey(it.Key())
		if !okKey || g == 0 {
			problem("packed postings under key %x (group bits %d)", it.Key(), g)
			continue
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return n, err
		}
		if err = pi.init(v, packedLowBits(d.cfg.BucketKeyBytes, g)); err != nil {
			problem("packed postings of group %x: %v", group, err)
			continue
		}
		for {
			low, num, ok, err := pi.next()
			if err != nil {
				problem("packed postings of group %x: %v", group, err)
			}
			if !ok {
				break
			}
			n++
			if fn != nil {
				if err := fn(packedJoin(group, low, d.cfg.BucketKeyBytes, g), num); err != nil {
					return n, err
				}
			}
		}
	}
	return n, it.Error()
}
