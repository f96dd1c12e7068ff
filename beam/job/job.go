package job

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/neardup/neardup/beam/cc"
	"github.com/neardup/neardup/beam/internal/files"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/boilerplate"
	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/sigfile"
)

// Tool is the name the report gives.
const Tool = "neardup-beam"

// Runner runs one pipeline to completion, for example with beam.Run.
type Runner func(ctx context.Context, p *beam.Pipeline) error

// Options configure a Beam deduplication. Zero fields mean the defaults;
// Run is required.
type Options struct {
	// Dedup are the options of the job, those of neardup dedup
	// (jobspec.Options), with the same meaning. Workers and Memory do not
	// apply (the runner sizes the workers; they are only reported); TempDir
	// is the directory for the intermediate state between the pipelines,
	// which must be reachable by every worker and the launching process (a
	// gs:// path on Dataflow). Golden, BadOut, Against and Signatures are
	// not supported (see Supported); SignaturesOut is a directory, into
	// which the sign stage writes one signature shard per input split.
	// Default: the defaults of jobspec.Options, and a new local temporary
	// directory.
	Dedup *jobspec.Options
	// SingleFile writes kept.jsonl, clusters.jsonl and pairs.tsv as single
	// files, each by one worker, instead of shards. Default false.
	SingleFile bool
	// ShardLines is the number of lines a pairs shard aims at. Default
	// DefaultShardLines; at least 1.
	ShardLines int
	// Partitions is the number of partitions of the band-key space that the
	// bucket stage runs in, a power of two up to MaxPartitions: each is
	// sorted and grouped by one worker. Default: one per 64 MiB of input (as
	// stored), rounded up to a power of two.
	Partitions int
	// Rounds is the number of connected-components rounds per pipeline
	// (see package cc): more rounds per pipeline mean fewer pipelines to
	// start. Default DefaultRounds; range 1 to MaxRounds.
	Rounds int
	// KeyFile is the file the workers read the secret key of a keyed spec
	// from (Dedup.Spec.Key, neardup-beam --key-file): a local path for a
	// runner on this machine, or a path every worker can read (gs://… on
	// Dataflow). The key itself is never put in the pipeline, which runners
	// store and show; each worker reads it and checks it against the key's
	// fingerprint. Required with a keyed spec, ignored otherwise. Default "".
	KeyFile string
	// Run runs each pipeline. Required.
	Run Runner
	// Log, if not nil, receives one line per pipeline run.
	Log io.Writer
}

