package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/corpuspipe"
	"github.com/neardup/neardup/internal/dupid"
	"github.com/neardup/neardup/internal/progress"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
)

type signOptions struct {
	out     string
	workers int
	quiet   bool
	sketch  sketchFlags
	corpus  corpusFlags
	badOut  badOutFlag
}

func (o *signOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.out, "out", "o", "", "output file of signatures, - for standard output (required)")
	fs.IntVar(&o.workers, "workers", 0, "worker goroutines (default: all cores)")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no progress bar")
	o.sketch.AddFlags(fs)
	o.corpus.AddFlags(fs)
	o.badOut.AddFlags(fs)
}

func newSignCmd(io IO) *cobra.Command {
	o := &signOptions{}
	cmd := &cobra.Command{
		Use:   "sign [flags] INPUT... -o signatures.bin",
		Short: "Write the MinHash signature of every document",
		Long: `sign reads JSONL, Parquet or text corpora (gzip/zstd by extension, - for stdin) and
writes one wire-format signature per document, with its id, in input order, using
every core. The format is in docs/signature-format.md: each signature carries the
shingle spec and params fingerprints, so signatures made otherwise never mix.

Ids must be unique: a repeated id is an error naming the file and line of its
second occurrence, or with --skip-bad that record is skipped as bad. The output
file appears only when the run succeeds (it is written under a temporary name
in the same directory and renamed).`,
		Example: `  neardup sign -o sigs.bin testdata/articles_1000.jsonl
  neardup sign --shingle char:5 --scheme khash --num-perm 256 -o - corpus.jsonl.zst > sigs.bin`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.out == "" {
				return usagef("--out is required")
			}
			spec, params, err := o.sketch.build()
			if err != nil {
				return err
			}
			c, err := o.corpus.build(io)
			if err != nil {
				return err
			}
			return runSign(cmd.Context(), io, args, o, spec, params, c)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// signedBatch is the wire-format signatures of one batch's documents, with
// their ids and records for the check of repeated ids.
type signedBatch struct {
	out   []byte
	docs  int64
	ids   []byte
	idEnd []int
	pos   []dupid.Position
}

func runSign(ctx context.Context, stdio IO, inputs []string, o *signOptions, spec shingle.Spec, params minhash.Params, copts corpus.Options) error {
	if err := o.badOut.check(copts.SkipBad); err != nil {
		return err
	}
	reader, err := corpus.NewReader(inputs, &copts)
	if err != nil {
		return err
	}
	defer reader.Close()
	out, err := createOutput(stdio, o.out)
	if err != nil {
		return err
	}
	defer out.abort()
	// Under --skip-bad a document whose id repeats an earlier one's is left
	// out, which is known only once every id is: signatures to standard
	// output are staged in a temporary file until then.
	w := out.Writer
	var stage *os.File
	if copts.SkipBad && o.out == "-" {
		if stage, err = os.CreateTemp("", "neardup-sign-*.tmp"); err != nil {
			return err
		}
		defer func() { stage.Close(); os.Remove(stage.Name()) }()
		w = bufio.NewWriterSize(stage, 1<<20)
	}
	bad, err := o.badOut.open(stdio)
	if err != nil {
		return err
	}
	defer bad.abort()
	ids, err := newIDCheck(copts.SkipBad, bad)
	if err != nil {
		return err
	}
	defer ids.close()

	var bar *progress.Bar
	if !o.quiet && stdio.ErrIsTerminal {
		bar = progress.New(stdio.Err)
	}
	bar.Stage("sign", reader.Progress().Total, func() int64 { return reader.Progress().Read })
	defer bar.Finish()
	params.EnsureDefaults()
	specFP := spec.Fingerprint()
	var docs int64
	parseStats, err := corpuspipe.Run(ctx, reader, &copts, o.workers,
		func() (corpuspipe.Worker[signedBatch], error) {
			sh, err := shingle.New(spec)
			if err != nil {
				return corpuspipe.Worker[signedBatch]{}, err
			}
			h, err := minhash.NewHasher(params)
			if err != nil {
				return corpuspipe.Worker[signedBatch]{}, err
			}
			var sig minhash.Signature
			return corpuspipe.Worker[signedBatch]{
				Begin: func(res *signedBatch, _ *corpus.Batch) {
					res.out, res.docs = res.out[:0], 0
					res.ids, res.idEnd, res.pos = res.ids[:0], res.idEnd[:0], res.pos[:0]
				},
				Document: func(res *signedBatch, rec *corpus.Record, doc *corpus.Document) error {
					sig = h.SignText(sig[:0], sh, doc.Text)
					// A non-nil id, even when empty: every record carries one
					// (AppendBinary writes no id for a nil one).
					id := doc.ID
					if id == nil {
						id = []byte{}
					}
					if len(id) >= minhash.MaxIDLen {
						return fmt.Errorf("%s:%d: id of %d bytes, the limit is %d", rec.File, rec.Line, len(id), minhash.MaxIDLen-1)
					}
					res.out = minhash.AppendBinary(res.out, params, specFP, id, sig)
					res.docs++
					res.ids = append(res.ids, id...)
					res.idEnd = append(res.idEnd, len(res.ids))
					res.pos = append(res.pos, dupid.Position{File: rec.File, Line: rec.Line, Index: rec.Index})
					return nil
				},
			}, nil
		},
		func(b *corpuspipe.Batch[signedBatch]) error {
			r := &b.Result
			start := 0
			for i, end := range r.idEnd {
				if err := ids.add(r.ids[start:end], r.pos[i]); err != nil {
					return err
				}
				start = end
			}
			if err := bad.add(b.Bad); err != nil {
				return err
			}
			docs += r.docs
			bar.Add(r.docs, b.RawBytes)
			_, err := w.Write(r.out)
			return err
		})
	if err != nil {
		return err
	}
	bar.Finish()
	if err := finishSign(stdio, out, w, stage, ids, params, specFP); err != nil {
		return err
	}
	if err := bad.commit(); err != nil {
		return err
	}
	docs -= ids.dropped
	fmt.Fprintf(stdio.Err, "signed %d documents (%d bad skipped) under %s, %s\n", docs, parseStats.Bad+reader.Stats().Bad+ids.dropped, spec, params)
	return nil
}

// finishSign checks the ids and writes the output under its final name:
// written is what the signatures went to (out, or a buffer on stage for
// standard output under --skip-bad). Signatures of documents whose id
// repeats an earlier one's (under --skip-bad) are left out by copying the
// others to a new output.
func finishSign(stdio IO, out *outputFile, written io.Writer, stage *os.File, ids *idCheck, params minhash.Params, specFP uint64) error {
	if bw, ok := written.(*bufio.Writer); ok {
		if err := bw.Flush(); err != nil {
			return err
		}
	}
	var src *os.File // what was written, to copy without the dropped
	dst := out
	var sr *minhash.Reader
	var next int64 // number of the next signature of src
	var buf []byte
	err := ids.finish(func(n int64) error {
		if sr == nil {
			switch {
			case stage != nil:
				src = stage
			default:
				// The signatures are in out's temporary file: copy them to
				// a second one, which replaces it.
				f, err := os.Open(out.f.Name())
				if err != nil {
					return err
				}
				src = f
				if dst, err = createOutput(stdio, out.f.Path()); err != nil {
					f.Close()
					return err
				}
			}
			if _, err := src.Seek(0, io.SeekStart); err != nil {
				return err
			}
			sr = minhash.NewReader(src, params, specFP)
		}
		for ; next <= n; next++ {
			id, sig, err := sr.Next()
			if err != nil {
				return fmt.Errorf("re-reading signatures: %w", err)
			}
			if next < n {
				buf = minhash.AppendBinary(buf[:0], params, specFP, id, sig)
				if _, err := dst.Write(buf); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if src != nil && src != stage {
		defer src.Close()
	}
	if dst != out {
		defer dst.abort()
	}
	if err != nil {
		return err
	}
	switch {
	case sr != nil:
		for {
			id, sig, err := sr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("re-reading signatures: %w", err)
			}
			buf = minhash.AppendBinary(buf[:0], params, specFP, id, sig)
			if _, err := dst.Write(buf); err != nil {
				return err
			}
		}
	case stage != nil:
		// Nothing dropped: the staged signatures go out as they are.
		if _, err := stage.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if _, err := io.Copy(dst, stage); err != nil {
			return err
		}
	}
	if dst != out {
		out.abort()
	}
	return dst.commit()
}
