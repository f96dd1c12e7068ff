package eval_test

import (
	"fmt"
	"strings"

	"github.com/neardup/neardup/eval"
)

func ExampleScorePairs() {
	truth, _ := eval.ReadPairFile(strings.NewReader("# threshold=0.5\na\tb\t0.9\na\tc\t0.82\nd\te\t0.6\n"), "truth.tsv")
	pred, _ := eval.ReadPairFile(strings.NewReader("a\tb\t0.88\t0.9\nx\ty\t0.81\t-\n"), "pairs.tsv")
	s := eval.ScorePairs(truth.Pairs, pred.Pairs, eval.ScoreOptions{Threshold: 0.8})
	fmt.Printf("truth %d, predicted %d: precision %.2f recall %.2f F1 %.2f\n", s.Truth, s.Predicted, s.Precision, s.Recall, s.F1)
	for _, b := range s.Bands {
		fmt.Printf("%.2f-%.2f: %d of %d\n", b.Lo, b.Hi, b.Found, b.Truth)
	}
	// Output:
	// truth 2, predicted 2: precision 0.50 recall 0.50 F1 0.50
	// 0.80-0.85: 0 of 1
	// 0.85-0.90: 0 of 0
	// 0.90-0.95: 1 of 1
	// 0.95-1.00: 0 of 0
}

func ExampleCompareClusterings() {
	// Items 0..5: truth {0,1,2} {3,4,5}; predicted {0,1} {2,3} {4,5}.
	s := eval.CompareClusterings([]int64{0, 0, 0, 1, 1, 1}, []int64{0, 0, 1, 1, 2, 2}, 6)
	fmt.Printf("ARI %.4f, pair F1 %.4f\n", s.ARI, s.PairF1)
	// Output: ARI 0.2424, pair F1 0.4444
}
