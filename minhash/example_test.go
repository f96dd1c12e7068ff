package minhash_test

import (
	"fmt"

	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
)

func Example() {
	sh := shingle.MustNew(shingle.Prose)
	h := minhash.MustNewHasher(minhash.Params{K: 256, Bits: 32})
	a := h.SignText(nil, sh, []byte("The quick brown fox jumps over the lazy dog near the river bank today"))
	b := h.SignText(nil, sh, []byte("The quick brown fox jumps over the lazy dog near the river bank tonight"))
	c := h.SignText(nil, sh, []byte("An entirely different sentence about cooking pasta with garlic and oil"))
	p := h.Params() // the exact Jaccard of a and b is 9/11 = 0.82 (word 5-grams)
	fmt.Printf("a~b %.2f\n", p.Similarity(a, b))
	fmt.Printf("a~c %.2f\n", p.Similarity(a, c))
	// Output:
	// a~b 0.83
	// a~c 0.00
}

func ExampleStreaming() {
	s, _ := minhash.NewStreaming(minhash.Params{})
	s.Add(1<<40+1, 1<<41+7) // features arrive over time, from any goroutine
	s.Add(1<<42 + 3)
	sig := s.Snapshot(nil)
	fmt.Println(len(sig), "words")
	// Output: 64 words
}
