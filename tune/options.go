package tune

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/lsh"
)

// Defaults and limits of Options.
const (
	// DefaultThreshold is the default Options.Threshold, dedup's default.
	DefaultThreshold = 0.8

	// DefaultMemory is the default Options.Memory: 4 GiB, dedup's default
	// budget.
	DefaultMemory = 4 << 30

	// MinMemory is the least Options.Memory accepted: 16 MiB, as for dedup.
	MinMemory = 16 << 20

	// MaxBandings is the largest number of bandings one run compares: each
	// holds a sorted run of band-key entries, and the budget is shared
	// between them.
	MaxBandings = 32
)

// DefaultRecalls are the recall levels at the threshold whose bandings make
// the default frontier (see Frontier).
var DefaultRecalls = []float64{0.5, 0.8, 0.9, 0.95, 0.99, 0.999}

// Options configure Run. A nil *Options means every default; zero fields
// mean their defaults. Run reads the options once and does not retain them.
type Options struct {
	// Threshold is the Jaccard similarity at or above which a pair is a
	// near duplicate: truth pairs with a known similarity below it do not
	// count, and each banding's S-curve is read at it. Default
	// DefaultThreshold (0.8, dedup's); range (0, 1).
	Threshold float64

	// Bandings are the bandings to compare, each with b·r at most the
	// signatures' K, in the order given (ParseBandings reads "16x6,20x5").
	// Default nil: Frontier(Threshold, K, Recalls, Probe) for the K of the
	// signatures. At most MaxBandings.
	Bandings []lsh.Params

	// Probe is the multi-probe level given to the default bandings, as
	// dedup --multi-probe gives it to the banding it chooses. Explicit
	// Bandings carry their own. Default 0; range 0..lsh.MaxProbe.
	Probe int

	// Recalls are the recall levels whose bandings make the default
	// frontier. Default: DefaultRecalls, plus Recall when it is set.
	// Range (0, 1] each.
	Recalls []float64

	// BucketCap is the largest bucket, in documents, whose members are all
	// paired; a larger one links its members to its first, as dedup
	// --bucket-cap does. Default lsh.DefaultCap (1000 documents); range
	// 2..lsh.MaxCap.
	BucketCap int

	// BandWidth is the width of the similarity bands recall is broken down
	// by, from Threshold up, as eval score's --band-width. Default
	// eval.DefaultBandWidth (0.05); range (0, 1].
	BandWidth float64

	// Recall is the recall target: a banding meets it when the measured
	// recall over the truth pairs at J ≥ Threshold reaches it. Default 0:
	// no target; range [0, 1].
	Recall float64

	// Precision is the precision target before verification: a banding
	// meets it when the share of its candidate pairs that are truth pairs
	// at J ≥ Threshold reaches it. Default 0: no target; range [0, 1].
	Precision float64

	// Memory is the budget, in bytes, for the band-key entries and the
	// candidate pairs, which grow with the corpus; past it, sorted runs
	// spill to TempDir. Half goes to the entries (shared by the bandings),
	// a quarter to the candidate pairs of the bandings grouped at once; the
	// truth pairs and the records being banded come on top. Default
	// DefaultMemory (4 GiB); at least MinMemory (16 MiB).
	Memory int64

	// TempDir is the directory for spilled runs. Default "": the system's
	// temporary directory.
	TempDir string

	// Workers is the number of goroutines banding and grouping (one
	// banding each at a time); the result does not depend on it. Default
	// runtime.GOMAXPROCS(0); range 0 and up.
	Workers int
}

// EnsureDefaults returns a copy of o (a new Options if o is nil) with zero
// fields set to their defaults; Bandings stays nil, to be filled from the
// signatures' K. It never modifies o.
func (o *Options) EnsureDefaults() *Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Threshold == 0 {
		c.Threshold = DefaultThreshold
	}
	if c.BucketCap == 0 {
		c.BucketCap = lsh.DefaultCap
	}
	if c.BandWidth == 0 {
		c.BandWidth = eval.DefaultBandWidth
	}
	if c.Memory == 0 {
		c.Memory = DefaultMemory
	}
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.Recalls == nil {
		c.Recalls = slices.Clone(DefaultRecalls)
		if c.Recall > 0 && !slices.Contains(c.Recalls, c.Recall) {
			c.Recalls = append(c.Recalls, c.Recall)
		}
	}
	return &c
}

// Validate reports whether o, with defaults filled in, is usable; the error
// wraps ErrInvalidOptions and names the field, its value and its range. A
// nil o is valid. Bandings are checked against the signatures' K by Run.
func (o *Options) Validate() error {
	c := o.EnsureDefaults()
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidOptions}, args...)...)
	}
	switch {
	case !(c.Threshold > 0 && c.Threshold < 1):
		return bad("threshold %v; want 0 < t < 1", c.Threshold)
	case c.Probe < 0 || c.Probe > lsh.MaxProbe:
		return bad("multi-probe level %d; want 0..%d", c.Probe, lsh.MaxProbe)
	case c.BucketCap < 2 || c.BucketCap > lsh.MaxCap:
		return bad("bucket cap %d; want 2..%d", c.BucketCap, lsh.MaxCap)
	case !(c.BandWidth > 0 && c.BandWidth <= 1):
		return bad("band width %v; want 0 < w <= 1", c.BandWidth)
	case !(c.Recall >= 0 && c.Recall <= 1):
		return bad("recall target %v; want 0 (none) to 1", c.Recall)
	case !(c.Precision >= 0 && c.Precision <= 1):
		return bad("precision target %v; want 0 (none) to 1", c.Precision)
	case c.Memory < MinMemory:
		return bad("memory %d bytes; want at least %d (16 MiB)", c.Memory, MinMemory)
	case c.Workers < 1:
		return bad("workers %d; want at least 1, or 0 for the default", c.Workers)
	case len(c.Bandings) > MaxBandings:
		return bad("%d bandings; want at most %d", len(c.Bandings), MaxBandings)
	case len(c.Recalls) == 0 && c.Bandings == nil:
		return bad("no bandings and no recall levels to choose them from")
	}
	for _, r := range c.Recalls {
		if !(r > 0 && r <= 1) {
			return bad("recall level %v; want 0 < r <= 1", r)
		}
	}
	for i, p := range c.Bandings {
		if err := p.Validate(); err != nil {
			return bad("banding %s: %w", Label(p), err)
		}
		if j := slices.Index(c.Bandings[:i], p); j >= 0 {
			return bad("banding %s given twice", Label(p))
		}
	}
	return nil
}

