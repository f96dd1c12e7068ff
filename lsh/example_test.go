package lsh_test

import (
	"fmt"

	"github.com/neardup/neardup/lsh"
)

func ExampleOptimal() {
	p, err := lsh.Optimal(0.8, 128, 0.5, 0.5)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%v: P(0.8) = %.2f, P(0.5) = %.4f\n", p, p.Probability(0.8), p.Probability(0.5))
	// Output: b=9 r=13: P(0.8) = 0.40, P(0.5) = 0.0011
}

func ExampleForRecall() {
	p, err := lsh.ForRecall(0.8, 128, 0.95)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%v: P(0.8) = %.3f, uses %d of 128 slots\n", p, p.Probability(0.8), p.Slots())
	// Output: b=13 r=7: P(0.8) = 0.953, uses 91 of 128 slots
}

func ExampleCandidates() {
	p := lsh.Params{Bands: 2, Rows: 2}
	sigs := [][]uint64{
		{1, 2, 3, 4},
		{1, 2, 7, 8}, // shares band 0 with doc 0
		{5, 6, 7, 8}, // shares band 1 with doc 1
		{9, 9, 9, 9},
	}
	docBits := lsh.DocBits(len(sigs))
	var entries, keys []uint64
	for doc, sig := range sigs {
		keys = p.AppendKeys(keys[:0], sig)
		entries = lsh.AppendEntries(entries, keys, uint32(doc), docBits)
	}
	pairs, m, err := lsh.Candidates(nil, entries, docBits, nil)
	if err != nil {
		panic(err)
	}
	for _, pair := range pairs {
		a, b := lsh.UnpackPair(pair)
		fmt.Println(a, b)
	}
	fmt.Println(m.Buckets, "buckets,", m.UniquePairs, "pairs")
	// Output:
	// 0 1
	// 1 2
	// 6 buckets, 2 pairs
}
