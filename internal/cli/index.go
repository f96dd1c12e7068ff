package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/progress"
	"github.com/neardup/neardup/lsh"
)

// indexFlags say which index to open (Pebble in --data, or Redis) and, for a
// new index, how to make it. Sketch flags given on the command line must
// match an existing index; left out, they take its stored values.
type indexFlags struct {
	data         string
	redis        string
	redisCluster bool
	redisPrefix  string
	threshold    float64
	recall       float64
	bands, rows  int
	probe        int
	bucketCap    int
	cacheSize    string
	sketch       sketchFlags
}

func (f *indexFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.data, "data", "", "index directory (Pebble); created if missing")
	fs.StringVar(&f.redis, "redis", "", "use a shared index on Redis at these comma-separated addresses instead of --data (password from $NEARDUP_REDIS_PASSWORD)")
	fs.BoolVar(&f.redisCluster, "redis-cluster", false, "the Redis addresses are a cluster (implied by several addresses)")
	fs.StringVar(&f.redisPrefix, "redis-prefix", index.DefaultRedisPrefix, "prefix of the index's Redis keys")
	fs.Float64Var(&f.threshold, "threshold", 0, "default query threshold; for a new index also the threshold its bands are chosen for (default 0.8, or the stored one)")
	fs.Float64Var(&f.recall, "recall", index.DefaultRecall, "for a new index: probability that a pair at the threshold shares a bucket")
	fs.IntVar(&f.bands, "bands", 0, "LSH bands of a new index (with --rows; default: chosen from --threshold and --recall)")
	fs.IntVar(&f.rows, "rows", 0, "LSH rows per band of a new index (with --bands)")
	fs.IntVar(&f.probe, "multi-probe", 0, "multi-probe level of a new index (0, 1 or 2)")
	fs.IntVar(&f.bucketCap, "bucket-cap", 0, "most documents per bucket; postings past it are dropped and counted (default 1000, or the stored one; -1 unlimited)")
	fs.StringVar(&f.cacheSize, "cache-size", "256MiB", "Pebble block cache")
	f.sketch.AddFlags(fs)
}

// options builds index.Options from the flags set on the command line.
func (f *indexFlags) options(fs *pflag.FlagSet) (index.Options, error) {
	var o index.Options
	changed := func(names ...string) bool {
		for _, n := range names {
			if fs.Changed(n) {
				return true
			}
		}
		return false
	}
	spec, params, err := f.sketch.build()
	if err != nil {
		return o, err
	}
	if changed("shingle") {
		o.Spec = spec
	}
	if changed("scheme", "num-perm", "bits", "seed") {
		o.Params = params
	}
	if (f.bands > 0) != (f.rows > 0) {
		return o, usagef("--bands and --rows go together")
	}
	if f.bands > 0 {
		o.Bands = lsh.Params{Bands: f.bands, Rows: f.rows, Probe: f.probe}
	} else if f.probe > 0 {
		k := params.K
		t := f.threshold
		if t == 0 {
			t = index.DefaultThreshold
		}
		b, err := lsh.ForRecall(t, k, f.recall)
		if err != nil {
			return o, usageError{err}
		}
		b.Probe = f.probe
		o.Bands = b
	}
	o.Threshold, o.Recall, o.BucketCap = f.threshold, f.recall, f.bucketCap
	cache, err := dedup.ParseBytes(f.cacheSize)
	if err != nil {
		return o, usageError{err}
	}
	o.CacheSize = cache
	if err := o.Validate(); err != nil {
		return o, usageError{err}
	}
	return o, nil
}

// open opens the index the flags name.
func (f *indexFlags) open(ctx context.Context, fs *pflag.FlagSet) (index.Index, error) {
	o, err := f.options(fs)
	if err != nil {
		return nil, err
	}
	switch {
	case f.data != "" && f.redis != "":
		return nil, usagef("--data and --redis exclude each other")
	case f.redis != "":
		ro := &index.RedisOptions{Options: o, Addrs: strings.Split(f.redis, ","), Cluster: f.redisCluster,
			Prefix: f.redisPrefix, Password: os.Getenv("NEARDUP_REDIS_PASSWORD")}
		return index.OpenRedis(ctx, ro)
	case f.data != "":
		return index.Open(f.data, &o)
	}
	return nil, usagef("--data DIR (or --redis ADDRS) is required")
}

func newIndexCmd(io IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Build and inspect a persistent near-duplicate index",
		Long: `index manages the persistent index that neardup serve answers from: a Pebble
directory holding every document's signature, its LSH band postings and the
spec and params fingerprints it was made with.`,
	}
	cmd.AddCommand(newIndexBuildCmd(io), newIndexStatsCmd(io), newIndexCheckCmd(io))
	for _, c := range cmd.Commands() {
		c.SetUsageTemplate(c.UsageTemplate() + exitStatusHelp)
		c.Args = wrapArgs(c.Args)
	}
	return cmd
}

type indexBuildOptions struct {
	index   indexFlags
	corpus  corpusFlags
	memory  string
	workers int
	quiet   bool
}

func (o *indexBuildOptions) AddFlags(fs *pflag.FlagSet) {
	o.index.AddFlags(fs)
	o.corpus.AddFlags(fs)
	fs.StringVar(&o.memory, "memory", "512MiB", "memory budget for sorting ids and postings; past it they spill to disk")
	fs.IntVar(&o.workers, "workers", 0, "signing goroutines (default: all cores)")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no progress bar")
}

