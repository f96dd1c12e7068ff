package dedup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/neardup/neardup/cluster"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
)

// This file exports the rules and formats of Run's outputs for other drivers
// of the same stages (the Apache Beam job in beam/), so that they reproduce
// pairs.tsv, clusters.jsonl and report.json byte for byte without a second
// implementation.

// EntryDocBits is the number of low bits of a band-key entry that hold the
// document index: Run packs entries with lsh.PackEntry(key, doc, EntryDocBits),
// so its LSH buckets are keyed by lsh.EntryKey(key, EntryDocBits), the band key
// with its low 32 bits cleared. A driver that groups by that truncated key sees
// exactly Run's buckets, accidental key collisions included.
const EntryDocBits = docBits

// Banding returns the LSH bands a run with o (after EnsureDefaults) uses:
// o.Bands when set, else the most precise banding reaching o.Recall at
// o.Threshold (lsh.ForRecall).
func (o *Options) Banding() (lsh.Params, error) { return o.bands() }

// ClusterOptions returns the cluster options a run with o (after
// EnsureDefaults) clusters the verified pairs with: the threshold as the
// similarity floor (0 under VerifyNone, where every candidate links) and the
// keep policy.
func (o *Options) ClusterOptions() *cluster.Options {
	c := &cluster.Options{Threshold: o.Threshold, Keep: o.Keep}
	if o.Verify == VerifyNone {
		c.Threshold = 0
	}
	return c
}

// EdgeSim returns the similarity that decides a verified pair for clustering:
// the exact Jaccard similarity when computed (exact ≥ 0), else the estimate.
func EdgeSim(est, exact float64) float64 { return edge{est: est, exact: exact}.sim() }

// PairRow is one line of pairs.tsv before formatting. IDA ≤ IDB bytewise;
// A < B are the input positions of the pair's documents (in input order, not
// in id order), which order rows whose ids are equal. A driver may use any
// order-preserving numbering of the documents for A and B (Run uses the
// global record index). The zero value is an empty row.
type PairRow struct {
	// IDA and IDB are the pair's document ids, IDA ≤ IDB bytewise.
	IDA, IDB []byte
	// A and B are the documents' input positions, A < B.
	A, B uint64
	// Est is the pair's similarity estimated from the signatures.
	Est float64
	// Exact is the exact Jaccard similarity, or a negative value when it was
	// not computed (written as "-").
	Exact float64
}

// NewPairRow returns the row of the verified pair of documents a < b (input
// positions) whose ids are idOfA and idOfB, ordering the ids bytewise. The
// row aliases the id slices.
func NewPairRow(idOfA, idOfB []byte, a, b uint64, est, exact float64) PairRow {
	if bytes.Compare(idOfA, idOfB) > 0 {
		idOfA, idOfB = idOfB, idOfA
	}
	return PairRow{IDA: idOfA, IDB: idOfB, A: a, B: b, Est: est, Exact: exact}
}

// ComparePairRows orders rows as pairs.tsv lists them: by IDA, then IDB
// (bytewise), then, for equal ids, by A and B. It returns -1, 0 or +1.
func ComparePairRows(x, y PairRow) int {
	if c := bytes.Compare(x.IDA, y.IDA); c != 0 {
		return c
	}
	if c := bytes.Compare(x.IDB, y.IDB); c != 0 {
		return c
	}
	switch {
	case x.A < y.A:
		return -1
	case x.A > y.A:
		return 1
	case x.B < y.B:
		return -1
	case x.B > y.B:
		return 1
	}
	return 0
}

// AppendLine appends the row's pairs.tsv line, newline included:
// idA, idB, the estimate and the exact similarity (six decimals, "-" when not
// computed), tab-separated, ids Go-quoted when they hold a tab, a line break
// or a quote.
func (r PairRow) AppendLine(dst []byte) []byte {
	dst = append(dst, tsvField(r.IDA)...)
	dst = append(dst, '\t')
	dst = append(dst, tsvField(r.IDB)...)
	dst = append(dst, '\t')
	dst = strconv.AppendFloat(dst, r.Est, 'f', 6, 64)
	dst = append(dst, '\t')
	if r.Exact >= 0 {
		dst = strconv.AppendFloat(dst, r.Exact, 'f', 6, 64)
	} else {
		dst = append(dst, '-')
	}
	return append(dst, '\n')
}

// AppendClusterLine appends the clusters.jsonl line of c, newline included,
// encoded as Run encodes it (encoding/json without HTML escaping).
func AppendClusterLine(dst []byte, c *ClusterLine) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		return dst, fmt.Errorf("dedup: cluster %d: %w", c.Cluster, err)
	}
	return append(dst, buf.Bytes()...), nil
}

