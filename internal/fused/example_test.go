package fused_test

import (
	"fmt"
	"math"

	"github.com/neardup/neardup/internal/fused"
)

// Add bins features into a power of two of one-permutation bins: feature f
// has value f·mult and goes to bin value >> shift, which keeps its minimum.
func ExampleAdd() {
	mins := make([]uint64, 4) // K = 4 bins: shift = 64 − 2
	for i := range mins {
		mins[i] = math.MaxUint64 // empty
	}
	features := []uint64{0x0123456789abcdef, 0xfedcba9876543210, 0x0f0f0f0f0f0f0f0f}
	fused.Add(mins, 1, 62, features) // mult 1: the value is the feature itself
	for i, v := range mins {
		if v == math.MaxUint64 {
			fmt.Printf("bin %d: empty\n", i)
		} else {
			fmt.Printf("bin %d: %#016x\n", i, v)
		}
	}
	// Output:
	// bin 0: 0x0123456789abcdef
	// bin 1: empty
	// bin 2: empty
	// bin 3: 0xfedcba9876543210
}
