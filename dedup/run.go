package dedup

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/neardup/neardup/cluster"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/boilerplate"
	"github.com/neardup/neardup/internal/docstore"
	"github.com/neardup/neardup/internal/dupid"
	"github.com/neardup/neardup/internal/extsort"
	"github.com/neardup/neardup/internal/htmlreport"
	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/internal/progress"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/sigfile"
)

// Tool is the name report.json gives Run.
const Tool = "neardup dedup"

// run is the state of one deduplication.
type run struct {
	opts     *Options
	job      jobspec.Job
	keptName string // kept.jsonl, or kept.warc.gz
	sketch   sketch.Sketch
	inputs   []string
	tmp      string
	bar      *progress.Bar
	rep      *Report
	t0       time.Time
	out      outputs // the output files, committed together at the end

	docs     docTable
	texts    *textStore      // document texts or their records' locations, for exact verification, from document textBase on
	textBase uint32          // the first document with a text record (reference documents without texts come before)
	textsOn  bool            // a text record has been stored
	sigs     *docstore.Store // packed signatures, unless sigMem holds them (under exact verification, of the reference documents only)
	sigMem   []uint64        // signatures in memory by document (Words() each, zeros when unsigned), when the sketch groups by signature
	entries  entrySorter     // band-key entries (sketch.AppendKeyEntries)
	feed     *entryFeed      // during sign: adds the entries to the sorter on a goroutine of its own
	exact    *exactPass      // the exact-duplicate pass, or nil

	ref      refs            // reference documents (Options.Against)
	stored   *storedSigs     // the inputs' stored signatures (Options.Signatures)
	sigOut   *sigfile.Writer // Options.SignaturesOut (under SkipBad, staged until sign ends)
	sigStage string          // the staged signature file, under SkipBad
	emptySig []uint64        // the signature of a text without features, for sigOut

	ids         *dupid.Detector // during sign: the check of repeated ids
	dropped     int64           // documents made bad for a repeated id
	droppedDocs []int64         // those documents, ascending
	bad         *corpus.BadLog  // Options.BadOut, or nil

	hashMetrics minhash.Metrics
	parseStats  corpus.Stats
	readStats   corpus.Stats

	pairs   *pairList // unique candidate pairs
	buckets lsh.CandidateMetrics
	top     jobspec.TopBuckets // the largest shared buckets, for the report
	edges   *edgeStore         // verified pairs, in (a, b) order once verified
	tally   *edgeTally         // what the report needs of them, per document
	result  *cluster.Result
	samples []htmlreport.Sample // the HTML report's sampled clusters, once sampled
	sampled bool
	counted bool // countDocuments has run
}

// Run deduplicates the documents of inputs ("-" is standard input) and
// writes kept.jsonl, clusters.jsonl, pairs.tsv, report.json and report.html
// into outDir, creating it if needed. It returns the report it wrote. The
// outputs depend only on the inputs and the options other than Workers,
// Memory, TempDir and Progress: any number of workers, and runs that spill or
// not, write byte-identical kept.jsonl, clusters.jsonl and pairs.tsv.
//
// Every output is written under a temporary name in outDir (a hidden file
// ending in .tmp) and renamed to its final name only once all of them are
// complete: a run that fails (a bad record, a full disk, a cancelled
// context) leaves none of its outputs and no temporary file, and earlier
// outputs of the same names as they were.
//
// # Memory
//
// Options.Memory bounds the data that grows with the corpus, and Run also
// keeps the garbage collector within it through the process-wide memory
// limit (debug.SetMemoryLimit), which is the only way to bound the heap: while
// runs are active, the limit is the sum of their budgets (so concurrent runs
// are safe and each has its budget), never more than the limit the process
// had before (GOMEMLIMIT, or one the program set, is never raised), and that
// limit is restored when the last run returns. A program that sets the limit
// itself while a run is active sees its setting replaced when a run starts or
// ends. Run also collects garbage between its stages, so that the next stage
// reuses what the last released rather than fresh pages (under a large budget
// the limit is far off and the pacer would wait for the heap to double), and
// returns the free heap to the system (debug.FreeOSMemory) once every output
// but kept.jsonl is written, while that is copied: the process's exit after
// a run then has little to unmap.
//
// What the budget does not bound is a few bytes a document, for the whole
// run: its status and the end of its id (5 bytes) and the id itself, 4 more
// under KeepLongest or 8 under KeepField, and under exact verification 4 for
// where its text is; verification adds 4 a document and 8 a document in a
// candidate pair, clustering 8 (16 under KeepLongest). So N documents with
// ids of L bytes need about N·(17 + L) bytes beside the budget (exact
// verification, the default policy; 0.54 GB for 20M documents with 10-byte
// ids). Peak RSS stays within the budget plus 10 % while that is at most a
// tenth of the budget (past a quarter, the report warns and names a budget
// of which it is a quarter); the rest of the budget's slack (live data peaks near
// half of it) absorbs more in practice (BENCHMARKS.md, "Per-document
// memory").
func Run(ctx context.Context, inputs []string, outDir string, opts *Options) (*Report, error) {
	return runJob(ctx, inputs, outDir, opts, nil)
}

