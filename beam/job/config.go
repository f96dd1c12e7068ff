package job

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/atomicfile"
	"github.com/neardup/neardup/internal/jobspec"
)

// Document order. A document is numbered by its split (input file) and its
// 0-based record index within the split: ord = split<<localBits | local. The
// numbering is order-isomorphic to dedup's global record index (which is
// the split's offset plus the local index), so every rule that Run applies by
// index (the lowest member of a capped bucket, cluster order, keep-policy
// ties, pair-line ties, kept.jsonl order) comes out the same, without a pass
// to count the records of each split first.
const (
	localBits = 40
	maxSplits = 1 << (64 - localBits)
)

func ord(split int, local int64) uint64 { return uint64(split)<<localBits | uint64(local) }
func splitOf(o uint64) int              { return int(o >> localBits) }
func localOf(o uint64) int64            { return int64(o & (1<<localBits - 1)) }

// Split is one input file, read whole by one worker.
type Split struct {
	Index int    // position in Config.Splits: the high bits of its documents' ords
	Path  string // the input file (local, or remote such as gs://…)
}

// Config is what the pipeline's DoFns need, as plain JSON-serialisable data
// (Beam serialises DoFn structs into the pipeline).
type Config struct {
	Splits []string     // Splits[i] is the path of split i
	Corpus CorpusConfig // how the splits are read
	Job    jobspec.Job  // the job: sketch, threshold, cap, verification, clustering; a keyed spec's key left out (see KeyFile)
	// KeyFile is where workers read the key of a keyed spec (Options.KeyFile),
	// and KeyID its fingerprint, which the key read must have (Job's spec
	// then has no key); both zero for an unkeyed spec. The key is never in
	// the Config: runners store and show the pipeline, DoFns and their fields
	// included. Take the job to sign with from sketchJob.
	KeyFile string
	KeyID   uint64
	// PartitionBits: the band-key entries are grouped in 1<<PartitionBits
	// partitions of the bucket-key space.
	PartitionBits uint
	Out           string // output directory
	SingleFile    bool   // each output one file, by one worker, under neardup dedup's name; else shards
	ShardLines    int    // lines a pairs.tsv shard aims at (Options.ShardLines, resolved)
	// SignaturesOut, when set, is the directory the sign stage writes the
	// documents' signatures into: shard i of n (sigfile.ShardName) holds
	// split i's, so that sigfile.Open reads them in input order.
	SignaturesOut string
	// KeptName is the name of the kept records' file (before sharding):
	// kept.jsonl, or for WARC and WET splits kept.warc.gz or
	// kept.warc.wet.gz, their gzip members byte for byte, as neardup dedup
	// names it (corpus.KeptExtensionOf).
	KeptName string
}

// CorpusConfig is corpus.Options without the standard input.
type CorpusConfig struct {
	Format                        string // corpus.Options.Format, as a string
	IDField, TextField, KeepField string // corpus.Options' field names (IDField: record-id or uri for WARC and WET)
	MaxRecordBytes, BatchBytes    int    // corpus.Options' sizes, in bytes; 0 for the defaults
	SkipBad                       bool   // corpus.Options.SkipBad: skip bad records instead of failing
	HTML                          bool   // corpus.Options.HTML: texts are HTML, their visible text is shingled
}

func newCorpusConfig(o *corpus.Options) CorpusConfig {
	return CorpusConfig{Format: string(o.Format), IDField: o.IDField, TextField: o.TextField, KeepField: o.KeepField,
		MaxRecordBytes: o.MaxRecordBytes, BatchBytes: o.BatchBytes, SkipBad: o.SkipBad, HTML: o.HTML}
}

func (c *CorpusConfig) options() *corpus.Options {
	return &corpus.Options{Format: corpus.Format(c.Format), IDField: c.IDField, TextField: c.TextField, KeepField: c.KeepField,
		MaxRecordBytes: c.MaxRecordBytes, BatchBytes: c.BatchBytes, SkipBad: c.SkipBad, HTML: c.HTML}
}

// shardName returns the name of output shard i of n for a base name such as
// "kept.jsonl": the name itself under SingleFile, else
// "kept-00003-of-00010.jsonl" (and "kept-00003-of-00010.warc.gz").
func (c *Config) shardName(base string, i, n int) string {
	if c.SingleFile {
		return base
	}
	stem, ext, _ := strings.Cut(base, ".")
	return fmt.Sprintf("%s-%05d-of-%05d.%s", stem, i, n, ext)
}

