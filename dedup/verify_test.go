package dedup

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestExactSignsFeatureSets: under exact verification with MinHash the
// signatures of the documents in candidate pairs are made from their feature
// sets where the pairs are checked, not stored, so on 20,000 planted pairs
// under 16 MiB no signature spills (before, the 40,000 recomputed
// signatures, 20 MB, were stored and spilled past their share), every
// pair's estimate is the one of the signatures made from the texts while
// signing (the same pairs under --verify none), and the outputs are those
// of the default budget, where nothing spills.
func TestExactSignsFeatureSets(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.jsonl")
	writeJSONL(t, in, plantedCopies(20000, 1))

	opts := func() *Options { return &Options{Workers: 2, Memory: 16 << 20, SkipExactPass: true} }
	small, rep := runDedup(t, []string{in}, opts())
	if rep.Counts.VerifiedPairs != 20000 || rep.Counts.VerifiedDocs != 40000 {
		t.Fatalf("%d verified pairs of %d documents; want the 20,000 planted, 40,000", rep.Counts.VerifiedPairs, rep.Counts.VerifiedDocs)
	}
	if rep.Spill.SigBytes != 0 {
		t.Errorf("exact verification spilled %d bytes of signatures; want none stored", rep.Spill.SigBytes)
	}
	o := opts()
	o.Verify = VerifyNone
	none, _ := runDedup(t, []string{in}, o)
	est := map[string]float64{}
	for _, r := range readPairRows(t, none) {
		est[r.a+"\t"+r.b] = r.est
	}
	rows := readPairRows(t, small)
	for _, r := range rows {
		if e, ok := est[r.a+"\t"+r.b]; !ok || e != r.est {
			t.Fatalf("pair %s %s: estimate %v; the text signatures give %v (found %v)", r.a, r.b, r.est, e, ok)
		}
	}
	o = opts()
	o.Memory = 0
	big, _ := runDedup(t, []string{in}, o)
	for _, f := range []string{PairsFile, ClustersFile, KeptFile} {
		a, _ := os.ReadFile(filepath.Join(small, f))
		b, _ := os.ReadFile(filepath.Join(big, f))
		if !bytes.Equal(a, b) || len(a) == 0 {
			t.Errorf("%s differs between 16 MiB and the default budget (or is empty)", f)
		}
	}
}