func newIndexBuildCmd(io IO) *cobra.Command {
	o := &indexBuildOptions{}
	cmd := &cobra.Command{
		Use:   "build --data DIR [flags] INPUT...",
		Short: "Bulk-load a corpus into a new index",
		Long: `build reads JSONL, Parquet or text corpora (gzip/zstd by extension, - for stdin),
signs every document on all cores and writes the index's tables directly, sorted,
then ingests them: far faster than inserting one by one. The index must be new
or empty. Every document is stored (near duplicates too; use neardup dedup
first to drop them). Ids must be unique; texts without any shingle are skipped.`,
		Example: `  neardup index build --data idx testdata/articles_1000.jsonl
  neardup index build --data idx --bits 8 --threshold 0.85 crawl/*.jsonl.zst`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.index.data == "" {
				return usagef("--data DIR is required (bulk builds are for Pebble indexes)")
			}
			iopts, err := o.index.options(cmd.Flags())
			if err != nil {
				return err
			}
			copts, err := o.corpus.build(io)
			if err != nil {
				return err
			}
			mem, err := dedup.ParseBytes(o.memory)
			if err != nil {
				return usageError{err}
			}
			bopts := &index.BuildOptions{Memory: mem}
			if err := bopts.Validate(); err != nil {
				return usageError{err}
			}
			return runIndexBuild(cmd.Context(), io, o, args, &iopts, &copts, bopts)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func runIndexBuild(ctx context.Context, stdio IO, o *indexBuildOptions, inputs []string, iopts *index.Options, copts *corpus.Options, bopts *index.BuildOptions) error {
	iopts.NoSync = true // the build syncs its tables; nothing else is written
	if copts.Stdin == nil {
		copts.Stdin = stdio.In
	}
	db, err := index.Open(o.index.data, iopts)
	if err != nil {
		return err
	}
	defer db.Close()
	var bar *progress.Bar
	if !o.quiet && stdio.ErrIsTerminal {
		bar = progress.New(stdio.Err)
	}
	var read int64
	bar.Stage("index", 0, func() int64 { return read })
	var lastDocs, lastBytes int64
	st, err := db.BuildFromCorpus(ctx, inputs, copts, bopts, o.workers, func(records, bytes int64) {
		bar.Add(records-lastDocs, bytes-lastBytes)
		lastDocs, lastBytes, read = records, bytes, bytes
	})
	bar.Finish()
	if err != nil {
		return err
	}
	if err := db.Flush(ctx, false); err != nil {
		return err
	}
	ist, err := db.Stats(ctx)
	if err != nil {
		return err
	}
	rate := float64(st.Documents) / st.Seconds
	perDoc := 0.0
	if ist.Documents > 0 {
		perDoc = float64(ist.Bytes) / float64(ist.Documents)
	}
	fmt.Fprintf(stdio.Out, "indexed %d documents (%d without shingles skipped, %d bad) in %.2fs: %.0f documents/s\n",
		st.Documents, st.Empty, st.Bad, st.Seconds, rate)
	fmt.Fprintf(stdio.Out, "postings %d packed in %d values (%d dropped at full buckets), %d tables; index %s: %d bytes, %.0f bytes/document\n",
		st.Postings, st.PackedGroups, st.DroppedPostings, st.Tables, o.index.data, ist.Bytes, perDoc)
	fmt.Fprintf(stdio.Out, "%s\n", db.Config())
	return nil
}

type indexStatsOptions struct {
	index indexFlags
}

func newIndexStatsCmd(io IO) *cobra.Command {
	o := &indexStatsOptions{}
	cmd := &cobra.Command{
		Use:   "stats --data DIR",
		Short: "Print an index's configuration and size as JSON",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			x, err := o.index.open(cmd.Context(), cmd.Flags())
			if err != nil {
				return err
			}
			defer x.Close()
			st, err := x.Stats(cmd.Context())
			if err != nil {
				return err
			}
			c := x.Config()
			out := map[string]any{
				"spec": c.Spec.String(), "spec_fingerprint": fmt.Sprintf("%016x", c.Spec.Fingerprint()),
				"params": c.Params.String(), "params_fingerprint": fmt.Sprintf("%016x", c.Params.Fingerprint()),
				"bands": c.Bands.Bands, "rows": c.Bands.Rows, "multi_probe": c.Bands.Probe,
				"threshold": c.Threshold, "bucket_cap": c.BucketCap,
				"documents": st.Documents, "bytes": st.Bytes,
			}
			if st.Documents > 0 {
				out["bytes_per_document"] = float64(st.Bytes) / float64(st.Documents)
			}
			enc := json.NewEncoder(io.Out)
			enc.SetIndent("", "  ")
			return enc.Encode(out)
		},
	}
	o.index.AddFlags(cmd.Flags())
	return cmd
}

type indexCheckOptions struct {
	index indexFlags
}

func newIndexCheckCmd(io IO) *cobra.Command {
	o := &indexCheckOptions{}
	cmd := &cobra.Command{
		Use:   "check --data DIR",
		Short: "Verify that an index's postings and signatures agree",
		Long: `check reads the whole index and verifies that every id has its record, every
record its postings (bar those dropped at full buckets), and every posting a
record with that bucket key. Exit status 1 if anything is wrong. Run it on a
Redis index only while no writer is active.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			x, err := o.index.open(cmd.Context(), cmd.Flags())
			if err != nil {
				return err
			}
			defer x.Close()
			start := time.Now()
			rep, err := x.Check(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprintf(io.Out, "%s\nchecked in %.2fs\n", rep, time.Since(start).Seconds())
			if !rep.OK() {
				return fmt.Errorf("index check found %d problems", rep.ProblemCount)
			}
			return nil
		},
	}
	o.index.AddFlags(cmd.Flags())
	return cmd
}
