// Package indexload bulk-loads corpora into a new Pebble index: it reads them
// (package corpus, on internal/corpuspipe's workers), signs every document
// with the index's signer (the batch job's sign-and-band, internal/jobspec)
// and adds the signatures to the index's bulk builder in input order. It
// lives outside package index so that the index reads no corpus formats;
// "neardup index build" and the load generator use it.
package indexload

import (
	"context"
	"fmt"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/corpuspipe"
)

// Stats report a Build.
type Stats struct {
	index.BuildStats
	// Records counts the records read; Bad those skipped as unparsable
	// (under corpus.Options.SkipBad) or too long; Empty those whose text has
	// no feature (not indexed: they would all match each other).
	Records, Bad, Empty int64
	// Bytes counts the raw bytes of the records read.
	Bytes int64
}

// Build bulk-builds the empty index db from corpus files (JSONL, Parquet,
// text, directories; see package corpus; nil copts means the defaults):
// records are parsed and signed on workers goroutines (0: all cores) with the
// index's Signer and added to a Builder (bopts; nil means the defaults) in
// input order, so the result does not depend on workers. progress, if not
// nil, is called after each batch with the records and bytes read so far.
// Ids must be 1 to index.MaxIDLen bytes; an error names the file and line.
// On error the build is aborted and the index left empty.
func Build(ctx context.Context, db *index.DB, inputs []string, copts *corpus.Options, bopts *index.BuildOptions, workers int, progress func(records, bytes int64)) (Stats, error) {
	b, err := db.NewBuilder(bopts)
	if err != nil {
		return Stats{}, err
	}
	finished := false
	defer func() {
		if !finished {
			b.Abort()
		}
	}()
	st, err := eachSigned(ctx, db.Config(), inputs, copts, workers, progress, b.Add)
	if err != nil {
		return st, err
	}
	finished = true
	st.BuildStats, err = b.Finish(ctx)
	return st, err
}

// eachSigned reads the corpus inputs, signs every document on workers
// goroutines with the signer of cfg and hands add the documents with
// features, in input order; the returned Stats count records, bad and empty
// ones and bytes.
func eachSigned(ctx context.Context, cfg index.Config, inputs []string, copts *corpus.Options, workers int, progress func(records, bytes int64), add func(index.Doc) error) (Stats, error) {
	var st Stats
	var co corpus.Options
	if copts != nil {
		co = *copts
	}
	reader, err := corpus.NewReader(inputs, &co)
	if err != nil {
		return st, err
	}
	defer reader.Close()
	words := cfg.Params.Words()
	type signed struct {
		ids   []byte
		idEnd []int
		sigs  []uint64
		empty int64
	}
	parseStats, err := corpuspipe.Run(ctx, reader, &co, workers,
		func() (corpuspipe.Worker[signed], error) {
			signer, err := cfg.NewSigner()
			if err != nil {
				return corpuspipe.Worker[signed]{}, err
			}
			return corpuspipe.Worker[signed]{
				Begin: func(res *signed, _ *corpus.Batch) {
					res.ids, res.idEnd, res.sigs, res.empty = res.ids[:0], res.idEnd[:0], res.sigs[:0], 0
				},
				Document: func(res *signed, rec *corpus.Record, doc *corpus.Document) error {
					if len(doc.ID) == 0 || len(doc.ID) > index.MaxIDLen {
						return fmt.Errorf("%s:%d: %w: id of %d bytes, want 1..%d", rec.File, rec.Line, index.ErrInvalidDocument, len(doc.ID), index.MaxIDLen)
					}
					n := len(res.sigs)
					sig, empty := signer.Sign(res.sigs, doc.Text)
					if empty {
						res.sigs = sig[:n]
						res.empty++
						return nil
					}
					res.sigs = sig
					res.ids = append(res.ids, doc.ID...)
					res.idEnd = append(res.idEnd, len(res.ids))
					return nil
				},
			}, nil
		},
		func(batch *corpuspipe.Batch[signed]) error {
			res := &batch.Result
			prev := 0
			for i, end := range res.idEnd {
				doc := index.Doc{ID: string(res.ids[prev:end]), Sig: res.sigs[i*words : (i+1)*words]}
				prev = end
				if err := add(doc); err != nil {
					return err
				}
			}
			st.Records += int64(len(batch.Records))
			st.Empty += res.empty
			st.Bytes += batch.RawBytes
			if progress != nil {
				progress(st.Records, st.Bytes)
			}
			return nil
		})
	st.Bad += parseStats.Bad
	st.Bad += reader.Stats().Bad
	return st, err
}
