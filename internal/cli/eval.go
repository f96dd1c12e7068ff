package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/internal/boilerplate"
	"github.com/neardup/neardup/internal/corpuspipe"
	"github.com/neardup/neardup/internal/dupid"
	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/internal/radix"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/shingle"
)

func newEvalCmd(io IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Exact ground truth and scores: eval truth, eval score",
		Long: `eval computes the exact ground truth of a corpus (eval truth) and scores a
deduplication run against it (eval score).`,
	}
	cmd.AddCommand(newEvalTruthCmd(io), newEvalScoreCmd(io))
	// The root applies these to its own children only.
	for _, c := range cmd.Commands() {
		c.SetUsageTemplate(c.UsageTemplate() + exitStatusHelp)
		c.Args = wrapArgs(c.Args)
	}
	return cmd
}

// ---- eval truth ----

type evalTruthOptions struct {
	out       string
	threshold float64
	shingle   string
	workers   int
	corpus    corpusFlags
	bp        boilerplateFlags
	badOut    badOutFlag
}

func (o *evalTruthOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.out, "out", "o", "", "truth file to write, - for standard output (required)")
	fs.Float64Var(&o.threshold, "threshold", 0.5, "list every pair with Jaccard similarity at or above this")
	fs.StringVar(&o.shingle, "shingle", "prose", "shingling spec, as for dedup: prose, code, cjk, web, word:N, char:N or token:N")
	fs.IntVar(&o.workers, "workers", 0, "worker goroutines (default: all cores)")
	o.corpus.AddFlags(fs)
	o.bp.AddFlags(fs)
	o.badOut.AddFlags(fs)
}

