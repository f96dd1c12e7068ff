package sketch_test

import (
	"fmt"

	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
)

// Example signs two near-duplicate texts, finds the bucket keys they share
// and estimates their similarity.
func Example() {
	params := minhash.Params{}
	params.EnsureDefaults()
	bands, _ := lsh.ForRecall(0.8, params.K, 0.99)
	sk, err := sketch.Config{Spec: shingle.Prose, Params: params, Bands: bands}.New()
	if err != nil {
		panic(err)
	}
	s, _ := sk.NewSketcher()
	a, _ := s.Sign(nil, []byte("the quick brown fox jumps over the lazy dog by the river bank"))
	b, _ := s.Sign(nil, []byte("The quick brown fox jumps over the lazy dog by the river bank!"))
	ka, kb := s.AppendBucketKeys(nil, a), s.AppendBucketKeys(nil, b)
	shared := 0
	for i := range ka {
		if ka[i] == kb[i] {
			shared++
		}
	}
	fmt.Printf("%d words a signature, %d of %d bucket keys shared, estimate %.2f\n", sk.Words(), shared, len(ka), sk.Similarity(a, b))
	// Output:
	// 64 words a signature, 16 of 16 bucket keys shared, estimate 1.00
}

// Example_simHash signs two near-duplicate texts with SimHash: one 64-bit
// fingerprint each, one bucket key per block-permutation table once the
// blocks are chosen for the corpus size, and the model's Jaccard at their
// Hamming distance.
func Example_simHash() {
	c := sketch.Config{Spec: shingle.Prose, Kind: sketch.SimHash,
		SimHash: sketch.SimHashConfig{Params: sigfile.SimHashParams{Weighting: sigfile.TF}, K: sketch.DefaultHamming}}
	c, err := c.Resolve(1_000_000) // blocks for a million documents
	if err != nil {
		panic(err)
	}
	sk, err := c.New()
	if err != nil {
		panic(err)
	}
	s, _ := sk.NewSketcher()
	a, _ := s.Sign(nil, []byte("the quick brown fox jumps over the lazy dog by the river bank in the early morning"))
	b, _ := s.Sign(nil, []byte("the quick brown fox jumps over the lazy dog by the river bank in the early evening"))
	ka, kb := s.AppendBucketKeys(nil, a), s.AppendBucketKeys(nil, b)
	shared := 0
	for i := range ka {
		if ka[i] == kb[i] {
			shared++
		}
	}
	fmt.Printf("%d word a signature, %d blocks, %d tables, %d keys shared, estimate %.2f\n",
		sk.Words(), c.SimHash.Blocks, len(ka), shared, sk.Similarity(a, b))
	// Output:
	// 1 word a signature, 8 blocks, 28 tables, 3 keys shared, estimate 0.89
}
