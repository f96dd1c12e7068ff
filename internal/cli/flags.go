package cli

import (
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/jobflags"
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
