package jobspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/neardup/neardup/internal/drift"
)

// ErrReport reports a report.json that cannot be read: not JSON, larger
// than MaxReportBytes, or with histograms that do not fit their bins; check
// with errors.Is.
var ErrReport = errors.New("jobspec: bad report")

// MaxReportBytes is the largest report.json ReadReport reads: a report is
// a few tens of kilobytes whatever the corpus.
const MaxReportBytes = 16 << 20

// ReadReport decodes a report.json from r; name (its file) is what errors
// call it. Fields it does not know are ignored, and those it lacks stay
// zero (a report written before drift was recorded has a zero Drift).
// Errors wrap ErrReport.
func ReadReport(r io.Reader, name string) (*Report, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxReportBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > MaxReportBytes {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrReport, name, MaxReportBytes)
	}
	var rep Report
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&rep); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
			return nil, fmt.Errorf("%w: %s:%d: %v", ErrReport, name, line, err)
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrReport, name, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: %s: data after the report's JSON object", ErrReport, name)
	}
	return &rep, nil
}

// DistributionDiff is how one distribution of two reports compares.
type DistributionDiff struct {
	// Name is the distribution's name in report.json: "drift.text_bytes",
	// "pair_similarity.estimate", "cluster_sizes", ….
	Name string `json:"name"`
	// Comparison is drift.Compare of the old and the new distribution.
	drift.Comparison
	last float64 // the bins' last bound, for String
}

// ReportDiff is what DiffReports finds: the distributions compared, the
// headline counts old and new, and what in the configurations differs. It is
// plain data, deterministic for its inputs.
type ReportDiff struct {
	// Distributions are the distributions both reports hold, in a fixed
	// order: drift's three, the pair similarities, the cluster sizes.
	Distributions []DistributionDiff `json:"distributions"`
	// Missing names the distributions only one report holds (a report
	// written before drift was recorded has none of drift's).
	Missing []string `json:"missing,omitempty"`
	// Counts are headline numbers, old and new.
	Counts []CountDiff `json:"counts"`
	// Config lists the configuration fields that differ ("bands 16 → 20"):
	// distributions of runs made differently may differ for that reason.
	Config []string `json:"config,omitempty"`
}

// CountDiff is one headline number of two reports.
type CountDiff struct {
	Name string  `json:"name"`
	Old  float64 `json:"old"`
	New  float64 `json:"new"`
}

// Moved returns the names of the distributions that moved.
func (d *ReportDiff) Moved() []string {
	var out []string
	for _, x := range d.Distributions {
		if x.Moved {
			out = append(out, x.Name)
		}
	}
	return out
}

// DiffReports compares report old with report new: every distribution both
// hold (drift.Compare), headline counts and configuration. A distribution
// one report lacks is listed in Missing; one whose counts do not fit its
// bins, or that is binned otherwise in the other report, is an error
// wrapping ErrReport (and drift.ErrBins).
func DiffReports(old, new *Report) (ReportDiff, error) {
	var d ReportDiff
	type dist struct {
		name     string
		old, new drift.Histogram
	}
	dists := []dist{
		{"drift.best_similarity", old.Drift.BestSimilarity, new.Drift.BestSimilarity},
		{"drift.features", old.Drift.Features, new.Drift.Features},
		{"drift.text_bytes", old.Drift.TextBytes, new.Drift.TextBytes},
		{"pair_similarity.estimate", pairHistogram(old.PairSim.Estimate), pairHistogram(new.PairSim.Estimate)},
	}
	if old.PairSim.Exact != nil || new.PairSim.Exact != nil {
		dists = append(dists, dist{"pair_similarity.exact", pairHistogram(old.PairSim.Exact), pairHistogram(new.PairSim.Exact)})
	}
	dists = append(dists, dist{"cluster_sizes", sizeHistogram(old.Sizes), sizeHistogram(new.Sizes)})
	for _, x := range dists {
		if isZero(x.old) || isZero(x.new) {
			d.Missing = append(d.Missing, x.name)
			continue
		}
		c, err := drift.Compare(x.old, x.new)
		if err != nil {
			return ReportDiff{}, fmt.Errorf("%w: %s: %w", ErrReport, x.name, err)
		}
		last := math.Inf(-1) // no bounds: everything is in the one bin
		if n := len(x.old.Upper); n > 0 {
			last = x.old.Upper[n-1]
		}
		d.Distributions = append(d.Distributions, DistributionDiff{Name: x.name, Comparison: c, last: last})
	}
	rate := func(r *Report) float64 {
		if r.Counts.Documents == 0 {
			return 0
		}
		return float64(r.Counts.Removed) / float64(r.Counts.Documents)
	}
	perDoc := func(r *Report) float64 {
		if n := r.Counts.Documents - r.Counts.Empty - r.Counts.Bad; n > 0 {
			return float64(r.Counts.Candidates) / float64(n)
		}
		return 0
	}
	for _, c := range []struct {
		name     string
		old, new float64
	}{
		{"documents", float64(old.Counts.Documents), float64(new.Counts.Documents)},
		{"empty", float64(old.Counts.Empty), float64(new.Counts.Empty)},
		{"bad", float64(old.Counts.Bad), float64(new.Counts.Bad)},
		{"candidates_per_document", perDoc(old), perDoc(new)},
		{"verified_pairs", float64(old.Counts.VerifiedPairs), float64(new.Counts.VerifiedPairs)},
		{"removed_rate", rate(old), rate(new)},
		{"empty_bin_rate", old.Signatures.EmptyBinRate, new.Signatures.EmptyBinRate},
		{"capped_buckets", float64(old.Buckets.CappedBuckets), float64(new.Buckets.CappedBuckets)},
	} {
		d.Counts = append(d.Counts, CountDiff{c.name, c.old, c.new})
	}
	oc, nc := old.Config, new.Config
	for _, f := range []struct {
		name     string
		old, new any
	}{
		{"spec", oc.Spec, nc.Spec}, {"params", oc.Params, nc.Params}, {"threshold", oc.Threshold, nc.Threshold},
		{"bands", oc.Bands, nc.Bands}, {"rows", oc.Rows, nc.Rows}, {"probe", oc.Probe, nc.Probe},
		{"key_bits", keyBits(oc), keyBits(nc)}, {"bucket_cap", oc.BucketCap, nc.BucketCap}, {"verify", oc.Verify, nc.Verify},
	} {
		if f.old != f.new {
			d.Config = append(d.Config, fmt.Sprintf("%s %v → %v", f.name, f.old, f.new))
		}
	}
	return d, nil
}

