package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// Check verifies, on one snapshot, that ids, signatures and postings agree:
// each id maps to a record carrying that id; each record's id maps back to it
// and each of its bucket keys holds a posting for it, unless that bucket is
// full; each posting names a stored document one of whose bucket keys it is
// under. It reads the whole index (and computes every document's keys once
// per stray posting), so it is for tests, tools and after a crash, not for serving.
func (d *DB) Check(ctx context.Context) (CheckReport, error) {
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
	s := &scratch{}
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
		rec, err := d.readRecord(probe, s, num)
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
		got, found, err := d.lookupID(probe, s, rid)
		if err != nil {
			it.Close()
			return r, err
		}
		if !found || got != num {
			r.problem("document %d has id %q, which maps to %d (found %v)", num, rid, got, found)
		}
		d.docKeys(s, rr.sig)
		for i, bk := range s.keys {
			k := appendPostingKey(nil, bk, num)
			present := probe.SeekGE(k) && bytes.Equal(probe.Key(), k)
			switch dropped := rr.droppedAt(i); {
			case dropped && present:
				r.problem("document %d (%q) has a posting in bucket %08x that its record says was dropped", num, rid, bk)
			case dropped:
				r.CappedPostings++
			case !present:
				r.problem("document %d (%q) lacks its posting in bucket %08x", num, rid, bk)
			default:
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
	it, err = snap.NewIter(iterOpts(prefixPosting))
	if err != nil {
		return r, err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		r.Postings++
	}
	if r.Postings == expected {
		return r, it.Error()
	}
	r.Postings = 0
	for ok := it.First(); ok; ok = it.Next() {
		if r.Postings%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return r, err
			}
		}
		r.Postings++
		bk, num, okKey := parsePostingKey(it.Key())
		if !okKey {
			r.problem("bad posting key %x", it.Key())
			continue
		}
		rec, err := d.readRecord(probe, s, num)
		if err != nil {
			return r, err
		}
		if rec == nil {
			r.problem("posting in bucket %08x names document %d, which has no record", bk, num)
			continue
		}
		rr, err := decodeRecord(nil, p, rec)
		if err != nil {
			continue // reported above
		}
		d.docKeys(s, rr.sig)
		if !slices.Contains(s.keys, bk) {
			r.problem("posting in bucket %08x names document %d, whose signature has no such key", bk, num)
		}
	}
	return r, it.Error()
}
