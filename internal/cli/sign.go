package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/corpuspipe"
	"github.com/neardup/neardup/internal/progress"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
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
writes a signature file, using every core: a header that says how the signatures were
made (shingle spec, params with the seed), then each document's id and signature in
input order, with checksums and a record count, so a cut or damaged file is refused
(package sigfile; the format is in docs/signature-format.md §6). -o FILE appears only
once complete.`,
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

// signedBatch is the ids and signatures of one batch's documents.
type signedBatch struct {
	ids   []byte
	idEnd []int
	sigs  []uint64 // Words() per document
}

// createSignatures starts the signature file out: for a path, written under
// a temporary name and renamed by Close (sigfile.Create, atomic); for "-",
// streamed to stdout, where only the reader's checks (trailer, checksums)
// tell a complete file from a cut one.
func createSignatures(out string, stdout io.Writer, spec shingle.Spec, params minhash.Params) (*sigfile.Writer, error) {
	h := sigfile.MinHashHeader(spec, params)
	if out == "-" {
		return sigfile.NewWriter(stdout, h)
	}
	return sigfile.Create(out, h)
}

// writeSigned appends one batch's records to w, in input order.
func writeSigned(w *sigfile.Writer, b *signedBatch, words int) error {
	id0 := 0
	for i, end := range b.idEnd {
		if err := w.Add(b.ids[id0:end], b.sigs[i*words:(i+1)*words]); err != nil {
			return err
		}
		id0 = end
	}
	return nil
}

func runSign(ctx context.Context, stdio IO, inputs []string, o *signOptions, spec shingle.Spec, params minhash.Params, copts corpus.Options) error {
	params.EnsureDefaults()
	out, err := createSignatures(o.out, stdio.Out, spec, params)
	if err != nil {
		return err
	}
	defer out.Abort()
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
	words := params.Words()
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
			return corpuspipe.Worker[signedBatch]{
				Begin: func(res *signedBatch, _ *corpus.Batch) {
					res.ids, res.idEnd, res.sigs = res.ids[:0], res.idEnd[:0], res.sigs[:0]
				},
				Document: func(res *signedBatch, rec *corpus.Record, doc *corpus.Document) error {
					if len(doc.ID) >= sigfile.MaxIDLen {
						return fmt.Errorf("%s:%d: id of %d bytes, the limit is %d", rec.File, rec.Line, len(doc.ID), sigfile.MaxIDLen-1)
					}
					res.sigs = h.SignText(res.sigs, sh, doc.Text)
					res.ids = append(res.ids, doc.ID...)
					res.idEnd = append(res.idEnd, len(res.ids))
					return nil
				},
			}, nil
		},
		func(b *corpuspipe.Batch[signedBatch]) error {
			docs += int64(len(b.Result.idEnd))
			bar.Add(int64(len(b.Result.idEnd)), b.RawBytes)
			return writeSigned(out, &b.Result, words)
		})
	if err != nil {
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	bar.Finish()
	fmt.Fprintf(stdio.Err, "signed %d documents (%d bad skipped) under %s, %s\n", docs, parseStats.Bad+reader.Stats().Bad, spec, params)
	return nil
}