// Label names a banding as ParseBandings reads it: "16x6", or with
// multi-probe level m, "16x6/p1".
func Label(p lsh.Params) string {
	s := strconv.Itoa(p.Bands) + "x" + strconv.Itoa(p.Rows)
	if p.Probe > 0 {
		s += "/p" + strconv.Itoa(p.Probe)
	}
	return s
}

// ParseBandings reads a comma-separated list of bandings, each BxR (bands ×
// rows per band) or BxR/pM (with multi-probe level M, overriding probe),
// such as "16x6,20x5": the syntax of neardup tune --bands. Items without
// their own level get probe. Each must be a valid lsh.Params and appear
// once; the error wraps ErrBandings and names the item.
func ParseBandings(s string, probe int) ([]lsh.Params, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%w: empty list; want BxR[,BxR…] such as 16x6,20x5", ErrBandings)
	}
	var out []lsh.Params
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		p, err := parseBanding(item, probe)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, p) {
			return nil, fmt.Errorf("%w: %q: %s given twice", ErrBandings, item, Label(p))
		}
		if len(out) == MaxBandings {
			return nil, fmt.Errorf("%w: more than %d bandings", ErrBandings, MaxBandings)
		}
		out = append(out, p)
	}
	return out, nil
}

func parseBanding(item string, probe int) (lsh.Params, error) {
	bad := func(why string) (lsh.Params, error) {
		return lsh.Params{}, fmt.Errorf("%w: %q: %s", ErrBandings, item, why)
	}
	body, level, hasLevel := strings.Cut(item, "/")
	bs, rs, ok := strings.Cut(body, "x")
	if !ok {
		return bad("want BxR (bands x rows), such as 16x6")
	}
	num := func(s string) (int, bool) {
		if s == "" || len(s) > 6 || strings.TrimLeft(s, "0123456789") != "" {
			return 0, false
		}
		n, err := strconv.Atoi(s)
		return n, err == nil
	}
	b, ok1 := num(bs)
	r, ok2 := num(rs)
	if !ok1 || !ok2 {
		return bad("bands and rows must be whole numbers, such as 16x6")
	}
	p := lsh.Params{Bands: b, Rows: r, Probe: probe}
	if hasLevel {
		m, ok := strings.CutPrefix(level, "p")
		n, okn := num(m)
		if !ok || !okn {
			return bad("multi-probe level must be /p0, /p1 or /p2")
		}
		p.Probe = n
	}
	if err := p.Validate(); err != nil {
		return bad(err.Error())
	}
	return p, nil
}

// Frontier returns the default bandings for signatures of k slots at
// threshold: for each recall level R in recalls, lsh.ForRecall(threshold, k,
// R), the banding of at most k slots with the least false-positive area
// ∫₀ᵗ P(s) ds among those whose S-curve reaches R at the threshold. Each is a
// point of the Pareto frontier of (P(threshold), false-positive area) over
// all b·r ≤ k, the two figures the S-curve trades: no banding reaches the
// threshold more surely at a smaller area. Each is also the banding neardup
// dedup runs with --recall R, so any row of tune's table can be run as it
// is.
//
// With probe > 0 each banding gets that multi-probe level, as dedup
// --multi-probe gives it to the banding it chooses; bandings with no more
// rows than probe are left out. The result is sorted by P(threshold)
// ascending, each banding once; recall levels no banding reaches are left
// out. Errors (a threshold outside (0, 1), k outside 1..lsh.MaxSlots, a
// recall level outside (0, 1], a probe level outside 0..lsh.MaxProbe) wrap
// ErrInvalidOptions. Deterministic.
func Frontier(threshold float64, k int, recalls []float64, probe int) ([]lsh.Params, error) {
	if probe < 0 || probe > lsh.MaxProbe {
		return nil, fmt.Errorf("%w: multi-probe level %d; want 0..%d", ErrInvalidOptions, probe, lsh.MaxProbe)
	}
	var out []lsh.Params
	for _, r := range recalls {
		p, err := lsh.ForRecall(threshold, k, r)
		if err != nil {
			if errors.Is(err, lsh.ErrNoParams) {
				continue
			}
			return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
		}
		p.Probe = probe
		if p.Validate() != nil || slices.Contains(out, p) {
			continue
		}
		out = append(out, p)
	}
	slices.SortStableFunc(out, func(a, b lsh.Params) int {
		pa, pb := a.Probability(threshold), b.Probability(threshold)
		switch {
		case pa < pb:
			return -1
		case pa > pb:
			return 1
		}
		return 0
	})
	return out, nil
}

// meets reports whether v reaches target, allowing for rounding in the last
// place (a recall of 19/20 against a target of 0.95).
func meets(v, target float64) bool { return v >= target || math.Abs(v-target) <= 1e-12 }