// HistogramBins is the number of bins of Report.PairSim, each 1/HistogramBins
// wide.
const HistogramBins = 20

// HistogramBin returns the bin of Report.PairSim that counts similarity x:
// ⌊x·HistogramBins⌋, clamped to 0 … HistogramBins−1 (so 1.0 falls in the last).
func HistogramBin(x float64) int {
	return min(HistogramBins-1, max(0, int(math.Floor(x*HistogramBins))))
}

// NewHistogram returns an empty pair-similarity histogram as Report.PairSim
// holds it, with an Exact column when exact is true.
func NewHistogram(exact bool) Histogram {
	h := Histogram{Lower: make([]float64, HistogramBins), Estimate: make([]int64, HistogramBins)}
	if exact {
		h.Exact = make([]int64, HistogramBins)
	}
	for i := range h.Lower {
		h.Lower[i] = float64(i) / HistogramBins
	}
	return h
}

// Add counts one verified pair; exact is ignored when h has no Exact column.
func (h *Histogram) Add(est, exact float64) {
	h.Estimate[HistogramBin(est)]++
	if h.Exact != nil {
		h.Exact[HistogramBin(exact)]++
	}
}

// NewReport returns a report for a run of tool over inputs with o (after
// EnsureDefaults) and bands: the tool, version, inputs, configuration and
// expected recall filled in as Run fills them, everything else zero.
func NewReport(tool string, inputs []string, o *Options, bands lsh.Params) *Report {
	rep := newReport(&run{opts: o, bands: bands, inputs: inputs})
	rep.Tool = tool
	return rep
}

// Flags are the command-line flags of "neardup dedup", for commands that take
// the same flags (the Beam job's neardup-beam). Register them with AddFlags,
// then turn them into Options with Options. The zero value is ready for
// AddFlags, which sets the defaults.
type Flags struct {
	Out       string  // --out, -o: output directory; required, no default
	Threshold float64 // --threshold: Jaccard similarity of a near duplicate; default 0.8
	Recall    float64 // --recall: candidate probability at the threshold the bands are chosen for; default 0.99
	Bands     int     // --bands: LSH bands, with Rows; default 0 (chosen from Threshold and Recall)
	Rows      int     // --rows: rows per band, with Bands; default 0
	Probe     int     // --multi-probe: rows in which a band may differ and still match, 0, 1 or 2; default 0
	BucketCap int     // --bucket-cap: largest bucket paired in full, in documents; default lsh.DefaultCap (1000)
	Verify    string  // --verify: exact, estimate or none; default "exact"
	Cluster   string  // --cluster: components or star; default "components"
	Keep      string  // --keep: first, longest or field:NAME; default "first"
	Workers   int     // --workers: worker goroutines; default 0 (all cores)
	Memory    string  // --memory: memory budget, a size for ParseBytes; default "4GiB"
	TmpDir    string  // --tmp-dir: directory for spill files; default "" (the system's)
	Quiet     bool    // --quiet, -q: no progress bar; default false (Options does not read it)
	Golden    string  // --golden: truth file to score the run against; default "" (none)
	// Sketch flags.
	Shingle string // --shingle: shingling spec; default "prose"
	Scheme  string // --scheme: oph or khash; default "oph"
	NumPerm int    // --num-perm: signature slots, k; default 128
	Bits    int    // --bits: bits kept per slot; default 32
	Seed    uint64 // --seed: hash seed; default 0
	// Corpus flags.
	Format         string // --format: auto, jsonl, parquet, lines or dir; default "auto"
	IDField        string // --id-field: JSON key or Parquet column of the id; default "id"
	TextField      string // --text-field: JSON key or Parquet column of the text; default "text"
	SkipBad        bool   // --skip-bad: count and skip bad records; default false
	MaxRecordBytes int    // --max-record-bytes: longest record accepted, in bytes; default 64 MiB
}

