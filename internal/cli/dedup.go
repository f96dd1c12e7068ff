package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/jobflags"
	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/shingle"
)

// buildDedupOptions returns the options of a dedup run from its flags (jobflags.Dedup,
// which neardup-beam registers too); every bad value is a usage error.
func buildDedupOptions(io IO, f *jobflags.Dedup) (*dedup.Options, error) {
	opts, err := f.Options(io.In)
	if err != nil {
		return nil, usageError{err}
	}
	if p := f.SignaturesOut; p != "" {
		// neardup dedup writes one signature file (neardup-beam a
		// directory of shards).
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return nil, usagef("--signatures-out %s: a directory; neardup dedup writes one signature file", p)
		}
		if st, err := os.Stat(filepath.Dir(p)); err != nil || !st.IsDir() {
			return nil, usagef("--signatures-out %s: no directory %s to write it in", p, filepath.Dir(p))
		}
	}
	if !f.Quiet && io.ErrIsTerminal {
		opts.Progress = io.Err
	}
	opts.OpenIndex = openIndexSignatures
	return opts, nil
}

func newDedupCmd(io IO) *cobra.Command {
	f := &jobflags.Dedup{}
	f.Sketch.Key.Warn = io.Err
	var badOut badOutFlag
	cmd := &cobra.Command{
		Use:   "dedup [flags] INPUT...",
		Short: "Find near-duplicate documents and keep one per cluster",
		Long: `dedup reads JSONL, Parquet or text corpora, directories of files, or WARC and
WET files of web crawls (gzip/zstd by extension, - for stdin; --html takes
texts as HTML), finds every pair of documents whose Jaccard similarity reaches
the threshold, groups them into clusters and writes, into --out:

  kept.jsonl      the input records of the kept documents, untouched
                  (kept.warc.gz, or kept.warc.wet.gz, for WARC or WET input:
                  the kept records' gzip members byte for byte)
  clusters.jsonl  one cluster a line: its kept document and members
  pairs.tsv       one verified pair a line: idA, idB, estimate, exact Jaccard
  report.json     counts, configuration, histograms, timings, peak memory
  report.html     the same as a page: S-curve, histograms, sample clusters
  boilerplate.tsv with --boilerplate: the lines dropped (for --boilerplate-lines)

Documents whose normalised text an earlier one has are exact copies: they join
its cluster without being signed (--exact-pass; the outputs are the same).
With --boilerplate auto|N, a first pass finds the lines in at least N
documents (navigation, banners, footers; auto chooses N) and drops them before
shingling. With --golden TRUTH, the run is scored against a truth file (eval
truth): precision, recall by similarity band, adjusted Rand index, in both
reports.

Sign once, use many times:
  --against REF        deduplicate the inputs against REF (repeatable): a corpus, a
                       signature file (neardup sign, --signatures-out; a file, a
                       directory of shards or a glob) or an index directory. Inputs
                       that are near duplicates of a REF document are removed; REF
                       documents are never removed nor written, and never paired
                       with each other. Pairs with a REF document are verified
                       exactly when REF is a corpus, by the estimate otherwise.
  --signatures SIGS    use the inputs' stored signatures (same ids, same order)
                       instead of signing: the same outputs, no hashing.
  --signatures-out F   also write the inputs' signatures to F, as neardup sign does.
Stored signatures must be made with the same --shingle, --scheme, --num-perm,
--bits and --seed; the error names both fingerprints otherwise.

The outputs appear only once all are complete: a run that fails leaves none.
Ids must be unique: a repeated id is an error naming the file and line of its
second occurrence, or with --skip-bad that record is skipped as bad (and
listed in --bad-out). The ids of --against documents are not checked: an input
may have a REF document's id.`,
		Example: `  neardup dedup -o out testdata/articles_1000.jsonl
  neardup dedup --boilerplate auto --id-field uri --shingle web -o out CC-MAIN-*.warc.gz
  zcat crawl.jsonl.gz | neardup dedup --threshold 0.85 --shingle web -o out -
  neardup dedup --cluster star --keep longest --memory 512MiB -o out shards/
  neardup dedup --against archive.ndsf --signatures-out week.ndsf -o out week.jsonl
  neardup dedup --signatures week.ndsf --threshold 0.7 -o out-0.7 week.jsonl`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := buildDedupOptions(io, f)
			if err != nil {
				return err
			}
			if err := badOut.check(opts.Corpus.SkipBad); err != nil {
				return err
			}
			opts.BadOut = badOut.path
			return runDedup(cmd.Context(), io, args, f.Out, opts)
		},
	}
	f.AddFlags(cmd.Flags())
	badOut.AddFlags(cmd.Flags())
	return cmd
}

func runDedup(ctx context.Context, io IO, inputs []string, out string, opts *dedup.Options) error {
	rep, err := dedup.Run(ctx, inputs, out, opts)
	if err != nil {
		return err
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(io.Err, "neardup: warning: %s\n", w)
	}
	c := rep.Counts
	skipped := ""
	if c.Skipped > 0 {
		skipped = fmt.Sprintf(", %d WARC records not documents", c.Skipped)
	}
	fmt.Fprintf(io.Out, "documents %d (empty %d, bad %d, exact copies %d%s)  candidates %d  verified pairs %d  clusters %d  removed %d  kept %d  in %.2fs\n",
		c.Documents, c.Empty, c.Bad, c.ExactDuplicates, skipped, c.Candidates, c.VerifiedPairs, c.Clusters, c.Removed, c.Kept, rep.WallSeconds)
	if b := rep.Boilerplate; b != nil {
		fmt.Fprintf(io.Out, "boilerplate: %d lines dropped from %d (document, line) pairs; %s\n", b.Lines, b.Dropped, b.Reason)
	}
	if r := rep.Reference; r != nil {
		fmt.Fprintf(io.Out, "reference documents %d (empty %d)  pairs with them %d (verified %s)  inputs removed as their near duplicates %d\n",
			r.Documents, r.Empty, r.ReferencePairs.Verified, r.ReferencePairs.Verify, r.RemovedByReference)
	}
	if sc := rep.Config.SimHash; sc != nil {
		fmt.Fprintf(io.Out, "simhash %s, Hamming distance ≤ %d, %d blocks (%d tables): recall %.4f at J = %.2f by the unit-weight model; outputs in %s\n",
			sc.Weight, sc.Hamming, sc.Blocks, sc.Tables, rep.ExpectedRecall, rep.Config.Threshold, out)
	} else {
		fmt.Fprintf(io.Out, "bands %d × %d rows: recall %.4f at J = %.2f; outputs in %s\n",
			rep.Config.Bands, rep.Config.Rows, rep.ExpectedRecall, rep.Config.Threshold, out)
	}
	if g := rep.Golden; g != nil {
		fmt.Fprintf(io.Out, "golden %s: precision %.4f  recall %.4f  F1 %.4f", g.Truth, g.Pairs.Precision, g.Pairs.Recall, g.Pairs.F1)
		if g.Clusters != nil {
			fmt.Fprintf(io.Out, "  ARI %.4f", g.Clusters.ARI)
		}
		fmt.Fprintln(io.Out)
	}
	return nil
}

// openIndexSignatures is dedup's Options.OpenIndex: an index directory given
// to --against is read through package index.
func openIndexSignatures(path string, spec shingle.Spec) (jobspec.StoredSignatures, error) {
	s, err := index.OpenSignatures(path, spec)
	if err != nil {
		return nil, err
	}
	return s, nil
}
