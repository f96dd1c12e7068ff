package index

import (
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
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

// Signatures is an index opened for reading its stored signatures only:
// the reference documents of a batch deduplication (neardup dedup --against
// DIR). Make one with OpenSignatures. Not safe for concurrent use.
type Signatures struct {
	db *DB
}

// OpenSignatures opens the index in dir read-only, without its bucket
// filters and with a small cache (each record is read once), to read its
// stored signatures. A keyed spec's key is not stored: spec supplies it (a
// spec whose fingerprint differs from the stored one fails with
// ErrSpecMismatch); an unkeyed index opens whatever spec is given.
func OpenSignatures(dir string, spec shingle.Spec) (*Signatures, error) {
	o := &Options{ReadOnly: true, FilterBytes: -1, CacheSize: 8 << 20}
	if spec.Key != nil {
		o.Spec = spec
	}
	db, err := Open(dir, o)
	if err != nil {
		return nil, err
	}
	return &Signatures{db: db}, nil
}

// Made returns the canonical forms and fingerprints of the shingle spec and
// the minhash params (seed included) the index's signatures were made
// under.
func (s *Signatures) Made() (spec string, specFP uint64, params string, paramsFP uint64) {
	c := s.db.Config()
	return c.Spec.String(), c.Spec.Fingerprint(), c.Params.String(), c.Params.Fingerprint()
}

// Each is DB.EachDocument with the signature as plain words.
func (s *Signatures) Each(ctx context.Context, fn func(id []byte, sig []uint64) error) error {
	return s.db.EachDocument(ctx, func(id []byte, sig minhash.Signature) error { return fn(id, sig) })
}

// Close closes the index.
func (s *Signatures) Close() error { return s.db.Close() }
