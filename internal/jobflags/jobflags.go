// Package jobflags is the command-line flag set of a deduplication job:
// "neardup dedup" and "neardup-beam" register the same flags (Dedup), and
// every neardup command that signs or reads corpora registers the groups it
// needs (Sketch, Corpus, Boilerplate). Each flag's value is checked against its range when
// the flags are turned into options, before any work: a value the options
// would read as "default" (--threshold 0, --memory 0) is refused like any
// other out of range, with an error that names the flag, the value and the
// range (the commands exit 2 on it).
//
// It is a separate package so that the library packages (dedup, jobspec) do
// not link the flag library.
package jobflags

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/neardup/neardup/cluster"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/bytesize"
	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/internal/keyfile"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
	"github.com/neardup/neardup/simhash"
)

// flagError names the flag and its value before the error of the rule it
// breaks, which it wraps (jobspec.ErrInvalidOptions, corpus.ErrBadOptions,
// …; check with errors.Is).
func flagError(name string, value any, err error) error {
	return fmt.Errorf("--%s %v: %w", name, value, err)
}

// Sketch are the flags that define features and signatures: --sketch,
// --shingle, MinHash's --scheme, --num-perm, --bits and --seed, SimHash's
// --weight, --hamming and --blocks, and the Key group's --key-file. The zero
// value is ready for AddFlags, which sets the defaults.
type Sketch struct {
	Kind    string // --sketch: minhash or simhash; default "minhash"
	Shingle string // --shingle: shingling spec; default "prose"
	Scheme  string // --scheme: oph or khash; default "oph"
	NumPerm int    // --num-perm: signature slots, k; default 128
	Bits    int    // --bits: bits kept per slot; default 32
	Seed    uint64 // --seed: hash seed; default 0
	Weight  string // --weight: SimHash weighting, tf or tfidf; default "tf"
	Hamming int    // --hamming: SimHash candidate distance in bits, 0 to 8; default sketch.DefaultHamming (6)
	Blocks  int    // --blocks: SimHash blocks; default 0 (chosen from the number of documents)
	Key     Key    // --key-file: the secret key of a keyed spec; default none
}

// Key is the flag that makes a shingle spec keyed: --key-file, the file of
// the secret SipHash key (package internal/keyfile: 32 hexadecimal digits or
// 16 raw bytes). Commands that take a spec without the rest of the sketch
// (eval truth) register it alone. The zero value is ready for AddFlags.
type Key struct {
	File string // --key-file: path of the key file; default "" (unkeyed)
	// Warn receives the warning about a key file every user may read.
	// Default nil: os.Stderr.
	Warn io.Writer
}

// AddFlags registers --key-file on fs.
func (f *Key) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.File, "key-file", "", "keyed hashing: the secret SipHash key, 32 hex digits or 16 raw bytes (e.g. openssl rand -hex 16 > key; chmod 600 key); only its id appears in specs and outputs")
}

// Apply returns spec keyed with the key in File, or spec unchanged when File
// is empty. Errors name the flag and wrap keyfile.ErrKeyFile or the file
// system's error; they never show the key.
func (f *Key) Apply(spec shingle.Spec) (shingle.Spec, error) {
	if f.File == "" {
		return spec, nil
	}
	warn := f.Warn
	if warn == nil {
		warn = os.Stderr
	}
	k, err := keyfile.Read(f.File, warn)
	if err != nil {
		return spec, flagError("key-file", f.File, err)
	}
	spec.Key = k
	return spec, nil
}

// Defaults of the MinHash flags, which --sketch simhash refuses when
// changed.
const (
	defaultScheme  = "oph"
	defaultNumPerm = 128
	defaultBits    = 32
)

