// Command neardup-beam runs neardup's batch deduplication as Apache Beam
// pipelines: locally on the Prism runner (the default, in-process), or on
// Flink, Spark or Google Cloud Dataflow for corpora larger than one machine.
// It takes the flags of "neardup dedup" and writes the same outputs.
//
// Usage:
//
//	neardup-beam [flags] INPUT...
//
// See beam/README.md for the runners, and "neardup-beam --help" for the
// flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx" // registers every runner and the gs:// filesystem
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/beam/internal/tmpdir"
	"github.com/neardup/neardup/beam/job"
	"github.com/neardup/neardup/internal/jobflags"
)

func main() {
	if workerMode(os.Args[1:]) {
		// Started by a runner as an SDK worker: Beam's own flags only.
		flag.Parse()
		beam.Init() // runs the worker harness and exits
		return
	}
	// Beam leaves an empty file in the temporary directory for every
	// pipeline it runs in loopback mode (see package tmpdir).
	cleanup, err := tmpdir.Private("neardup-beam-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "neardup-beam:", err)
		os.Exit(exitFailure)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	cleanup()
	os.Exit(code)
}

// workerMode reports whether the arguments are a Beam worker's (--worker).
func workerMode(args []string) bool {
	for _, a := range args {
		name, val, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "worker" && val != "false" {
			return true
		}
	}
	return false
}

// Exit codes, as neardup's.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitInterrupted = 130
)

type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

const exitStatusHelp = `
EXIT STATUS
  0    success
  1    the work failed (bad input data, I/O errors, a failed pipeline)
  2    bad flags or arguments
  130  interrupted
`

// options are neardup dedup's flags (the one flag set, jobflags.Dedup) and
// the Beam job's own.
type options struct {
	dedup      jobflags.Dedup
	singleFile bool
	shardLines int
	rounds     int
	partitions int
	verbose    bool
}

func (o *options) AddFlags(fs *pflag.FlagSet) {
	o.dedup.AddFlags(fs)
	// The same flags; where the Beam job reads them differently, say so.
	fs.Lookup("tmp-dir").Usage = "directory for the state between pipelines, reachable by every worker and by this process (local or gs://; default: a new local temporary directory)"
	fs.Lookup("workers").Usage = "not used: the runner sizes its workers (reported only)"
	fs.Lookup("memory").Usage = "memory limit of this process (the Go garbage collector's, as neardup dedup sets it), which holds the workers of a local run (Prism in-process, --environment_type=LOOPBACK; there GOGC defaults to 50), at least 16MiB; a runner's remote workers are sized by the runner"
	fs.Lookup("quiet").Usage = "do not log each pipeline's run time"
	fs.Lookup("against").Usage = "not supported: deduplicate against reference documents with neardup dedup --against"
	fs.Lookup("signatures").Usage = "not supported: use stored signatures of the inputs with neardup dedup --signatures"
	fs.Lookup("signatures-out").Usage = "also write the inputs' signatures into this directory, one shard per input file (local or gs://; read them with sigfile.Open or --against)"
	fs.Lookup("boilerplate").Usage = "not supported (counting is a pass on one machine): write the lines with neardup boilerplate, or take a neardup dedup run's boilerplate.tsv, and give --boilerplate-lines"
	fs.Lookup("boilerplate-lines").Usage = "drop the lines of this file (local or gs://; from neardup boilerplate, or a neardup dedup run's boilerplate.tsv) before shingling"
	fs.Lookup("exact-pass").Usage = "not used: the Beam job signs every document (the outputs are those of neardup dedup with or without the pass)"
	fs.BoolVar(&o.singleFile, "single-file", false, "write kept.jsonl, clusters.jsonl and pairs.tsv as single files (one worker each) instead of shards")
	fs.IntVar(&o.shardLines, "shard-lines", job.DefaultShardLines, "lines per pairs.tsv shard, at least 1")
	fs.IntVar(&o.partitions, "partitions", 0, fmt.Sprintf("partitions of the band-key space, a power of two up to %d (default: one per 64 MiB of input)", job.MaxPartitions))
	fs.IntVar(&o.rounds, "cc-rounds", job.DefaultRounds, fmt.Sprintf("connected-components rounds per pipeline, 1 to %d (pipelines repeat until a fixed point)", job.MaxRounds))
	fs.BoolVarP(&o.verbose, "verbose", "v", false, "log the runner's messages (info level)")
}