// keyBits is a report's bucket key width: Config.KeyBits, or 32 for a report
// written before it was recorded (issue 12), whose keys were 32 bits.
func keyBits(c Config) int {
	if c.KeyBits == 0 {
		return 32
	}
	return c.KeyBits
}

// isZero reports a histogram neither bins nor counts: one a report lacks.
func isZero(h drift.Histogram) bool { return len(h.Upper) == 0 && len(h.Counts) == 0 }

// pairHistogram turns a column of the pair-similarity histogram (bins of
// width 1/HistogramBins) into a drift.Histogram over the same bins; none
// gives a zero Histogram (nothing to compare).
func pairHistogram(counts []int64) drift.Histogram {
	if len(counts) == 0 {
		return drift.Histogram{}
	}
	h := drift.Histogram{Upper: make([]float64, len(counts)-1), Counts: slices.Clone(counts)}
	for i := range h.Upper {
		h.Upper[i] = float64(i+1) / float64(len(counts))
	}
	return h
}

// sizeHistogram bins cluster sizes as drift bins feature counts.
func sizeHistogram(sizes []ClusterSizeBin) drift.Histogram {
	h := drift.New(drift.FeatureBounds)
	for _, s := range sizes {
		h.Counts[drift.Bin(h.Upper, float64(s.Size))] += int64(s.Count)
	}
	return h
}

// String renders the diff as aligned text: one line a distribution, the
// counts, and the configuration differences.
func (d *ReportDiff) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-26s %10s %10s %7s %9s %7s  %-21s %s\n", "distribution", "n old", "n new", "KS D", "p-value", "PSI", "median bin old → new", "moved")
	bound := func(x, last float64) string {
		switch {
		case math.IsNaN(x):
			return "-"
		case math.IsInf(x, 1):
			return fmt.Sprintf(">%g", last)
		}
		return fmt.Sprintf("≤%g", x)
	}
	for _, x := range d.Distributions {
		moved := "no"
		if x.Moved {
			moved = "MOVED"
		}
		fmt.Fprintf(&b, "%-26s %10d %10d %7.3f %9.2g %7.3f  %-21s %s\n", x.Name, x.N1, x.N2, x.D, x.P, x.PSI,
			bound(x.Median1, x.last)+" → "+bound(x.Median2, x.last), moved)
	}
	for _, m := range d.Missing {
		fmt.Fprintf(&b, "%-26s not in both reports\n", m)
	}
	b.WriteString("\n")
	for _, c := range d.Counts {
		change := ""
		if c.Old != 0 {
			change = fmt.Sprintf(" (%+.1f%%)", 100*(c.New-c.Old)/c.Old)
		}
		fmt.Fprintf(&b, "%-26s %g → %g%s\n", c.Name, c.Old, c.New, change)
	}
	if len(d.Config) > 0 {
		b.WriteString("\nthe runs were configured differently (distributions may differ for that reason):\n")
		for _, c := range d.Config {
			b.WriteString("  " + c + "\n")
		}
	}
	return b.String()
}
