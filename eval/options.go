package eval

import (
	"errors"
	"fmt"
	"runtime"
)

// Errors returned by this package; check with errors.Is. Returned errors wrap
// one of these and name the offending value and the rule it broke.
var (
	// ErrThreshold reports a similarity threshold outside (0, 1] (or NaN).
	ErrThreshold = errors.New("eval: threshold out of range")
	// ErrNotSet reports a feature set that is not sorted strictly ascending;
	// pass it through Normalize first.
	ErrNotSet = errors.New("eval: feature set not sorted ascending without duplicates")
	// ErrTooLarge reports an input past the join's fixed-width limits: more
	// than math.MaxInt32 sets, distinct features or features in one set, or
	// math.MaxUint32 or more features in all.
	ErrTooLarge = errors.New("eval: input too large")
	// ErrOptions reports an invalid Options field.
	ErrOptions = errors.New("eval: invalid options")
)

// Options configures NewCollection, AllPairs and AllPairsFunc. A nil *Options
// and the zero Options both mean all defaults. Options are read once when a
// Collection is built and not retained, so the caller may change them after.
type Options struct {
	// Workers is the number of goroutines that build the token ordering and
	// probe the index. Results are identical for every value. Zero means the
	// default. Default: runtime.GOMAXPROCS(0).
	Workers int
}

// EnsureDefaults returns a copy of o (a new Options if o is nil) with every
// zero field set to its default. It never modifies o.
func (o *Options) EnsureDefaults() *Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	return &c
}

// Validate reports whether o's fields are in range; a nil o is valid. The
// error wraps ErrOptions.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	if o.Workers < 0 {
		return fmt.Errorf("%w: Workers = %d; want >= 0 (0 means GOMAXPROCS)", ErrOptions, o.Workers)
	}
	return nil
}

// checkThreshold returns an error wrapping ErrThreshold unless t is in (0, 1].
func checkThreshold(t float64) error {
	if !(t > 0 && t <= 1) { // also rejects NaN
		return fmt.Errorf("%w: threshold %v; want 0 < t <= 1", ErrThreshold, t)
	}
	return nil
}
