package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/internal/atomicfile"
	"github.com/neardup/neardup/internal/bytesize"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/sigfile"
	"github.com/neardup/neardup/tune"
)

type tuneOptions struct {
	signatures string
	truth      string
	threshold  float64
	bands      string
	probe      int
	recall     float64
	precision  float64
	bucketCap  int
	bandWidth  float64
	memory     string
	tmpDir     string
	workers    int
	json       string
}

func (o *tuneOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.signatures, "signatures", "", "signature file from neardup sign, a directory of shards or a glob (required)")
	fs.StringVar(&o.truth, "truth", "", "truth pairs: a file from eval truth, a pairs.tsv, or idA idB lines such as the articles .truth (required)")
	fs.Float64Var(&o.threshold, "threshold", tune.DefaultThreshold, "Jaccard similarity at or above which a pair is a near duplicate, 0 < t < 1")
	fs.StringVar(&o.bands, "bands", "", "bandings to compare, BxR[/pM],... such as 16x6,20x5 (default: the frontier for the signatures' k)")
	fs.IntVar(&o.probe, "multi-probe", 0, "multi-probe level of the bandings without their own /pM (0, 1 or 2)")
	fs.Float64Var(&o.recall, "recall", 0, "recall target at J >= threshold, 0..1; marks the bandings that meet it (0: none)")
	fs.Float64Var(&o.precision, "precision", 0, "precision target before verification, 0..1; marks the bandings that meet it (0: none)")
	fs.IntVar(&o.bucketCap, "bucket-cap", lsh.DefaultCap, "largest bucket paired in full; larger ones link to one member (as dedup)")
	fs.Float64Var(&o.bandWidth, "band-width", eval.DefaultBandWidth, "width of the similarity bands recall is broken down by, 0 < w <= 1")
	fs.StringVar(&o.memory, "memory", "4GiB", "memory budget for band-key entries and candidate pairs; past it, runs spill to disk")
	fs.StringVar(&o.tmpDir, "tmp-dir", "", "directory for spill files (default: the system temporary directory)")
	fs.IntVar(&o.workers, "workers", 0, "worker goroutines (default: all cores)")
	fs.StringVar(&o.json, "json", "", "also write the result as JSON to this file (written atomically), - for standard output instead of the table")
}

func (o *tuneOptions) build() (*tune.Options, error) {
	if o.signatures == "" || o.truth == "" {
		return nil, usagef("--signatures and --truth are required")
	}
	opts := &tune.Options{Threshold: o.threshold, Probe: o.probe, Recall: o.recall, Precision: o.precision,
		BucketCap: o.bucketCap, BandWidth: o.bandWidth, TempDir: o.tmpDir, Workers: o.workers}
	// Zero is "the default" to the library; on the command line it is a
	// value out of range.
	switch {
	case !(o.threshold > 0 && o.threshold < 1):
		return nil, usagef("--threshold %v; want 0 < t < 1", o.threshold)
	case !(o.bandWidth > 0 && o.bandWidth <= 1):
		return nil, usagef("--band-width %v; want 0 < w <= 1", o.bandWidth)
	case o.bucketCap < 2 || o.bucketCap > lsh.MaxCap:
		return nil, usagef("--bucket-cap %d; want 2..%d", o.bucketCap, lsh.MaxCap)
	case o.workers < 0:
		return nil, usagef("--workers %d; want 0 (all cores) or more", o.workers)
	}
	if o.bands != "" {
		b, err := tune.ParseBandings(o.bands, o.probe)
		if err != nil {
			return nil, usageError{err}
		}
		opts.Bandings = b
	}
	var err error
	if opts.Memory, err = bytesize.Parse(o.memory); err != nil {
		return nil, usageError{err}
	}
	if opts.Memory < tune.MinMemory {
		return nil, usagef("--memory %s; want at least 16MiB", o.memory)
	}
	if err := opts.Validate(); err != nil {
		return nil, usageError{err}
	}
	return opts, nil
}

func newTuneCmd(io IO) *cobra.Command {
	o := &tuneOptions{}
	cmd := &cobra.Command{
		Use:   "tune --signatures SIGS --truth TRUTH [--threshold T] [--bands 16x6,20x5,...] [flags]",
		Short: "Compare LSH bandings on stored signatures and a golden set, without re-signing",
		Long: `tune reads the signatures neardup sign wrote and a truth file, and for several
bandings measures, in one pass over the signatures and without any text:

  candidates     the distinct pairs sharing a band key, as dedup finds them
                 (same keys, bucket cap, documents without features left out)
  recall         the truth pairs at J >= threshold among the candidates, overall
                 and per similarity band, beside the S-curve's prediction
  precision      truth pairs among the candidates, before verification (exact
                 only when the truth lists every pair at J >= threshold, as
                 eval truth writes it; over a labelled sample, a lower bound)
  memory         the band index: postings times the bytes dedup's runs and a
                 packed index take per posting

The default bandings are the frontier for the signatures' k: for recall levels
0.5 … 0.999 at the threshold (and --recall), the banding dedup --recall R
would run. With exact verification, dedup keeps every candidate at or above
the threshold, so the recall here is what eval score measures on dedup's
pairs.tsv with that banding. The table goes to standard output; --json FILE
writes every figure as well.`,
		Example: `  neardup sign -o sigs.ndsf corpus.jsonl
  neardup eval truth --threshold 0.5 -o truth.tsv corpus.jsonl
  neardup tune --signatures sigs.ndsf --truth truth.tsv --threshold 0.8 --recall 0.95
  neardup tune --signatures sigs.ndsf --truth truth.tsv --bands 16x6,20x5,9x13/p1 --json tune.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := o.build()
			if err != nil {
				return err
			}
			return runTune(cmd.Context(), io, o, opts)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func runTune(ctx context.Context, stdio IO, o *tuneOptions, opts *tune.Options) error {
	start := time.Now()
	f, err := os.Open(o.truth)
	if err != nil {
		return err
	}
	truth, err := eval.ReadPairFile(bufio.NewReaderSize(f, 1<<20), o.truth)
	f.Close()
	if err != nil {
		return err
	}
	sigs, err := sigfile.Open(o.signatures, nil)
	if err != nil {
		return err
	}
	defer sigs.Close()
	res, err := tune.Run(ctx, sigs, truth, opts)
	if errors.Is(err, tune.ErrInvalidOptions) {
		return usageError{err} // a banding the signatures' k cannot hold
	}
	if err != nil {
		return err
	}
	res.Signatures, res.Truth = o.signatures, o.truth
	if o.json != "" {
		data, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		data = append(data, '\n')
		if o.json == "-" {
			_, err = stdio.Out.Write(data)
			return err
		}
		if err := writeTuneJSON(o.json, data); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprint(stdio.Out, res.String()); err != nil {
		return err
	}
	fmt.Fprintf(stdio.Err, "tuned %d bandings over %d documents in %.2fs\n", len(res.Bandings), res.Documents, time.Since(start).Seconds())
	return nil
}

// writeTuneJSON writes data to path under a temporary name in its
// directory and renames it on success.
func writeTuneJSON(path string, data []byte) error {
	f, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Commit()
}
