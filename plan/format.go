package plan

import (
	"fmt"
	"math"
	"strings"
)

// String renders the plan with its arithmetic: the inputs, the choice, the
// S-curve with the threshold marked, recall, candidates and precision,
// memory and throughput, each with the formula and the numbers that went in.
func (p *Plan) String() string {
	in := p.Input
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	t := in.Threshold
	N := float64(in.Documents)
	budget := "no budget"
	if in.Memory > 0 {
		budget = "memory ≤ " + FormatBytes(in.Memory)
	}
	prec := fmt.Sprintf("precision ≥ %v before verification", in.Precision)
	if in.Precision < 0 {
		prec = "no precision target"
	}
	w("targets: N = %s documents, %s features/doc, J ≥ %v, recall ≥ %v at J = %v, %s, %s",
		group(in.Documents), trim(in.MeanFeatures), t, in.Recall, t, prec, budget)
	if s := in.Sample; s != nil {
		w("similarity distribution: measured on a sample of %s documents: %s pairs with J ≥ %v exactly (join),",
			group(s.Docs), group(int64(len(s.Pairs))), s.Floor)
		w("  %s random pairs drawn for the rest; each sample pair stands for C(N,2)/C(n,2) = %.4g corpus pairs",
			group(s.Drawn), (N*(N-1))/(float64(s.Docs)*float64(s.Docs-1)))
	} else {
		w("similarity distribution: assumed (give --sample to measure): %v near-duplicate partner(s) per document spread",
			trim(in.Duplicates))
		w("  evenly over [%v, 1]; the other N − 1 − %v pairs at the background J = %v", t, trim(in.Duplicates), in.Background)
	}
	w("")
	w("choice: k = %d (%s), %d-bit slots, b = %d bands × r = %d rows (%d of %d slots); %d configurations considered",
		p.K, p.Scheme, p.Bits, p.B, p.R, p.B*p.R, p.K, p.Considered)
	w("  rule: least memory per document among the configurations meeting every target; per (k, bits), the banding with")
	if in.FPWeight > 0 || in.FNWeight > 0 {
		w("  the least %v·FP area + %v·FN area that reaches the recall", in.FPWeight, in.FNWeight)
	} else {
		w("  the fewest expected candidates that reaches the recall")
	}
	w("")
	c := 0.0
	if p.Bits < 64 {
		c = math.Ldexp(1, -p.Bits)
	}
	w("S-curve: P(J) = 1 − (1 − s^%d)^%d, s = c + (1 − c)·J the chance two slots agree, c = 2^-%d = %.3g", p.R, p.B, p.Bits, c)
	f := p.Curve()
	marked := false
	for i := 0; i <= 20; i++ {
		j := float64(i) / 20
		mark := ""
		if !marked && j >= t-1e-9 {
			if math.Abs(j-t) > 1e-9 {
				pt := f(t)
				w("  J=%.3f %-10s %s  ◀ threshold", t, fmt.Sprintf("%.4f", pt), bar(pt))
			} else {
				mark = "  ◀ threshold"
			}
			marked = true
		}
		pj := f(j)
		w("  J=%.3f %-10s %s%s", j, fmtP(pj), bar(pj), mark)
	}
	w("")
	s := c + (1-c)*t
	w("recall at the threshold: P(%v) = 1 − (1 − %.4f^%d)^%d = %.4f (target %v)", t, s, p.R, p.B, p.RecallAtThreshold, in.Recall)
	w("expected recall over true pairs (J ≥ %v): %.4f", t, p.ExpectedRecall)
	w("S-curve areas (uniform prior): false positives ∫₀ᵗP = %.4f, false negatives ∫ₜ¹(1−P) = %.4f", p.FPArea, p.FNArea)
	w("candidates per document: %.4g = %.4g true + %.4g false", p.CandidatesPerDoc, p.TrueCandidatesPerDoc, p.CandidatesPerDoc-p.TrueCandidatesPerDoc)
	if in.Sample == nil {
		pb := f(in.Background)
		w("  false ≈ (N − 1 − %v)·P(%v) = %.4g × %.4g = %.4g", trim(in.Duplicates), in.Background, N-1-in.Duplicates, pb, (N-1-in.Duplicates)*pb)
	}
	kpd := p.Bands.KeysPerDoc()
	w("  of which unequal bands sharing a %d-bit key: (N − 1)·B²·2^-%d = %.3g, B = %d keys/doc; %.3g accidental pairs in all (N·that/2)",
		in.KeyBits, in.KeyBits, p.KeyCollisionsPerDoc, kpd, p.AccidentalPairs)
	if in.KeyBits != 32 {
		w("  at 32-bit keys (--key-bits 32, dedup before 0.12): (N − 1)·B²/2^32 = %.3g per doc, precision before verification %.4f",
			p.Key32CollisionsPerDoc, p.Key32Precision)
	}
	w("precision before verification: %.4g / %.4g = %.4f; false-positive rate %.4f", p.TrueCandidatesPerDoc, p.CandidatesPerDoc, p.Precision, p.FalsePositiveRate)
	w("estimator at the threshold: standard error √(P(1−P)/(k(1−c)²)) = %.4f, P = c + (1−c)·t; variance ×%.4f that of 64-bit slots",
		p.StdErr, p.VarianceInflation)
	w("")
	w("memory:")
	w("  signatures  k·bits/8 = %d·%d/8 = %d B/doc × N = %s", p.K, p.Bits, p.SignatureBytes, FormatBytes(p.TotalSignatureBytes))
	w("  band index  b·(key %d B + id %d B) = %d·%d = %d B/doc × N = %s", (in.KeyBits+7)/8, p.BandEntryBytes-int64((in.KeyBits+7)/8),
		p.B, p.BandEntryBytes, p.BandIndexBytes, FormatBytes(p.TotalBandIndexBytes))
	fit := ""
	if in.Memory > 0 {
		fit = fmt.Sprintf(" (%.0f%% of the %s budget)", 100*float64(p.TotalBytes)/float64(in.Memory), FormatBytes(in.Memory))
	}
	w("  total       %d B/doc × N = %s%s", p.SignatureBytes+p.BandIndexBytes, FormatBytes(p.TotalBytes), fit)
	if in.DocsPerSecond > 0 {
		w("")
		w("throughput at %s docs/s:", trim(in.DocsPerSecond))
		w("  text        %s docs/s × %s B/doc = %.4g MB/s; signing at %.3g MB/s/core (%s): %.3g cores",
			trim(in.DocsPerSecond), trim(in.DocBytes), p.BytesPerSecond/1e6, in.signRate(p.K)/1e6, p.Scheme, p.SignCores)
		w("  band keys   %s docs/s × b = %s look-ups/s", trim(in.DocsPerSecond), trim(p.KeysPerSecond))
		w("  verify      %s docs/s × %.3g candidates/doc = %.4g candidate pairs/s", trim(in.DocsPerSecond), p.CandidatesPerDoc, p.CandidatesPerSecond)
		w("  ingest      N / rate = %.4g s = %.1f h", p.IngestSeconds, p.IngestSeconds/3600)
	}
	w("")
	w("run: neardup dedup --threshold %v --num-perm %d --scheme %s --bits %d --bands %d --rows %d ...", t, p.K, p.Scheme, p.Bits, p.B, p.R)
	return b.String()
}

func bar(p float64) string {
	n := int(math.Round(p * 40))
	return strings.Repeat("█", n) + strings.Repeat("·", 40-n)
}

func fmtP(p float64) string {
	if p != 0 && p < 1e-3 {
		return fmt.Sprintf("%.2e", p)
	}
	return fmt.Sprintf("%.4f", p)
}

func trim(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return group(int64(x))
	}
	return fmt.Sprintf("%.4g", x)
}

// group renders n with thousands separators.
func group(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
