package dedup

import (
	"github.com/neardup/neardup/internal/jobspec"
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

// ParseVerify reads "exact", "estimate" or "none".
func ParseVerify(s string) (Verify, error) { return jobspec.ParseVerify(s) }

// ParseClusterMode reads "components" or "star".
func ParseClusterMode(s string) (ClusterMode, error) { return jobspec.ParseClusterMode(s) }

// ErrInvalidOptions reports Options that break a rule (and, from Run, no
// inputs or a golden set that does not reach the threshold); check with
// errors.Is. It is jobspec.ErrInvalidOptions.
var ErrInvalidOptions = jobspec.ErrInvalidOptions

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
