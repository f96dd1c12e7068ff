package bytesize_test

import (
	"fmt"

	"github.com/neardup/neardup/internal/bytesize"
)

func Example() {
	for _, s := range []string{"4GiB", "64MB", "512k", "1e30GiB"} {
		n, err := bytesize.Parse(s)
		fmt.Println(n, err)
	}
	// Output:
	// 4294967296 <nil>
	// 64000000 <nil>
	// 524288 <nil>
	// 0 bytesize: invalid size: "1e30GiB" is 2^63 bytes or more; want less than 8 EiB
}