// AddFlags registers the sketch flags on fs with their defaults.
func (f *Sketch) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Kind, "sketch", "minhash", "sketch: minhash (signatures and LSH bands) or simhash (64-bit fingerprints within a Hamming distance: 8 bytes a document, for near-exact duplicates)")
	fs.StringVar(&f.Shingle, "shingle", "prose", "shingling spec: prose, code, cjk, web, word:N, char:N or token:N")
	fs.StringVar(&f.Scheme, "scheme", defaultScheme, "minhash signature scheme: oph (one permutation, densified) or khash (k hash functions)")
	fs.IntVar(&f.NumPerm, "num-perm", defaultNumPerm, "minhash signature slots (k)")
	fs.IntVar(&f.Bits, "bits", defaultBits, "minhash bits kept per slot: 64, 32, 16, 8, 4, 2 or 1")
	fs.Uint64Var(&f.Seed, "seed", 0, "minhash hash seed; signatures of different seeds are not comparable")
	fs.StringVar(&f.Weight, "weight", "tf", "simhash feature weights: tf (term frequency) or tfidf (document frequencies counted in a first pass)")
	fs.IntVar(&f.Hamming, "hamming", sketch.DefaultHamming, fmt.Sprintf("simhash: fingerprints within this many bits are candidates, 0 to %d (plan --sketch simhash measures it)", simhash.MaxMaxDistance))
	fs.IntVar(&f.Blocks, "blocks", 0, fmt.Sprintf("simhash blocks of the permutation tables, hamming+1 to %d (default: chosen from the number of documents)", simhash.MaxBlocks))
	f.Key.AddFlags(fs)
}

// SimHash returns the sketch the flags select and, for SimHash, its
// options, each value checked; MinHash flags changed under --sketch simhash
// (and SimHash flags under minhash) are refused, as they would be ignored.
func (f *Sketch) SimHash() (sketch.Kind, jobspec.SimHashOptions, error) {
	var o jobspec.SimHashOptions
	kind, err := sketch.ParseKind(f.Kind)
	if err != nil {
		return kind, o, flagError("sketch", f.Kind, err)
	}
	if kind == sketch.MinHash {
		for _, c := range []struct {
			name    string
			value   any
			changed bool
		}{{"weight", f.Weight, f.Weight != "tf"}, {"hamming", f.Hamming, f.Hamming != sketch.DefaultHamming}, {"blocks", f.Blocks, f.Blocks != 0}} {
			if c.changed {
				return kind, o, flagError(c.name, c.value, fmt.Errorf("%w: a simhash flag; add --sketch simhash", jobspec.ErrInvalidOptions))
			}
		}
		return kind, o, nil
	}
	for _, c := range []struct {
		name    string
		value   any
		changed bool
	}{{"scheme", f.Scheme, f.Scheme != defaultScheme}, {"num-perm", f.NumPerm, f.NumPerm != defaultNumPerm},
		{"bits", f.Bits, f.Bits != defaultBits}, {"seed", f.Seed, f.Seed != 0}} {
		if c.changed {
			return kind, o, flagError(c.name, c.value, fmt.Errorf("%w: a minhash flag; --sketch simhash makes 64-bit fingerprints", jobspec.ErrInvalidOptions))
		}
	}
	switch f.Weight {
	case "tf":
		o.Weight = sigfile.TF
	case "tfidf":
		o.Weight = sigfile.TFIDF
	default:
		return kind, o, flagError("weight", f.Weight, fmt.Errorf("%w: want tf or tfidf", jobspec.ErrInvalidOptions))
	}
	if err := jobspec.CheckHamming(f.Hamming); err != nil {
		return kind, o, flagError("hamming", f.Hamming, err)
	}
	o.Hamming = f.Hamming
	if f.Hamming == 0 {
		o.Hamming = simhash.ExactMatch
	}
	if f.Blocks != 0 {
		if err := jobspec.CheckBlocks(f.Blocks, f.Hamming); err != nil {
			return kind, o, flagError("blocks", f.Blocks, err)
		}
	}
	o.Blocks = f.Blocks
	return kind, o, nil
}

// Parse returns the shingle spec (keyed when --key-file is given) and the
// minhash params the flags give, validated (params with every field set).
func (f *Sketch) Parse() (shingle.Spec, minhash.Params, error) {
	spec, err := shingle.Parse(f.Shingle)
	if err != nil {
		return spec, minhash.Params{}, flagError("shingle", f.Shingle, err)
	}
	if spec, err = f.Key.Apply(spec); err != nil {
		return spec, minhash.Params{}, err
	}
	scheme, err := minhash.ParseScheme(f.Scheme)
	if err != nil {
		return spec, minhash.Params{}, flagError("scheme", f.Scheme, err)
	}
	p := minhash.Params{K: f.NumPerm, Scheme: scheme, Bits: f.Bits, Seed: f.Seed}
	if err := (minhash.Params{K: p.K, Scheme: scheme, Bits: 32}).Validate(); err != nil {
		return spec, p, flagError("num-perm", f.NumPerm, err)
	}
	if err := p.Validate(); err != nil {
		return spec, p, flagError("bits", f.Bits, err)
	}
	return spec, p, nil
}

