package job

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/drift"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/minhash"
)

// SplitStats is what signing one split saw, for the report.
type SplitStats struct {
	Split     int             // the split's index (Split.Index)
	Records   int64           // records read, bad ones included (corpus Stats.Records)
	ReaderBad int64           // records the reader skipped (too large, under SkipBad)
	Emitted   int64           // records the reader handed out
	LastLocal int64           // local index of the last record handed out, −1 if none
	ParseBad  int64           // records that failed to parse (under SkipBad)
	Empty     int64           // documents without features
	Bytes     int64           // record bytes read, decompressed
	Skipped   int64           // WARC and WET records that are not documents (corpus Stats.Skipped)
	Hash      minhash.Metrics // the signing metrics of the split's documents
	// Drift counts the split's parsed documents by text length and
	// features (report.json's drift, less the best-match similarities).
	Drift drift.Distributions
}

// eachRecord reads split i of c and calls fn with every record, in order,
// until fn returns false or an error. It returns the reader's statistics.
func eachRecord(ctx context.Context, c *Config, i int, fn func(rec *corpus.Record) (bool, error)) (corpus.Stats, error) {
	path, cleanup, err := localize(ctx, c.Splits[i])
	if err != nil {
		return corpus.Stats{}, err
	}
	defer cleanup()
	return eachRecordAt(ctx, c, path, fn)
}

// eachRecordAt is eachRecord for a split already at a local path.
func eachRecordAt(ctx context.Context, c *Config, path string, fn func(rec *corpus.Record) (bool, error)) (corpus.Stats, error) {
	r, err := corpus.NewReader([]string{path}, c.Corpus.options())
	if err != nil {
		return corpus.Stats{}, err
	}
	defer r.Close()
	var b corpus.Batch
	for {
		if err := ctx.Err(); err != nil {
			return r.Stats(), err
		}
		err := r.Next(&b)
		if errors.Is(err, io.EOF) {
			return r.Stats(), nil
		}
		if err != nil {
			return r.Stats(), err
		}
		for k := range b.Records {
			more, err := fn(&b.Records[k])
			if err != nil || !more {
				return r.Stats(), err
			}
		}
	}
}

// sketcher signs texts with the job's sketch (the sign-and-band of
// neardup dedup, internal/jobspec), keeping the last signature.
type sketcher struct {
	sketch.Sketcher
	sig  []uint64
	keys []uint64
}

// newReading returns what reading and signing documents of c takes, for one
// goroutine: a corpus parser and a sketcher (of the keyed spec, its key read
// back, for a keyed job).
func newReading(ctx context.Context, c *Config) (*corpus.Parser, *sketcher, error) {
	parser, err := corpus.NewParser(c.Corpus.options())
	if err != nil {
		return nil, nil, err
	}
	job, err := c.sketchJob(ctx)
	if err != nil {
		return nil, nil, err
	}
	k, err := job.Sketch.NewSketcher()
	if err != nil {
		return nil, nil, err
	}
	return parser, &sketcher{Sketcher: k}, nil
}

// sign signs text; it returns false for an empty document (no features).
func (k *sketcher) sign(text []byte) bool {
	var empty bool
	k.sig, empty = k.Sign(k.sig[:0], text)
	return !empty
}

// bucketKeys returns the bucket keys of the signature just made
// (sketch.BucketKeyBits wide: they shuffle in 5 bytes rather than 10, as
// Beam writes integers as varints).
func (k *sketcher) bucketKeys() []uint64 {
	k.keys = k.AppendBucketKeys(k.keys[:0], k.sig)
	return k.keys
}

// signFn reads one split, signs every document and emits its bucket entries
// in batches KV<partition, packed entries> (SimHash: its fingerprints in
// batches KV<split, (ord, fingerprint)…>), and the split's statistics.
type signFn struct{ C Config }

// ProcessElement reads and signs split sp, emits its documents' band-key
// entries in per-partition batches and then the split's statistics.
func (f *signFn) ProcessElement(ctx context.Context, sp Split, emit func(int, []byte), stats func(SplitStats)) error {
	parser, k, err := newReading(ctx, &f.C)
	if err != nil {
		return err
	}
	st := SplitStats{Split: sp.Index, LastLocal: -1, Drift: drift.NewDistributions()}
	batches := &batcher{bits: f.C.PartitionBits, bufs: map[int][]byte{}, emit: emit}
	var sigs *sigWriter
	if f.C.SignaturesOut != "" {
		if sigs, err = newSigWriter(ctx, &f.C, sp.Index); err != nil {
			return err
		}
		defer sigs.abort()
	}
	// SimHash's fingerprints go out by split: their entries wait for the
	// document count (simEntriesFn).
	simHash := f.C.simHashJob()
	fps := &fpBatcher{split: sp.Index, emit: emit}
	var doc corpus.Document
	rs, err := eachRecord(ctx, &f.C, sp.Index, func(rec *corpus.Record) (bool, error) {
		if rec.Index >= 1<<localBits {
			return false, fmt.Errorf("%s: more than 2^%d records", sp.Path, localBits)
		}
		st.Emitted++
		st.LastLocal = rec.Index
		if err := parser.Parse(rec, &doc); err != nil {
			if !f.C.Corpus.SkipBad {
				return false, err
			}
			st.ParseBad++
			return true, nil
		}
		before := k.Metrics().Features
		signed := k.sign(doc.Text)
		st.Drift.AddDocument(int64(len(doc.Text)), k.Metrics().Features-before)
		if sigs != nil {
			// Every document that parses, the empty set's signature for a
			// text without features: what neardup sign writes.
			if err := sigs.add(rec, doc.ID, k.sig); err != nil {
				return false, err
			}
		}
		if !signed {
			st.Empty++
			return true, nil
		}
		o := ord(sp.Index, rec.Index)
		if simHash {
			fps.add(o, k.sig[0])
			return true, nil
		}
		for _, key := range k.bucketKeys() {
			batches.add(uint32(key), o)
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	batches.flush()
	if sigs != nil {
		if err := sigs.close(); err != nil {
			return err
		}
	}
	fps.flush()
	st.Records, st.ReaderBad, st.Bytes, st.Skipped = rs.Records, rs.Bad, rs.Bytes, rs.Skipped
	st.Hash = k.Metrics()
	stats(st)
	return nil
}
