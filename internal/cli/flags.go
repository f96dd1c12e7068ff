package cli

import (
	"github.com/spf13/pflag"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
)

// sketchFlags are the flags that define features and signatures, shared by
// every subcommand that signs.
type sketchFlags struct {
	shingle string
	scheme  string
	numPerm int
	bits    int
	seed    uint64
}

func (f *sketchFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.shingle, "shingle", "prose", "shingling spec: prose, code, cjk, web, word:N, char:N or token:N")
	fs.StringVar(&f.scheme, "scheme", "oph", "signature scheme: oph (one permutation, densified) or khash (k hash functions)")
	fs.IntVar(&f.numPerm, "num-perm", 128, "signature slots (k)")
	fs.IntVar(&f.bits, "bits", 32, "bits kept per slot: 64, 32, 16, 8, 4, 2 or 1")
	fs.Uint64Var(&f.seed, "seed", 0, "hash seed; signatures of different seeds are not comparable")
}

func (f *sketchFlags) build() (shingle.Spec, minhash.Params, error) {
	spec, err := shingle.Parse(f.shingle)
	if err != nil {
		return spec, minhash.Params{}, usageError{err}
	}
	scheme, err := minhash.ParseScheme(f.scheme)
	if err != nil {
		return spec, minhash.Params{}, usageError{err}
	}
	p := minhash.Params{K: f.numPerm, Scheme: scheme, Bits: f.bits, Seed: f.seed}
	if err := p.Validate(); err != nil {
		return spec, p, usageError{err}
	}
	return spec, p, nil
}

// corpusFlags are the flags that say how to read inputs.
type corpusFlags struct {
	format    string
	idField   string
	textField string
	skipBad   bool
	maxRecord int
}

func (f *corpusFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.format, "format", "auto", "input format: auto (by extension), jsonl, parquet, lines or dir")
	fs.StringVar(&f.idField, "id-field", "id", "JSON key or Parquet column of the document id (missing: the line number)")
	fs.StringVar(&f.textField, "text-field", "text", "JSON key or Parquet column of the document text")
	fs.BoolVar(&f.skipBad, "skip-bad", false, "count and skip bad records instead of failing on the first")
	fs.IntVar(&f.maxRecord, "max-record-bytes", 64<<20, "longest record accepted, in bytes")
}

// build returns the corpus options the flags give; the input "-" reads
// stdio.In.
func (f *corpusFlags) build(stdio IO) (corpus.Options, error) {
	o := corpus.Options{Stdin: stdio.In}
	if err := o.Format.Set(f.format); err != nil {
		return o, usageError{err}
	}
	o.IDField, o.TextField, o.SkipBad, o.MaxRecordBytes = f.idField, f.textField, f.skipBad, f.maxRecord
	if err := o.Validate(); err != nil {
		return o, usageError{err}
	}
	return o, nil
}