// Run deduplicates inputs (files, or patterns such as shards/*.jsonl.gz or
// gs://bucket/shards/*.parquet, which expand to one split per file) into
// outDir (local or remote), running the pipelines with o.Run, and writes
// report.json there. It returns the report.
func Run(ctx context.Context, inputs []string, outDir string, o *Options) (*jobspec.Report, error) {
	t0 := time.Now()
	if o == nil || o.Run == nil {
		return nil, fmt.Errorf("%w: no Runner", jobspec.ErrInvalidOptions)
	}
	var dopts jobspec.Options
	if o.Dedup != nil {
		dopts = *o.Dedup
	}
	dopts.EnsureDefaults()
	job, err := dopts.Job()
	if err != nil {
		return nil, err
	}
	if len(inputs) == 0 {
		return nil, fmt.Errorf("%w: no inputs", jobspec.ErrInvalidOptions)
	}
	if err := Supported(&dopts); err != nil {
		return nil, err
	}
	if job.Sketch.Kind == sketch.SimHash && job.Sketch.SimHash.Params.Weighting == sigfile.TFIDF {
		return nil, fmt.Errorf("%w: --weight tfidf is not supported by %s: its document frequencies need a pass of their own over the corpus and a table shipped to every worker; TF weighting measured better on near duplicates (BENCHMARKS.md), or run neardup dedup", jobspec.ErrInvalidOptions, Tool)
	}
	if dopts.Boilerplate != jobspec.BoilerplateOff {
		return nil, fmt.Errorf("%w: --boilerplate %s is counted on one machine: run neardup boilerplate (or neardup dedup --boilerplate, which writes boilerplate.tsv) and give %s the file with --boilerplate-lines", jobspec.ErrInvalidOptions, dopts.Boilerplate, Tool)
	}
	if err := checkOptions(o); err != nil {
		return nil, err
	}
	splits, err := expandInputs(ctx, inputs)
	if err != nil {
		return nil, err
	}
	keptName, err := keptName(splits, &dopts.Corpus)
	if err != nil {
		return nil, err
	}
	bp, err := readBoilerplate(ctx, dopts.BoilerplateLines, &job)
	if err != nil {
		return nil, err
	}
	// The spec the workers get, its boilerplate set included, without its
	// key: a keyed job ships the key's id, and the workers read the key file.
	shipped, keyID, err := shipJob(job, o.KeyFile)
	if err != nil {
		return nil, err
	}
	rounds := o.Rounds
	if rounds == 0 {
		rounds = DefaultRounds
	}
	parts := o.Partitions
	if parts == 0 {
		if parts, err = autoPartitions(ctx, splits); err != nil {
			return nil, err
		}
	}
	shardLines := o.ShardLines
	if shardLines == 0 {
		shardLines = DefaultShardLines
	}
	if !isRemote(outDir) {
		if err := os.MkdirAll(outDir, 0o755); err != nil {
			return nil, fmt.Errorf("%s: %w", Tool, err)
		}
	}
	work := dopts.TempDir
	if work == "" || !isRemote(work) {
		dir, err := os.MkdirTemp(work, "neardup-beam-*")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", Tool, err)
		}
		defer os.RemoveAll(dir)
		work = dir
	} else {
		work = files.Join(work, fmt.Sprintf("neardup-beam-%d", time.Now().UnixNano()))
		defer files.RemoveAll(ctx, work)
	}
	if p := dopts.SignaturesOut; p != "" && !isRemote(p) {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return nil, fmt.Errorf("%s: --signatures-out: %w", Tool, err)
		}
	}
	c := Config{Splits: splits, Corpus: newCorpusConfig(&dopts.Corpus), Job: shipped, KeyID: keyID, KeyFile: o.KeyFile, Out: outDir, SingleFile: o.SingleFile,
		ShardLines: shardLines, PartitionBits: uint(bits.TrailingZeros(uint(parts))), KeptName: keptName, SignaturesOut: dopts.SignaturesOut}

	var timings []jobspec.Timing
	runJob := func(name string, p *beam.Pipeline) error {
		t := time.Now()
		if err := o.Run(ctx, p); err != nil {
			return fmt.Errorf("%s: %s pipeline: %w", Tool, name, err)
		}
		d := time.Since(t).Seconds()
		if n := len(timings); n > 0 && timings[n-1].Stage == name {
			timings[n-1].Seconds += d
		} else {
			timings = append(timings, jobspec.Timing{Stage: name, Seconds: d})
		}
		if o.Log != nil {
			fmt.Fprintf(o.Log, "%s: %s pipeline done in %.2fs\n", Tool, name, d)
		}
		return nil
	}

	p, s := beam.NewPipelineWithRoot()
	buildCandidates(s, &c, work, rounds)
	if err := runJob("candidates", p); err != nil {
		return nil, err
	}
	final, more, err := cc.Converge(ctx, func(ctx context.Context, p *beam.Pipeline) error { return runJob("components", p) },
		work, "graph", rounds, 0)
	if err != nil {
		return nil, err
	}
	if o.Log != nil {
		fmt.Fprintf(o.Log, "%s: connected components: fixed point within %d rounds\n", Tool, rounds+more)
	}
	p, s = beam.NewPipelineWithRoot()
	if err := buildOutputs(ctx, s, &c, work, final); err != nil {
		return nil, err
	}
	if err := runJob("outputs", p); err != nil {
		return nil, err
	}

	var st1, st2 Stats
	if err := files.ReadJSON(ctx, files.Join(work, "stats-candidates.json"), &st1); err != nil {
		return nil, err
	}
	if err := files.ReadJSON(ctx, files.Join(work, "stats-outputs.json"), &st2); err != nil {
		return nil, err
	}
	st := st1.merge(st2)
	if o.Log != nil {
		sh := st.Shuffle
		fmt.Fprintf(o.Log, "%s: verification shuffle: %d document infos of %d documents (at most %d of one), %d bytes; %d of them copies of a text the task had\n",
			Tool, sh.Sends, st.VerifiedDocs, sh.Max, sh.Bytes, sh.Copies)
		b := st.Buckets
		fmt.Fprintf(o.Log, "%s: candidate shuffle: %d pairs emitted by the buckets, %d sent to their lower documents in %d records\n",
			Tool, b.Pairs, b.Sent, b.Records)
	}
	if !c.Job.Sketch.Resolved() {
		// What the pipeline chose from the document count, as dedup does.
		var n int64
		for _, sp := range st.Splits {
			n += signedDocs(sp)
		}
		if c.Job.Sketch, err = c.Job.Sketch.Resolve(n); err != nil {
			return nil, err
		}
	}
	rj := c.Job
	rj.Sketch.Spec.Key = job.Sketch.Spec.Key // the keyed spec: its key's id, never the key
	rep := jobspec.NewReport(Tool, inputs, &dopts, &rj)
	rep.Boilerplate = bp
	fillReport(rep, &c, st)
	rep.Timings = timings
	rep.PeakRSSBytes = peakRSS()
	rep.WallSeconds = time.Since(t0).Seconds()
	data, err := jobspec.EncodeReport(rep)
	if err != nil {
		return nil, err
	}
	if err := files.WriteFile(ctx, joinPath(outDir, jobspec.ReportFile), data); err != nil {
		return nil, err
	}
	return rep, nil
}