func newEvalTruthCmd(io IO) *cobra.Command {
	o := &evalTruthOptions{}
	cmd := &cobra.Command{
		Use:   "truth [flags] INPUT... -o truth.tsv",
		Short: "Write every pair of documents with Jaccard similarity at or above a threshold",
		Long: `truth reads corpora as dedup does, shingles every document with the same spec,
and writes the exact list of all pairs whose Jaccard similarity reaches the
threshold: a prefix-filtered all-pairs join (AllPairs/PPJoin), never a loop
over all pairs, on every core. The output is deterministic: a header line

  # neardup eval truth threshold=0.5 documents=N spec=...

then one pair a line, idA<TAB>idB<TAB>J, idA < idB bytewise, sorted, J with
the digits that read back to the exact float64 (the spec names the
boilerplate set dropped under --boilerplate or --boilerplate-lines, as dedup
drops it). Ids must be unique: a repeated
id is an error naming the file and line of its second occurrence, or with
--skip-bad that record is skipped as bad. The file appears only when the run
succeeds.

Memory is not bounded by a budget: it grows with the corpus, and everything
is held in memory. Counting a feature occurrence as one distinct shingle of
one document: 8 bytes per occurrence for the shingled sets, 4 for the join's
tokenised copy (16 to 28 more while it is built), the join's prefix index
(more at lower thresholds), and 12 bytes per pair found. Measured peak: about
40 bytes per occurrence, 370 MB for the Go source tree (7.7k documents, 90 MB
of text, 9.3 M occurrences) at t = 0.5, 690 MB for twice that. For a corpus
past the machine's memory, compute the truth of a sample.`,
		Example: `  neardup eval truth --threshold 0.5 -o truth.tsv testdata/articles_1000.jsonl
  neardup eval truth --shingle char:5 --threshold 0.8 -o - corpus.jsonl.zst`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.out == "" {
				return usagef("--out is required")
			}
			if !(o.threshold > 0 && o.threshold <= 1) {
				return usagef("--threshold %v; want 0 < t <= 1", o.threshold)
			}
			spec, err := shingle.Parse(o.shingle)
			if err != nil {
				return usageError{err}
			}
			copts, err := o.corpus.build(io)
			if err != nil {
				return err
			}
			if err := o.badOut.check(copts.SkipBad); err != nil {
				return err
			}
			spec, args, cleanup, res, err := o.bp.apply(cmd.Context(), io, args, &copts, spec, boilerplate.DefaultMemory, o.workers)
			if err != nil {
				return err
			}
			defer cleanup()
			describeBoilerplate(io.Err, res)
			return runEvalTruth(cmd.Context(), io, args, o, spec, copts)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// featureCorpus is a corpus read into ids and normalised feature sets.
type featureCorpus struct {
	ids      []string
	sets     [][]uint64
	bytes    int64 // text bytes read (of left-out repeated ids too)
	features int64 // distinct features, summed over documents
}

// loadFeatures reads inputs and shingles every good document with spec on
// workers goroutines, in input order: document i of the result is the i-th
// good record. Each set is sorted ascending without duplicates, as eval and
// dedup's exact verification compute them. Bad records are an error unless
// copts.SkipBad, when they are left out. Ids are not checked (plan's sample
// needs only the sets).
func loadFeatures(ctx context.Context, inputs []string, copts corpus.Options, spec shingle.Spec, workers int) (*featureCorpus, error) {
	return loadFeaturesChecked(ctx, inputs, copts, spec, workers, nil, nil)
}

// loadFeaturesChecked is loadFeatures that, given ids, also checks that ids
// are unique: a repeated id is an error unless copts.SkipBad, when the later
// record is left out too; bad lists what is left out.
func loadFeaturesChecked(ctx context.Context, inputs []string, copts corpus.Options, spec shingle.Spec, workers int, ids *idCheck, bad *badOut) (*featureCorpus, error) {
	if workers <= 0 {
		workers = max(1, runtimeProcs())
	}
	reader, err := corpus.NewReader(inputs, &copts)
	if err != nil {
		return nil, err
	}
	defer reader.Close()
	type result struct {
		ids  []string
		pos  []dupid.Position
		sets [][]uint64
		n    int64
	}
	fc := &featureCorpus{}
	_, err = corpuspipe.Run(ctx, reader, &copts, workers,
		func() (corpuspipe.Worker[result], error) {
			sh, err := shingle.New(spec)
			if err != nil {
				return corpuspipe.Worker[result]{}, err
			}
			var buf, scratch []uint64 // reused: only the exact-size set is kept
			return corpuspipe.Worker[result]{
				Begin: func(res *result, _ *corpus.Batch) {
					res.ids, res.pos, res.sets, res.n = res.ids[:0], res.pos[:0], res.sets[:0], 0
				},
				Document: func(res *result, rec *corpus.Record, doc *corpus.Document) error {
					buf = sh.AppendFeatures(buf[:0], doc.Text)
					if cap(scratch) < len(buf) {
						scratch = make([]uint64, len(buf))
					}
					scratch = radix.Sort(buf, scratch[:len(buf)])
					res.ids = append(res.ids, string(doc.ID))
					res.pos = append(res.pos, dupid.Position{File: rec.File, Line: rec.Line, Index: rec.Index})
					res.sets = append(res.sets, slices.Clone(slices.Compact(buf)))
					res.n += int64(len(doc.Text))
					return nil
				},
			}, nil
		},
		func(b *corpuspipe.Batch[result]) error {
			r := &b.Result
			if ids != nil {
				for i, id := range r.ids {
					if err := ids.add([]byte(id), r.pos[i]); err != nil {
						return err
					}
				}
			}
			if err := bad.add(b.Bad); err != nil {
				return err
			}
			fc.ids = append(fc.ids, r.ids...)
			fc.sets = append(fc.sets, r.sets...)
			fc.bytes += r.n
			for _, s := range r.sets {
				fc.features += int64(len(s))
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	// Leave out the later records of repeated ids (under SkipBad; else the
	// first is an error).
	var drop []int64
	if ids != nil {
		if err := ids.finish(func(n int64) error { drop = append(drop, n); return nil }); err != nil {
			return nil, err
		}
	}
	if len(drop) > 0 {
		keep := 0
		for i := range fc.ids {
			if len(drop) > 0 && drop[0] == int64(i) {
				drop = drop[1:]
				fc.features -= int64(len(fc.sets[i]))
				continue
			}
			fc.ids[keep], fc.sets[keep] = fc.ids[i], fc.sets[i]
			keep++
		}
		clear(fc.sets[keep:])
		fc.ids, fc.sets = fc.ids[:keep], fc.sets[:keep]
	}
	return fc, nil
}

// truthPair is one pair of the join, by document index, with its overlap:
// 12 bytes, so that the result's memory stays small.
type truthPair struct{ a, b, overlap uint32 }

func runEvalTruth(ctx context.Context, stdio IO, inputs []string, o *evalTruthOptions, spec shingle.Spec, copts corpus.Options) error {
	start := time.Now()
	if err := o.badOut.check(copts.SkipBad); err != nil {
		return err
	}
	out, err := createOutput(stdio, o.out)
	if err != nil {
		return err
	}
	defer out.abort()
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
	fc, err := loadFeaturesChecked(ctx, inputs, copts, spec, o.workers, ids, bad)
	if err != nil {
		return err
	}
	tLoad := time.Since(start)
	sizes := make([]uint32, len(fc.sets))
	for i, s := range fc.sets {
		sizes[i] = uint32(len(s))
	}
	coll, err := eval.NewCollection(fc.sets, &eval.Options{Workers: o.workers})
	if err != nil {
		return err
	}
	fc.sets = nil // the collection holds what the join needs
	var pairs []truthPair
	if err := coll.AllPairsFunc(o.threshold, func(p eval.Pair) bool {
		pairs = append(pairs, truthPair{uint32(p.A), uint32(p.B), uint32(p.Overlap)})
		return true
	}); err != nil {
		return err
	}
	tJoin := time.Since(start) - tLoad

	// Order as pairs.tsv does: ids bytewise within a line, lines sorted;
	// equal ids fall back to input order.
	rank := idRanks(fc.ids)
	for i, p := range pairs {
		if rank[p.a] > rank[p.b] {
			pairs[i].a, pairs[i].b = p.b, p.a
		}
	}
	slices.SortFunc(pairs, func(x, y truthPair) int {
		if c := int(rank[x.a]) - int(rank[y.a]); c != 0 {
			return c
		}
		return int(rank[x.b]) - int(rank[y.b])
	})

	if err := eval.WriteTruthHeader(out, eval.TruthHeader{Threshold: o.threshold, Documents: int64(len(fc.ids)), Spec: spec.String()}); err != nil {
		return err
	}
	var line []byte
	for _, p := range pairs {
		u := sizes[p.a] + sizes[p.b] - p.overlap
		line = eval.AppendPairLine(line[:0], fc.ids[p.a], fc.ids[p.b], float64(p.overlap)/float64(u))
		if _, err := out.Write(line); err != nil {
			return err
		}
	}
	if err := out.commit(); err != nil {
		return err
	}
	if err := bad.commit(); err != nil {
		return err
	}
	summary := stdio.Out
	if o.out == "-" {
		summary = stdio.Err
	}
	fmt.Fprintf(summary, "documents %d (%.1f MB, %d features)  pairs with J >= %v: %d  read+shingle %.2fs  join %.2fs  total %.2fs\n",
		len(fc.ids), float64(fc.bytes)/1e6, fc.features, o.threshold, len(pairs), tLoad.Seconds(), tJoin.Seconds(), time.Since(start).Seconds())
	return nil
}

// idRanks returns each document's position in the order of ids (bytewise,
// ties by index).
func idRanks(ids []string) []uint32 {
	order := make([]uint32, len(ids))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortStableFunc(order, func(a, b uint32) int { return strings.Compare(ids[a], ids[b]) })
	rank := make([]uint32, len(ids))
	for r, i := range order {
		rank[i] = uint32(r)
	}
	return rank
}

// ---- eval score ----

type evalScoreOptions struct {
	truth     string
	pairs     string
	clusters  string
	report    string
	threshold float64
	bands     int
	rows      int
	probe     int
	bits      int
	documents int64
	bandWidth float64
	json      bool
}

func (o *evalScoreOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.truth, "truth", "", "truth pairs: a file from eval truth, a pairs.tsv, or idA idB lines such as the articles .truth (required)")
	fs.StringVar(&o.pairs, "pairs", "", "predicted pairs, same formats (required; usually dedup's pairs.tsv)")
	fs.StringVar(&o.clusters, "clusters", "", "predicted clusters, dedup's clusters.jsonl: also score clusters against the truth's components")
	fs.StringVar(&o.report, "report", "", "dedup's report.json, for the banding, threshold and document count (default: report.json beside --pairs, if any)")
	fs.Float64Var(&o.threshold, "threshold", 0, "truth pairs count at or above this similarity (default: the report's threshold, else the truth file's)")
	fs.IntVar(&o.bands, "bands", 0, "LSH bands of the run, for the S-curve's prediction (with --rows; default: from the report)")
	fs.IntVar(&o.rows, "rows", 0, "LSH rows per band of the run (with --bands)")
	fs.IntVar(&o.probe, "multi-probe", 0, "multi-probe level of the run (with --bands)")
	fs.IntVar(&o.bits, "bits", 0, "bits per signature slot of the run (default: from the report, else 64)")
	fs.Int64Var(&o.documents, "documents", 0, "number of documents, singletons included, for the adjusted Rand index (default: the truth file's, else the report's)")
	fs.Float64Var(&o.bandWidth, "band-width", eval.DefaultBandWidth, "width of the similarity bands recall is broken down by")
	fs.BoolVar(&o.json, "json", false, "print the score as JSON")
}

func newEvalScoreCmd(io IO) *cobra.Command {
	o := &evalScoreOptions{}
	cmd := &cobra.Command{
		Use:   "score --truth TRUTH --pairs PAIRS [--clusters CLUSTERS] [flags]",
		Short: "Score predicted pairs and clusters against the truth",
		Long: `score compares predicted pairs with truth pairs by id: precision, recall and F1,
and recall by similarity band (0.80–0.85, 0.85–0.90, …) beside the S-curve's
prediction for the banding used (from --bands/--rows or dedup's report.json).
With --clusters, it also compares the clusters with the connected components of
the truth pairs: adjusted Rand index and pair-counting precision, recall and F1.

Pair files hold one pair a line: idA idB and optionally a similarity (tab- or
space-separated; in a pairs.tsv the exact Jaccard, else the estimate). Truth
pairs with a similarity below --threshold do not count.`,
		Example: `  neardup eval truth --threshold 0.5 -o truth.tsv corpus.jsonl
  neardup dedup -o out corpus.jsonl
  neardup eval score --truth truth.tsv --pairs out/pairs.tsv --clusters out/clusters.jsonl
  neardup eval score --truth testdata/articles_1000.truth --pairs out/pairs.tsv --threshold 0.8`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.truth == "" || o.pairs == "" {
				return usagef("--truth and --pairs are required")
			}
			if (o.bands > 0) != (o.rows > 0) {
				return usagef("--bands and --rows go together")
			}
			s, err := runEvalScore(o)
			if err != nil {
				return err
			}
			if o.json {
				enc := json.NewEncoder(io.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(s)
			}
			_, err = fmt.Fprint(io.Out, s.String())
			return err
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func readPairFile(path string) (*eval.PairFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return eval.ReadPairFile(bufio.NewReaderSize(f, 1<<20), path)
}

// readClusters reads the member lists of a clusters.jsonl.
func readClusters(path string) ([][]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out [][]string
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var c jobspec.ClusterLine
		if err := json.Unmarshal(line, &c); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		out = append(out, c.Members)
	}
	return out, nil
}

func runEvalScore(o *evalScoreOptions) (*eval.Score, error) {
	truth, err := readPairFile(o.truth)
	if err != nil {
		return nil, err
	}
	pred, err := readPairFile(o.pairs)
	if err != nil {
		return nil, err
	}
	reportPath := o.report
	if reportPath == "" {
		if p := filepath.Join(filepath.Dir(o.pairs), jobspec.ReportFile); fileExists(p) {
			reportPath = p
		}
	}
	var rep *jobspec.Report
	if reportPath != "" {
		data, err := os.ReadFile(reportPath)
		if err != nil {
			return nil, err
		}
		rep = &jobspec.Report{}
		if err := json.Unmarshal(data, rep); err != nil {
			return nil, fmt.Errorf("%s: %w", reportPath, err)
		}
	}
	t := o.threshold
	switch {
	case t != 0:
	case rep != nil:
		t = rep.Config.Threshold
	case truth.Threshold > 0:
		t = truth.Threshold
	default:
		return nil, usagef("--threshold is required: no report.json and no threshold in %s", o.truth)
	}
	if !(t > 0 && t <= 1) {
		return nil, usagef("--threshold %v; want 0 < t <= 1", t)
	}
	if truth.Threshold > t {
		return nil, usagef("%s lists pairs with J >= %v only; it cannot score at %v", o.truth, truth.Threshold, t)
	}
	s := &eval.Score{Truth: o.truth}
	bands := lsh.Params{Bands: o.bands, Rows: o.rows, Probe: o.probe}
	bits := o.bits
	if bands.Bands == 0 && rep != nil && rep.Config.Bands > 0 {
		bands = lsh.Params{Bands: rep.Config.Bands, Rows: rep.Config.Rows, Probe: rep.Config.Probe}
		if bits == 0 {
			bits = paramsBits(rep.Config.Params)
		}
	}
	opts := eval.ScoreOptions{Threshold: t, BandWidth: o.bandWidth}
	if bands.Bands > 0 {
		if err := bands.Validate(); err != nil {
			return nil, usageError{err}
		}
		opts.Curve = eval.SCurve(bands, bits)
		s.Bands, s.Rows, s.Bits = bands.Bands, bands.Rows, bits
	}
	s.Pairs = eval.ScorePairs(truth.Pairs, pred.Pairs, opts)
	if o.clusters != "" {
		cl, err := readClusters(o.clusters)
		if err != nil {
			return nil, err
		}
		n := o.documents
		if n == 0 {
			n = truth.Documents
		}
		if n == 0 && rep != nil {
			n = rep.Counts.Documents - rep.Counts.Bad
		}
		cs := eval.ScoreClusters(truth.Pairs, t, cl, n)
		s.Clusters = &cs
	}
	return s, nil
}

// paramsBits reads the slot width from a minhash params string such as
// "v1/oph/k=128/bits=32/seed=0"; 0 if absent.
func paramsBits(params string) int {
	for _, f := range strings.Split(params, "/") {
		if v, ok := strings.CutPrefix(f, "bits="); ok {
			if b, err := strconv.Atoi(v); err == nil {
				return b
			}
		}
	}
	return 0
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }
