package tune_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
	"github.com/neardup/neardup/tune"
)

// Compare two bandings on stored signatures and a golden set, without
// signing again: one catches the pair at J = 0.55 and the other does not.
func Example() {
	base := "the committee met on tuesday to discuss the budget for the coming year and agreed to postpone the vote until march"
	docs := []struct{ id, text string }{
		{"a", base},
		{"b", strings.Replace(base, "march", "april", 1)},                   // one word at the end: J = 0.89
		{"c", strings.Replace(base, "budget", "plans", 1)},                  // one word in the middle: J = 0.55
		{"d", "an unrelated text about the weather in the mountains today"}, // J = 0 with the others
	}

	// The signatures, as neardup sign stores them.
	h := minhash.MustNewHasher(minhash.Params{K: 128})
	sh := shingle.MustNew(shingle.Prose)
	var file bytes.Buffer
	w, err := sigfile.NewWriter(&file, sigfile.MinHashHeader(shingle.Prose, h.Params()))
	if err != nil {
		log.Fatal(err)
	}
	var sets [][]uint64
	for _, d := range docs {
		if err := w.Add([]byte(d.id), h.SignText(nil, sh, []byte(d.text))); err != nil {
			log.Fatal(err)
		}
		sets = append(sets, eval.Normalize(sh.AppendFeatures(nil, []byte(d.text))))
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	// The golden set, as neardup eval truth writes it: every pair at J ≥ 0.5.
	var tf bytes.Buffer
	eval.WriteTruthHeader(&tf, eval.TruthHeader{Threshold: 0.5, Documents: int64(len(docs)), Spec: shingle.Prose.String()})
	for i := range docs {
		for j := i + 1; j < len(docs); j++ {
			if J := eval.Jaccard(sets[i], sets[j]); J >= 0.5 {
				tf.Write(eval.AppendPairLine(nil, docs[i].id, docs[j].id, J))
			}
		}
	}
	truth, err := eval.ReadPairFile(&tf, "truth.tsv")
	if err != nil {
		log.Fatal(err)
	}

	bandings, err := tune.ParseBandings("32x4,8x16", 0)
	if err != nil {
		log.Fatal(err)
	}
	sigs, err := sigfile.NewReader(&file, "sigs.ndsf", nil)
	if err != nil {
		log.Fatal(err)
	}
	res, err := tune.Run(context.Background(), sigs, truth, &tune.Options{Threshold: 0.5, Bandings: bandings, Recall: 0.9})
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range res.Bandings {
		fmt.Printf("%-5s P(0.5) %.3f  candidates %d  recall %.2f  precision %.2f  meets %v\n",
			b.Label, b.RecallAtThreshold, b.Candidates, b.Pairs.Recall, b.Pairs.Precision, b.Meets)
	}
	// 32x4's third candidate is b–c, at J = 0.48: below the threshold, so not
	// in the truth, and verification would drop it.

	// Output:
	// 32x4  P(0.5) 0.873  candidates 3  recall 1.00  precision 0.67  meets true
	// 8x16  P(0.5) 0.000  candidates 1  recall 0.50  precision 1.00  meets false
}