// Supported reports the job options the Beam job does not take, as errors
// wrapping jobspec.ErrInvalidOptions that say what to use instead: a golden
// set (score the outputs with neardup eval score), reference sources
// (Against), a list of bad records (BadOut) and stored signatures of the
// inputs (Signatures), which only
// neardup dedup reads. SignaturesOut is supported: a directory of shards.
func Supported(o *jobspec.Options) error {
	switch {
	case o.Golden != "":
		return fmt.Errorf("%w: --golden is not supported by %s: score its pairs.tsv and clusters.jsonl with neardup eval score", jobspec.ErrInvalidOptions, Tool)
	case len(o.Against) > 0:
		return fmt.Errorf("%w: --against is not supported by %s: deduplicate against reference documents with neardup dedup --against "+
			"(its signatures, from --signatures-out, make the reference cheap to read)", jobspec.ErrInvalidOptions, Tool)
	case o.BadOut != "":
		return fmt.Errorf("%w: a list of bad records (BadOut) is not supported by %s", jobspec.ErrInvalidOptions, Tool)
	case o.Signatures != "":
		return fmt.Errorf("%w: --signatures is not supported by %s, whose workers sign their splits: re-run with stored signatures with neardup dedup --signatures",
			jobspec.ErrInvalidOptions, Tool)
	}
	return nil
}

// keptName returns the name of the kept records' file for the splits, as
// neardup dedup names it: kept.jsonl, or kept.warc.gz (kept.warc.wet.gz)
// for WARC (WET) splits. Remote splits are judged by their names.
func keptName(splits []string, o *corpus.Options) (string, error) {
	var ext string
	var err error
	if slices.ContainsFunc(splits, isRemote) {
		ext, err = corpus.KeptExtensionOf(splits, o.Format)
	} else {
		ext, err = corpus.KeptExtension(splits, o)
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(jobspec.KeptFile, ".jsonl") + ext, nil
}

// readBoilerplate reads the lines file path (local or remote), counted
// under j's spec, and puts its set in j's spec; it returns what it read,
// or nil for no file.
func readBoilerplate(ctx context.Context, path string, j *jobspec.Job) (*boilerplate.Result, error) {
	if path == "" {
		return nil, nil
	}
	data, err := files.ReadFile(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("%w: --boilerplate-lines: %w", jobspec.ErrInvalidOptions, err)
	}
	res, err := boilerplate.ReadLines(bytes.NewReader(data), path, j.Sketch.Spec)
	if err != nil {
		return nil, err
	}
	j.Sketch.Spec.Boilerplate = res.Set
	return res, nil
}

// Defaults and limits of Options.
const (
	// DefaultShardLines is the default Options.ShardLines.
	DefaultShardLines = 1_000_000
	// DefaultRounds is the default Options.Rounds.
	DefaultRounds = 4
	// MaxRounds is the most Options.Rounds: each round adds two shuffles to
	// a pipeline's graph, and components converge in about log2 of the
	// longest chain's length rounds, so more than this only grows the graph.
	MaxRounds = 64
)

// CheckRounds reports whether n is a valid number of connected-components
// rounds per pipeline (Options.Rounds, --cc-rounds): 1 to MaxRounds.
func CheckRounds(n int) error {
	if n < 1 || n > MaxRounds {
		return fmt.Errorf("%w: %d connected-components rounds per pipeline; want 1 to %d", jobspec.ErrInvalidOptions, n, MaxRounds)
	}
	return nil
}

// CheckShardLines reports whether n is a valid number of lines per pairs
// shard (Options.ShardLines, --shard-lines): at least 1.
func CheckShardLines(n int) error {
	if n < 1 {
		return fmt.Errorf("%w: %d lines per pairs shard; want at least 1", jobspec.ErrInvalidOptions, n)
	}
	return nil
}

// CheckPartitions reports whether n is a valid number of partitions of the
// band-key space (Options.Partitions, --partitions): a power of two from 1 to
// MaxPartitions.
func CheckPartitions(n int) error {
	if n < 1 || n > MaxPartitions || n&(n-1) != 0 {
		return fmt.Errorf("%w: %d partitions, want a power of two from 1 to %d", jobspec.ErrInvalidOptions, n, MaxPartitions)
	}
	return nil
}

// checkOptions checks the fields of o that are set (0 means the default).
func checkOptions(o *Options) error {
	if o.Rounds != 0 {
		if err := CheckRounds(o.Rounds); err != nil {
			return err
		}
	}
	if o.ShardLines != 0 {
		if err := CheckShardLines(o.ShardLines); err != nil {
			return err
		}
	}
	if o.Partitions != 0 {
		return CheckPartitions(o.Partitions)
	}
	return nil
}

func joinPath(dir, name string) string { return files.Join(dir, name) }

// partitionBytes is the input (as stored) per partition that autoPartitions
// aims at: about a million band-key entries for prose.
const partitionBytes = 64 << 20

// autoPartitions returns the default Options.Partitions for the splits.
func autoPartitions(ctx context.Context, splits []string) (int, error) {
	var total int64
	for _, p := range splits {
		n, err := inputSize(ctx, p)
		if err != nil {
			return 0, err
		}
		total += n
	}
	parts := 1
	for int64(parts)*partitionBytes < total && parts < MaxPartitions {
		parts *= 2
	}
	return parts, nil
}

// inputSize returns the stored size of an input file, or of the files under
// a local directory.
func inputSize(ctx context.Context, path string) (int64, error) {
	if !isRemote(path) {
		var n int64
		err := filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				if fi, err := d.Info(); err == nil {
					n += fi.Size()
				}
			}
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("%s: %w", Tool, err)
		}
		return n, nil
	}
	fsys, err := filesystem.New(ctx, path)
	if err != nil {
		return 0, err
	}
	defer fsys.Close()
	return fsys.Size(ctx, path)
}

// fillReport fills the counts, buckets and histograms of rep as dedup's
// report has them.
func fillReport(rep *jobspec.Report, c *Config, st Stats) {
	slices.SortFunc(st.Splits, func(a, b SplitStats) int { return a.Split - b.Split })
	cnt := &rep.Counts
	var hash minhash.Metrics
	// Every record read is a document, bad ones included (those the reader
	// skips at the very end too, as neardup dedup counts them).
	for _, sp := range st.Splits {
		cnt.Empty += sp.Empty
		cnt.InputBytes += sp.Bytes
		cnt.Documents += sp.Records
		cnt.Bad += sp.ReaderBad + sp.ParseBad
		cnt.Skipped += sp.Skipped
		hash = hash.Add(sp.Hash)
	}
	// This job has no exact-duplicate pass: it signs every document (the
	// outputs are neardup dedup's either way).
	rep.Config.ExactPass = false
	rep.Signatures = jobspec.NewSignatureReport(hash)
	cnt.Candidates = st.Candidates
	exact := c.Job.Verify == jobspec.VerifyExact
	if exact {
		cnt.VerifiedDocs = st.VerifiedDocs
	}
	for i := range rep.PairSim.Estimate {
		if i < len(st.Hist.Est) {
			rep.PairSim.Estimate[i] = st.Hist.Est[i]
			cnt.VerifiedPairs += st.Hist.Est[i]
			if exact {
				rep.PairSim.Exact[i] = st.Hist.Exact[i]
			}
		}
	}
	cnt.Clusters, cnt.Removed, cnt.Kept = st.Clusters.Clusters, st.Clusters.Removed, st.Kept
	for _, sp := range st.Splits {
		rep.Drift.Merge(sp.Drift) // same bins: cannot fail
	}
	rep.Drift.BestSimilarity.Merge(st.Best)
	for _, s := range st.Clusters.Sizes {
		rep.Sizes = append(rep.Sizes, jobspec.ClusterSizeBin{Size: s.Size, Count: int(s.Count)})
	}
	b := st.Buckets
	rep.Buckets.SetCounts(lsh.CandidateMetrics{Entries: b.Entries, Buckets: b.Buckets, SharedBuckets: b.Shared, Pairs: b.Pairs,
		CappedBuckets: b.Capped, CappedMembers: b.CappedMembers})
	large := func(lb LargeBucket) jobspec.LargeBucket {
		var id []byte
		for _, f := range st.FirstIDs {
			if f.Ord == lb.First {
				id = f.ID
			}
		}
		return jobspec.NewLargeBucket(lb.Size, id, sketch.EntryBucket(lb.Key))
	}
	for _, lb := range b.Largest {
		rep.Buckets.Largest = append(rep.Buckets.Largest, large(lb))
	}
	for _, lb := range b.Top {
		rep.Buckets.Top = append(rep.Buckets.Top, large(lb))
	}
}

