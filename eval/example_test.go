package eval_test

import (
	"fmt"
	"strings"

	"github.com/zeebo/xxh3"

	"github.com/neardup/neardup/eval"
)

// wordBigrams is a toy feature extractor: the xxh3 hashes of a text's word
// 2-grams, normalised. Real code uses package shingle.
func wordBigrams(text string) []uint64 {
	w := strings.Fields(text)
	var s []uint64
	for i := 0; i+2 <= len(w); i++ {
		s = append(s, xxh3.HashString(w[i]+" "+w[i+1]))
	}
	return eval.Normalize(s)
}

func ExampleAllPairs() {
	docs := []string{
		"the quick brown fox jumps over the lazy dog",
		"lorem ipsum dolor sit amet",
		"the quick brown fox jumped over the lazy dog",
		"the quick brown fox jumps over the lazy dog",
		"",
	}
	sets := make([][]uint64, len(docs))
	for i, d := range docs {
		sets[i] = wordBigrams(d)
	}
	pairs, err := eval.AllPairs(sets, 0.5, nil)
	if err != nil {
		panic(err)
	}
	for _, p := range pairs {
		fmt.Printf("%d %d overlap=%d J=%.3f\n", p.A, p.B, p.Overlap, p.Jaccard)
	}
	// Output:
	// 0 2 overlap=6 J=0.600
	// 0 3 overlap=8 J=1.000
	// 2 3 overlap=6 J=0.600
}

func ExampleCollection() {
	sets := [][]uint64{
		{1, 2, 3, 4, 5},
		{1, 2, 3, 4, 6},
		{1, 2, 3, 7, 8},
		{9},
	}
	c, err := eval.NewCollection(sets, &eval.Options{Workers: 2})
	if err != nil {
		panic(err)
	}
	for _, t := range []float64{0.4, 2.0 / 3, 1} {
		pairs, err := c.AllPairs(t)
		if err != nil {
			panic(err)
		}
		fmt.Printf("t=%.3f: %d pairs\n", t, len(pairs))
	}
	// Output:
	// t=0.400: 3 pairs
	// t=0.667: 1 pairs
	// t=1.000: 0 pairs
}

func ExampleAllPairsFunc() {
	sets := [][]uint64{{1, 2, 3}, {1, 2, 3}, {1, 2, 4}, {1, 2, 3}}
	n := 0
	err := eval.AllPairsFunc(sets, 1, nil, func(p eval.Pair) bool {
		n++
		return true // false stops the join
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(n, "identical pairs")
	// Output:
	// 3 identical pairs
}

func ExampleJaccard() {
	a := []uint64{1, 2, 3, 4}
	b := eval.Normalize([]uint64{6, 4, 3, 5, 4})
	fmt.Println(b, eval.Overlap(a, b), eval.Jaccard(a, b))
	// Output:
	// [3 4 5 6] 2 0.3333333333333333
}
