package plan_test

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/plan"
	"github.com/neardup/neardup/simhash"
)

func ExampleMake() {
	p, err := plan.Make(plan.Input{Documents: 300e6, MeanFeatures: 1000, Threshold: 0.85, Recall: 0.95, Memory: 100e9})
	if err != nil {
		panic(err)
	}
	fmt.Printf("k=%d %s %d-bit slots, b=%d r=%d, P(t)=%.4f, %s\n", p.K, p.Scheme, p.Bits, p.B, p.R, p.RecallAtThreshold, plan.FormatBytes(p.TotalBytes))
	// Output: k=128 oph 8-bit slots, b=12 r=9, P(t)=0.9586, 81.60 GB
}

func ExampleMakeSimHash() {
	// A sample of 400 documents as feature multisets: originals, and near
	// copies with a few per cent of their features replaced.
	r := rand.New(rand.NewPCG(1, 2))
	var docs [][]uint64
	for len(docs) < 400 {
		if len(docs) > 0 && len(docs)%4 == 0 {
			d := slices.Clone(docs[len(docs)-1])
			for i := range d {
				if r.IntN(40) == 0 {
					d[i] = r.Uint64()
				}
			}
			docs = append(docs, d)
			continue
		}
		d := make([]uint64, 300)
		for i := range d {
			d[i] = r.Uint64()
		}
		docs = append(docs, d)
	}
	sets := make([][]uint64, len(docs))
	fps := make([]uint64, len(docs))
	for i, d := range docs {
		sets[i] = eval.Normalize(slices.Clone(d))
		fps[i] = simhash.Fingerprint(d) // as the corpus will be fingerprinted
	}
	s, err := plan.MeasureSimHash(sets, fps, 0, plan.DefaultFloor, 10000, 1, nil)
	if err != nil {
		panic(err)
	}
	p, err := plan.MakeSimHash(plan.SimHashInput{Documents: 100_000, Threshold: 0.9, Recall: 0.95, Sample: s})
	if err != nil {
		panic(err)
	}
	fmt.Printf("k = %d, %d blocks, %d tables; recall %.3f over %d pairs; %.1f comparisons per document\n",
		p.K, p.Layout.Blocks, p.Layout.Tables, p.Recall, p.TruePairs, p.Layout.Comparisons)
	// Output: k = 8, 10 blocks, 45 tables; recall 0.960 over 99 pairs; 2898.5 comparisons per document
}