// Corpus are the flags that say how to read inputs: --format, --id-field,
// --text-field, --html, --skip-bad and --max-record-bytes. The zero value is
// ready for AddFlags, which sets the defaults.
type Corpus struct {
	Format         string // --format: auto, jsonl, parquet, lines, dir, warc or wet; default "auto"
	IDField        string // --id-field: JSON key or Parquet column of the id, or for WARC and WET record-id or uri; default "id" (record-id for WARC)
	TextField      string // --text-field: JSON key or Parquet column of the text; default "text"
	HTML           bool   // --html: texts are HTML, their visible text is extracted; default false
	SkipBad        bool   // --skip-bad: count and skip bad records; default false
	MaxRecordBytes int    // --max-record-bytes: longest record accepted, in bytes; default 64 MiB
}

// AddFlags registers the corpus flags on fs with their defaults.
func (f *Corpus) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Format, "format", "auto", "input format: auto (by extension: .jsonl, .parquet, .txt, .warc, .wet, a directory), jsonl, parquet, lines, dir, warc or wet")
	fs.StringVar(&f.IDField, "id-field", "id", "JSON key or Parquet column of the document id (missing: the line number); for WARC and WET: record-id (WARC-Record-ID, the default) or uri (WARC-Target-URI)")
	fs.StringVar(&f.TextField, "text-field", "text", "JSON key or Parquet column of the document text")
	fs.BoolVar(&f.HTML, "html", false, "the texts (JSON, Parquet, lines, files of a directory) are HTML: shingle their visible text (WARC responses always are)")
	fs.BoolVar(&f.SkipBad, "skip-bad", false, "count and skip bad records instead of failing on the first")
	fs.IntVar(&f.MaxRecordBytes, "max-record-bytes", 64<<20, "longest record accepted, in bytes")
}

// Options returns the corpus options the flags give, validated; the input
// "-" reads stdin.
func (f *Corpus) Options(stdin io.Reader) (corpus.Options, error) {
	o := corpus.Options{Stdin: stdin}
	if err := o.Format.Set(f.Format); err != nil {
		return o, flagError("format", f.Format, err)
	}
	for _, fl := range []struct{ name, v string }{{"id-field", f.IDField}, {"text-field", f.TextField}} {
		if fl.v == "" {
			return o, flagError(fl.name, `""`, fmt.Errorf("%w: want a field name", corpus.ErrBadOptions))
		}
	}
	if f.MaxRecordBytes < 1 {
		return o, flagError("max-record-bytes", f.MaxRecordBytes, fmt.Errorf("%w: want at least 1 byte", corpus.ErrBadOptions))
	}
	if err := (&corpus.Options{MaxRecordBytes: f.MaxRecordBytes}).Validate(); err != nil {
		return o, flagError("max-record-bytes", f.MaxRecordBytes, err)
	}
	o.IDField, o.TextField, o.SkipBad, o.MaxRecordBytes, o.HTML = f.IDField, f.TextField, f.SkipBad, f.MaxRecordBytes, f.HTML
	if err := o.Validate(); err != nil { // what is left: the field names together
		return o, fmt.Errorf("--id-field %q --text-field %q: %w", f.IDField, f.TextField, err)
	}
	return o, nil
}

// Boilerplate are the flags that have a job drop boilerplate lines:
// --boilerplate and --boilerplate-lines. The zero value is ready for
// AddFlags, which sets the defaults.
type Boilerplate struct {
	Mode  string // --boilerplate: off, auto or N; default "off"
	Lines string // --boilerplate-lines: a lines file to drop instead of counting; default "" (none)
}

