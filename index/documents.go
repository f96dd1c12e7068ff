package index

import (
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/neardup/neardup/minhash"
)

// EachDocument calls fn with the id and signature of every stored document,
// in the order of their document numbers (the order they were stored in:
// input order for a bulk build), from one consistent view of the index: the
// backfill of another index, or a batch deduplication against what the
// index holds (neardup dedup --against). It reads only the records, never
// the postings, and writes nothing, so it works on an index opened
// ReadOnly. id and sig are valid only until fn returns. An error of fn, the
// cancellation of ctx or a record that does not decode (ErrCorrupt, naming
// the document number) stops it and is returned.
func (d *DB) EachDocument(ctx context.Context, fn func(id []byte, sig minhash.Signature) error) error {
	done, err := d.enter(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	snap := d.db.NewSnapshot()
	defer snap.Close()
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixSig}, UpperBound: []byte{prefixSig + 1}})
	if err != nil {
		return err
	}
	defer it.Close()
	p := &d.cfg.Params
	var sig minhash.Signature
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if n++; n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		num, okKey := parseSigKey(it.Key())
		if !okKey {
			return fmt.Errorf("%w: a signature key %x", ErrCorrupt, it.Key())
		}
		rec, err := decodeRecord(sig[:0], p, it.Value())
		if err != nil {
			return fmt.Errorf("document %d: %w", num, err)
		}
		sig = rec.sig
		if err := fn(rec.id, sig); err != nil {
			return err
		}
	}
	return it.Error()
}
