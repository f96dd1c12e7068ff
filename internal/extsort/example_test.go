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

func ExampleWideSorter() {
	s := extsort.NewWide("", "example", 1024) // spills a run every 1,008 entries
	for i := range 5000 {
		s.Add(uint64(5000-i)<<40, uint64(i)) // key, document
	}
	it, _ := s.Iter()
	defer it.Close()
	first, _ := it.Next()
	n := 1
	for _, ok := it.Next(); ok; _, ok = it.Next() {
		n++
	}
	fmt.Println(n, first.Key>>40, first.Doc)
	// Output: 5000 1 4999
}