// AddFlags registers the boilerplate flags on fs with their defaults.
func (f *Boilerplate) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Mode, "boilerplate", "off", "drop lines found in at least N documents before shingling: off, auto (N chosen from the corpus) or N; a first pass counts them")
	fs.StringVar(&f.Lines, "boilerplate-lines", "", "drop the lines of this file (from neardup boilerplate, or a dedup run's boilerplate.tsv) instead of counting")
}

// Parse returns the mode and lines file the flags give.
func (f *Boilerplate) Parse() (jobspec.BoilerplateMode, string, error) {
	m, err := jobspec.ParseBoilerplate(f.Mode)
	if err != nil {
		return m, "", flagError("boilerplate", f.Mode, err)
	}
	if f.Lines != "" && m != jobspec.BoilerplateOff {
		return m, "", fmt.Errorf("--boilerplate %s and --boilerplate-lines %s: give one (%w)", f.Mode, f.Lines, jobspec.ErrInvalidOptions)
	}
	if f.Lines != "" && !strings.Contains(f.Lines, "://") {
		if _, err := os.Stat(f.Lines); err != nil {
			return m, "", flagError("boilerplate-lines", f.Lines, err)
		}
	}
	return m, f.Lines, nil
}

// Dedup are the flags of a deduplication job, "neardup dedup"'s, which
// "neardup-beam" takes too. Register them with AddFlags, then turn them into
// jobspec.Options with Options. The zero value is ready for AddFlags, which
// sets the defaults.
type Dedup struct {
	Out       string  // --out, -o: output directory; required, no default
	Threshold float64 // --threshold: Jaccard similarity of a near duplicate; default 0.8, range (0, 1)
	Recall    float64 // --recall: candidate probability at the threshold the bands are chosen for; default 0.99, range (0, 1)
	Bands     int     // --bands: LSH bands, with Rows; default 0 (chosen from Threshold and Recall)
	Rows      int     // --rows: rows per band, with Bands; default 0
	Probe     int     // --multi-probe: rows in which a band may differ and still match, 0, 1 or 2; default 0
	BucketCap int     // --bucket-cap: largest bucket paired in full, in documents; default lsh.DefaultCap (1000), range 2 to lsh.MaxCap
	Verify    string  // --verify: exact, estimate or none; default "exact"
	Cluster   string  // --cluster: components or star; default "components"
	Keep      string  // --keep: first, longest or field:NAME; default "first"
	Workers   int     // --workers: worker goroutines; default 0 (all cores), range 0 to jobspec.MaxWorkers
	Memory    string  // --memory: memory budget, a size for bytesize.Parse; default "4GiB", at least 16 MiB
	TmpDir    string  // --tmp-dir: directory for spill files; default "" (the system's)
	Quiet     bool    // --quiet, -q: no progress bar; default false (Options does not read it)
	Golden    string  // --golden: truth file to score the run against; default "" (none)
	// Against are the reference sources (--against, repeatable): corpora,
	// signature files or index directories the inputs are deduplicated
	// against; default none.
	Against []string
	// Signatures is a signature file of the inputs to use instead of
	// signing (--signatures); default "" (sign).
	Signatures string
	// SignaturesOut is where to write the inputs' signatures
	// (--signatures-out): a signature file for neardup dedup, a directory
	// of shards for neardup-beam; default "" (none).
	SignaturesOut string
	ExactPass     bool   // --exact-pass: send exact copies to their cluster unsigned; default true
	Sketch        Sketch // --shingle, --scheme, --num-perm, --bits, --seed
	Corpus        Corpus // --format, --id-field, --text-field, --html, --skip-bad, --max-record-bytes
	// --boilerplate, --boilerplate-lines
	Boilerplate Boilerplate
}

