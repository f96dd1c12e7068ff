package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/cluster"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/lsh"
)

type dedupOptions struct {
	out       string
	threshold float64
	recall    float64
	bands     int
	rows      int
	probe     int
	bucketCap int
	verify    string
	cluster   string
	keep      string
	workers   int
	memory    string
	tmpDir    string
	quiet     bool
	golden    string
	sketch    sketchFlags
	corpus    corpusFlags
}

func (o *dedupOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.out, "out", "o", "", "output directory for kept.jsonl, clusters.jsonl, pairs.tsv, report.json (required)")
	fs.Float64Var(&o.threshold, "threshold", 0.8, "Jaccard similarity at or above which documents are near duplicates")
	fs.Float64Var(&o.recall, "recall", 0.99, "probability that a pair at the threshold becomes a candidate; bands are chosen from it")
	fs.IntVar(&o.bands, "bands", 0, "LSH bands (with --rows; default: chosen from --threshold and --recall)")
	fs.IntVar(&o.rows, "rows", 0, "LSH rows per band (with --bands)")
	fs.IntVar(&o.probe, "multi-probe", 0, "also match bands that differ in up to this many rows (0, 1 or 2)")
	fs.IntVar(&o.bucketCap, "bucket-cap", lsh.DefaultCap, "largest bucket paired in full; larger ones link to one member")
	fs.StringVar(&o.verify, "verify", "exact", "candidate check: exact (Jaccard of the feature sets), estimate (signatures) or none")
	fs.StringVar(&o.cluster, "cluster", "components", "grouping: components (union-find) or star (every member ≥ threshold to the kept document)")
	fs.StringVar(&o.keep, "keep", "first", "document kept per cluster: first, longest or field:NAME (largest numeric value)")
	fs.IntVar(&o.workers, "workers", 0, "worker goroutines (default: all cores)")
	fs.StringVar(&o.memory, "memory", "4GiB", "memory budget for corpus-sized data; past it, runs spill to disk")
	fs.StringVar(&o.tmpDir, "tmp-dir", "", "directory for spill files (default: the system temporary directory)")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no progress bar")
	fs.StringVar(&o.golden, "golden", "", "truth file (from eval truth, or id pairs) to score the run against, into report.json and report.html")
	o.sketch.AddFlags(fs)
	o.corpus.AddFlags(fs)
}

func (o *dedupOptions) build(io IO) (*dedup.Options, error) {
	if o.out == "" {
		return nil, usagef("--out is required")
	}
	spec, params, err := o.sketch.build()
	if err != nil {
		return nil, err
	}
	c, err := o.corpus.build(io)
	if err != nil {
		return nil, err
	}
	opts := &dedup.Options{Corpus: c, Spec: spec, Params: params, Threshold: o.threshold, Recall: o.recall,
		BucketCap: o.bucketCap, Workers: o.workers, TempDir: o.tmpDir, Golden: o.golden}
	if (o.bands > 0) != (o.rows > 0) {
		return nil, usagef("--bands and --rows go together")
	}
	if o.bands > 0 {
		opts.Bands = lsh.Params{Bands: o.bands, Rows: o.rows, Probe: o.probe}
	} else if o.probe > 0 {
		b, err := lsh.ForRecall(o.threshold, params.K, o.recall)
		if err != nil {
			return nil, usageError{err}
		}
		b.Probe = o.probe
		opts.Bands = b
	}
	if opts.Verify, err = dedup.ParseVerify(o.verify); err != nil {
		return nil, usageError{err}
	}
	if opts.Cluster, err = dedup.ParseClusterMode(o.cluster); err != nil {
		return nil, usageError{err}
	}
	if opts.Keep, err = cluster.ParsePolicy(o.keep); err != nil {
		return nil, usageError{err}
	}
	if opts.Memory, err = dedup.ParseBytes(o.memory); err != nil {
		return nil, usageError{err}
	}
	if !o.quiet && io.ErrIsTerminal {
		opts.Progress = io.Err
	}
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, usageError{err}
	}
	return opts, nil
}

func newDedupCmd(io IO) *cobra.Command {
	o := &dedupOptions{}
	cmd := &cobra.Command{
		Use:   "dedup [flags] INPUT...",
		Short: "Find near-duplicate documents and keep one per cluster",
		Long: `dedup reads JSONL, Parquet or text corpora (gzip/zstd by extension, - for stdin),
finds every pair of documents whose Jaccard similarity reaches the threshold,
groups them into clusters and writes, into --out:

  kept.jsonl      the input records of the kept documents, untouched
  clusters.jsonl  one cluster a line: its kept document and members
  pairs.tsv       one verified pair a line: idA, idB, estimate, exact Jaccard
  report.json     counts, configuration, histograms, timings, peak memory
  report.html     the same as a page: S-curve, histograms, sample clusters

With --golden TRUTH, the run is scored against a truth file (eval truth):
precision, recall by similarity band, adjusted Rand index, in both reports.`,
		Example: `  neardup dedup -o out testdata/articles_1000.jsonl
  zcat crawl.jsonl.gz | neardup dedup --threshold 0.85 --shingle web -o out -
  neardup dedup --cluster star --keep longest --memory 512MiB -o out shards/`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := o.build(io)
			if err != nil {
				return err
			}
			return runDedup(cmd.Context(), io, args, o.out, opts)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func runDedup(ctx context.Context, io IO, inputs []string, out string, opts *dedup.Options) error {
	rep, err := dedup.Run(ctx, inputs, out, opts)
	if err != nil {
		return err
	}
	c := rep.Counts
	fmt.Fprintf(io.Out, "documents %d (empty %d, bad %d)  candidates %d  verified pairs %d  clusters %d  removed %d  kept %d  in %.2fs\n",
		c.Documents, c.Empty, c.Bad, c.Candidates, c.VerifiedPairs, c.Clusters, c.Removed, c.Kept, rep.WallSeconds)
	fmt.Fprintf(io.Out, "bands %d × %d rows: recall %.4f at J = %.2f; outputs in %s\n",
		rep.Config.Bands, rep.Config.Rows, rep.ExpectedRecall, rep.Config.Threshold, out)
	if g := rep.Golden; g != nil {
		fmt.Fprintf(io.Out, "golden %s: precision %.4f  recall %.4f  F1 %.4f", g.Truth, g.Pairs.Precision, g.Pairs.Recall, g.Pairs.F1)
		if g.Clusters != nil {
			fmt.Fprintf(io.Out, "  ARI %.4f", g.Clusters.ARI)
		}
		fmt.Fprintln(io.Out)
	}
	return nil
}
