package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/bytesize"
	"github.com/neardup/neardup/internal/indexload"
	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/internal/progress"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
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
	expectedDocs int64
	cacheSize    string
	sketch       sketchFlags
	logger       *slog.Logger // for the index's reports (serve's log); nil: the default
}

func (f *indexFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.data, "data", "", "index directory (Pebble), made by neardup index build")
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
	fs.Int64Var(&f.expectedDocs, "expected-docs", 0, "with --sketch simhash, for a new index: the documents it is expected to hold; its blocks are chosen for them as dedup chooses, so that buckets stay under --bucket-cap (default for index build: the documents a first pass over INPUT counted, under --weight tfidf or --boilerplate; else hamming+1 blocks, the fewest postings)")
	f.sketch.AddFlags(fs)
	// An index's postings are its tables: its default distance is the
	// index's (4 tables), not dedup's.
	f.sketch.Hamming = index.DefaultHamming
	fs.Lookup("hamming").DefValue = strconv.Itoa(index.DefaultHamming)
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
	if changed("shingle") || f.sketch.Key.File != "" {
		o.Spec = spec // a keyed index needs its key, with the spec
	}
	kind, err := sketch.ParseKind(f.sketch.Kind)
	if err != nil {
		return o, usageError{fmt.Errorf("--sketch %s: %w", f.sketch.Kind, err)}
	}
	if kind == sketch.SimHash {
		_, sim, err := f.sketch.SimHash()
		if err != nil {
			return o, usageError{err}
		}
		if f.bands != 0 || f.rows != 0 || f.probe != 0 || changed("recall") {
			return o, usagef("--bands, --rows, --multi-probe and --recall are minhash's; a simhash index matches within --hamming bits")
		}
		o.Sketch = kind
		if changed("weight") {
			o.SimHash.Weight = sim.Weight
		}
		if changed("hamming") {
			o.SimHash.Hamming = sim.Hamming
		}
		if changed("blocks") {
			o.SimHash.Blocks = sim.Blocks
		}
		if changed("expected-docs") {
			if changed("blocks") {
				return o, usagef("--expected-docs chooses the blocks; give --blocks or --expected-docs, not both")
			}
			if f.expectedDocs < 1 {
				return o, usagef("--expected-docs %d; want at least 1", f.expectedDocs)
			}
			o.SimHash.ExpectedDocs = f.expectedDocs
		}
	} else {
		for _, n := range []string{"weight", "hamming", "blocks", "expected-docs"} {
			if changed(n) {
				return o, usagef("--%s: a simhash flag; add --sketch simhash (for an existing index, its stored sketch is used)", n)
			}
		}
	}
	if kind == sketch.MinHash && changed("scheme", "num-perm", "bits", "seed") {
		o.Params = params
	}
	if f.bands != 0 || f.rows != 0 || f.probe != 0 {
		t := f.threshold
		if t == 0 {
			t = index.DefaultThreshold
		}
		if o.Bands, err = sketch.Banding(f.bands, f.rows, f.probe, t, params.K, f.recall); err != nil {
			return o, usageError{err}
		}
	}
	o.Threshold, o.Recall, o.BucketCap = f.threshold, f.recall, f.bucketCap
	cache, err := bytesize.Parse(f.cacheSize)
	if err != nil {
		return o, usageError{err}
	}
	o.CacheSize = cache
	if err := o.Validate(); err != nil {
		return o, usageError{err}
	}
	return o, nil
}

// open opens the existing index the flags name (a Pebble index in --data
// must exist: only index build makes one).
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
		o.MustExist, o.Logger = true, f.logger
		return openData(f.data, &o)
	}
	return nil, usagef("--data DIR (or --redis ADDRS) is required")
}

// openData opens the Pebble index in dir, with errors that say what to do.
func openData(dir string, o *index.Options) (*index.DB, error) {
	db, err := index.Open(dir, o)
	if err != nil {
		return nil, dataError(dir, err)
	}
	return db, nil
}

