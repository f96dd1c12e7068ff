package dedup

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestKeyWidthsVerifySamePairs: bucket keys of 16, 32 and 64 bits
// (Options.KeyBits) give byte-identical pairs.tsv, clusters.jsonl and
// kept.jsonl under exact and estimated verification, although the 16-bit
// keys add the accidental candidates the arithmetic predicts (unequal bands
// sharing a key with probability 2^−16, docs/architecture.md "Bucket key
// width") and verification removes every one; report.json records the
// width. (TestExactKeepsOnlyCandidateSignatures spills and merges wide
// entries.)
func TestKeyWidthsVerifySamePairs(t *testing.T) {
	docs := nearDupCorpus(t, 1000, 2, 12)
	in := filepath.Join(t.TempDir(), "in.jsonl")
	writeJSONL(t, in, docs)
	for _, verify := range []Verify{VerifyExact, VerifyEstimate} {
		outs := map[int]string{}
		reps := map[int]*Report{}
		for _, bits := range []int{64, 32, 16} {
			o := &Options{Threshold: 0.8, KeyBits: bits, Verify: verify, Workers: 2}
			if bits == 64 {
				o.KeyBits = 0 // the default
			}
			outs[bits], reps[bits] = runDedup(t, []string{in}, o)
			if got := reps[bits].Config.KeyBits; got != bits {
				t.Errorf("report key_bits %d; want %d", got, bits)
			}
		}
		for _, f := range []string{PairsFile, ClustersFile, KeptFile} {
			want, _ := os.ReadFile(filepath.Join(outs[64], f))
			for _, bits := range []int{32, 16} {
				if got, _ := os.ReadFile(filepath.Join(outs[bits], f)); !bytes.Equal(got, want) {
					t.Errorf("verify %v: %s at %d-bit keys differs from 64-bit keys'", verify, f, bits)
				}
			}
		}
		// Accidental candidates at 16 bits: n banded documents (exact
		// copies are not banded) of B keys each,
		// every document pair shares a key by accident with probability
		// 1 − (1 − 2^−16)^(B²); the count is a sum of nearly independent
		// such events, its deviation about its square root.
		b := float64(reps[64].Config.Bands)
		n := float64(reps[64].Buckets.Entries) / b
		want := n * (n - 1) / 2 * -math.Expm1(b*b*math.Log1p(-math.Ldexp(1, -16)))
		extra := float64(reps[16].Counts.Candidates - reps[64].Counts.Candidates)
		if math.Abs(extra-want) > 6*math.Sqrt(want)+0.02*want {
			t.Errorf("verify %v: 16-bit keys add %.0f candidates; want about %.0f", verify, extra, want)
		}
		if reps[16].Counts.VerifiedPairs != reps[64].Counts.VerifiedPairs || reps[64].Counts.VerifiedPairs == 0 {
			t.Errorf("verify %v: verified pairs %d (16-bit) and %d (64-bit); want equal and some", verify, reps[16].Counts.VerifiedPairs, reps[64].Counts.VerifiedPairs)
		}
	}
}
