package index

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/ordered"
	"github.com/neardup/neardup/minhash"
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
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
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
		batch *corpus.Batch
		ids   []byte
		idEnd []int
		sigs  []uint64
		empty int64
		bad   int64
		bytes int64
	}
	free := make(chan *corpus.Batch, 2*workers+2)
	for range cap(free) {
		free <- &corpus.Batch{}
	}
	err = ordered.Pipeline(ctx, workers,
		func(emit func(*corpus.Batch) error) error {
			for {
				var batch *corpus.Batch
				select {
				case batch = <-free:
				case <-ctx.Done():
					return ctx.Err()
				}
				err := reader.Next(batch)
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return err
				}
				if err := emit(batch); err != nil {
					return err
				}
			}
		},
		func() func(*corpus.Batch) (signed, error) {
			parser, perr := corpus.NewParser(&co)
			signer, serr := cfg.NewSigner()
			var doc corpus.Document
			return func(batch *corpus.Batch) (signed, error) {
				if perr != nil {
					return signed{}, perr
				}
				if serr != nil {
					return signed{}, serr
				}
				res := signed{batch: batch}
				for i := range batch.Records {
					rec := &batch.Records[i]
					res.bytes += int64(len(rec.Raw))
					if err := parser.Parse(rec, &doc); err != nil {
						if co.SkipBad {
							res.bad++
							continue
						}
						return res, err
					}
					if len(doc.ID) == 0 || len(doc.ID) > MaxIDLen {
						return res, fmt.Errorf("%s:%d: %w: id of %d bytes, want 1..%d", rec.File, rec.Line, ErrInvalidDocument, len(doc.ID), MaxIDLen)
					}
					n := len(res.sigs)
					var empty bool
					var sig minhash.Signature
					sig, empty = signer.Sign(res.sigs, doc.Text)
					res.sigs = sig
					if empty {
						res.sigs = res.sigs[:n]
						res.empty++
						continue
					}
					res.ids = append(res.ids, doc.ID...)
					res.idEnd = append(res.idEnd, len(res.ids))
				}
				return res, nil
			}
		},
		func(res signed) error {
			prev := 0
			for i, end := range res.idEnd {
				doc := Doc{ID: string(res.ids[prev:end]), Sig: res.sigs[i*words : (i+1)*words]}
				prev = end
				if err := b.Add(doc); err != nil {
					return err
				}
			}
			st.Records += int64(len(res.batch.Records))
			st.Bad += res.bad
			st.Empty += res.empty
			st.Bytes += res.bytes
			free <- res.batch
			if progress != nil {
				progress(st.Records, st.Bytes)
			}
			return nil
		})
	st.Bad += reader.Stats().Bad
	if err != nil {
		return st, err
	}
	finished = true
	st.BuildStats, err = b.Finish(ctx)
	return st, err
}
