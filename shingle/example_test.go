package shingle_test

import (
	"fmt"

	"github.com/neardup/neardup/shingle"
)

func Example() {
	sh := shingle.MustNew(shingle.Prose)
	f := sh.AppendFeatures(nil, []byte("The QUICK brown fox -- jumps over the lazy dog!"))
	g := sh.AppendFeatures(nil, []byte("the quick brown fox jumps over the lazy dog"))
	fmt.Println(len(f), "features; equal after normalisation:", fmt.Sprint(f) == fmt.Sprint(g))
	fmt.Println(shingle.Prose)
	// Output:
	// 5 features; equal after normalisation: true
	// v1/word:5/nfkc,casefold,punct,space/xxh3:0/unicode:15.0.0
}

func ExampleParse() {
	spec, err := shingle.Parse("char:4")
	fmt.Println(spec, err)
	// Output: v1/char:4/nfkc,casefold,punct,space/xxh3:0/unicode:15.0.0 <nil>
}
