package plan

import (
	"fmt"
	"math/rand/v2"

	"github.com/neardup/neardup/eval"
)

// Sample is the measured similarity distribution of a sample of a corpus:
// exact for every pair at or above Floor, estimated below it from randomly
// drawn pairs. Plain data; MeasureSample makes one.
type Sample struct {
	// Docs is the number of documents in the sample.
	Docs int64 `json:"docs"`
	// MeanFeatures is their mean number of distinct features.
	MeanFeatures float64 `json:"mean_features"`
	// MeanBytes is their mean text length in bytes; 0 when not known.
	MeanBytes float64 `json:"mean_bytes"`
	// Floor is the similarity from which Pairs lists every pair exactly.
	Floor float64 `json:"floor"`
	// Pairs is the Jaccard similarity of every pair of the sample with
	// J ≥ Floor, from the exact all-pairs join.
	Pairs []float64 `json:"-"`
	// Drawn is the number of random pairs drawn.
	Drawn int64 `json:"drawn"`
	// Below holds the similarities of the drawn pairs that fell below
	// Floor. Each stands for (C(Docs,2) − len(Pairs))/len(Below) pairs.
	Below []float64 `json:"-"`
}

// DefaultFloor is MeasureSample's default floor below the threshold.
const DefaultFloor = 0.3

// MeasureSample measures the similarity distribution of a sample: the exact
// join (eval) at floor lists every pair with J ≥ floor, and draws random
// pairs (i ≠ j, uniformly, from a PCG seeded with seed) give the
// distribution below it. sets must be normalised (eval.Normalize); bytes is
// the sample's total text length (0 if unknown). Deterministic for its
// arguments. floor must be in (0, 1].
func MeasureSample(sets [][]uint64, bytes int64, floor float64, draws int, seed uint64, opts *eval.Options) (*Sample, error) {
	n := len(sets)
	if n < 2 {
		return nil, fmt.Errorf("%w: sample of %d documents; want at least 2", ErrInput, n)
	}
	s := &Sample{Docs: int64(n), Floor: floor}
	var feats int64
	for _, x := range sets {
		feats += int64(len(x))
	}
	s.MeanFeatures = float64(feats) / float64(n)
	s.MeanBytes = float64(bytes) / float64(n)
	err := eval.AllPairsFunc(sets, floor, opts, func(p eval.Pair) bool {
		s.Pairs = append(s.Pairs, p.Jaccard)
		return true
	})
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	for range draws {
		i := rng.IntN(n)
		j := rng.IntN(n - 1)
		if j >= i {
			j++
		}
		s.Drawn++
		if x := eval.Jaccard(sets[i], sets[j]); x < floor {
			s.Below = append(s.Below, x)
		}
	}
	return s, nil
}
