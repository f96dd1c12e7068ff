package simhash_test

import (
	"fmt"
	"slices"
	"strings"

	"github.com/neardup/neardup/shingle"
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

func ExampleHasher() {
	sh := shingle.MustNew(shingle.Prose)
	article := "The city council approved the budget for the new public library on Tuesday evening " +
		"after a long debate about parking, opening hours and the cost of the building, which the " +
		"mayor said would be covered by a state grant and by selling two empty lots near the river " +
		"to a housing cooperative that plans to build sixty flats there within three years."
	docs := [][]byte{
		[]byte(article),
		[]byte(strings.Replace(article, "Tuesday", "Wednesday", 1)), // a near duplicate
		[]byte("Heavy rain is expected across the whole region this weekend, forecasters said on Friday, " +
			"warning drivers on the coastal roads and asking farmers to move their animals to higher " +
			"ground before the rivers rise, as they did two winters ago when the bridge was closed."),
	}

	// TF: the zero Hasher. Each occurrence of a feature votes once.
	var tf simhash.Hasher
	a, b, c := tf.FingerprintText(sh, docs[0]), tf.FingerprintText(sh, docs[1]), tf.FingerprintText(sh, docs[2])
	fmt.Println("tf:    distance of the near pair", simhash.Distance(a, b), "of an unrelated pair", simhash.Distance(a, c))

	// TF-IDF: a first pass counts document frequencies, then each
	// occurrence votes with its feature's IDF weight.
	df, err := simhash.NewDFTable(simhash.DFOptions{LogWidth: 12})
	if err != nil {
		panic(err)
	}
	for _, d := range docs {
		df.AddText(sh, d)
	}
	idf := df.IDF()
	h := simhash.NewHasher(idf)
	a, b, c = h.FingerprintText(sh, docs[0]), h.FingerprintText(sh, docs[1]), h.FingerprintText(sh, docs[2])
	fmt.Println("tfidf: distance of the near pair", simhash.Distance(a, b), "of an unrelated pair", simhash.Distance(a, c))
	fmt.Println("documents counted:", idf.Docs(), "df fingerprint set:", h.DFFingerprint() == df.Fingerprint())
	// With IDF weights the features that differ between the near pair,
	// found in one document only, are the heaviest: the pair moves apart.
	// That is typical (see BENCHMARKS.md, "SimHash: weighting and k").

	// Output:
	// tf:    distance of the near pair 7 of an unrelated pair 32
	// tfidf: distance of the near pair 11 of an unrelated pair 33
	// documents counted: 3 df fingerprint set: true
}

func ExampleDFTable_MarshalBinary() {
	df, err := simhash.NewDFTable(simhash.DFOptions{Rows: 2, LogWidth: 8})
	if err != nil {
		panic(err)
	}
	df.AddDocument([]uint64{11, 12, 12, 13}) // repeats count once
	df.AddDocument([]uint64{12, 14})

	enc, _ := df.MarshalBinary()
	var back simhash.DFTable
	if err := back.UnmarshalBinary(enc); err != nil {
		panic(err)
	}
	fmt.Println(len(enc), "bytes; df(12) =", back.Count(12), "df(14) =", back.Count(14), "documents:", back.Docs())
	fmt.Println("same fingerprint:", back.Fingerprint() == df.Fingerprint())

	enc[20] ^= 1 // a flipped bit in the counters
	fmt.Println(back.UnmarshalBinary(enc) != nil)
	// Output:
	// 2072 bytes; df(12) = 2 df(14) = 1 documents: 2
	// same fingerprint: true
	// true
}

func ExampleLayout_Pairs() {
	l, err := simhash.NewLayout(simhash.Options{}) // k ≤ 3, 4 blocks, 4 tables
	if err != nil {
		panic(err)
	}
	const fp = 0x0123_4567_89AB_CDEF
	fps := []uint64{
		fp,
		0xFEDC_BA98_7654_3210, // far from everything
		fp ^ 0b111,            // 3 bits from document 0
		fp ^ 1<<63 | 1<<62,    // 2 bits from document 0
		fp ^ 0b1111,           // 4 bits from document 0, 1 from document 2, 5 from 3
	}
	pairs, m, err := l.Pairs(nil, fps, 3, nil)
	if err != nil {
		panic(err)
	}
	for _, p := range pairs {
		a, b := p>>32, uint32(p)
		fmt.Printf("(%d, %d) at distance %d\n", a, b, simhash.Distance(fps[a], fps[b]))
	}
	fmt.Println(m.Entries, "entries,", m.Pairs, "pairs emitted")
	// Output:
	// (0, 2) at distance 3
	// (0, 3) at distance 2
	// (2, 4) at distance 1
	// 20 entries, 3 pairs emitted
}

// A batch driver streams: every document's entries go to an external sort,
// and the sorted stream, in chunks, through a Grouper. Here a slice and
// slices.Sort stand in for the external sort.
func ExampleGrouper() {
	l, err := simhash.NewLayout(simhash.Options{MaxDistance: 2}) // 3 blocks, 3 tables of one block
	if err != nil {
		panic(err)
	}
	fps := []uint64{0xAAAA_0000_FFFF_1234, 0xAAAA_0000_FFFF_1235, 0x5555_FFFF_0000_0000, 0xAAAA_0000_FFFF_1237}
	const docBits = 2 // enough for documents 0..3 (lsh.DocBits gives it for n documents)
	var entries []uint64
	for doc, fp := range fps {
		entries = l.AppendEntries(entries, fp, uint32(doc), docBits)
	}
	slices.Sort(entries)

	// The Grouper reads fps, the fingerprints by document, while it runs.
	g, err := l.NewGrouper(fps, docBits, 2, nil)
	if err != nil {
		panic(err)
	}
	var pairs []uint64
	for chunk := range slices.Chunk(entries, 5) {
		if pairs, err = g.Append(pairs, chunk); err != nil {
			panic(err)
		}
	}
	pairs = g.Flush(pairs)
	var out []string
	for _, p := range pairs {
		out = append(out, fmt.Sprintf("(%d, %d)", p>>32, uint32(p)))
	}
	fmt.Println(strings.Join(out, " "))
	fmt.Print(g.Metrics())
	// Output:
	// (0, 1) (0, 3) (1, 3)
	// entries                      12
	// duplicate entries             0
	// buckets                       8
	// shared buckets                2
	// comparisons                   6
	// pairs                         3
	// capped buckets                0
	// capped members                0
}
