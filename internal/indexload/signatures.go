package indexload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/sigfile"
)

// Signature files (package sigfile: neardup sign, neardup dedup
// --signatures-out, neardup-beam --signatures-out) fill an index without
// texts: their records are added in file order, those whose signature is
// the empty set's (a text without features, sketch.Sketch.Empty) left out,
// as Build leaves out such texts.

// ErrSignatures reports signature files that cannot fill the index: made
// under another spec or params than the index's, of another sketch, or
// holding a record the index cannot store (an empty id); check with
// errors.Is.
var ErrSignatures = errors.New("indexload: signature files do not fit the index")

// CheckSignatures reports whether the signatures of the file whose header is
// h can go into an index made under cfg's spec and params: the error wraps
// ErrSignatures and sigfile's mismatch sentinel and names both sides'
// forms and fingerprints.
func CheckSignatures(cfg index.Config, name string, h sigfile.Header) error {
	if err := h.CheckMinHash(cfg.Spec, cfg.Params); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrSignatures, name, err)
	}
	return nil
}

// eachStored reads the records of the signature files (each opened with
// sigfile.Open: a file, a directory of shards or a glob), checks them
// against cfg, and hands add the documents with features, in order. The
// returned Stats count records and empty ones.
func eachStored(ctx context.Context, cfg index.Config, paths []string, progress func(records, bytes int64), add func(index.Doc) error) (Stats, error) {
	var st Stats
	sk, err := sketch.Config{Spec: cfg.Spec, Params: cfg.Params, Bands: cfg.Bands}.New()
	if err != nil {
		return st, err
	}
	for _, p := range paths {
		r, err := sigfile.Open(p, nil)
		if err != nil {
			return st, err
		}
		err = func() error {
			defer r.Close()
			if err := CheckSignatures(cfg, p, r.Header()); err != nil {
				return err
			}
			var rec sigfile.Record
			for {
				err := r.Next(&rec)
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return err
				}
				st.Records++
				if st.Records%4096 == 0 {
					if err := ctx.Err(); err != nil {
						return err
					}
					if progress != nil {
						progress(st.Records, 0)
					}
				}
				if sk.Empty(rec.Sig) {
					st.Empty++
					continue
				}
				if len(rec.ID) == 0 || len(rec.ID) > index.MaxIDLen {
					return fmt.Errorf("%w: %s: record %d: id of %d bytes, the index takes 1..%d", ErrSignatures, r.Name(), r.Count()-1, len(rec.ID), index.MaxIDLen)
				}
				if err := add(index.Doc{ID: string(rec.ID), Sig: rec.Sig}); err != nil {
					return err
				}
			}
		}()
		if err != nil {
			return st, err
		}
	}
	if progress != nil {
		progress(st.Records, 0)
	}
	return st, nil
}

// BuildSignatures bulk-builds the empty index db from signature files, as
// Build does from corpora: every record with features, in file order
// (paths in order, each read with sigfile.Open), without signing anything.
// Of opts it uses Build and Progress (called with records read and no
// bytes). The files must hold signatures made under the index's spec and
// params (ErrSignatures otherwise). A repeated id is refused by the builder
// (index.DuplicateIDError, naming the id and both records' numbers among
// those added); signature files hold no lines to name. On error the build
// is aborted and the index left empty.
func BuildSignatures(ctx context.Context, db *index.DB, paths []string, opts *Options) (Stats, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	b, err := db.NewBuilder(&o.Build)
	if err != nil {
		return Stats{}, err
	}
	finished := false
	defer func() {
		if !finished {
			b.Abort()
		}
	}()
	st, err := eachStored(ctx, db.Config(), paths, o.Progress, b.Add)
	if err != nil {
		return st, err
	}
	finished = true
	st.BuildStats, err = b.Finish(ctx)
	return st, err
}

// AppendStats report an Append.
type AppendStats struct {
	Stats
	// Inserted counts the documents written; Present those skipped because
	// the index (or the input before them) already holds their id with the
	// same signature, as after an interrupted append; Batches the durable
	// writes.
	Inserted, Present, Batches int64
}

// AppendBatch is the number of documents an Append writes at once.
const AppendBatch = 1024

// Append adds documents to the existing index db (which may hold documents;
// for an empty one, Build is faster) from corpora (inputs) or signature
// files (sigPaths), whichever is given, with the durability of the
// service: documents are written with Insert in batches of AppendBatch,
// each atomic and durable (fsynced, unless the index was opened NoSync)
// before the next, so an interrupted append leaves the index consistent,
// holding a prefix of the batches. A document whose id the index (or the
// input before it) already holds with the same signature is skipped and
// counted as Present, so that running the same append again after an
// interruption completes it; with another signature it is an error
// wrapping index.ErrDuplicateID that names the id. Postings are written as
// by online inserts: neardup index repack packs them later.
//
// Of opts it uses Corpus, Workers, Progress, BadLog, TempDir and, for the
// check of repeated ids, an eighth of Build.Memory. Corpora are checked as
// Build checks them: an id repeated within the inputs is an error naming
// the file and line of both occurrences, or under Corpus.SkipBad a bad
// record left out. So that nothing is appended before that check, the
// signatures are staged in a temporary file until every id is known. An id
// repeated within signature files is taken as Present (the same signature)
// or refused (another), as one already in the index.
func Append(ctx context.Context, db *index.DB, inputs, sigPaths []string, opts *Options) (AppendStats, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	bo := o.Build
	bo.EnsureDefaults()
	var st AppendStats
	var batch []index.Doc
	seen := map[string][]uint64{} // ids of the batch being filled
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := db.Insert(ctx, batch); err != nil {
			return err
		}
		st.Inserted += int64(len(batch))
		st.Batches++
		batch = batch[:0]
		clear(seen)
		return nil
	}
	add := func(d index.Doc) error {
		if sig, ok := seen[d.ID]; ok {
			return present(&st, d, sig)
		}
		stored, err := db.Get(ctx, d.ID)
		switch {
		case err == nil:
			return present(&st, d, stored.Sig)
		case !errors.Is(err, index.ErrNotFound):
			return err
		}
		d.Sig = slices.Clone(d.Sig)
		batch = append(batch, d)
		seen[d.ID] = d.Sig
		if len(batch) == AppendBatch {
			return flush()
		}
		return nil
	}
	var err error
	if len(sigPaths) > 0 {
		st.Stats, err = eachStored(ctx, db.Config(), sigPaths, o.Progress, add)
	} else {
		st.Stats, err = eachSigned(ctx, db.Config(), inputs, &o, bo.Memory/8, true, add)
	}
	if err == nil {
		err = flush()
	}
	return st, err
}

// present counts d, whose id is already stored with signature sig, as
// present, or refuses it if its signature differs.
func present(st *AppendStats, d index.Doc, sig []uint64) error {
	if !slices.Equal(sig, d.Sig) {
		return fmt.Errorf("%w: %q is already in the index with another signature", index.ErrDuplicateID, d.ID)
	}
	st.Present++
	return nil
}