// dataError rewords the errors of opening a Pebble index that a user meets
// (no index there, another process has it, a build did not finish); the
// index sentinel stays in the chain for errors.Is.
func dataError(dir string, err error) error {
	var msg string
	switch {
	case errors.Is(err, index.ErrNoIndex):
		msg = fmt.Sprintf("no index at %s (neardup index build --data %s makes one)", dir, dir)
	case errors.Is(err, index.ErrLocked):
		msg = fmt.Sprintf("index %s is locked by another process (is neardup serve running?)", dir)
	case errors.Is(err, index.ErrIncomplete):
		msg = fmt.Sprintf("index %s is incomplete: its bulk build did not finish (killed, or failed); build it again with neardup index build --data %s INPUT...", dir, dir)
	default:
		return err
	}
	return messageError{msg, err}
}

// cliLogger is the log of the index commands: the index's reports of
// storage faults (a damaged block, a failed write), one line each, on
// standard error.
func cliLogger(stdio IO) *slog.Logger {
	return slog.New(slog.NewTextHandler(stdio.Err, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// messageError is err with another message.
type messageError struct {
	msg string
	err error
}

func (e messageError) Error() string { return e.msg }
func (e messageError) Unwrap() error { return e.err }

func newIndexCmd(io IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Build and inspect a persistent near-duplicate index",
		Long: `index manages the persistent index that neardup serve answers from: a Pebble
directory holding every document's signature, its LSH band postings and the
spec and params fingerprints it was made with.`,
	}
	cmd.AddCommand(newIndexBuildCmd(io), newIndexRepackCmd(io), newIndexStatsCmd(io), newIndexCheckCmd(io), newIndexPromoteCmd(io), newIndexMigrateCmd(io))
	for _, c := range cmd.Commands() {
		c.SetUsageTemplate(c.UsageTemplate() + exitStatusHelp)
		c.Args = wrapArgs(c.Args)
	}
	return cmd
}

type indexBuildOptions struct {
	index      indexFlags
	corpus     corpusFlags
	bp         boilerplateFlags
	memory     string
	workers    int
	quiet      bool
	badOut     badOutFlag
	signatures []string
	append     bool
}

func (o *indexBuildOptions) AddFlags(fs *pflag.FlagSet) {
	o.index.AddFlags(fs)
	o.corpus.AddFlags(fs)
	o.bp.AddFlags(fs)
	o.badOut.AddFlags(fs)
	fs.StringVar(&o.memory, "memory", "512MiB", "memory budget for sorting ids and postings (an eighth for the check of repeated ids); past it they spill to disk")
	fs.IntVar(&o.workers, "workers", 0, "signing goroutines (default: all cores)")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no progress bar")
	fs.StringArrayVar(&o.signatures, "signatures", nil, "fill the index from signature files (neardup sign, --signatures-out: a file, a directory of shards or a glob) instead of INPUT; repeatable")
	fs.BoolVar(&o.append, "append", false, "add to an existing index, in durable batches, instead of requiring an empty one")
}

func newIndexBuildCmd(io IO) *cobra.Command {
	o := &indexBuildOptions{}
	o.index.sketch.Key.Warn = io.Err
	cmd := &cobra.Command{
		Use:   "build --data DIR [flags] [INPUT...]",
		Short: "Make an index, bulk-loading a corpus into it",
		Long: `build makes the index in --data (the only command that makes one). It reads
JSONL, Parquet or text corpora (gzip/zstd by extension, - for stdin), signs
every document on all cores and writes the index's tables directly, sorted,
then ingests them: far faster than inserting one by one. Without INPUT it makes
an empty index, for neardup serve to fill. The index must be new or empty,
unless --append. Every document is stored (near duplicates too; use neardup
dedup first to drop them). Ids must be unique: a repeated id fails the build
naming the file and line of both occurrences, or with --skip-bad the later
record is skipped as bad (and listed in --bad-out). Texts without any shingle
are skipped.

--signatures SIGS fills the index from signature files instead of texts
(neardup sign, neardup dedup or neardup-beam --signatures-out), signing
nothing: a new index takes their spec and params; an existing one must have
the same (the error names both). Records whose signature is that of a text
without shingles are skipped.

--append adds to an index that holds documents, from INPUT or --signatures,
with the service's durability: in batches, each written atomically and
fsynced before the next, so an interrupted append leaves a consistent index
holding the batches before it. A document whose id is already stored with
the same signature is skipped, so running the same append again completes an
interrupted one; with another signature it is an error. INPUT is checked for
repeated ids before anything is appended. Appended postings
are stored as the service's inserts are: neardup index repack packs them.
On a new or empty index --append is a bulk build. A new MinHash index has
8-byte bucket keys; --append keeps the width of the index it adds to (4 bytes
in one made before layout version 3: neardup index migrate widens it).

With --boilerplate (a first pass over the inputs counts the lines many
documents share) or --boilerplate-lines, those lines are dropped before
shingling, and the index stores their set: neardup serve drops them too.

The index is marked "build in progress" until the build is complete: an
interrupted build (the process killed, the disk full) leaves an index that
serve, index stats and index check refuse; build it again into the same
directory, which also removes the temporary files the killed build left in
DIR/build.tmp. A build that fails leaves no index where there was none.

With --sketch simhash the index stores one 64-bit SimHash fingerprint a
document (8 bytes) and C(blocks, hamming) block-permutation postings (4 by
default: --hamming 3, 4 blocks), and matches fingerprints within --hamming
bits; --weight tfidf counts the inputs' document frequencies first and
stores the table with the index. The sketch is stored: serve and the other
index commands read it from the index.`,
		Example: `  neardup index build --data idx testdata/articles_1000.jsonl
  neardup index build --data idx --bits 8 --threshold 0.85 crawl/*.jsonl.zst
  neardup index build --data idx --threshold 0.9    # empty, for serve to fill
  neardup index build --data idx --signatures archive.ndsf
  neardup index build --data idx --append --signatures week.ndsf
  neardup index build --data idx --sketch simhash --hamming 6 crawl/*.jsonl.zst`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.index.data == "" {
				return usagef("--data DIR is required (bulk builds are for Pebble indexes)")
			}
			if len(o.signatures) > 0 && len(args) > 0 {
				return usagef("--signatures and INPUT exclude each other: fill the index from one or the other")
			}
			iopts, err := o.index.options(cmd.Flags())
			if err != nil {
				return err
			}
			if len(o.signatures) > 0 && (cmd.Flags().Changed("boilerplate") || cmd.Flags().Changed("boilerplate-lines")) {
				return usagef("--signatures and --boilerplate/--boilerplate-lines exclude each other: the lines were dropped when the signatures were made, and their spec says so")
			}
			if len(o.signatures) > 0 {
				if err := signaturesSketch(&iopts, o.signatures[0], cmd.Flags()); err != nil {
					return err
				}
			}
			copts, err := o.corpus.build(io)
			if err != nil {
				return err
			}
			if err := o.badOut.check(copts.SkipBad); err != nil {
				return err
			}
			mem, err := bytesize.Parse(o.memory)
			if err != nil {
				return usageError{err}
			}
			bopts := &index.BuildOptions{Memory: mem}
			if err := bopts.Validate(); err != nil {
				return usageError{err}
			}
			// Boilerplate lines go into the spec, which the index stores
			// with its set: the service then drops the same lines.
			spec, _, err := o.index.sketch.build()
			if err != nil {
				return err
			}
			spec, args, cleanup, res, err := o.bp.apply(cmd.Context(), io, args, &copts, spec, mem, o.workers)
			if err != nil {
				return err
			}
			defer cleanup()
			if res != nil {
				iopts.Spec = spec
				describeBoilerplate(io.Out, res)
				expectCounted(&iopts, res.Documents)
			}
			return runIndexBuild(cmd.Context(), io, o, args, &iopts, &copts, bopts)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func runIndexBuild(ctx context.Context, stdio IO, o *indexBuildOptions, inputs []string, iopts *index.Options, copts *corpus.Options, bopts *index.BuildOptions) (err error) {
	iopts.NoSync = true // the build syncs its tables; nothing else is written
	iopts.ForBuild, iopts.Logger = true, cliLogger(stdio)
	if o.append {
		// Appended batches are synced as the service's writes are, and an
		// index whose bulk build did not finish is refused, not appended to.
		iopts.NoSync, iopts.ForBuild = false, false
	}
	if copts.Stdin == nil {
		copts.Stdin = stdio.In
	}
	if iopts.Sketch == sketch.SimHash && iopts.SimHash.Weight == sigfile.TFIDF {
		// The document frequencies of the corpus, stored with the index.
		if len(inputs) == 0 {
			return usagef("--weight tfidf: a TF-IDF index counts its document frequencies over the inputs; give INPUT")
		}
		var cleanup func()
		inputs, cleanup, err = spoolStdin(inputs, copts)
		defer cleanup()
		if err != nil {
			return err
		}
		spec := iopts.Spec
		if spec == (shingle.Spec{}) {
			spec = shingle.Prose
		}
		if iopts.SimHash.DF, err = jobspec.CountDF(ctx, inputs, copts, spec, o.workers); err != nil {
			return err
		}
		expectCounted(iopts, int64(iopts.SimHash.DF.Docs()))
	}
	dir := o.index.data
	if o.append {
		// A promoted index is kept only to roll back: what is appended
		// belongs in the index that replaced it.
		if err := refusePromoted(dir); err != nil {
			return err
		}
	}
	_, statErr := os.Stat(dir)
	made := errors.Is(statErr, fs.ErrNotExist) // this build makes dir
	db, err := openData(dir, iopts)
	if err != nil {
		if len(o.signatures) > 0 && (errors.Is(err, index.ErrSpecMismatch) || errors.Is(err, index.ErrParamsMismatch)) {
			return fmt.Errorf("--signatures %s made under %s (fingerprint %016x) and %s (%016x): %w",
				o.signatures[0], iopts.Spec, iopts.Spec.Fingerprint(), iopts.Params, iopts.Params.Fingerprint(), err)
		}
		return err
	}
	defer func() {
		db.Close()
		if err != nil && made {
			os.RemoveAll(dir) // a failed build leaves no index where there was none
		}
	}()
	var bar *progress.Bar
	if !o.quiet && stdio.ErrIsTerminal {
		bar = progress.New(stdio.Err)
	}
	bad, err := o.badOut.open(stdio)
	if err != nil {
		return err
	}
	defer bad.abort()
	var read int64
	bar.Stage("index", 0, func() int64 { return read })
	var lastDocs, lastBytes int64
	progressFn := func(records, bytes int64) {
		bar.Add(records-lastDocs, bytes-lastBytes)
		lastDocs, lastBytes, read = records, bytes, bytes
	}
	if o.append {
		ist, err := db.Stats(ctx)
		if err != nil {
			return err
		}
		if ist.Documents > 0 {
			lopts := &indexload.Options{Corpus: *copts, Build: *bopts, Workers: o.workers, Progress: progressFn}
			if bad != nil {
				lopts.BadLog = bad.log
			}
			ast, err := indexload.Append(ctx, db, inputs, o.signatures, lopts)
			bar.Finish()
			if err != nil {
				return fmt.Errorf("after %d documents appended in %d durable batches: %w", ast.Inserted, ast.Batches, err)
			}
			if err := bad.commit(); err != nil {
				return err
			}
			fmt.Fprintf(stdio.Out, "appended %d documents in %d durable batches (%d already present, %d without shingles skipped, %d bad); the index holds %d; neardup index repack packs their postings\n",
				ast.Inserted, ast.Batches, ast.Present, ast.Empty, ast.Bad, ist.Documents+ast.Inserted)
			fmt.Fprintf(stdio.Out, "%s\n", db.Config())
			return nil
		}
	}
	var st indexload.Stats
	lopts := &indexload.Options{Corpus: *copts, Build: *bopts, Workers: o.workers, Progress: progressFn}
	if bad != nil {
		lopts.BadLog = bad.log
	}
	if len(o.signatures) > 0 {
		st, err = indexload.BuildSignatures(ctx, db, o.signatures, lopts)
	} else if len(inputs) > 0 {
		st, err = indexload.Build(ctx, db, inputs, lopts)
	} else {
		st.BuildStats, err = buildEmpty(ctx, db, bopts)
	}
	bar.Finish()
	if errors.Is(err, index.ErrNotEmpty) {
		return messageError{fmt.Sprintf("%v; add to it with --append", err), err}
	}
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
	if err := bad.commit(); err != nil {
		return err
	}
	rate := float64(st.Documents) / max(st.Seconds, 1e-9)
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

// expectCounted makes n, the documents a first pass over the inputs counted
// (of document frequencies, or of boilerplate lines), the expected documents
// of a new SimHash index whose blocks were left to choose (no --blocks, no
// --expected-docs): they are then chosen for the corpus, as dedup chooses
// them, instead of the fewest. An existing index ignores it.
func expectCounted(o *index.Options, n int64) {
	if o.Sketch == sketch.SimHash && o.SimHash.Blocks == 0 && o.SimHash.ExpectedDocs == 0 && n > 0 {
		o.SimHash.ExpectedDocs = n
	}
}

// buildEmpty finishes a build of no document: an empty index, marked
// complete.
func buildEmpty(ctx context.Context, db *index.DB, bopts *index.BuildOptions) (index.BuildStats, error) {
	b, err := db.NewBuilder(bopts)
	if err != nil {
		return index.BuildStats{}, err
	}
	return b.Finish(ctx)
}

type indexRepackOptions struct {
	index indexFlags
	quiet bool
}

func (o *indexRepackOptions) AddFlags(fs *pflag.FlagSet) {
	o.index.AddFlags(fs)
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no progress bar")
}

func newIndexRepackCmd(io IO) *cobra.Command {
	o := &indexRepackOptions{}
	o.index.sketch.Key.Warn = io.Err
	cmd := &cobra.Command{
		Use:   "repack --data DIR [flags]",
		Short: "Pack the postings written online, as a bulk build packs its own",
		Long: `repack moves the postings that inserts wrote one key each (about 7.6 bytes a
posting on disk) into the packed values a bulk build writes (about 4 bytes;
with 8-byte bucket keys about 13 and 8), then compacts them: queries answer
exactly as before, in less space. The first repack of an index of 4-byte keys
that was never bulk-built marks it layout version 2, which neardup builds
before packed postings do not open. Each batch is
durable once written: an interrupted repack leaves a consistent index, and
running it again finishes the work; a repack with nothing to pack writes
nothing. The index must not be open elsewhere (Pebble locks the directory;
a running neardup serve holds it). The progress bar counts postings and the
bytes of their keys.`,
		Example: `  neardup index repack --data idx`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.index.redis != "" || o.index.data == "" {
				return usagef("--data DIR is required (repack is for Pebble indexes)")
			}
			iopts, err := o.index.options(cmd.Flags())
			if err != nil {
				return err
			}
			return runIndexRepack(cmd.Context(), io, o, &iopts)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// postingKeyBytes is the length of the key of a posting of its own, for the
// progress bar's bytes.
const postingKeyBytes = 9

func runIndexRepack(ctx context.Context, stdio IO, o *indexRepackOptions, iopts *index.Options) error {
	iopts.MustExist, iopts.Logger = true, cliLogger(stdio)
	db, err := openData(o.index.data, iopts)
	if err != nil {
		return err
	}
	defer db.Close()
	var bar *progress.Bar
	if !o.quiet && stdio.ErrIsTerminal {
		bar = progress.New(stdio.Err)
		bar.SetUnit("postings")
	}
	var last int64
	st, err := db.Repack(ctx, func(done, total int64) {
		if done == 0 {
			bar.Stage("repack", total*postingKeyBytes, nil)
		}
		bar.Add(done-last, (done-last)*postingKeyBytes)
		last = done
	})
	bar.Finish()
	if err != nil {
		return err
	}
	if st.Own == 0 {
		fmt.Fprintf(stdio.Out, "nothing to repack: %d postings, all packed (group bits %d); index %s: %d bytes in sstables\n",
			st.Packed, st.GroupBits, o.index.data, st.TableBytesBefore)
		return nil
	}
	n := st.Own + st.Packed
	fmt.Fprintf(stdio.Out, "packed %d postings of their own into %d values (%d already packed; group bits %d → %d",
		st.Own, st.Groups, st.Packed, st.OldGroupBits, st.GroupBits)
	if st.Unpacked > 0 {
		fmt.Fprintf(stdio.Out, ", the %d packed ones moved out and packed again", st.Unpacked)
	}
	fmt.Fprintf(stdio.Out, ") in %d batches, %.2fs (compaction %.2fs)\n", st.Batches, st.Seconds, st.CompactSeconds)
	fmt.Fprintf(stdio.Out, "postings on disk %d → %d bytes (%.1f → %.1f bytes a posting)\n",
		st.PostingBytesBefore, st.PostingBytesAfter, float64(st.PostingBytesBefore)/float64(n), float64(st.PostingBytesAfter)/float64(n))
	docs, err := db.Stats(ctx)
	if err != nil {
		return err
	}
	perDoc := func(b int64) float64 {
		if docs.Documents == 0 {
			return 0
		}
		return float64(b) / float64(docs.Documents)
	}
	fmt.Fprintf(stdio.Out, "index %s: sstables %d → %d bytes (%.0f → %.0f bytes/document); the write-ahead log and obsolete files take %d bytes more until Pebble removes them (at the latest when the index is next opened)\n",
		o.index.data, st.TableBytesBefore, st.TableBytesAfter, perDoc(st.TableBytesBefore), perDoc(st.TableBytesAfter), st.BytesAfter-st.TableBytesAfter)
	return nil
}

type indexStatsOptions struct {
	index indexFlags
}

func newIndexStatsCmd(io IO) *cobra.Command {
	o := &indexStatsOptions{}
	o.index.sketch.Key.Warn = io.Err
	cmd := &cobra.Command{
		Use:   "stats --data DIR",
		Short: "Print an index's configuration and size as JSON",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.index.logger = cliLogger(io)
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
				"threshold": c.Threshold, "bucket_cap": c.BucketCap, "bucket_key_bytes": c.BucketKeyBytes,
				"documents": st.Documents, "bytes": st.Bytes,
			}
			if st.Documents > 0 {
				out["bytes_per_document"] = float64(st.Bytes) / float64(st.Documents)
			}
			if c.Sketch == sketch.SimHash {
				// params are then the storage form of a fingerprint (one
				// 64-bit slot); the sketch's own are these.
				out["sketch"], out["simhash_params"] = c.Sketch.String(), c.SimHash.Params.String()
				out["hamming"], out["blocks"], out["tables"] = c.SimHash.K, c.SimHash.Blocks, c.Tables()
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
	o.index.sketch.Key.Warn = io.Err
	cmd := &cobra.Command{
		Use:   "check --data DIR",
		Short: "Verify that an index's postings and signatures agree",
		Long: `check reads the whole index and verifies that every id has its record, every
record its postings (bar those dropped at full buckets), and every posting a
record with that bucket key. Exit status 1 if anything is wrong. Run it on a
Redis index only while no writer is active.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.index.logger = cliLogger(io)
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

// signaturesSketch sets the spec and params of the index to those of the
// signature file path (for a new index; an existing one must have them),
// checking that sketch flags given on the command line agree with them.
func signaturesSketch(o *index.Options, path string, fs *pflag.FlagSet) error {
	r, err := sigfile.Open(path, nil)
	if err != nil {
		return err
	}
	h := r.Header()
	r.Close()
	if h.Sketch != sigfile.MinHash {
		return fmt.Errorf("%s: %w: %s signatures; an index holds minhash signatures", path, sigfile.ErrSketchMismatch, h.Sketch)
	}
	// A keyed spec is rebuilt with the key of --key-file (its id checked).
	spec, err := h.ShingleSpec(o.Spec.Key)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if fs.Changed("shingle") || fs.Changed("scheme") || fs.Changed("num-perm") || fs.Changed("bits") || fs.Changed("seed") {
		want, wantP := o.Spec, o.Params
		if !fs.Changed("shingle") {
			want = spec
		}
		if !fs.Changed("scheme") && !fs.Changed("num-perm") && !fs.Changed("bits") && !fs.Changed("seed") {
			wantP = h.MinHash
		}
		if err := h.CheckMinHash(want, wantP); err != nil {
			return usageError{fmt.Errorf("%s: %w", path, err)}
		}
	}
	o.Spec, o.Params = spec, h.MinHash
	return nil
}