// workerFlags are Beam's flags for a binary started as a worker, not for users.
var workerFlags = map[string]bool{"worker": true, "id": true, "logging_endpoint": true, "control_endpoint": true,
	"semi_persist_dir": true, "options": true, "status_endpoint": true}

// addBeamFlags adds Beam's runner flags (--runner, --endpoint,
// --environment_type, --project, --region, --staging_location, …), which keep
// their names, to fs, hidden from the flag list, and returns their usage for
// a section of their own.
func addBeamFlags(fs *pflag.FlagSet) string {
	beamFS := pflag.NewFlagSet("beam", pflag.ContinueOnError)
	flag.CommandLine.VisitAll(func(f *flag.Flag) {
		if !strings.HasPrefix(f.Name, "test.") && fs.Lookup(f.Name) == nil {
			beamFS.AddGoFlag(f)
		}
	})
	var usage strings.Builder
	beamFS.VisitAll(func(f *pflag.Flag) {
		if workerFlags[f.Name] {
			f.Hidden = true
		}
	})
	usage.WriteString(beamFS.FlagUsagesWrapped(110))
	beamFS.VisitAll(func(f *pflag.Flag) { f.Hidden = true })
	fs.AddFlagSet(beamFS)
	return usage.String()
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	o := &options{}
	o.dedup.Sketch.Key.Warn = stderr
	cmd := &cobra.Command{
		Use:   "neardup-beam [flags] INPUT...",
		Short: "Find near-duplicate documents with Apache Beam and keep one per cluster",
		Long: `neardup-beam runs neardup dedup as Apache Beam pipelines: on the Prism runner
in-process by default, or on Flink, Spark or Dataflow (--runner, --endpoint,
--environment_type; see beam/README.md). Inputs are JSONL, Parquet or text files,
gzip/zstd by extension, local or gs://; a pattern (shards/*.jsonl.gz) expands to
one split per file. It writes, into --out (local or gs://):

  kept-SSSSS-of-NNNNN.jsonl      the input records of the kept documents, one shard per input file
  clusters-SSSSS-of-NNNNN.jsonl  one cluster a line, by the input file of its first member
  pairs-SSSSS-of-NNNNN.tsv       one verified pair a line, in ranges of the sorted order
  report.json                    counts, configuration, histograms, timings

Shards read in order are the files neardup dedup writes; --single-file writes
those files (kept.jsonl, clusters.jsonl, pairs.tsv) instead. --workers is
accepted for compatibility and only reported; --memory limits this process,
and so the workers of a local run; --tmp-dir holds the state between pipelines
and must be reachable by every worker.`,
		Example: `  neardup-beam --single-file -o out testdata/articles_1000.jsonl
  neardup-beam -o out 'shards/*.jsonl.gz'
  neardup-beam --runner=flink --endpoint=localhost:8099 --environment_type=LOOPBACK -o out 'shards/*.jsonl.gz'`,
		Args:          cobra.MinimumNArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd.Context(), o, args, stdout, stderr)
		},
	}
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	o.AddFlags(cmd.Flags())
	beamUsage := addBeamFlags(cmd.Flags())
	args := cmd.Args
	cmd.Args = func(c *cobra.Command, a []string) error {
		if err := args(c, a); err != nil {
			return usageError{err}
		}
		return nil
	}
	cmd.SetUsageTemplate(cmd.UsageTemplate() + "\nBeam runner flags (Go flag names; see beam/README.md):\n" + beamUsage + exitStatusHelp)
	return cmd
}

