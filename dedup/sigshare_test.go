package dedup

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExactSignaturesTakeEntriesShare: under exact verification the
// recomputed signatures of the documents in candidate pairs take the band-key
// entries' share of the budget, free once candidates are found: 6,000
// documents in pairs (3 MB of signatures at K = 128) fit under a 16 MiB
// budget, whose sixteenth (1 MiB) they spilled past before, and the outputs
// are those of the default budget.
func TestExactSignaturesTakeEntriesShare(t *testing.T) {
	var docs []doc
	for i := range 3000 {
		words := make([]string, 40)
		for w := range words {
			words[w] = fmt.Sprintf("w%dx%d", i, w)
		}
		docs = append(docs, doc{fmt.Sprintf("d%05d", i), strings.Join(words, " ")})
		words[39] = "changed" // a near copy: J = 35/41 at word:5
		docs = append(docs, doc{fmt.Sprintf("d%05dcopy", i), strings.Join(words, " ")})
	}
	in := filepath.Join(t.TempDir(), "in.jsonl")
	writeJSONL(t, in, docs)

	small, rep := runDedup(t, []string{in}, &Options{Workers: 2, Memory: 16 << 20})
	if rep.Counts.VerifiedDocs != 6000 {
		t.Fatalf("%d documents verified; want the 6000 in planted pairs", rep.Counts.VerifiedDocs)
	}
	if rep.Spill.SigBytes != 0 {
		t.Errorf("%d bytes of recomputed signatures spilled under 16 MiB; want 0", rep.Spill.SigBytes)
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
