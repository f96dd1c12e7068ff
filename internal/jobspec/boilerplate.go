package jobspec

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/neardup/neardup/internal/boilerplate"
	"github.com/neardup/neardup/shingle"
)

// BoilerplateMode is Options.Boilerplate: whether a job drops the lines that
// many documents share before shingling, and how it finds them. Its zero
// value is BoilerplateOff.
type BoilerplateMode int

// The modes besides a document count N ≥ 2 (lines in at least N documents
// are boilerplate).
const (
	// BoilerplateOff drops no line: the spec is the one given.
	BoilerplateOff BoilerplateMode = 0
	// BoilerplateAuto chooses N from the corpus (internal/boilerplate).
	BoilerplateAuto BoilerplateMode = -1
)

// String returns "off", "auto" or N in decimal.
func (m BoilerplateMode) String() string {
	switch m {
	case BoilerplateOff:
		return "off"
	case BoilerplateAuto:
		return "auto"
	}
	return strconv.Itoa(int(m))
}

// ParseBoilerplate reads "off", "auto" or a document count N ≥ 2.
func ParseBoilerplate(s string) (BoilerplateMode, error) {
	switch s {
	case "off":
		return BoilerplateOff, nil
	case "auto":
		return BoilerplateAuto, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 2 {
		return 0, fmt.Errorf("%w: boilerplate %q; want off, auto or a number of documents, at least 2", ErrInvalidOptions, s)
	}
	return BoilerplateMode(n), nil
}

// checkBoilerplate reports whether the boilerplate options of o agree.
func (o *Options) checkBoilerplate() error {
	switch {
	case o.Boilerplate < BoilerplateAuto || o.Boilerplate == 1:
		return fmt.Errorf("%w: boilerplate %d; want off (0), auto (-1) or at least 2 documents", ErrInvalidOptions, o.Boilerplate)
	case o.BoilerplateLines != "" && o.Boilerplate != BoilerplateOff:
		return fmt.Errorf("%w: boilerplate %s and a lines file %s: give one", ErrInvalidOptions, o.Boilerplate, o.BoilerplateLines)
	case o.Spec.Boilerplate.Len() > 0 && (o.Boilerplate != BoilerplateOff || o.BoilerplateLines != ""):
		return fmt.Errorf("%w: the spec already has a boilerplate set of %d lines", ErrInvalidOptions, o.Spec.Boilerplate.Len())
	}
	return nil
}

// DropsBoilerplate reports whether o asks for a first pass or a lines file
// (ResolveBoilerplate has work to do).
func (o *Options) DropsBoilerplate() bool {
	return o.Boilerplate != BoilerplateOff || o.BoilerplateLines != ""
}

// ResolveBoilerplate finds the boilerplate set o asks for and puts it in
// j's spec: it reads o.BoilerplateLines, or counts the lines of inputs
// (local files; "-" must be spooled) in a first pass within o.Memory, with
// o.Workers. It returns what it found, for the report, or nil when o drops
// no boilerplate (j is then unchanged). j must be o's job (o.Job()).
func (o *Options) ResolveBoilerplate(ctx context.Context, inputs []string, j *Job) (*boilerplate.Result, error) {
	if !o.DropsBoilerplate() {
		return nil, nil
	}
	spec := j.Sketch.Spec
	var res *boilerplate.Result
	var err error
	if o.BoilerplateLines != "" {
		res, err = ReadBoilerplateLines(o.BoilerplateLines, spec)
	} else {
		n := int(o.Boilerplate)
		if o.Boilerplate == BoilerplateAuto {
			n = 0
		}
		res, err = boilerplate.Count(ctx, inputs, &o.Corpus, spec,
			&boilerplate.Options{MinDocs: n, Memory: o.Memory, TempDir: o.TempDir, Workers: o.Workers})
	}
	if err != nil {
		return nil, err
	}
	j.Sketch.Spec.Boilerplate = res.Set
	return res, nil
}

// ReadBoilerplateLines reads a lines file (internal/boilerplate.WriteLines)
// counted under spec.
func ReadBoilerplateLines(path string, spec shingle.Spec) (*boilerplate.Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: boilerplate lines: %w", ErrInvalidOptions, err)
	}
	defer f.Close()
	return boilerplate.ReadLines(f, path, spec)
}