// check refuses the Beam job's own flags out of range (their zero values
// included, which job.Options would read as defaults).
func (o *options) check() error {
	if err := job.CheckShardLines(o.shardLines); err != nil {
		return fmt.Errorf("--shard-lines %d: %w", o.shardLines, err)
	}
	if o.partitions != 0 {
		if err := job.CheckPartitions(o.partitions); err != nil {
			return fmt.Errorf("--partitions %d: %w", o.partitions, err)
		}
	}
	if err := job.CheckRounds(o.rounds); err != nil {
		return fmt.Errorf("--cc-rounds %d: %w", o.rounds, err)
	}
	return nil
}

// setMemoryLimit is debug.SetMemoryLimit, setGCPercent debug.SetGCPercent
// and getenv os.Getenv; tests replace them.
var (
	setMemoryLimit = debug.SetMemoryLimit
	setGCPercent   = debug.SetGCPercent
	getenv         = os.Getenv
)

// localGCPercent is the garbage collector's target (GOGC) of a local run,
// unless GOGC is set: the heap may grow by half its live size between
// collections instead of doubling. A local run's process holds the runner
// (Prism keeps every stage's input and output in its heap, several copies
// of a stage's bundle) and the workers, so its peak is mostly that
// headroom: on the licence corpus of BENCHMARKS.md it peaks about 30 MiB
// lower, for about 0.6 s more of collection (what batching the candidate
// shuffle saved).
const localGCPercent = 50

// localRun reports whether this process runs the pipelines' workers: the
// Prism runner in-process (the default: no --runner or --runner=prism,
// no --endpoint), the direct runner, or a LOOPBACK environment.
func localRun() bool {
	switch *runners.Runner {
	case "", "prism", "direct":
		if *jobopts.Endpoint == "" {
			return true
		}
	}
	return jobopts.IsLoopback()
}

func run(ctx context.Context, o *options, inputs []string, stdout, stderr io.Writer) error {
	opts, err := o.dedup.Options(nil) // standard input is refused: workers cannot read it
	if err != nil {
		return usageError{err}
	}
	if err := o.check(); err != nil {
		return usageError{err}
	}
	if err := job.Supported(opts); err != nil {
		return usageError{err}
	}
	if *jobopts.Async {
		return usageError{errors.New("--async is not supported: the job runs several pipelines in turn")}
	}
	// Init sets up Beam's logging (slog, to standard error) at this level.
	beamlog.LogLevel = "warn"
	if o.verbose {
		beamlog.LogLevel = "info"
	}
	if !beam.Initialized() {
		beam.Init()
	}
	// A local run's workers are this process: keep its heap within the
	// budget, as neardup dedup does (never above a tighter GOMEMLIMIT).
	prior := setMemoryLimit(-1)
	setMemoryLimit(min(opts.Memory, prior))
	defer setMemoryLimit(prior)
	if localRun() && getenv("GOGC") == "" {
		defer setGCPercent(setGCPercent(localGCPercent))
	}
	jo := &job.Options{Dedup: opts, SingleFile: o.singleFile, ShardLines: o.shardLines, Rounds: o.rounds, Partitions: o.partitions,
		KeyFile: o.dedup.Sketch.Key.File, Run: func(ctx context.Context, p *beam.Pipeline) error { return beamx.Run(ctx, p) }}
	if !o.dedup.Quiet {
		jo.Log = stderr
	}
	rep, err := job.Run(ctx, inputs, o.dedup.Out, jo)
	if err != nil {
		return err
	}
	c := rep.Counts
	fmt.Fprintf(stdout, "documents %d (empty %d, bad %d)  candidates %d  verified pairs %d  clusters %d  removed %d  kept %d  in %.2fs\n",
		c.Documents, c.Empty, c.Bad, c.Candidates, c.VerifiedPairs, c.Clusters, c.Removed, c.Kept, rep.WallSeconds)
	fmt.Fprintf(stdout, "bands %d × %d rows: recall %.4f at J = %.2f; outputs in %s\n",
		rep.Config.Bands, rep.Config.Rows, rep.ExpectedRecall, rep.Config.Threshold, o.dedup.Out)
	return nil
}

// Main runs the command line args and returns the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "neardup-beam:", err)
	var u usageError
	switch {
	case errors.As(err, &u):
		return exitUsage
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	}
	return exitFailure
}
