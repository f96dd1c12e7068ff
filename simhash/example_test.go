package simhash_test

import (
	"fmt"
	"strings"

	"github.com/neardup/neardup/simhash"
	"github.com/zeebo/xxh3"
)

// features hashes the word 3-grams of text; real code uses package shingle.
func features(text string) []uint64 {
	w := strings.Fields(text)
	var fs []uint64
	for i := 0; i+3 <= len(w); i++ {
		fs = append(fs, xxh3.HashString(strings.Join(w[i:i+3], " ")))
	}
	return fs
}

func ExampleFingerprint() {
	a := simhash.Fingerprint(features("the quick brown fox jumps over the lazy dog and runs far away into the deep dark forest"))
	b := simhash.Fingerprint(features("the quick brown fox jumps over the lazy dog and runs far away into the deep dark woods"))
	c := simhash.Fingerprint(features("a completely different sentence about stock markets, interest rates and central banks"))
	fmt.Println("near-duplicates are close:", simhash.Distance(a, b) < simhash.Distance(a, c))
	fmt.Println("empty input:", simhash.Fingerprint(nil))
	// Output:
	// near-duplicates are close: true
	// empty input: 0
}

func ExampleFingerprintWeighted() {
	// One heavy feature outvotes two light ones on every bit.
	fp, err := simhash.FingerprintWeighted(
		[]uint64{0xFFFF_0000_FFFF_0000, 0x0000_FFFF_0000_FFFF, 0x0000_FFFF_FFFF_0000},
		[]float64{3, 1, 1})
	fmt.Printf("%#016x %v\n", fp, err)

	_, err = simhash.FingerprintWeighted([]uint64{1}, []float64{-1})
	fmt.Println(err)
	// Output:
	// 0xffff0000ffff0000 <nil>
	// simhash: invalid weight: weights[0] = -1 (want finite and >= 0)
}

func ExampleBuilder() {
	var b simhash.Builder // the zero value is ready; reuse it with Reset
	for _, doc := range []string{"one two three four five six", "one two three four five seven"} {
		b.Reset()
		for _, f := range features(doc) {
			b.AddFeature(f)
		}
		fmt.Println(b.Sum() == simhash.Fingerprint(features(doc)))
	}
	// Output:
	// true
	// true
}

func ExampleIndex() {
	ix, err := simhash.NewIndex(simhash.Options{}) // K = 3, 4 tables
	if err != nil {
		panic(err)
	}
	const fp = 0x0123_4567_89AB_CDEF
	ix.Build([]simhash.Entry{
		{Fingerprint: fp, ID: 1},
		{Fingerprint: fp ^ 0b101, ID: 2},       // 2 bits away
		{Fingerprint: fp ^ 0b1111, ID: 3},      // 4 bits away
		{Fingerprint: fp ^ (1<<63 | 1), ID: 4}, // 2 bits away
	})
	ix.Insert(fp, 5) // an exact duplicate under another id

	matches, err := ix.Query(fp, 3)
	if err != nil {
		panic(err)
	}
	for _, m := range matches {
		fmt.Printf("id %d at distance %d\n", m.ID, m.Distance)
	}
	_, err = ix.Query(fp, 4)
	fmt.Println(err)
	// Output:
	// id 1 at distance 0
	// id 5 at distance 0
	// id 2 at distance 2
	// id 4 at distance 2
	// simhash: query distance out of range: k = 4 (want 0..3)
}