// AddFlags registers the flags on fs with the defaults and usage strings of
// "neardup dedup".
func (f *Dedup) AddFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&f.Out, "out", "o", "", "output directory for kept.jsonl, clusters.jsonl, pairs.tsv, report.json (required)")
	fs.Float64Var(&f.Threshold, "threshold", jobspec.DefaultThreshold, "Jaccard similarity at or above which documents are near duplicates, 0 < t < 1")
	fs.Float64Var(&f.Recall, "recall", jobspec.DefaultRecall, "probability that a pair at the threshold becomes a candidate, 0 < r < 1; bands are chosen from it")
	fs.IntVar(&f.Bands, "bands", 0, "LSH bands (with --rows; default: chosen from --threshold and --recall)")
	fs.IntVar(&f.Rows, "rows", 0, "LSH rows per band (with --bands)")
	fs.IntVar(&f.Probe, "multi-probe", 0, "also match bands that differ in up to this many rows (0, 1 or 2)")
	fs.IntVar(&f.BucketCap, "bucket-cap", lsh.DefaultCap, fmt.Sprintf("largest bucket paired in full (2 to %d); larger ones link to one member", lsh.MaxCap))
	fs.StringVar(&f.Verify, "verify", "exact", "candidate check: exact (Jaccard of the feature sets), estimate (signatures) or none")
	fs.StringVar(&f.Cluster, "cluster", "components", "grouping: components (union-find) or star (every member ≥ threshold to the kept document)")
	fs.StringVar(&f.Keep, "keep", "first", "document kept per cluster: first, longest or field:NAME (largest numeric value)")
	fs.IntVar(&f.Workers, "workers", 0, fmt.Sprintf("worker goroutines, at most %d (default: all cores)", jobspec.MaxWorkers))
	fs.StringVar(&f.Memory, "memory", "4GiB", "memory budget for corpus-sized data, at least 16MiB; past it, runs spill to disk")
	fs.StringVar(&f.TmpDir, "tmp-dir", "", "directory for spill files (default: the system temporary directory)")
	fs.BoolVarP(&f.Quiet, "quiet", "q", false, "no progress bar")
	fs.StringVar(&f.Golden, "golden", "", "truth file (from eval truth, or id pairs) to score the run against, into report.json and report.html")
	fs.StringArrayVar(&f.Against, "against", nil, "reference documents to deduplicate the inputs against, never removed nor written: a corpus, a signature file (neardup sign) or an index directory; repeatable")
	fs.StringVar(&f.Signatures, "signatures", "", "signature file of the inputs (neardup sign, same ids in the same order) to use instead of signing")
	fs.StringVar(&f.SignaturesOut, "signatures-out", "", "also write the inputs' signatures: a signature file (neardup dedup) or a directory of shards (neardup-beam)")
	fs.BoolVar(&f.ExactPass, "exact-pass", true, "hash each document's normalised text first and send exact copies to their cluster without signing them (the outputs are the same; =false to sign every document)")
	f.Sketch.AddFlags(fs)
	f.Corpus.AddFlags(fs)
	f.Boilerplate.AddFlags(fs)
}

