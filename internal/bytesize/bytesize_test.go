package bytesize

import (
	"errors"
	"math"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"0", 0}, {"1", 1}, {"512", 512}, {"1e9", 1e9}, {"4GiB", 4 << 30}, {"256MiB", 256 << 20},
		{"64MB", 64e6}, {"512k", 512 << 10}, {"512K", 512 << 10}, {"2 G", 2 << 30}, {"1.5GiB", 3 << 29},
		{" 7B ", 7}, {"1TiB", 1 << 40}, {"3TB", 3e12}, {"10kib", 10 << 10}, {"1.9", 1},
		{"8191PiB", -1}, // "PiB" is no unit: not a number
		{"7.99EiB", -1},
		{"8388607TiB", 8388607 << 40},
	} {
		got, err := Parse(c.in)
		switch {
		case c.want < 0 && err == nil:
			t.Errorf("Parse(%q) = %d; want an error", c.in, got)
		case c.want >= 0 && (err != nil || got != c.want):
			t.Errorf("Parse(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

// TestParseErrors: every value that is not a size in int64 range is refused,
// never wrapped into a negative or a default.
func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "GiB", "abc", "-1", "-0.5MiB", "1e30GiB", "1e19", "9223372036854775808", "8EiB", "8388608TiB",
		"NaN", "nanGiB", "Inf", "+Inf", "-Inf", "1e309", "0x10", "4 GiBs"} {
		if v, err := Parse(in); !errors.Is(err, ErrSize) {
			t.Errorf("Parse(%q) = %d, %v; want ErrSize", in, v, err)
		}
	}
	// The largest value below 2^63 that a float64 holds parses exactly.
	if v, err := Parse("9223372036854774784"); err != nil || v != math.MaxInt64-1023 {
		t.Errorf("Parse(2^63-1024) = %d, %v; want %d", v, err, int64(math.MaxInt64-1023))
	}
}
