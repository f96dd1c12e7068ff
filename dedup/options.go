package dedup

import (
	"errors"
	"github.com/neardup/neardup/internal/boilerplate"
	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/shingle"
)

// The job's description (options, modes, output formats, report) is shared
// with the other drivers of the same stages and lives in internal/jobspec;
// these aliases are this package's names for it.

// Options configure a batch deduplication: see jobspec.Options for every
// field, its default and its range. The zero value (and nil) means every
// default: prose shingles, 128-slot one-permutation signatures, a 0.8
// threshold with bands chosen for 0.99 recall, exact verification, connected
// components, keep the first document.
type Options = jobspec.Options

// SimHashOptions configure a SimHash run (Options.Sketch = sketch.SimHash);
// see jobspec.SimHashOptions.
type SimHashOptions = jobspec.SimHashOptions

// Verify is how candidate pairs are checked before they count.
type Verify = jobspec.Verify

// Verification modes.
const (
	// VerifyExact computes the exact Jaccard similarity of the two feature
	// sets and keeps pairs at or above the threshold: precision 1.
	VerifyExact = jobspec.VerifyExact
	// VerifyEstimate keeps pairs whose signature estimate reaches the
	// threshold.
	VerifyEstimate = jobspec.VerifyEstimate
	// VerifyNone keeps every LSH candidate.
	VerifyNone = jobspec.VerifyNone
)

// ClusterMode is how verified pairs become clusters.
type ClusterMode = jobspec.ClusterMode

// Clustering modes.
const (
	// Components takes connected components (union-find).
	Components = jobspec.Components
	// Star makes greedy stars around kept documents.
	Star = jobspec.Star
)

// BoilerplateMode is Options.Boilerplate: off, auto or a document count.
type BoilerplateMode = jobspec.BoilerplateMode

// Boilerplate modes besides a document count N ≥ 2.
const (
	// BoilerplateOff drops no line.
	BoilerplateOff = jobspec.BoilerplateOff
	// BoilerplateAuto chooses N from the corpus.
	BoilerplateAuto = jobspec.BoilerplateAuto
)

// ReadBoilerplateLines reads a lines file (a run's boilerplate.tsv) counted
// under spec; see Options.BoilerplateLines.
func ReadBoilerplateLines(path string, spec shingle.Spec) (*boilerplate.Result, error) {
	return jobspec.ReadBoilerplateLines(path, spec)
}

// ParseVerify reads "exact", "estimate" or "none".
func ParseVerify(s string) (Verify, error) { return jobspec.ParseVerify(s) }

// ParseClusterMode reads "components" or "star".
func ParseClusterMode(s string) (ClusterMode, error) { return jobspec.ParseClusterMode(s) }

// Errors of Run; check with errors.Is.
var (
	// ErrInvalidOptions reports Options that break a rule (and, from Run,
	// no inputs or a golden set that does not reach the threshold). It is
	// jobspec.ErrInvalidOptions.
	ErrInvalidOptions = jobspec.ErrInvalidOptions
	// ErrExactPassBad was returned, under Corpus.SkipBad with the exact
	// pass on, for a document skipped for repeating an earlier id that is
	// the first of a group of exact copies.
	//
	// Deprecated: no longer returned. Such a document is a bad record like
	// any other (listed in BadOut); its first good copy takes its place in
	// the group, and the outputs are those of a run without the pass.
	ErrExactPassBad = errors.New("dedup: the exact pass cannot drop the first of a group of copies")
	// ErrInputChanged reports an input file that changed while Run read it:
	// exact verification reads the records of the documents in candidate
	// pairs back from uncompressed inputs (corpus.Record.Source), which must
	// stay as they were until Run returns.
	ErrInputChanged = errors.New("dedup: an input changed during the run")
)

// DefaultMemory is the default Options.Memory.
const DefaultMemory = jobspec.DefaultMemory

// Output file names inside the output directory.
const (
	KeptFile     = jobspec.KeptFile
	ClustersFile = jobspec.ClustersFile
	PairsFile    = jobspec.PairsFile
	ReportFile   = jobspec.ReportFile
	HTMLFile     = jobspec.HTMLFile
)

// Version is the neardup release this package belongs to.
const Version = jobspec.Version

// Report is what report.json holds; see jobspec.Report.
type Report = jobspec.Report

// The parts of a Report.
type (
	Config          = jobspec.Config
	Counts          = jobspec.Counts
	SignatureReport = jobspec.SignatureReport
	BucketReport    = jobspec.BucketReport
	LargeBucket     = jobspec.LargeBucket
	Histogram       = jobspec.Histogram
	ClusterSizeBin  = jobspec.ClusterSizeBin
	Timing          = jobspec.Timing
	SpillReport     = jobspec.SpillReport
)

// ClusterLine is one line of clusters.jsonl, as encoding/json decodes it.
type ClusterLine = jobspec.ClusterLine

// FormatSim renders a similarity with six decimals, as the outputs do.
func FormatSim(x float64) string { return jobspec.FormatSim(x) }
