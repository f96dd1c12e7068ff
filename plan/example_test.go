package plan_test

import (
	"fmt"

	"github.com/neardup/neardup/plan"
)

func ExampleMake() {
	p, err := plan.Make(plan.Input{Documents: 300e6, MeanFeatures: 1000, Threshold: 0.85, Recall: 0.95, Memory: 100e9})
	if err != nil {
		panic(err)
	}
	fmt.Printf("k=%d %s %d-bit slots, b=%d r=%d, P(t)=%.4f, %s\n", p.K, p.Scheme, p.Bits, p.B, p.R, p.RecallAtThreshold, plan.FormatBytes(p.TotalBytes))
	// Output: k=128 oph 8-bit slots, b=12 r=9, P(t)=0.9586, 81.60 GB
}
