package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2"

	"github.com/neardup/neardup/internal/atomicfile"
	"github.com/neardup/neardup/internal/sketch"
)

// MigrateStats report what Migrate did. A plain value.
type MigrateStats struct {
	// Documents is the number of documents copied into the new index.
	Documents int64
	// OldKeyBytes and KeyBytes are the bucket-key widths before and after.
	OldKeyBytes, KeyBytes int
	// Resumed is true when Migrate only finished the switch of a migration
	// that was killed after its copy was complete.
	Resumed bool
	// Packed is true when the new index's postings were packed (Repack),
	// as the old index's were.
	Packed bool
}

// migrateBatch is the number of documents Migrate inserts at a time.
const migrateBatch = 512

// Migrate rewrites the Pebble index in dir (layout version 1 or 2, 4-byte
// bucket keys) as an index of 8-byte keys (layout version 3) from its stored
// signatures: same ids, signatures, metadata and configuration; its postings
// banded anew, and packed (DB.Repack) if the old index had packed postings. opts are as for Open (a keyed spec
// needs its key); the new index stores the configuration the old one opens
// with. The index must not be open elsewhere (ErrLocked while a server
// holds it). A SimHash index, whose keys are 4 bytes by design, and an index
// whose keys are already 8 bytes fail with ErrKeyWidth.
//
// The new index is written to dir+".migrate", marked "build in progress"
// until its copy is complete and synced; then dir is renamed to
// dir+".premigrate", the new index to dir, and the old one removed, each
// rename made durable (the parent directory synced). Killed at any moment,
// Migrate leaves the old index intact in dir (the partial copy is removed
// by the next Migrate, which starts over) or, once the copy is complete,
// the next Migrate finishes the switch (MigrateStats.Resumed). Between the
// two renames dir does not exist: a server started then finds no index.
func Migrate(ctx context.Context, dir string, opts *Options) (MigrateStats, error) {
	return migrate(ctx, dir, opts, nil)
}

// migrate is Migrate with a hook that tests use to stop it after each
// durable step (an error from it stops Migrate there, as a kill would).
func migrate(ctx context.Context, dir string, opts *Options, step func(string) error) (st MigrateStats, err error) {
	if step == nil {
		step = func(string) error { return nil }
	}
	dir = filepath.Clean(dir)
	tmp, old := dir+".migrate", dir+".premigrate"
	parent := filepath.Dir(dir)
	st.OldKeyBytes, st.KeyBytes = NarrowKeyBytes, WideKeyBytes

	// A migration killed during its switch: finish it.
	if exists(old) {
		st.Resumed = true
		if !exists(dir) {
			if err := os.Rename(tmp, dir); err != nil {
				return st, fmt.Errorf("index: migrate: finish the switch: %w", err)
			}
			if err := atomicfile.SyncDir(parent); err != nil {
				return st, err
			}
			if err := step("renamed new"); err != nil {
				return st, err
			}
		}
		return st, os.RemoveAll(old)
	}

	var o Options
	if opts != nil {
		o = *opts
	}
	o.MustExist, o.ReadOnly, o.ForBuild = true, false, false
	src, err := Open(dir, &o)
	if err != nil {
		return st, err
	}
	defer func() {
		if src != nil {
			src.Close()
		}
	}()
	c := src.Config()
	switch {
	case c.Sketch == sketch.SimHash:
		return st, fmt.Errorf("%w: a SimHash index keeps %d-byte keys (its tables' block values)", ErrKeyWidth, NarrowKeyBytes)
	case c.BucketKeyBytes == WideKeyBytes:
		return st, fmt.Errorf("%w: the index at %s has %d-byte bucket keys already", ErrKeyWidth, dir, WideKeyBytes)
	}
	st.OldKeyBytes = c.BucketKeyBytes

	// A partial copy from a killed run is not resumed: start over.
	if err := os.RemoveAll(tmp); err != nil {
		return st, err
	}
	no := o
	no.Spec, no.Params, no.Bands, no.Threshold, no.BucketCap = c.Spec, c.Params, c.Bands, c.Threshold, c.BucketCap
	no.Key, no.MustExist, no.NoSync, no.BucketKeyBytes = nil, false, true, WideKeyBytes
	dst, err := Open(tmp, &no)
	if err != nil {
		return st, err
	}
	defer func() {
		if dst != nil {
			dst.Close()
		}
	}()
	if err := dst.setBuilding(true); err != nil {
		return st, err
	}
	if err := step("marked"); err != nil {
		return st, err
	}

	if err := migrateCopy(ctx, src, dst, &st, step); err != nil {
		return st, err
	}
	if src.packedBits.Load() > 0 {
		// The old index was bulk-built or repacked: so is the new one.
		if _, err := dst.Repack(ctx, nil); err != nil {
			return st, err
		}
		st.Packed = true
		if err := step("packed"); err != nil {
			return st, err
		}
	}
	// Clearing the mark is a synced write: it makes the whole copy durable
	// (the WAL is written in order).
	if err := dst.setBuilding(false); err != nil {
		return st, err
	}
	if err := step("complete"); err != nil {
		return st, err
	}
	err = dst.Close()
	dst = nil
	if err != nil {
		return st, err
	}
	err = src.Close()
	src = nil
	if err != nil {
		return st, err
	}

	// The switch.
	if err := os.Rename(dir, old); err != nil {
		return st, err
	}
	if err := atomicfile.SyncDir(parent); err != nil {
		return st, err
	}
	if err := step("renamed old"); err != nil {
		return st, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return st, err
	}
	if err := atomicfile.SyncDir(parent); err != nil {
		return st, err
	}
	if err := step("renamed new"); err != nil {
		return st, err
	}
	return st, os.RemoveAll(old)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// migrateCopy inserts the documents of src into dst in document order, so
// that full buckets keep the oldest documents as before.
func migrateCopy(ctx context.Context, src, dst *DB, st *MigrateStats, step func(string) error) error {
	it, err := src.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixSig}, UpperBound: []byte{prefixSig + 1}})
	if err != nil {
		return err
	}
	defer it.Close()
	c := src.Config()
	docs := make([]Doc, 0, migrateBatch)
	flush := func() error {
		if len(docs) == 0 {
			return nil
		}
		if err := dst.Insert(ctx, docs); err != nil {
			return err
		}
		st.Documents += int64(len(docs))
		docs = docs[:0]
		return step("copied")
	}
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		r, err := decodeRecord(nil, &c.Params, v)
		if err != nil {
			return fmt.Errorf("record %x: %w", it.Key(), err)
		}
		docs = append(docs, Doc{ID: string(r.id), Sig: r.sig, Meta: bytes.Clone(r.meta)}) // the value is the iterator's
		if len(docs) == migrateBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	return flush()
}
