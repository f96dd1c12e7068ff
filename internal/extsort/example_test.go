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

func ExamplePartitioned() {
	s := extsort.NewPartitioned("", "example", 1<<20) // 1 MiB: spills past about 48k entries
	for i := range 100_000 {
		key := uint64(i%256)<<56 | uint64(100_000-i)<<20 // every range has entries
		s.Add(key, uint64(i))                            // key, document
	}
	defer s.Close()
	// Two halves of the key ranges, which goroutines could read side by side.
	n, first := 0, extsort.Wide{}
	for _, half := range [][2]int{{0, extsort.Partitions / 2}, {extsort.Partitions / 2, extsort.Partitions}} {
		it := s.Range(half[0], half[1])
		for e, ok := it.Next(); ok; e, ok = it.Next() {
			if n == 0 {
				first = e
			}
			n++
		}
		it.Close()
	}
	fmt.Println(s.Runs() > 0, n, first.Key>>56, first.Doc)
	// Output: true 100000 0 99840
}
