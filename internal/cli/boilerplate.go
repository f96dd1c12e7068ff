package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/atomicfile"
	"github.com/neardup/neardup/internal/boilerplate"
	"github.com/neardup/neardup/internal/bytesize"
	"github.com/neardup/neardup/internal/jobflags"
	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/shingle"
)

// boilerplateFlags are --boilerplate and --boilerplate-lines
// (jobflags.Boilerplate) for the commands that sign or shingle a corpus
// besides dedup (sign, eval truth, index build); bad values are usage
// errors.
type boilerplateFlags struct{ jobflags.Boilerplate }

// apply returns spec with the boilerplate set the flags ask for — the lines
// of --boilerplate-lines, or those a first pass over inputs counts (within
// the memory budget, on workers goroutines) — and what was found (nil when
// the flags are off). Standard input is spooled so that it can be read
// twice: the returned inputs name the spool file instead of "-", and
// cleanup removes it.
func (f *boilerplateFlags) apply(ctx context.Context, stdio IO, inputs []string, copts *corpus.Options, spec shingle.Spec, memory int64, workers int) (shingle.Spec, []string, func(), *boilerplate.Result, error) {
	cleanup := func() {}
	mode, lines, err := f.Parse()
	if err != nil {
		return spec, inputs, cleanup, nil, usageError{err}
	}
	o := jobspec.Options{Spec: spec, Boilerplate: mode, BoilerplateLines: lines, Corpus: *copts, Memory: memory, Workers: workers}
	if !o.DropsBoilerplate() {
		return spec, inputs, cleanup, nil, nil
	}
	if lines == "" && len(inputs) == 0 {
		return spec, inputs, cleanup, nil, usagef("--boilerplate %s counts the lines of the inputs: give some, or --boilerplate-lines", f.Mode)
	}
	if i := slices.Index(inputs, "-"); i >= 0 && lines == "" {
		stdin := copts.Stdin
		if stdin == nil {
			stdin = stdio.In
		}
		path, rm, err := corpus.Spool(stdin, "")
		if err != nil {
			return spec, inputs, cleanup, nil, err
		}
		cleanup = func() { rm() }
		inputs = slices.Clone(inputs)
		inputs[i] = path
	}
	job := jobspec.Job{}
	job.Sketch.Spec = spec
	res, err := o.ResolveBoilerplate(ctx, inputs, &job)
	if err != nil {
		cleanup()
		return spec, inputs, func() {}, nil, err
	}
	return job.Sketch.Spec, inputs, cleanup, res, nil
}

// describeBoilerplate writes one line on what a boilerplate pass found.
func describeBoilerplate(w io.Writer, res *boilerplate.Result) {
	if res != nil {
		fmt.Fprintf(w, "boilerplate: %d lines dropped (in %d (document, line) pairs); %s\n", res.Lines, res.Dropped, res.Reason)
	}
}

type boilerplateOptions struct {
	out     string
	minDocs string
	memory  string
	workers int
	shingle string
	corpus  corpusFlags
}

func (o *boilerplateOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.out, "out", "o", "", "lines file to write (boilerplate.tsv), - for standard output (required)")
	fs.StringVar(&o.minDocs, "min-docs", "auto", "N: lines in at least N documents are boilerplate, or auto (chosen from the corpus)")
	fs.StringVar(&o.memory, "memory", "1GiB", "memory budget for counting; past it, line hashes spill to disk")
	fs.IntVar(&o.workers, "workers", 0, "worker goroutines (default: all cores)")
	fs.StringVar(&o.shingle, "shingle", "prose", "shingling spec the lines are normalised and hashed under, as for dedup: the job that drops them must use the same")
	o.corpus.AddFlags(fs)
}

func newBoilerplateCmd(stdio IO) *cobra.Command {
	o := &boilerplateOptions{}
	cmd := &cobra.Command{
		Use:   "boilerplate [flags] INPUT... -o lines.tsv",
		Short: "Find the lines many documents share, for --boilerplate-lines",
		Long: `boilerplate reads corpora as dedup does and counts, exactly and within --memory,
in how many documents each line occurs once normalised under --shingle (so
"Home | News" and "home news" are one line). The lines in at least N documents
(N given, or chosen where the counts depart from the tail of unique lines)
are boilerplate: navigation, banners, footers. It writes them as a lines
file, which dedup, sign, eval truth, index build and neardup-beam take with
--boilerplate-lines to drop them before shingling (dedup --boilerplate counts
and writes the same file itself, as boilerplate.tsv), and prints N, why, and
the most frequent lines.`,
		Example: `  neardup boilerplate -o lines.tsv crawl/*.warc.gz
  neardup boilerplate --min-docs 50 --shingle web -o lines.tsv pages.jsonl
  neardup-beam --boilerplate-lines lines.tsv ... gs://bucket/crawl/*.warc.gz`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.out == "" {
				return usagef("--out is required")
			}
			mode, err := jobspec.ParseBoilerplate(o.minDocs)
			if err != nil || mode == jobspec.BoilerplateOff {
				return usagef("--min-docs %q; want auto or a number of documents, at least 2", o.minDocs)
			}
			spec, err := shingle.Parse(o.shingle)
			if err != nil {
				return usageError{fmt.Errorf("--shingle %s: %w", o.shingle, err)}
			}
			mem, err := bytesize.Parse(o.memory)
			if err != nil || mem < 1<<20 {
				return usagef("--memory %q; want a size of at least 1MiB", o.memory)
			}
			copts, err := o.corpus.build(stdio)
			if err != nil {
				return err
			}
			f := boilerplateFlags{jobflags.Boilerplate{Mode: mode.String()}}
			_, _, cleanup, res, err := f.apply(cmd.Context(), stdio, args, &copts, spec, mem, o.workers)
			if err != nil {
				return err
			}
			defer cleanup()
			return writeBoilerplate(stdio, o, spec, res)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// writeBoilerplate writes the lines file (atomically, or to standard output)
// and prints the summary.
func writeBoilerplate(stdio IO, o *boilerplateOptions, spec shingle.Spec, res *boilerplate.Result) error {
	if o.out == "-" {
		if err := boilerplate.WriteLines(stdio.Out, spec, res); err != nil {
			return err
		}
	} else {
		f, err := atomicfile.Create(o.out)
		if err != nil {
			return err
		}
		defer f.Abort()
		w := bufio.NewWriter(f)
		if err := boilerplate.WriteLines(w, spec, res); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if err := f.Commit(); err != nil {
			return err
		}
	}
	w := stdio.Out
	if o.out == "-" {
		w = stdio.Err
	}
	fmt.Fprintf(w, "%d documents, %d distinct lines; %s\n", res.Documents, res.Distinct, res.Reason)
	for _, l := range res.Top {
		fmt.Fprintf(w, "%10d  %s\n", l.Docs, l.Text)
	}
	return nil
}