// AddFlags registers the flags on fs with the defaults and usage strings of
// "neardup dedup".
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&f.Out, "out", "o", "", "output directory for kept.jsonl, clusters.jsonl, pairs.tsv, report.json (required)")
	fs.Float64Var(&f.Threshold, "threshold", 0.8, "Jaccard similarity at or above which documents are near duplicates")
	fs.Float64Var(&f.Recall, "recall", 0.99, "probability that a pair at the threshold becomes a candidate; bands are chosen from it")
	fs.IntVar(&f.Bands, "bands", 0, "LSH bands (with --rows; default: chosen from --threshold and --recall)")
	fs.IntVar(&f.Rows, "rows", 0, "LSH rows per band (with --bands)")
	fs.IntVar(&f.Probe, "multi-probe", 0, "also match bands that differ in up to this many rows (0, 1 or 2)")
	fs.IntVar(&f.BucketCap, "bucket-cap", lsh.DefaultCap, "largest bucket paired in full; larger ones link to one member")
	fs.StringVar(&f.Verify, "verify", "exact", "candidate check: exact (Jaccard of the feature sets), estimate (signatures) or none")
	fs.StringVar(&f.Cluster, "cluster", "components", "grouping: components (union-find) or star (every member ≥ threshold to the kept document)")
	fs.StringVar(&f.Keep, "keep", "first", "document kept per cluster: first, longest or field:NAME (largest numeric value)")
	fs.IntVar(&f.Workers, "workers", 0, "worker goroutines (default: all cores)")
	fs.StringVar(&f.Memory, "memory", "4GiB", "memory budget for corpus-sized data; past it, runs spill to disk")
	fs.StringVar(&f.TmpDir, "tmp-dir", "", "directory for spill files (default: the system temporary directory)")
	fs.BoolVarP(&f.Quiet, "quiet", "q", false, "no progress bar")
	fs.StringVar(&f.Golden, "golden", "", "truth file (from eval truth, or id pairs) to score the run against, into report.json and report.html")
	fs.StringVar(&f.Shingle, "shingle", "prose", "shingling spec: prose, code, cjk, web, word:N, char:N or token:N")
	fs.StringVar(&f.Scheme, "scheme", "oph", "signature scheme: oph (one permutation, densified) or khash (k hash functions)")
	fs.IntVar(&f.NumPerm, "num-perm", 128, "signature slots (k)")
	fs.IntVar(&f.Bits, "bits", 32, "bits kept per slot: 64, 32, 16, 8, 4, 2 or 1")
	fs.Uint64Var(&f.Seed, "seed", 0, "hash seed; signatures of different seeds are not comparable")
	fs.StringVar(&f.Format, "format", "auto", "input format: auto (by extension), jsonl, parquet, lines or dir")
	fs.StringVar(&f.IDField, "id-field", "id", "JSON key or Parquet column of the document id (missing: the line number)")
	fs.StringVar(&f.TextField, "text-field", "text", "JSON key or Parquet column of the document text")
	fs.BoolVar(&f.SkipBad, "skip-bad", false, "count and skip bad records instead of failing on the first")
	fs.IntVar(&f.MaxRecordBytes, "max-record-bytes", 64<<20, "longest record accepted, in bytes")
}

// Options returns the Options the flags ask for, with defaults filled in and
// validated, as "neardup dedup" builds them (Progress is left nil). Errors
// are the caller's (a usage error): they name the flag's value and wrap
// ErrInvalidOptions or the failing package's sentinel.
func (f *Flags) Options() (*Options, error) {
	if f.Out == "" {
		return nil, fmt.Errorf("%w: --out is required", ErrInvalidOptions)
	}
	spec, err := shingle.Parse(f.Shingle)
	if err != nil {
		return nil, err
	}
	scheme, err := minhash.ParseScheme(f.Scheme)
	if err != nil {
		return nil, err
	}
	params := minhash.Params{K: f.NumPerm, Scheme: scheme, Bits: f.Bits, Seed: f.Seed}
	if err := params.Validate(); err != nil {
		return nil, err
	}
	var c corpus.Options
	if err := c.Format.Set(f.Format); err != nil {
		return nil, err
	}
	c.IDField, c.TextField, c.SkipBad, c.MaxRecordBytes = f.IDField, f.TextField, f.SkipBad, f.MaxRecordBytes
	if err := c.Validate(); err != nil {
		return nil, err
	}
	opts := &Options{Corpus: c, Spec: spec, Params: params, Threshold: f.Threshold, Recall: f.Recall,
		BucketCap: f.BucketCap, Workers: f.Workers, TempDir: f.TmpDir, Golden: f.Golden}
	if (f.Bands > 0) != (f.Rows > 0) {
		return nil, fmt.Errorf("%w: --bands and --rows go together", ErrInvalidOptions)
	}
	if f.Bands > 0 {
		opts.Bands = lsh.Params{Bands: f.Bands, Rows: f.Rows, Probe: f.Probe}
	} else if f.Probe > 0 {
		b, err := lsh.ForRecall(f.Threshold, params.K, f.Recall)
		if err != nil {
			return nil, err
		}
		b.Probe = f.Probe
		opts.Bands = b
	}
	if opts.Verify, err = ParseVerify(f.Verify); err != nil {
		return nil, err
	}
	if opts.Cluster, err = ParseClusterMode(f.Cluster); err != nil {
		return nil, err
	}
	if opts.Keep, err = cluster.ParsePolicy(f.Keep); err != nil {
		return nil, err
	}
	if opts.Memory, err = ParseBytes(f.Memory); err != nil {
		return nil, err
	}
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return opts, nil
}