// Options returns the options the flags ask for, with defaults filled in and
// validated, the input "-" reading stdin (Progress is left nil). Every error
// is the caller's (a usage error): it names the flag, its value and the valid
// range, and wraps the broken rule's sentinel.
func (f *Dedup) Options(stdin io.Reader) (*jobspec.Options, error) {
	if f.Out == "" {
		return nil, errors.New("--out is required")
	}
	// Paths: what can be told before the run (remote paths, gs://…, are
	// the driver's).
	for _, p := range []struct {
		flag, path string
		dir, must  bool
	}{{"out", f.Out, true, false}, {"tmp-dir", f.TmpDir, true, true}, {"golden", f.Golden, false, true}} {
		if p.path == "" || strings.Contains(p.path, "://") {
			continue
		}
		st, err := os.Stat(p.path)
		switch {
		case err != nil && (p.must || !errors.Is(err, fs.ErrNotExist)):
			return nil, flagError(p.flag, p.path, err)
		case err == nil && st.IsDir() != p.dir && p.dir:
			return nil, flagError(p.flag, p.path, errors.New("not a directory"))
		case err == nil && st.IsDir() != p.dir:
			return nil, flagError(p.flag, p.path, errors.New("a directory, not a file"))
		}
	}
	spec, params, err := f.Sketch.Parse()
	if err != nil {
		return nil, err
	}
	kind, sim, err := f.Sketch.SimHash()
	if err != nil {
		return nil, err
	}
	c, err := f.Corpus.Options(stdin)
	if err != nil {
		return nil, err
	}
	// The raw values, before EnsureDefaults reads zeros as "default".
	for _, chk := range []struct {
		name  string
		value any
		err   error
	}{
		{"threshold", f.Threshold, jobspec.CheckThreshold(f.Threshold)},
		{"recall", f.Recall, jobspec.CheckRecall(f.Recall)},
		{"bucket-cap", f.BucketCap, jobspec.CheckBucketCap(f.BucketCap)},
		{"workers", f.Workers, jobspec.CheckWorkers(f.Workers)},
	} {
		if chk.err != nil {
			return nil, flagError(chk.name, chk.value, chk.err)
		}
	}
	for _, a := range f.Against {
		if a == "" || a == "-" {
			return nil, flagError("against", fmt.Sprintf("%q", a), fmt.Errorf("%w: want a corpus, a signature file or an index directory (standard input is for the inputs)", jobspec.ErrInvalidOptions))
		}
		if err := mustExist(a); err != nil {
			return nil, flagError("against", a, err)
		}
	}
	if f.Signatures == "-" {
		return nil, flagError("signatures", f.Signatures, fmt.Errorf("%w: want a signature file (standard input is for the inputs)", jobspec.ErrInvalidOptions))
	}
	if f.Signatures != "" {
		if err := mustExist(f.Signatures); err != nil {
			return nil, flagError("signatures", f.Signatures, err)
		}
	}
	bp, lines, err := f.Boilerplate.Parse()
	if err != nil {
		return nil, err
	}
	opts := &jobspec.Options{Corpus: c, Spec: spec, Params: params, Threshold: f.Threshold, Recall: f.Recall,
		BucketCap: f.BucketCap, Workers: f.Workers, TempDir: f.TmpDir, Golden: f.Golden, Sketch: kind, SimHash: sim,
		Boilerplate: bp, BoilerplateLines: lines, SkipExactPass: !f.ExactPass,
		Against: f.Against, Signatures: f.Signatures, SignaturesOut: f.SignaturesOut}
	if kind == sketch.SimHash && (f.Bands != 0 || f.Rows != 0 || f.Probe != 0) {
		return nil, fmt.Errorf("--bands %d --rows %d --multi-probe %d: %w: LSH bands are minhash's; simhash's candidates are the pairs within --hamming bits", f.Bands, f.Rows, f.Probe, jobspec.ErrInvalidOptions)
	}
	if f.Bands != 0 || f.Rows != 0 || f.Probe != 0 {
		if (f.Bands != 0) != (f.Rows != 0) {
			return nil, fmt.Errorf("--bands and --rows go together (--bands %d --rows %d)", f.Bands, f.Rows)
		}
		if opts.Bands, err = jobspec.Banding(f.Bands, f.Rows, f.Probe, f.Threshold, params.K, f.Recall); err != nil {
			return nil, fmt.Errorf("--bands %d --rows %d --multi-probe %d: %w", f.Bands, f.Rows, f.Probe, err)
		}
	}
	if opts.Verify, err = jobspec.ParseVerify(f.Verify); err != nil {
		return nil, flagError("verify", f.Verify, err)
	}
	if err := jobspec.CheckVerify(kind, opts.Verify); err != nil {
		return nil, flagError("verify", f.Verify, err)
	}
	if opts.Cluster, err = jobspec.ParseClusterMode(f.Cluster); err != nil {
		return nil, flagError("cluster", f.Cluster, err)
	}
	if opts.Keep, err = cluster.ParsePolicy(f.Keep); err != nil {
		return nil, flagError("keep", f.Keep, err)
	}
	if opts.Memory, err = bytesize.Parse(f.Memory); err != nil {
		return nil, flagError("memory", f.Memory, err)
	}
	if err := jobspec.CheckMemory(opts.Memory); err != nil {
		return nil, flagError("memory", f.Memory, err)
	}
	opts.EnsureDefaults()
	if _, err := opts.Job(); err != nil {
		return nil, err
	}
	return opts, nil
}

// mustExist reports a local path that does not exist; a glob pattern (with
// matches to be told by its reader) and a remote path pass.
func mustExist(path string) error {
	if strings.Contains(path, "://") {
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		if strings.ContainsAny(path, "*?[") {
			return nil
		}
		return err
	}
	return nil
}
