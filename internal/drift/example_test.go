package drift_test

import (
	"fmt"

	"github.com/neardup/neardup/internal/drift"
)

func Example() {
	old, cur := drift.NewDistributions(), drift.NewDistributions()
	for i := range 1000 {
		old.AddDocument(int64(2000+i), 300)
		cur.AddDocument(int64(2000+i), 300)
		if i%3 == 0 {
			cur.AddDocument(200, 30) // a wave of short pages
		}
	}
	c, err := drift.Compare(old.TextBytes, cur.TextBytes)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("text bytes: D %.3f, p %.2g, PSI %.2f, moved %v\n", c.D, c.P, c.PSI, c.Moved)
	c, _ = drift.Compare(old.Features, old.Features)
	fmt.Printf("features: D %.3f, p %.2g, PSI %.2f, moved %v\n", c.D, c.P, c.PSI, c.Moved)
	// Output:
	// text bytes: D 0.250, p 7.2e-32, PSI 1.62, moved true
	// features: D 0.000, p 1, PSI 0.00, moved false
}