// buildCandidates adds the first pipeline: read and sign, buckets,
// candidate pairs, features, verification, pairs.tsv, the first rounds of
// connected components, and the state the next pipelines read.
func buildCandidates(s beam.Scope, c *Config, work string, rounds int) {
	splits := make([]Split, len(c.Splits))
	for i, p := range c.Splits {
		splits[i] = Split{Index: i, Path: p}
	}
	sc := beam.Reshuffle(s, beam.CreateList(s, splits))

	sign := s.Scope("sign")
	entries, splitStats := beam.ParDo2(sign, &signFn{C: *c}, sc)

	cand := s.Scope("candidates")
	var rawPairs, bucketStats beam.PCollection
	var simFirstIDs func(beam.PCollection) beam.PCollection
	if c.simHashJob() {
		rawPairs, bucketStats, simFirstIDs = buildSimHashCandidates(s, c, entries, splitStats)
	} else {
		rawPairs, bucketStats = beam.ParDo2(cand, &bucketFn{Cap: c.Job.BucketCap, KeyBytes: keyBytes(c.Job.Sketch.Keys())}, beam.GroupByKey(cand, entries))
	}
	taskPairs, needs, candCounts := beam.ParDo3(cand, &distinctFn{}, beam.GroupByKey(cand, rawPairs))

	ver := s.Scope("verify")
	infos, infoStats := beam.ParDo2(ver, &docInfoFn{C: *c}, beam.GroupByKey(ver, needs))
	edges := beam.ParDo(ver, &verifyFn{C: *c}, beam.CoGroupByKey(ver, infos, taskPairs))

	out := s.Scope("pairs")
	lines := beam.ParDo(out, pairLine, edges)
	sample := beam.Combine(out, &pairSampleFn{}, beam.Flatten(out, lines, beam.Create(out, PairLine{Marker: true})))
	sp := beam.ParDo(out, &splittersFn{C: *c}, sample)
	shardLines := beam.ParDo(out, shardPairFn, lines, beam.SideInput{Input: sp})
	markers := beam.ParDo(out, pairMarkersFn, sp)
	beam.ParDo0(out, &writePairsFn{C: *c}, beam.GroupByKey(out, beam.Flatten(out, shardLines, markers)), beam.SideInput{Input: sp})

	comp := s.Scope("components")
	graph := beam.ParDo(comp, edgeGraph, edges)
	if c.Job.Cluster == jobspec.Star {
		cc.Write(comp, work, "pairs", graph)
	}
	files.WriteBlobs(comp, work, "members", beam.ParDo(comp, encodeMember, beam.ParDo(comp, edgeMembers, edges)))
	ccOut, unsettled := cc.Step(comp, graph, rounds)
	cc.WriteStep(comp, work, "graph", ccOut, unsettled)

	st := s.Scope("stats")
	bucketSt := beam.ParDo(st, bucketStatsToStats, bucketStats)
	all := beam.Flatten(st,
		beam.ParDo(st, splitStatsToStats, splitStats),
		bucketSt,
		beam.ParDo(st, candidatesToStats, candCounts),
		infoStats,
		beam.ParDo(st, histToStats, edges),
		beam.ParDo(st, bestToStats, beam.CombinePerKey(st, maxSim, beam.ParDo(st, edgeEnds, edges))),
		beam.Create(st, Stats{}))
	bucketTotal := beam.Combine(st, &statsFn{}, bucketSt)
	var firstIDs beam.PCollection
	if simFirstIDs != nil {
		firstIDs = simFirstIDs(bucketTotal) // a listed bucket's first need not be in a pair: read again
	} else {
		firstIDs = beam.ParDo(st, firstIDsFn, infos, beam.SideInput{Input: bucketTotal}) // a listed bucket's first is in a pair
	}
	total := beam.Combine(st, &statsFn{}, beam.Flatten(st, all, firstIDs))
	files.WriteJSON(st, files.Join(work, "stats-candidates.json"), beam.ParDo(st, statsJSON, total))
}

