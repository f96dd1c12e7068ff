package jobspec_test

import (
	"fmt"

	"github.com/neardup/neardup/internal/jobspec"
)

// Example signs and bands two documents with a job's sketch, verifies the
// pair and formats its pairs.tsv line, as every driver does.
func Example() {
	opts := &jobspec.Options{Threshold: 0.5}
	job, err := opts.Job()
	if err != nil {
		panic(err)
	}
	sketch, _ := job.Sketch.New()
	sk, _ := sketch.NewSketcher()
	texts := []string{
		"the quick brown fox jumps over the lazy dog by the river bank",
		"The quick brown fox jumps over the lazy dog by the river bank!",
	}
	var sigs [][]uint64
	shared := map[uint64]int{}
	for _, t := range texts {
		sig, _ := sk.Sign(nil, []byte(t))
		sigs = append(sigs, sig)
		for _, k := range sk.AppendBucketKeys(nil, sig) {
			shared[k]++
		}
	}
	candidate := false
	for _, n := range shared {
		candidate = candidate || n == 2
	}
	v, _ := job.NewVerifier(sketch)
	fa, fb := v.Features(nil, []byte(texts[0])), v.Features(nil, []byte(texts[1]))
	verdict, ok := v.Verify(sigs[0], sigs[1], fa, fb)
	row := jobspec.NewPairRow([]byte("#b"), []byte("a"), 0, 1, verdict)
	fmt.Println("bands:", job.Sketch.Bands, "candidate:", candidate, "verified:", ok)
	fmt.Printf("%s", row.AppendLine(nil))
	// Output:
	// bands: b=35 r=3 candidate: true verified: true
	// "#b"	a	1.000000	1.000000
}
