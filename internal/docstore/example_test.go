package docstore_test

import (
	"fmt"

	"github.com/neardup/neardup/internal/docstore"
)

func Example() {
	s := docstore.New("", "example", 0) // the smallest budget: two chunks in memory
	defer s.Close()
	s.Append([]byte("first document"))
	i, _ := s.AppendUint64s([]uint64{7, 8, 9})
	text, _ := s.Get(nil, 0)
	vals, _ := s.GetUint64s(nil, i)
	fmt.Println(string(text), vals)
	// Output: first document [7 8 9]
}
