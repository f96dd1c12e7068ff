package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/corpuspipe"
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
}

func (o *signOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.out, "out", "o", "", "output file of signatures, - for standard output (required)")
	fs.IntVar(&o.workers, "workers", 0, "worker goroutines (default: all cores)")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no progress bar")
	o.sketch.AddFlags(fs)
	o.corpus.AddFlags(fs)
}

func newSignCmd(io IO) *cobra.Command {
	o := &signOptions{}
	cmd := &cobra.Command{
		Use:   "sign [flags] INPUT... -o signatures.bin",
		Short: "Write the MinHash signature of every document",
		Long: `sign reads JSONL, Parquet or text corpora (gzip/zstd by extension, - for stdin) and
writes one wire-format signature per document, with its id, in input order, using
every core. The format is in docs/signature-format.md: each signature carries the
shingle spec and params fingerprints, so signatures made otherwise never mix.`,
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

// signedBatch is the wire-format signatures of one batch's documents.
type signedBatch struct {
	out  []byte
	docs int64
}

func runSign(ctx context.Context, stdio IO, inputs []string, o *signOptions, spec shingle.Spec, params minhash.Params, copts corpus.Options) error {
	var w io.Writer = stdio.Out
	var f *os.File
	if o.out != "-" {
		var err error
		if f, err = os.Create(o.out); err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	reader, err := corpus.NewReader(inputs, &copts)
	if err != nil {
		return err
	}
	defer reader.Close()
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
				Begin: func(res *signedBatch, _ *corpus.Batch) { res.out, res.docs = res.out[:0], 0 },
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
					return nil
				},
			}, nil
		},
		func(b *corpuspipe.Batch[signedBatch]) error {
			docs += b.Result.docs
			bar.Add(b.Result.docs, b.RawBytes)
			_, err := bw.Write(b.Result.out)
			return err
		})
	if err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if f != nil {
		if err := f.Close(); err != nil {
			return err
		}
	}
	bar.Finish()
	fmt.Fprintf(stdio.Err, "signed %d documents (%d bad skipped) under %s, %s\n", docs, parseStats.Bad+reader.Stats().Bad, spec, params)
	return nil
}
