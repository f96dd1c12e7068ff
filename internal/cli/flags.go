package cli

import (
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/jobflags"
	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
)

// sketchFlags are the flags that define features and signatures, shared by
// every subcommand that signs (jobflags.Sketch); bad values are usage
// errors.
type sketchFlags struct{ jobflags.Sketch }

func (f *sketchFlags) build() (shingle.Spec, minhash.Params, error) {
	spec, p, err := f.Parse()
	if err != nil {
		return spec, p, usageError{err}
	}
	return spec, p, nil
}

// config returns the sketch the flags describe, for one document at a time
// (sign, index build): MinHash's params (with a placeholder banding), or SimHash's
// weighting, distance and blocks (none chosen: 0 until resolved) without
// its document frequencies.
func (f *sketchFlags) config() (sketch.Config, error) {
	spec, p, err := f.build()
	if err != nil {
		return sketch.Config{}, err
	}
	kind, sim, err := f.SimHash()
	if err != nil {
		return sketch.Config{}, usageError{err}
	}
	if kind == sketch.MinHash {
		// The signing commands make no bucket keys (the index chooses its
		// bands itself); a config needs a banding, and one band of one
		// row is the least there is.
		return sketch.Config{Spec: spec, Params: p, Bands: lsh.Params{Bands: 1, Rows: 1}}, nil
	}
	o := jobspec.Options{Spec: spec, Sketch: kind, SimHash: sim}
	j, err := o.Job()
	if err != nil {
		return sketch.Config{}, usageError{err}
	}
	return j.Sketch, nil
}

// corpusFlags are the flags that say how to read inputs
// (jobflags.Corpus); bad values are usage errors.
type corpusFlags struct{ jobflags.Corpus }

// build returns the corpus options the flags give; the input "-" reads
// stdio.In.
func (f *corpusFlags) build(stdio IO) (corpus.Options, error) {
	o, err := f.Options(stdio.In)
	if err != nil {
		return o, usageError{err}
	}
	return o, nil
}
