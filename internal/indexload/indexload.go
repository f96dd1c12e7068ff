// Package indexload bulk-loads corpora into a new Pebble index: it reads them
// (package corpus, on internal/corpuspipe's workers), signs every document
// with the index's signer (the batch job's sign-and-band, internal/jobspec)
// and adds the signatures to the index's bulk builder in input order. It
// lives outside package index so that the index reads no corpus formats;
// "neardup index build" and the load generator use it.
//
// Ids must be unique in an index: a repeated id fails the build with an
// error naming the file and line of both occurrences (internal/dupid), or,
// under corpus.Options.SkipBad, the later record is skipped as bad.
package indexload

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/corpuspipe"
	"github.com/neardup/neardup/internal/dupid"
)

// Stats report a Build.
type Stats struct {
	index.BuildStats
	// Records counts the records read; Bad those skipped as unparsable
	// (under corpus.Options.SkipBad), too long or, under SkipBad, for an id
	// that repeats an earlier record's; Empty those whose text has no
	// feature (not indexed: they would all match each other).
	Records, Bad, Empty int64
	// Bytes counts the raw bytes of the records read.
	Bytes int64
}

// Options configure a Build. A nil *Options, and zero fields, mean the
// defaults.
type Options struct {
	// Corpus says how to read the inputs (see package corpus). Default: the
	// corpus defaults.
	Corpus corpus.Options
	// Build configures the index's bulk builder. Its Memory is the whole
	// load's budget: the check of repeated ids takes an eighth of it, the
	// builder the rest (at least 16 MiB, the builder's minimum). Default:
	// index.BuildOptions' defaults (512 MiB).
	Build index.BuildOptions
	// Workers is the number of goroutines that parse and sign. Default 0:
	// all cores. The index does not depend on it.
	Workers int
	// Progress, if not nil, is called after each batch with the records and
	// bytes read so far. Default nil.
	Progress func(records, bytes int64)
	// BadLog, if not nil, receives the records skipped as bad under
	// Corpus.SkipBad: those skipped while reading (too large, not parsing),
	// in input order, then those whose id repeats an earlier one's, in input
	// order. Build does not flush it. Default nil.
	BadLog *corpus.BadLog
	// TempDir holds the check of repeated ids' spill files and, under
	// Corpus.SkipBad, the signatures staged until every id is known.
	// Default "": os.TempDir().
	TempDir string
}

// minBuildMemory is the least index.BuildOptions.Memory.
const minBuildMemory = 16 << 20

// Build bulk-builds the empty index db from corpus files (JSONL, Parquet,
// text, directories; see package corpus): records are parsed and signed on
// opts.Workers goroutines with the index's Signer and added to a Builder in
// input order, so the result does not depend on the workers.
//
// Ids must be 1 to index.MaxIDLen bytes (an error names the file and line)
// and unique: a repeated id is an error (wrapping dupid.ErrDuplicate) naming
// the file and line of the second occurrence and of the first. Under
// opts.Corpus.SkipBad the later occurrences are skipped as bad instead; the
// signatures are then staged in a temporary file until every id is known,
// which costs one more write and read of them. On error the build is aborted
// and the index left empty.
func Build(ctx context.Context, db *index.DB, inputs []string, opts *Options) (Stats, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	bo := o.Build
	bo.EnsureDefaults()
	idMemory := bo.Memory / 8
	bo.Memory = max(bo.Memory-idMemory, minBuildMemory)
	b, err := db.NewBuilder(&bo)
	if err != nil {
		return Stats{}, err
	}
	finished := false
	defer func() {
		if !finished {
			b.Abort()
		}
	}()
	st, err := eachSigned(ctx, db.Config(), inputs, &o, idMemory, o.Corpus.SkipBad, b.Add)
	if err != nil {
		return st, err
	}
	finished = true
	st.BuildStats, err = b.Finish(ctx)
	return st, err
}

