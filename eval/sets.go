package eval

import (
	"fmt"
	"slices"
)

// Normalize sorts s ascending and removes duplicate values in place, returning
// the shortened slice, which aliases s (like [slices.Compact]). The elements of
// s past the returned length are left unspecified. It is the form every set
// argument of this package must be in: sorted ascending, without duplicates.
// Normalize(nil) returns nil.
func Normalize(s []uint64) []uint64 {
	if len(s) < 2 {
		return s
	}
	if !isSet(s) {
		slices.Sort(s)
		s = slices.Compact(s)
	}
	return s
}

// IsSet reports whether s is sorted strictly ascending, that is, sorted and
// without duplicates. The empty set is a set.
func IsSet(s []uint64) bool { return isSet(s) }

func isSet(s []uint64) bool {
	for i := 1; i < len(s); i++ {
		if s[i] <= s[i-1] {
			return false
		}
	}
	return true
}

// checkSet returns an error wrapping ErrNotSet that names the document and the
// first offending position when s is not sorted strictly ascending.
func checkSet(doc int, s []uint64) error {
	for i := 1; i < len(s); i++ {
		if s[i] <= s[i-1] {
			return fmt.Errorf("%w: document %d: element %d (%#x) <= element %d (%#x); use Normalize",
				ErrNotSet, doc, i, s[i], i-1, s[i-1])
		}
	}
	return nil
}

// Overlap returns |a ∩ b| for two sets sorted ascending without duplicates
// (see [Normalize]). It is an exact linear merge; its result is unspecified if
// either argument is not such a set.
func Overlap(a, b []uint64) int {
	n := 0
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		x, y := a[i], b[j]
		if x == y {
			n++
			i++
			j++
		} else if x < y {
			i++
		} else {
			j++
		}
	}
	return n
}

// OverlapAtLeast returns |a ∩ b| and whether it is at least k, for two sets
// as [Overlap] takes them; it stops merging, returning false and a count
// below k, as soon as the elements of a or of b left unmatched are too many
// for k: a pair that shares few elements is rejected after a few of them,
// where [Overlap] merges both sets whole.
func OverlapAtLeast(a, b []uint64, k int) (n int, ok bool) {
	// Each set may leave this many of its elements unmatched.
	slackA, slackB := len(a)-k, len(b)-k
	if slackA < 0 || slackB < 0 {
		return 0, false
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		x, y := a[i], b[j]
		if x == y {
			n++
			i++
			j++
		} else if x < y {
			i++
			if slackA--; slackA < 0 {
				return n, false
			}
		} else {
			j++
			if slackB--; slackB < 0 {
				return n, false
			}
		}
	}
	return n, n >= k
}

// Jaccard returns the Jaccard similarity |a ∩ b| / |a ∪ b| of two sets sorted
// ascending without duplicates (see [Normalize]), computed as
// float64(|a ∩ b|) / float64(|a ∪ b|): exactly the value [AllPairs] reports
// and compares with its threshold. Two empty sets have similarity 0, so empty
// sets never pair.
func Jaccard(a, b []uint64) float64 {
	o := Overlap(a, b)
	u := len(a) + len(b) - o
	if u == 0 {
		return 0
	}
	return float64(o) / float64(u)
}
