package plan

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// The worked plan of the founding notes: 300M pages, J ≥ 0.85, recall ≥ 0.95
// at the threshold, 5,000 docs/s, at most 100 GB of RAM. Its write-up is not
// in the repository; this is the standard arithmetic it rests on, which the
// test checks Make against.
//
//	k = 128 slots (the usual choice).
//	(b, r): P(t) = 1 − (1 − t^r)^b ≥ 0.95 with b·r ≤ 128.
//	  r = 9:  t^9 = 0.85^9 = 0.23162; b ≥ ln 0.05 / ln(1 − 0.23162) = 11.38
//	          → b = 12, P(0.85) = 1 − 0.76838^12 = 0.95761 (108 of 128 slots).
//	  r = 10: b ≥ 13.6 → 14·10 = 140 > 128 slots: out.
//	  r = 8:  b = 10, P = 0.9585, but a flatter curve: P(0.5) = 0.038 vs 0.023.
//	  So (b, r) = (12, 9); the curve's midpoint (1/b)^(1/r) = 0.759.
//	Signatures: 128 slots × 4 B (32-bit) = 512 B/doc × 3e8 = 153.6 GB.
//	Band index: 12 bands × (8 B key + 4 B doc id) = 144 B/doc × 3e8 = 43.2 GB.
//	  Total 196.8 GB: twice the budget. With 16-bit slots 76.8 + 43.2 =
//	  120 GB, still over; with 8-bit slots 38.4 + 43.2 = 81.6 GB: fits.
//	Unrelated pairs (J ≈ 0.05): P ≈ b·J^r = 12 · 0.05^9 = 2.3e-11, × 3e8
//	  partners = 0.007 spurious candidates per page.
//	Throughput: 5,000 pages/s × ~6 kB (1,000 words) = 30 MB/s of text; one-
//	  permutation signing at ~0.5 GB/s/core needs 0.06 of a core (classic
//	  k-hash, ~20 MB/s/core at k = 128, would need 1.5 cores); 60,000 band
//	  look-ups/s; ingesting 3e8 pages takes 3e8/5,000 = 60,000 s = 16.7 h.
//
// Where Make differs, and why:
//   - It picks 8-bit slots itself: the least memory among plans meeting the
//     targets (4-bit slots would cost less but add 8 spurious candidates per
//     page, failing the 0.9 precision target).
//   - Its P(0.85) is 0.95859, not 0.95761: with 8-bit slots two different
//     minima agree with chance c = 1/256, so slots agree with probability
//     s = c + (1 − c)·J = 0.85059 rather than 0.85 (Li & König).
//   - For the same reason unrelated pairs agree on a slot with s = 0.0537,
//     not 0.05: 0.0134 spurious candidates per page instead of 0.007.
//   - With dedup's batch driver, which keeps 32-bit band keys, unequal bands
//     would share a key for (N − 1)·b/2^32 = 0.84 more candidates per page:
//     harmless for recall, they cost verification.
//   - It assumes signing at 0.4 GB/s per core (word 5-grams measure 439
//     MB/s per core), so 0.075 of a core rather than 0.06.
//
// docs/plan.md sets the two side by side; testdata/golden/cli/plan.txt
// holds the CLI's output.
func TestWorkedPlan(t *testing.T) {
	in := Input{Documents: 300e6, MeanFeatures: 1000, Threshold: 0.85, Recall: 0.95, Memory: 100e9, DocsPerSecond: 5000}
	p, err := Make(in)
	if err != nil {
		t.Fatal(err)
	}
	if p.K != 128 || p.Bits != 8 || p.B != 12 || p.R != 9 || p.Scheme != "oph" {
		t.Fatalf("plan k=%d bits=%d b=%d r=%d %s; want k=128 bits=8 b=12 r=9 oph", p.K, p.Bits, p.B, p.R, p.Scheme)
	}
	near := func(name string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %.6g; want %.6g (±%g)", name, got, want, tol)
		}
	}
	s := 0.85 + 0.15/256
	near("P(t)", p.RecallAtThreshold, 1-math.Pow(1-math.Pow(s, 9), 12), 1e-12)
	near("P(t) vs the 64-bit arithmetic", p.RecallAtThreshold, 0.95761, 0.0011)
	near("signature bytes", float64(p.TotalSignatureBytes), 38.4e9, 0)
	near("band index bytes", float64(p.TotalBandIndexBytes), 43.2e9, 0)
	near("total bytes", float64(p.TotalBytes), 81.6e9, 0)
	sb := 0.05 + 0.95/256
	near("spurious candidates/doc", p.CandidatesPerDoc-p.TrueCandidatesPerDoc, (300e6-2)*(1-math.Pow(1-math.Pow(sb, 9), 12)), 1e-6)
	// 12 keys a document, 144 key pairs a document pair, one key space.
	near("32-bit key collisions/doc", p.Key32CollisionsPerDoc, (300e6-1)*144/math.Exp2(32), 1e-6)
	near("64-bit key collisions/doc", p.KeyCollisionsPerDoc, (300e6-1)*144/math.Exp2(64), 1e-18)
	near("accidental pairs", p.AccidentalPairs, 300e6*p.KeyCollisionsPerDoc/2, 1e-12)
	if p.Key32Precision >= p.Precision {
		t.Errorf("precision at 32-bit keys %v; want below the 64-bit %v", p.Key32Precision, p.Precision)
	}
	near("text MB/s", p.BytesPerSecond/1e6, 30, 1e-9)
	near("signing cores", p.SignCores, 30e6/DefaultSignRate, 1e-12)
	near("signing cores vs the write-up's 0.5 GB/s", p.SignCores, 0.06, 0.016)
	near("band look-ups/s", p.KeysPerSecond, 60000, 0)
	near("ingest hours", p.IngestSeconds/3600, 16.667, 0.001)
	if p.RecallAtThreshold < 0.95 || p.Precision < 0.9 || p.TotalBytes > 100e9 {
		t.Errorf("plan misses its targets: %+v", p)
	}
	out := p.String()
	for _, want := range []string{"b = 12 bands × r = 9 rows", "81.60 GB", "◀ threshold", "J=0.850", "--bands 12 --rows 9", "16.7 h"} {
		if !strings.Contains(out, want) {
			t.Errorf("String lacks %q:\n%s", want, out)
		}
	}

	// The standard plan's 32-bit slots: the same (b, r), the textbook P(t),
	// and 196.8 GB, so it cannot fit 100 GB.
	std := in
	std.Bits, std.Memory = 32, 0
	p32, err := Make(std)
	if err != nil {
		t.Fatal(err)
	}
	if p32.K != 128 || p32.B != 12 || p32.R != 9 {
		t.Errorf("32-bit plan k=%d b=%d r=%d; want 128, 12, 9", p32.K, p32.B, p32.R)
	}
	near("32-bit P(t)", p32.RecallAtThreshold, 1-math.Pow(1-math.Pow(0.85, 9), 12), 1e-9)
	near("32-bit total bytes", float64(p32.TotalBytes), 196.8e9, 0)
	std.Memory = 100e9
	if _, err := Make(std); !errors.Is(err, ErrInfeasible) {
		t.Errorf("32-bit slots within 100 GB: err = %v; want ErrInfeasible", err)
	}
}