// buildOutputs adds the last pipeline: component labels, clusters and the
// kept documents, clusters.jsonl and kept.jsonl.
func buildOutputs(ctx context.Context, s beam.Scope, c *Config, work, final string) error {
	state, err := cc.Read(ctx, s, work, final)
	if err != nil {
		return err
	}
	labels := cc.Labels(s, state)
	blobs, err := files.ReadBlobs(ctx, s, work, "members")
	if err != nil {
		return err
	}
	members := beam.ParDo(s, decodeMember, blobs)
	byLabel := beam.ParDo(s, labelMembersFn, beam.CoGroupByKey(s, labels, members))
	var pairsByLabel beam.PCollection
	if c.Job.Cluster == jobspec.Star {
		pairs, err := cc.Read(ctx, s, work, "pairs")
		if err != nil {
			return err
		}
		pairsByLabel = beam.ParDo(s, labelEdgesFn, beam.CoGroupByKey(s, labels, pairs))
	} else {
		pairsByLabel = beam.ParDo(s, pairToKV, beam.CreateList(s, []Pair{}))
	}
	clusters, removed, clusterStats := beam.ParDo3(s, &clusterFn{C: *c}, beam.CoGroupByKey(s, byLabel, pairsByLabel))

	shards := len(c.Splits)
	if c.SingleFile {
		shards = 1
	}
	ids := make([]int, shards)
	for i := range ids {
		ids[i] = i
	}
	shardIDs := beam.CreateList(s, ids)

	cs := s.Scope("clusters")
	byShard := beam.ParDo(cs, &clusterShardFn{C: *c}, clusters)
	counts := beam.ParDo(cs, toShardCount, beam.CombinePerKey(cs, sumCount, beam.ParDo(cs, countOne, byShard)))
	markers := beam.ParDo(cs, clusterMarkerFn, shardIDs)
	beam.ParDo0(cs, &writeClustersFn{C: *c, Shards: shards}, beam.GroupByKey(cs, beam.Flatten(cs, byShard, markers)),
		beam.SideInput{Input: counts})

	ks := s.Scope("kept")
	splits := make([]int, len(c.Splits))
	for i := range splits {
		splits[i] = i
	}
	splitsByShard := beam.ParDo(ks, &splitShardFn{C: *c}, beam.CreateList(ks, splits))
	kept := beam.ParDo(ks, &writeKeptFn{C: *c, Shards: shards}, beam.CoGroupByKey(ks, splitsByShard, removed))

	st := s.Scope("stats")
	total := beam.Combine(st, &statsFn{}, beam.Flatten(st,
		beam.ParDo(st, clusterStatsToStats, clusterStats),
		beam.ParDo(st, keptToStats, kept),
		beam.Create(st, Stats{})))
	files.WriteJSON(st, files.Join(work, "stats-outputs.json"), beam.ParDo(st, statsJSON, total))
	return nil
}

func pairToKV(p Pair) (uint64, Pair) { return p.A, p }

func clusterMarkerFn(shard int, emit func(int, ClusterOut)) { emit(shard, ClusterOut{Marker: true}) }

// splitShardFn keys a split by its kept.jsonl shard.
type splitShardFn struct{ C Config }

// ProcessElement keys split by its kept.jsonl shard: itself, or 0 under
// SingleFile.
func (f *splitShardFn) ProcessElement(split int) (int, int) {
	if f.C.SingleFile {
		return 0, split
	}
	return split, split
}
