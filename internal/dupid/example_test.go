package dupid_test

import (
	"fmt"

	"github.com/neardup/neardup/internal/dupid"
)

// Add every id with where it occurred, in input order; First names the
// earliest second occurrence, All every later occurrence.
func Example() {
	d, err := dupid.New(&dupid.Options{Memory: 16 << 20})
	if err != nil {
		panic(err)
	}
	defer d.Close()
	for i, id := range []string{"t118", "t119", "t120", "t121", "t120", "t119"} {
		d.Add([]byte(id), dupid.Position{File: "corpus.jsonl", Line: int64(i + 1), Index: int64(i)})
	}
	dup, err := d.First()
	if err != nil {
		panic(err)
	}
	fmt.Println(dup.RecordError("id"))
	// Output:
	// corpus.jsonl:5: field "id": dupid: duplicate id "t120", first at corpus.jsonl:3
}
