package cluster

import (
	"encoding"
	"fmt"
	"math"
	"strings"
)

// PolicyKind names a keep rule.
type PolicyKind uint8

// The keep rules.
const (
	// KeepFirst keeps the document with the lowest input index.
	KeepFirst PolicyKind = iota
	// KeepLongest keeps the document with the largest length (Attrs.Lengths),
	// ties going to the lower index.
	KeepLongest
	// KeepField keeps the document with the largest value of a numeric field
	// (Attrs.Values), ties going to the lower index; documents missing the
	// value rank last.
	KeepField
)

// Policy is a keep policy: which document of a cluster survives. Its zero
// value is KeepFirst. Policies are plain values, safe for concurrent use;
// the order they define is total (ties always go to the lower index), so
// the kept document is deterministic.
type Policy struct {
	// Kind is the keep rule; the zero value is KeepFirst.
	Kind PolicyKind
	// Field names the numeric field of KeepField, for the caller that reads
	// the documents; this package only uses Attrs.Values. Empty otherwise.
	Field string
}

// Compile-time checks that Policy works as a text flag or config value.
var (
	_ encoding.TextMarshaler   = Policy{}
	_ encoding.TextUnmarshaler = (*Policy)(nil)
	_ fmt.Stringer             = Policy{}
)

// ParsePolicy parses "first", "longest" or "field:NAME" (NAME non-empty,
// kept verbatim). Keywords are case-insensitive and surrounding spaces are
// ignored; errors wrap ErrInvalidPolicy.
func ParsePolicy(s string) (Policy, error) {
	t := strings.TrimSpace(s)
	kw, name, hasColon := strings.Cut(t, ":")
	switch strings.ToLower(kw) {
	case "first":
		if !hasColon {
			return Policy{Kind: KeepFirst}, nil
		}
	case "longest":
		if !hasColon {
			return Policy{Kind: KeepLongest}, nil
		}
	case "field":
		if hasColon && name != "" {
			return Policy{Kind: KeepField, Field: name}, nil
		}
		return Policy{}, fmt.Errorf("%w: %q: field policy needs a name, as in \"field:score\"", ErrInvalidPolicy, s)
	}
	return Policy{}, fmt.Errorf("%w: %q; want \"first\", \"longest\" or \"field:NAME\"", ErrInvalidPolicy, s)
}

// String returns the policy in the form ParsePolicy reads.
func (p Policy) String() string {
	switch p.Kind {
	case KeepFirst:
		return "first"
	case KeepLongest:
		return "longest"
	case KeepField:
		return "field:" + p.Field
	}
	return fmt.Sprintf("PolicyKind(%d)", p.Kind)
}

// MarshalText implements encoding.TextMarshaler with String's form.
func (p Policy) MarshalText() ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return []byte(p.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with ParsePolicy.
func (p *Policy) UnmarshalText(b []byte) error {
	q, err := ParsePolicy(string(b))
	if err != nil {
		return err
	}
	*p = q
	return nil
}

// Validate reports whether p is a known policy; errors wrap ErrInvalidPolicy.
func (p Policy) Validate() error {
	switch p.Kind {
	case KeepFirst, KeepLongest:
		return nil
	case KeepField:
		if p.Field == "" {
			return fmt.Errorf("%w: KeepField with an empty field name", ErrInvalidPolicy)
		}
		return nil
	}
	return fmt.Errorf("%w: unknown kind %d", ErrInvalidPolicy, p.Kind)
}

// Attrs holds the per-document attributes keep policies read, indexed by
// document. Only the slices the policy needs must be set: Lengths for
// KeepLongest, Values (and optionally Has) for KeepField. Attrs is read,
// never modified or retained.
type Attrs struct {
	// Lengths are document lengths (bytes, runes or tokens: any unit, as
	// long as it is the same for all).
	Lengths []int64
	// Values are the numeric field values of KeepField. A NaN value counts
	// as missing.
	Values []float64
	// Has, if not nil, marks which documents have a value: Has[i] false
	// means document i lacks the field, whatever Values[i] holds.
	Has []bool
}

// ranker orders documents by a policy: before(i, j) reports whether i
// ranks strictly before j, i.e. is the better document to keep.
type ranker struct {
	kind    PolicyKind
	ref     uint32 // reference documents, 0 … ref−1, rank first by index
	lengths []int64
	values  []float64
	has     []bool
}

func newRanker(p Policy, n int, a *Attrs, ref int) (ranker, error) {
	if err := p.Validate(); err != nil {
		return ranker{}, err
	}
	r := ranker{kind: p.Kind, ref: uint32(ref)}
	if a == nil {
		a = &Attrs{}
	}
	switch p.Kind {
	case KeepLongest:
		if len(a.Lengths) < n {
			return r, fmt.Errorf("%w: policy %v needs Lengths for %d documents; got %d", ErrMissingAttrs, p, n, len(a.Lengths))
		}
		r.lengths = a.Lengths
	case KeepField:
		if len(a.Values) < n {
			return r, fmt.Errorf("%w: policy %v needs Values for %d documents; got %d", ErrMissingAttrs, p, n, len(a.Values))
		}
		if a.Has != nil && len(a.Has) < n {
			return r, fmt.Errorf("%w: policy %v: Has covers %d documents; want %d or nil", ErrMissingAttrs, p, len(a.Has), n)
		}
		r.values, r.has = a.Values, a.Has
	}
	return r, nil
}

func (r *ranker) value(i uint32) (float64, bool) {
	v := r.values[i]
	if math.IsNaN(v) || r.has != nil && !r.has[i] {
		return 0, false
	}
	return v, true
}

// compare orders documents i and j by the policy (before), for sorts.
func (r *ranker) compare(i, j uint32) int {
	switch {
	case r.before(i, j):
		return -1
	case r.before(j, i):
		return 1
	}
	return 0
}

func (r *ranker) before(i, j uint32) bool {
	if i < r.ref || j < r.ref {
		// Reference documents rank first, among themselves by index.
		return i < j
	}
	switch r.kind {
	case KeepLongest:
		if li, lj := r.lengths[i], r.lengths[j]; li != lj {
			return li > lj
		}
	case KeepField:
		vi, oki := r.value(i)
		vj, okj := r.value(j)
		if oki != okj {
			return oki
		}
		if oki && vi != vj {
			return vi > vj
		}
	}
	return i < j
}
