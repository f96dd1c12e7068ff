package sigfile_test

import (
	"bytes"
	"fmt"
	"io"
	"log"

	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
)

// Write the signatures of two documents, then read them back: the header
// says how they were made, so the reader needs nothing else.
func Example() {
	params := minhash.Params{K: 64, Seed: 7}
	h := minhash.MustNewHasher(params)
	sh := shingle.MustNew(shingle.Prose)

	var file bytes.Buffer // or sigfile.Create(path, …), which writes atomically
	w, err := sigfile.NewWriter(&file, sigfile.MinHashHeader(shingle.Prose, h.Params()))
	if err != nil {
		log.Fatal(err)
	}
	for _, doc := range []struct{ id, text string }{
		{"a", "the quick brown fox jumps over the lazy dog"},
		{"b", "the quick brown fox jumps over the lazy cat"},
	} {
		if err := w.Add([]byte(doc.id), h.SignText(nil, sh, []byte(doc.text))); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	r, err := sigfile.NewReader(&file, "example", nil)
	if err != nil {
		log.Fatal(err)
	}
	hdr := r.Header()
	fmt.Println(hdr.Sketch, hdr.Params(), "seed", hdr.MinHash.Seed)
	// Refuse signatures that are not comparable with ours.
	if err := r.CheckMinHash(shingle.Prose, params); err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.CheckMinHash(shingle.Code, params) != nil)

	var rec sigfile.Record // reused: no allocation per record
	var sigs [][]uint64
	for {
		err := r.Next(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %d words\n", rec.ID, len(rec.Sig))
		sigs = append(sigs, append([]uint64(nil), rec.Sig...))
	}
	// The exact Jaccard similarity of the word 5-grams is 4/6.
	fmt.Printf("estimated similarity %.2f\n", hdr.MinHash.Similarity(sigs[0], sigs[1]))
	// Output:
	// minhash v2/oph/k=64/bits=32/seed=7 seed 7
	// true
	// a: 32 words
	// b: 32 words
	// estimated similarity 0.66
}
