package index

import (
	"context"
	"fmt"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/corpuspipe"
)

// CorpusBuildStats report a BuildFromCorpus.
type CorpusBuildStats struct {
	BuildStats
	// Records counts the records read; Bad those skipped as unparsable
	// (under corpus.Options.SkipBad); Empty those whose text has no feature
	// (not indexed: they would all match each other).
	Records, Bad, Empty int64
	// Bytes counts the raw bytes of the records read.
	Bytes int64
}

// BuildFromCorpus bulk-builds the empty index d from corpus files (JSONL,
// Parquet, text, directories; see package corpus): records are parsed and
// signed on workers goroutines (0: all cores) with the index's Signer, and
// added to a Builder in input order, so the result does not depend on
// workers. progress, if not nil, is called after each batch with the
// records and bytes read so far. Metadata is not read from the corpus.
func (d *DB) BuildFromCorpus(ctx context.Context, inputs []string, copts *corpus.Options, bopts *BuildOptions, workers int, progress func(records, bytes int64)) (CorpusBuildStats, error) {
	var st CorpusBuildStats
	var co corpus.Options
	if copts != nil {
		co = *copts
	}
	reader, err := corpus.NewReader(inputs, &co)
	if err != nil {
		return st, err
	}
	defer reader.Close()
	b, err := d.NewBuilder(bopts)
	if err != nil {
		return st, err
	}
	finished := false
	defer func() {
		if !finished {
			b.Abort()
		}
	}()
	cfg := d.cfg
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
					if len(doc.ID) == 0 || len(doc.ID) > MaxIDLen {
						return fmt.Errorf("%s:%d: %w: id of %d bytes, want 1..%d", rec.File, rec.Line, ErrInvalidDocument, len(doc.ID), MaxIDLen)
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
				doc := Doc{ID: string(res.ids[prev:end]), Sig: res.sigs[i*words : (i+1)*words]}
				prev = end
				if err := b.Add(doc); err != nil {
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
	if err != nil {
		return st, err
	}
	finished = true
	st.BuildStats, err = b.Finish(ctx)
	return st, err
}
