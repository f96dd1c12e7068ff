package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/boilerplate"
	"github.com/neardup/neardup/internal/corpuspipe"
	"github.com/neardup/neardup/internal/dupid"
	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/internal/progress"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/sigfile"
	"github.com/neardup/neardup/simhash"
)

type signOptions struct {
	out     string
	dfOut   string
	workers int
	quiet   bool
	sketch  sketchFlags
	corpus  corpusFlags
	bp      boilerplateFlags
	badOut  badOutFlag
}

func (o *signOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.out, "out", "o", "", "output file of signatures, - for standard output (required)")
	fs.StringVar(&o.dfOut, "df-out", "", "with --sketch simhash --weight tfidf: also write the document-frequency table the signature file names")
	fs.IntVar(&o.workers, "workers", 0, "worker goroutines (default: all cores)")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no progress bar")
	o.sketch.AddFlags(fs)
	o.corpus.AddFlags(fs)
	o.bp.AddFlags(fs)
	o.badOut.AddFlags(fs)
}

func newSignCmd(io IO) *cobra.Command {
	o := &signOptions{}
	o.sketch.Key.Warn = io.Err
	cmd := &cobra.Command{
		Use:   "sign [flags] INPUT... -o signatures.bin",
		Short: "Write the MinHash signature or SimHash fingerprint of every document",
		Long: `sign reads JSONL, Parquet or text corpora (gzip/zstd by extension, - for stdin) and
writes a signature file, using every core: a header that says how the signatures were
made (sketch, shingle spec, params with the seed), then each document's id and signature
in input order, with checksums and a record count, so a cut or damaged file is refused
(package sigfile; the format is in docs/signature-format.md §6). -o FILE appears only
once complete.

With --sketch simhash each signature is one 64-bit fingerprint (§8): --weight tf, or
tfidf, whose document frequencies are counted over the inputs first and named by the
table's fingerprint in the header (--df-out writes the table). --hamming and --blocks
do not change fingerprints and are not used here.

Ids must be unique: a repeated id is an error naming the file and line of its
second occurrence, or with --skip-bad that record is skipped as bad.

With --boilerplate (a first pass counts the lines many documents share) or
--boilerplate-lines, those lines are dropped before shingling; the header's
spec then names the set (its size and fingerprint).`,
		Example: `  neardup sign -o sigs.bin testdata/articles_1000.jsonl
  neardup sign --shingle char:5 --scheme khash --num-perm 256 -o - corpus.jsonl.zst > sigs.bin
  neardup sign --sketch simhash --weight tfidf --df-out df.bin -o fps.bin corpus.jsonl`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.out == "" {
				return usagef("--out is required")
			}
			sc, err := o.sketch.config()
			if err != nil {
				return err
			}
			if o.dfOut != "" && !(sc.Kind == sketch.SimHash && sc.SimHash.Params.Weighting == sigfile.TFIDF) {
				return usagef("--df-out %s: only with --sketch simhash --weight tfidf", o.dfOut)
			}
			c, err := o.corpus.build(io)
			if err != nil {
				return err
			}
			if err := o.badOut.check(c.SkipBad); err != nil {
				return err
			}
			spec, args, cleanup, res, err := o.bp.apply(cmd.Context(), io, args, &c, sc.Spec, boilerplate.DefaultMemory, o.workers)
			if err != nil {
				return err
			}
			defer cleanup()
			describeBoilerplate(io.Err, res)
			sc.Spec = spec
			return runSign(cmd.Context(), io, args, o, sc, c)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// signedBatch is the ids and signatures of one batch's documents, with
// where each record is, for the check of repeated ids.
type signedBatch struct {
	ids   []byte
	idEnd []int
	sigs  []uint64 // Words() per document
	pos   []dupid.Position
}

// createSignatures starts the signature file out: for a path, written under
// a temporary name and renamed by Close (sigfile.Create, atomic); for "-",
// streamed to stdout, where only the reader's checks (trailer, checksums)
// tell a complete file from a cut one.
func createSignatures(out string, stdout io.Writer, h sigfile.Header) (*sigfile.Writer, error) {
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

// countSignDF counts the document frequencies of inputs for a TF-IDF
// SimHash sign (standard input spooled first, since it is read twice), sets
// them on sc and writes the table to --df-out if asked. It returns the
// inputs to sign and a cleanup.
func countSignDF(ctx context.Context, stdio IO, inputs []string, o *signOptions, sc *sketch.Config, copts *corpus.Options) ([]string, func(), error) {
	inputs, cleanup, err := spoolStdin(inputs, copts)
	if err != nil {
		return nil, cleanup, err
	}
	t, err := jobspec.CountDF(ctx, inputs, copts, sc.Spec, o.workers)
	if err != nil {
		return nil, cleanup, err
	}
	*sc = sc.WithDF(t)
	if o.dfOut != "" {
		if err := writeDFTable(stdio, o.dfOut, t); err != nil {
			return nil, cleanup, err
		}
	}
	return inputs, cleanup, nil
}

// spoolStdin returns inputs with standard input ("-") spooled to a
// temporary file, for a command that reads its inputs twice (a TF-IDF
// first pass), and the cleanup that removes the file.
func spoolStdin(inputs []string, copts *corpus.Options) ([]string, func(), error) {
	cleanup := func() {}
	inputs = slices.Clone(inputs)
	for i, in := range inputs {
		if in != "-" {
			continue
		}
		stdin := copts.Stdin
		if stdin == nil {
			stdin = os.Stdin
		}
		path, done, err := corpus.Spool(stdin, "")
		if err != nil {
			return nil, cleanup, err
		}
		cleanup = func() { done() }
		inputs[i] = path
	}
	return inputs, cleanup, nil
}

// writeDFTable writes a document-frequency table (its encoding, package
// simhash) to path under a temporary name, renamed once complete.
func writeDFTable(stdio IO, path string, t *simhash.DFTable) error {
	data, err := t.MarshalBinary()
	if err != nil {
		return err
	}
	out, err := createOutput(stdio, path)
	if err != nil {
		return err
	}
	defer out.abort()
	if _, err := out.Write(data); err != nil {
		return err
	}
	return out.commit()
}

func runSign(ctx context.Context, stdio IO, inputs []string, o *signOptions, sc sketch.Config, copts corpus.Options) error {
	if err := o.badOut.check(copts.SkipBad); err != nil {
		return err
	}
	if sc.Kind == sketch.SimHash && sc.SimHash.Params.Weighting == sigfile.TFIDF && sc.SimHash.IDF == nil {
		var cleanup func()
		var err error
		inputs, cleanup, err = countSignDF(ctx, stdio, inputs, o, &sc, &copts)
		defer cleanup()
		if err != nil {
			return err
		}
	}
	sk, err := sc.New()
	if err != nil {
		return err
	}
	header := sc.SignatureHeader()
	reader, err := corpus.NewReader(inputs, &copts)
	if err != nil {
		return err
	}
	defer reader.Close()
	// Under --skip-bad a document whose id repeats an earlier one's is left
	// out, which is known only once every id is: the signatures are then
	// staged in a temporary signature file and copied without those.
	var out *sigfile.Writer
	var stage string
	if copts.SkipBad {
		dir, err := os.MkdirTemp("", "neardup-sign-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		stage = filepath.Join(dir, "stage.ndsf")
		out, err = sigfile.Create(stage, header)
		if err != nil {
			return err
		}
	} else if out, err = createSignatures(o.out, stdio.Out, header); err != nil {
		return err
	}
	defer out.Abort()
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
	words := sk.Words()
	var docs int64
	parseStats, err := corpuspipe.Run(ctx, reader, &copts, o.workers,
		func() (corpuspipe.Worker[signedBatch], error) {
			k, err := sk.NewSketcher()
			if err != nil {
				return corpuspipe.Worker[signedBatch]{}, err
			}
			return corpuspipe.Worker[signedBatch]{
				Begin: func(res *signedBatch, _ *corpus.Batch) {
					res.ids, res.idEnd, res.sigs, res.pos = res.ids[:0], res.idEnd[:0], res.sigs[:0], res.pos[:0]
				},
				Document: func(res *signedBatch, rec *corpus.Record, doc *corpus.Document) error {
					if len(doc.ID) >= sigfile.MaxIDLen {
						return fmt.Errorf("%s:%d: id of %d bytes, the limit is %d", rec.File, rec.Line, len(doc.ID), sigfile.MaxIDLen-1)
					}
					res.sigs, _ = k.Sign(res.sigs, doc.Text)
					res.ids = append(res.ids, doc.ID...)
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
			docs += int64(len(r.idEnd))
			bar.Add(int64(len(r.idEnd)), b.RawBytes)
			return writeSigned(out, r, words)
		})
	if err != nil {
		return err
	}
	bar.Finish()
	if stage == "" {
		// Without --skip-bad a repeated id fails the run (and the deferred
		// Abort removes the unfinished file).
		if err := ids.finish(nil); err != nil {
			return err
		}
		if err := out.Close(); err != nil {
			return err
		}
	} else {
		if err := out.Close(); err != nil {
			return err
		}
		if err := copyWithoutDropped(stdio, stage, o.out, ids, header); err != nil {
			return err
		}
	}
	if err := bad.commit(); err != nil {
		return err
	}
	docs -= ids.dropped
	skipped := ""
	if n := reader.Stats().Skipped; n > 0 {
		skipped = fmt.Sprintf(", %d WARC records not documents", n)
	}
	fmt.Fprintf(stdio.Err, "signed %d documents (%d bad skipped%s) under %s, %s\n", docs, parseStats.Bad+reader.Stats().Bad+ids.dropped, skipped, header.Spec, header.Params())
	return nil
}

// copyWithoutDropped writes the signature file out ("-": standard output)
// from the staged one, leaving out the documents whose id repeats an earlier
// one's (ids.finish under --skip-bad names them in ascending order).
func copyWithoutDropped(stdio IO, stage, out string, ids *idCheck, header sigfile.Header) error {
	r, err := sigfile.Open(stage, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := createSignatures(out, stdio.Out, header)
	if err != nil {
		return err
	}
	defer w.Abort()
	var rec sigfile.Record
	// copyTo copies the records before record n (all, for n < 0) and
	// reads record n itself, leaving it out.
	copyTo := func(n int64) error {
		for r.Count() < n || n < 0 {
			err := r.Next(&rec)
			if n < 0 && errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("re-reading %s: %w", stage, err)
			}
			if err := w.Add(rec.ID, rec.Sig); err != nil {
				return err
			}
		}
		return r.Next(&rec)
	}
	if err := ids.finish(copyTo); err != nil {
		return err
	}
	if err := copyTo(-1); err != nil {
		return err
	}
	return w.Close()
}
