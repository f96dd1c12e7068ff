package dedup

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plantedCopies returns n documents of 40 words, no word shared between
// two, each followed, when its number is a multiple of every, by a copy
// with its last word changed: n/every planted near-duplicate pairs and
// nothing else alike. TestExactReadsTextsBack and
// TestExactKeepsOnlyCandidateSignatures run on it.
func plantedCopies(n, every int) []doc {
	var docs []doc
	for i := range n {
		words := make([]string, 40)
		for w := range words {
			words[w] = fmt.Sprintf("w%dx%d", i, w)
		}
		docs = append(docs, doc{fmt.Sprintf("d%05d", i), strings.Join(words, " ")})
		if i%every == 0 {
			words[39] = "changed"
			docs = append(docs, doc{fmt.Sprintf("d%05dcopy", i), strings.Join(words, " ")})
		}
	}
	return docs
}

// TestExactKeepsOnlyCandidateSignatures: under exact verification the
// signatures of documents in no candidate pair are never stored, so on a
// corpus of 20,000 distinct documents and ten planted copies, under the
// smallest budget, no signature spills (before, all 20,000 signatures were
// kept, 10 MB, and spilled past the budget's sixteenth), while the estimate
// mode, which keeps every signature, spills them as before; and the outputs
// are those of a run that spills nothing.
func TestExactKeepsOnlyCandidateSignatures(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.jsonl")
	writeJSONL(t, in, plantedCopies(20000, 2000))

	small, rep := runDedup(t, []string{in}, &Options{Workers: 2, Memory: 16 << 20})
	if rep.Counts.VerifiedPairs != 10 {
		t.Fatalf("%d verified pairs; want the 10 planted", rep.Counts.VerifiedPairs)
	}
	if rep.Spill.EntryRuns == 0 {
		t.Error("no band-key entries spilled under 16 MiB: the corpus is too small for this test")
	}
	if rep.Spill.SigBytes != 0 {
		t.Errorf("exact verification spilled %d bytes of signatures; want 0", rep.Spill.SigBytes)
	}
	_, est := runDedup(t, []string{in}, &Options{Workers: 2, Memory: 16 << 20, Verify: VerifyEstimate})
	if est.Spill.SigBytes == 0 {
		t.Error("estimate verification spilled no signatures: the budget is too large for this test")
	}
	big, _ := runDedup(t, []string{in}, &Options{Workers: 2})
	for _, f := range []string{PairsFile, ClustersFile, KeptFile} {
		a, _ := os.ReadFile(filepath.Join(small, f))
		b, _ := os.ReadFile(filepath.Join(big, f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between 16 MiB and the default budget", f)
		}
	}
}
