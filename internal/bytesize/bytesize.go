// Package bytesize reads sizes written for people, such as "4GiB", "256MiB",
// "64MB", "1e9" or "512k", for the flags that take a memory budget or a
// file size. It is not a general unit parser: sizes are whole bytes that fit
// an int64.
package bytesize

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrSize reports a size that does not parse or is out of range; check with
// errors.Is.
var ErrSize = errors.New("bytesize: invalid size")

// units are the suffixes Parse accepts, case-insensitively: the longest
// match wins (KiB before K before B).
var units = []struct {
	suffix string
	mult   float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1},
}

// Parse reads a size: a non-negative decimal number (a fraction or an
// exponent is allowed, "1.5GiB", "1e9") and an optional unit, KiB, MiB, GiB
// or TiB (powers of 1024), KB, MB, GB or TB (powers of 1000), K, M or G
// (powers of 1024, as sort(1) reads them) or B, in any case, with or without
// a space. A fraction of a byte is dropped. Errors wrap ErrSize and name the
// value: not a number, negative, not finite, or 2^63 bytes or more (past
// int64).
func Parse(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	for _, u := range units {
		if len(t) >= len(u.suffix) && strings.EqualFold(t[len(t)-len(u.suffix):], u.suffix) {
			mult = u.mult
			t = strings.TrimSpace(t[:len(t)-len(u.suffix)])
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%w: %q is not a size; want a number and a unit, such as 4GiB or 256MiB", ErrSize, s)
	}
	if v < 0 {
		return 0, fmt.Errorf("%w: %q is negative", ErrSize, s)
	}
	b := v * mult
	if b >= math.MaxInt64 { // 2^63 as a float64: every larger value overflows
		return 0, fmt.Errorf("%w: %q is 2^63 bytes or more; want less than 8 EiB", ErrSize, s)
	}
	return int64(b), nil
}
