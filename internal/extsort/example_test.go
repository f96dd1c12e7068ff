package extsort_test

import (
	"fmt"

	"github.com/neardup/neardup/internal/extsort"
)

func Example() {
	s := extsort.New("", "example", 1024) // spills a run every 1,024 values
	for i := 3000; i > 0; i-- {
		s.Add(uint64(i % 1000))
	}
	it, _ := s.Iter(true) // unique
	defer it.Close()
	n, first := 0, uint64(0)
	for v, ok := it.Next(); ok; v, ok = it.Next() {
		if n == 0 {
			first = v
		}
		n++
	}
	fmt.Println(s.Runs() == 0, n, first)
	// Output: true 1000 0
}