// eachSigned reads the corpus inputs, signs every document on o.Workers
// goroutines with the signer of cfg, checks that no id repeats an earlier
// one's (within idMemory) and hands add the documents with features, in
// input order; the returned Stats count records, bad and empty ones and
// bytes. A repeated id is an error naming both lines, or under
// o.Corpus.SkipBad a bad record (to o.BadLog) left out. With staged (and
// always under SkipBad) the documents go to a temporary file first and add
// sees them only once every id is known good: without it, add may have
// seen documents before the error.
func eachSigned(ctx context.Context, cfg index.Config, inputs []string, o *Options, idMemory int64, staged bool, add func(index.Doc) error) (Stats, error) {
	var st Stats
	co := o.Corpus
	reader, err := corpus.NewReader(inputs, &co)
	if err != nil {
		return st, err
	}
	defer reader.Close()
	ids, err := dupid.New(&dupid.Options{Memory: idMemory, TempDir: o.TempDir})
	if err != nil {
		return st, err
	}
	defer ids.Close()
	words := cfg.Params.Words()
	// Under SkipBad the documents go to a stage first: a repeated id is
	// known only once every id is, and the builder cannot take one back.
	direct := add
	var stage *stageFile
	if staged || co.SkipBad {
		if stage, err = newStage(o.TempDir, words); err != nil {
			return st, err
		}
		defer stage.close()
		direct = stage.add
	}

	type signed struct {
		ids   []byte
		idEnd []int
		pos   []dupid.Position
		sigs  []uint64
		empty int64
	}
	parseStats, err := corpuspipe.Run(ctx, reader, &co, o.Workers,
		func() (corpuspipe.Worker[signed], error) {
			signer, err := cfg.NewSigner()
			if err != nil {
				return corpuspipe.Worker[signed]{}, err
			}
			return corpuspipe.Worker[signed]{
				Begin: func(res *signed, _ *corpus.Batch) {
					clear(res.pos) // the file names of earlier batches
					res.ids, res.idEnd, res.pos, res.sigs, res.empty = res.ids[:0], res.idEnd[:0], res.pos[:0], res.sigs[:0], 0
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
					res.pos = append(res.pos, dupid.Position{File: rec.File, Line: rec.Line, Index: rec.Index})
					return nil
				},
			}, nil
		},
		func(batch *corpuspipe.Batch[signed]) error {
			res := &batch.Result
			prev := 0
			for i, end := range res.idEnd {
				id := res.ids[prev:end]
				prev = end
				if err := ids.Add(id, res.pos[i]); err != nil {
					return err
				}
				if err := direct(index.Doc{ID: string(id), Sig: res.sigs[i*words : (i+1)*words]}); err != nil {
					return err
				}
			}
			if o.BadLog != nil {
				if err := o.BadLog.Add(batch.Bad); err != nil {
					return err
				}
			}
			st.Records += int64(len(batch.Records))
			st.Empty += res.empty
			st.Bytes += batch.RawBytes
			if o.Progress != nil {
				o.Progress(st.Records, st.Bytes)
			}
			return nil
		})
	st.Bad += parseStats.Bad
	st.Bad += reader.Stats().Bad
	if err != nil {
		return st, err
	}
	if !co.SkipBad {
		dup, err := ids.First()
		if err != nil {
			return st, err
		}
		if dup != nil {
			return st, dup.RecordError("")
		}
		if stage == nil {
			return st, nil
		}
	}
	// The staged documents go to add, but for the later occurrences of
	// repeated ids (under SkipBad), which come in input order.
	if err := stage.rewind(); err != nil {
		return st, err
	}
	var n int64 // documents read back from the stage
	copyTo := func(end int64) error {
		for ; n < end; n++ {
			if n%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			doc, err := stage.next()
			if err != nil {
				return err
			}
			if err := add(doc); err != nil {
				return err
			}
		}
		return nil
	}
	if co.SkipBad {
		err = ids.All(func(dup *dupid.Duplicate) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := copyTo(dup.N); err != nil {
				return err
			}
			if _, err := stage.next(); err != nil { // dup.N itself
				return err
			}
			n++
			st.Bad++
			if o.BadLog != nil {
				return o.BadLog.Write(dup.RecordError(""))
			}
			return nil
		})
		if err != nil {
			return st, err
		}
	}
	return st, copyTo(stage.n)
}

// stageFile holds documents (id and signature) in a temporary file, in the
// order they are added, to be read back once.
type stageFile struct {
	f     *os.File
	w     *bufio.Writer
	r     *bufio.Reader
	words int
	n     int64 // documents added
	buf   []byte
	id    []byte
	sig   []uint64
}

func newStage(dir string, words int) (*stageFile, error) {
	f, err := os.CreateTemp(dir, "neardup-indexload-stage-*")
	if err != nil {
		return nil, fmt.Errorf("indexload: %w", err)
	}
	return &stageFile{f: f, w: bufio.NewWriterSize(f, 1<<20), words: words}, nil
}

// add appends doc: its id's length, its id and its signature's words.
func (s *stageFile) add(doc index.Doc) error {
	b := binary.AppendUvarint(s.buf[:0], uint64(len(doc.ID)))
	b = append(b, doc.ID...)
	for _, w := range doc.Sig {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	s.buf = b
	if _, err := s.w.Write(b); err != nil {
		return fmt.Errorf("indexload: write %s: %w", s.f.Name(), err)
	}
	s.n++
	return nil
}

// rewind ends the writing and starts reading from the first document.
func (s *stageFile) rewind() error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("indexload: write %s: %w", s.f.Name(), err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("indexload: %w", err)
	}
	s.r = bufio.NewReaderSize(s.f, 1<<20)
	s.sig = make([]uint64, s.words)
	return nil
}

// errStage reports a stage file that does not read back as written.
var errStage = errors.New("indexload: temporary stage file cut short or damaged")

// next reads the next document; it is valid until the next call.
func (s *stageFile) next() (index.Doc, error) {
	n, err := binary.ReadUvarint(s.r)
	if err != nil || n > index.MaxIDLen {
		return index.Doc{}, errStage
	}
	s.id = slices.Grow(s.id[:0], int(n))[:n]
	if _, err := io.ReadFull(s.r, s.id); err != nil {
		return index.Doc{}, errStage
	}
	var w [8]byte
	for i := range s.sig {
		if _, err := io.ReadFull(s.r, w[:]); err != nil {
			return index.Doc{}, errStage
		}
		s.sig[i] = binary.LittleEndian.Uint64(w[:])
	}
	return index.Doc{ID: string(s.id), Sig: s.sig}, nil
}

func (s *stageFile) close() {
	s.f.Close()
	os.Remove(s.f.Name())
}