// TestSampleDistribution: a sample whose pairs all sit at one similarity
// predicts the S-curve there as recall, and scales candidates from the
// sample to the corpus as C(N,2)/C(n,2).
func TestSampleDistribution(t *testing.T) {
	s := &Sample{Docs: 100, MeanFeatures: 500, Floor: 0.3, Pairs: make([]float64, 50)}
	for i := range s.Pairs {
		s.Pairs[i] = 0.9
	}
	s.Drawn, s.Below = 1000, make([]float64, 1000) // all other pairs at J = 0
	in := Input{Sample: s, Documents: 1000, Threshold: 0.8, Recall: 0.9, Precision: -1, K: 64, Bits: 64}
	p, err := Make(in)
	if err != nil {
		t.Fatal(err)
	}
	want := p.Curve()(0.9)
	if math.Abs(p.ExpectedRecall-want) > 1e-9 {
		t.Errorf("expected recall %.6f; want P(0.9) = %.6f", p.ExpectedRecall, want)
	}
	// 50 sample pairs of 4,950 stand for 50·(999·1000)/(99·100) corpus
	// pairs, 2·that/1000 partners per document.
	perDoc := 2 * 50 * (1000.0 * 999 / (100 * 99)) / 1000
	if math.Abs(p.TrueCandidatesPerDoc-perDoc*want) > 1e-9 {
		t.Errorf("true candidates per doc %.6f; want %.6f", p.TrueCandidatesPerDoc, perDoc*want)
	}
	if p.Precision < 0.999999 {
		t.Errorf("precision %.6f with no pair between 0 and 0.9; want ≈ 1", p.Precision)
	}
}

func TestInputValidate(t *testing.T) {
	for _, in := range []Input{
		{},
		{Documents: 10},
		{Documents: 10, MeanFeatures: 10, Threshold: 1},
		{Documents: 10, MeanFeatures: 10, Recall: 1.5},
		{Documents: 10, MeanFeatures: 10, Bits: 3},
		{Documents: 10, MeanFeatures: 10, Background: 0.9},
		{Documents: 10, MeanFeatures: 10, Memory: -1},
	} {
		if _, err := Make(in); !errors.Is(err, ErrInput) {
			t.Errorf("Make(%+v): err = %v; want ErrInput", in, err)
		}
	}
}