// expandInputs turns the command's inputs into splits: a pattern with glob
// characters (local or remote, e.g. gs://bucket/shards/*.jsonl.gz) expands to
// the matching files in lexical order; anything else is one split, read by
// corpus as neardup dedup reads it (a local directory is one split).
func expandInputs(ctx context.Context, inputs []string) ([]string, error) {
	var out []string
	for _, in := range inputs {
		if in == "-" {
			return nil, fmt.Errorf("%w: standard input (-) cannot be read by pipeline workers; write it to a file first", jobspec.ErrInvalidOptions)
		}
		if !strings.ContainsAny(in, "*?[") {
			out = append(out, in)
			continue
		}
		fs, err := filesystem.New(ctx, in)
		if err != nil {
			return nil, err
		}
		list, err := fs.List(ctx, in)
		fs.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in, err)
		}
		if len(list) == 0 {
			return nil, fmt.Errorf("%w: %s matches no file", jobspec.ErrInvalidOptions, in)
		}
		out = append(out, list...) // List sorts (filepath.Glob, GCS listing order)
	}
	if len(out) >= maxSplits {
		return nil, fmt.Errorf("%w: %d input files; at most %d", jobspec.ErrInvalidOptions, len(out), maxSplits-1)
	}
	return out, nil
}

func isRemote(path string) bool { return strings.Contains(path, "://") }

// localize returns a local path holding the split's file: the path itself, or
// for a remote file (gs://…) a copy in a temporary directory under the same
// base name (corpus picks the format and compression by name, and Parquet
// needs random access). cleanup removes the copy.
func localize(ctx context.Context, path string) (local string, cleanup func(), err error) {
	if !isRemote(path) {
		return path, func() {}, nil
	}
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return "", nil, err
	}
	defer fs.Close()
	dir, err := os.MkdirTemp("", "neardup-split-*")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	local = filepath.Join(dir, path[strings.LastIndex(path, "/")+1:])
	rc, err := fs.OpenRead(ctx, path)
	if err != nil {
		cleanup()
		return "", nil, err
	}
	defer rc.Close()
	f, err := os.Create(local)
	if err != nil {
		cleanup()
		return "", nil, err
	}
	if _, err := io.Copy(f, rc); err != nil {
		f.Close()
		cleanup()
		return "", nil, fmt.Errorf("copy %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		cleanup()
		return "", nil, err
	}
	return local, cleanup, nil
}

// outputFile is an output being written: for a local path, under a
// temporary name in its directory, renamed by commit (internal/atomicfile),
// so that a failed or retried bundle leaves no partial file under the final
// name; for a remote one (gs://…), through Beam's filesystem layer, where the
// object appears when commit closes it and abort cancels its upload.
type outputFile struct {
	io.Writer
	path   string
	local  *atomicfile.File
	wc     io.WriteCloser
	fs     filesystem.Interface
	cancel context.CancelFunc
}

// openOutput starts writing the output file path.
func openOutput(ctx context.Context, path string) (*outputFile, error) {
	if !isRemote(path) {
		f, err := atomicfile.Create(path)
		if err != nil {
			return nil, err
		}
		return &outputFile{Writer: f, path: path, local: f}, nil
	}
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	w, err := fs.OpenWrite(ctx, path)
	if err != nil {
		cancel()
		fs.Close()
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return &outputFile{Writer: w, path: path, wc: w, fs: fs, cancel: cancel}, nil
}

// commit gives the file its final name (local) or finishes its upload.
func (o *outputFile) commit() error {
	if o.local != nil {
		return o.local.Commit()
	}
	err := o.wc.Close()
	o.cancel()
	o.cancel = nil // abort does nothing now
	o.fs.Close()
	if err != nil {
		return fmt.Errorf("write %s: %w", o.path, err)
	}
	return nil
}

// abort removes the temporary file (local) or cancels the upload; it does
// nothing after commit.
func (o *outputFile) abort() {
	if o.local != nil {
		o.local.Abort()
		return
	}
	if o.cancel != nil {
		o.cancel()
		o.wc.Close()
		o.fs.Close()
		o.cancel = nil
	}
}
