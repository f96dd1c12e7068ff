package radix_test

import (
	"fmt"

	"github.com/neardup/neardup/internal/radix"
)

func ExampleSort() {
	var scratch []uint64 // kept between calls: later sorts of this size allocate nothing
	for _, data := range [][]uint64{{5, 3, 9, 1}, {42, 7, 7, 0}} {
		scratch = radix.Sort(data, scratch)
		fmt.Println(data)
	}
	// Output:
	// [1 3 5 9]
	// [0 7 7 42]
}