// runJob is Run with wrap, if not nil, standing between each output file and
// its writer (for the tests, which inject write errors).
func runJob(ctx context.Context, inputs []string, outDir string, opts *Options, wrap func(path string, w io.Writer) io.Writer) (*Report, error) {
	o := *opts.EnsureDefaults()
	job, err := o.Job()
	if err != nil {
		return nil, err
	}
	if len(inputs) == 0 {
		return nil, fmt.Errorf("%w: no inputs", ErrInvalidOptions)
	}
	if !job.NeedsDF() {
		// Refuse a bad sketch before any work; with TF-IDF that waits for
		// the document frequencies.
		if _, err := job.Sketch.New(); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("dedup: %w", err)
	}
	tmp, err := os.MkdirTemp(o.TempDir, "neardup-dedup-*")
	if err != nil {
		return nil, fmt.Errorf("dedup: %w", err)
	}
	defer os.RemoveAll(tmp)

	r := &run{opts: &o, job: job, docs: newDocTable(job.Keep.Kind), inputs: append([]string(nil), inputs...), tmp: tmp, t0: time.Now()}
	r.out.wrap = wrap
	defer r.out.abort() // a failed run leaves no output, nor temporary file
	if o.Progress != nil {
		r.bar = progress.New(o.Progress)
	}
	reported := slices.Clone(r.inputs)
	golden, err := readGolden(&o)
	if err != nil {
		return nil, err
	}

	// Standard input is read twice or more (boilerplate, signing, then
	// writing kept.jsonl), so it is spooled to a file first. The report
	// keeps the inputs as given ("-"), so the spooled names go into a slice
	// of their own.
	stdin := o.Corpus.Stdin
	if stdin == nil {
		stdin = os.Stdin
	}
	for i, in := range r.inputs {
		if in == "-" {
			path, cleanup, err := corpus.Spool(stdin, tmp)
			if err != nil {
				return nil, err
			}
			defer cleanup()
			r.inputs[i] = path
		}
	}
	// The kept records go to kept.jsonl, or for WARC inputs kept.warc.gz.
	ext, err := corpus.KeptExtension(r.inputs, &o.Corpus)
	if err != nil {
		return nil, err
	}
	r.keptName = strings.TrimSuffix(KeptFile, ".jsonl") + ext

	// The first pass over the corpus, when boilerplate lines are dropped:
	// the set goes into the job's spec before anything is signed.
	t := time.Now()
	if o.DropsBoilerplate() {
		r.bar.Stage("boilerplate", -1, nil)
	}
	bp, err := o.ResolveBoilerplate(ctx, r.inputs, &r.job)
	r.bar.Finish()
	if err != nil {
		return nil, err
	}
	r.rep = jobspec.NewReport(Tool, reported, &o, &r.job)
	r.rep.Boilerplate = bp
	if bp != nil {
		r.rep.Timings = append(r.rep.Timings, Timing{Stage: "boilerplate", Seconds: time.Since(t).Seconds()})
	}

	// The list of bad records is an output too, committed with the others.
	if o.BadOut != "" {
		w, err := r.out.create(o.BadOut)
		if err != nil {
			return nil, err
		}
		r.bad = corpus.NewBadLog(w)
	}

	// The budget: a quarter for band-key entries (three quarters of it
	// held while signing, in key ranges, and a quarter for sorting the
	// ranges side by side in candidates: extsort.Partitioned; more, once
	// the first batch tells how many documents are coming, if the rest of
	// the budget has room: entryHold), an eighth each for stored
	// texts and (later) feature sets, a sixteenth each for signatures,
	// candidate pairs and, while signing, the check of repeated ids (sign).
	// Under exact verification no signature is kept while signing, so the
	// texts have the signatures' sixteenth too; verify's recomputed
	// signatures take the entries' quarter, free once candidates are found,
	// less what the texts hold (verify.go). The verified
	// pairs have a sixteenth from verify on, and their sort by ids another
	// while pairs.tsv is written (edges.go). The rest is for
	// per-document bookkeeping, batches in flight and the garbage collector,
	// which is told to keep the heap within the budget (see Run's doc): live
	// data peaks near half of it.
	m := o.Memory
	defer acquireBudget(m)()
	if r.job.NeedsDF() {
		t := time.Now()
		if err := r.countDF(ctx); err != nil {
			return nil, err
		}
		r.rep.Timings = append(r.rep.Timings, Timing{Stage: "df", Seconds: time.Since(t).Seconds()})
	}
	if r.sketch, err = r.job.Sketch.New(); err != nil {
		return nil, err
	}
	r.entries = newEntrySorter(tmp, m/8, r.sketch.KeyBits())
	if p, ok := r.entries.(*extsort.Partitioned); ok {
		defer p.Close() // candidates closes it, unless a stage before fails
	}
	r.edges = newEdgeStore(tmp, m/16)
	defer r.edges.close()
	if job.Verify == VerifyExact {
		// Exact verification keeps the texts, and recomputes the
		// signatures of the documents in candidate pairs from them (see
		// verify): no signature is kept while signing.
		r.texts = newTextStore(tmp, m/8+m/16)
		defer r.texts.Close()
	} else {
		r.sigs = docstore.New(tmp, "sigs", m/16)
		defer r.sigs.Close()
	}
	if job.Verify == VerifyExact && len(o.Against) > 0 {
		// The reference documents' signatures are read (or made) once and
		// kept: those of a signature file or an index have no text to
		// recompute them from.
		r.sigs = docstore.New(tmp, "sigs", m/16)
		defer r.sigs.Close()
	}
	// The ids of reference documents: only those in verified pairs are
	// read back.
	r.ref.ids = docstore.New(tmp, "refids", m/64)
	defer r.ref.ids.Close()
	if o.Signatures != "" {
		if err := r.openStored(); err != nil {
			return nil, err
		}
		defer r.stored.r.Close()
	}
	if o.SignaturesOut != "" {
		if err := r.openSignaturesOut(); err != nil {
			return nil, err
		}
		defer r.sigOut.Abort()
	}
	if !o.SkipExactPass {
		if k, err := r.sketch.NewSketcher(); err != nil {
			return nil, err
		} else if _, ok := k.(sketch.TextHasher); ok {
			r.exact = newExactPass(m, tmp)
		}
	}
	r.rep.Config.ExactPass = r.exact != nil

	type stage struct {
		name string
		fn   func(context.Context) error
	}
	var stages []stage
	if len(o.Against) > 0 {
		stages = append(stages, stage{"reference", r.reference})
	}
	stages = append(stages, []stage{
		{"sign", r.sign},
		{"candidates", r.candidates},
		{"verify", r.verify},
		{"cluster", func(ctx context.Context) error {
			if err := r.place(); err != nil {
				return err
			}
			return r.cluster(ctx)
		}},
		{"write", func(ctx context.Context) error { return r.write(ctx, outDir) }},
	}...)
	for i, st := range stages {
		t := time.Now()
		if err := st.fn(ctx); err != nil {
			return nil, err
		}
		if i < len(stages)-1 {
			collectBetweenStages()
		}
		r.rep.Timings = append(r.rep.Timings, Timing{Stage: st.name, Seconds: time.Since(t).Seconds()})
	}
	if r.sigOut != nil {
		if err := r.sigOut.Close(); err != nil {
			return nil, fmt.Errorf("dedup: --signatures-out: %w", err)
		}
	}
	r.finish()
	if golden != nil {
		if r.rep.Golden, err = r.scoreGolden(golden); err != nil {
			return nil, err
		}
	}
	if bp != nil {
		if err := r.out.write(filepath.Join(outDir, boilerplate.FileName), func(w *bufio.Writer) error {
			return boilerplate.WriteLines(w, r.job.Sketch.Spec, bp)
		}); err != nil {
			return nil, err
		}
	}
	if err := r.writeReport(filepath.Join(outDir, ReportFile)); err != nil {
		return nil, err
	}
	if err := r.writeHTML(ctx, filepath.Join(outDir, HTMLFile)); err != nil {
		return nil, err
	}
	if err := r.out.commit(); err != nil {
		return nil, err
	}
	return r.rep, nil
}
