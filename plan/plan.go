// Package plan chooses the parameters of a MinHash + LSH deduplication from a
// service-level target and a memory budget: the number of slots k, the slot
// width, the banding (b, r), and what they cost and catch — expected
// candidates per document, recall, precision before verification, and the
// memory of the signatures and of the band index, with the arithmetic shown.
//
// It is a model, not a measurement: without a sample of the corpus it assumes
// a similarity distribution (Input.Background, Input.Duplicates); with one
// (Input.Sample, from MeasureSample) it uses the measured distribution of pair
// similarities instead. Results are deterministic.
//
// For SimHash, MakeSimHash chooses the Hamming distance k and the block
// layout from a sample (MeasureSimHash): the relation between Hamming
// distance and Jaccard similarity is measured there, not modelled.
package plan

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
)

// Errors; check with errors.Is.
var (
	// ErrInput reports an Input field out of range.
	ErrInput = errors.New("plan: invalid input")
	// ErrInfeasible reports that no parameters meet every target within
	// the budget; the error says which target failed closest to success.
	ErrInfeasible = errors.New("plan: no parameters meet the targets")
)

// Defaults of Input.
const (
	DefaultThreshold  = 0.8
	DefaultRecall     = 0.99
	DefaultPrecision  = 0.9
	DefaultBackground = 0.05
	DefaultDuplicates = 1
	DefaultKeyBits    = 64
	// DefaultMaxVarianceInflation bounds how much a narrow slot may add to
	// the estimator's variance at the threshold (Li & König's b-bit
	// estimator against 64-bit slots): 10 %.
	DefaultMaxVarianceInflation = 1.1
	// DefaultSignRate is the signing speed assumed for one-permutation
	// hashing, in text bytes per second per core: Hasher.SignText on word
	// 5-grams (the default prose spec) reaches 439 MB/s per core on the
	// project's 2-vCPU reference machine with AVX2 (char 5-grams 676; the
	// pure-Go path 269; BENCHMARKS.md); 0.4 GB/s leaves a little for
	// parsing.
	DefaultSignRate = 0.4e9
	// KHashSignRate128 is classic k-hash MinHash's signing speed at k = 128
	// (~20 MB/s per core, measured); it scales as 128/k.
	KHashSignRate128 = 20e6
	// BytesPerFeature is the text bytes per word-shingle feature assumed
	// when Input.DocBytes is not given (about one word and its space).
	BytesPerFeature = 6
)

// KLadder is the slot counts Plan considers when Input.K is 0.
var KLadder = []int{16, 32, 48, 64, 96, 128, 192, 256, 384, 512}

// Limits of Input.
const (
	// MaxDocuments is the most Input.Documents: 2^53, the largest count a
	// float64 (in which the plan computes) holds exactly.
	MaxDocuments = 1 << 53
	// MaxFeatures is the most Input.MeanFeatures: 2^30, the longest record
	// neardup reads (corpus.Options.MaxRecordBytes), at most one feature a
	// byte.
	MaxFeatures = 1 << 30
)

// SlotWidths is the slot widths Plan considers when Input.Bits is 0.
var SlotWidths = []int{1, 2, 4, 8, 16, 32, 64}

// Input is a deduplication's targets and budget. Zero fields take their
// defaults; Documents, and MeanFeatures unless a Sample gives it, are
// required. Input is plain data.
type Input struct {
	// Documents is the corpus size N. Required (with a Sample, defaults to
	// the sample's size); range 2 to MaxDocuments.
	Documents int64
	// MeanFeatures is the mean number of distinct features (shingles) per
	// document. Required without a Sample; with one, defaults to the
	// sample's mean; range 1 to MaxFeatures.
	MeanFeatures float64
	// DocBytes is the mean text bytes per document, for throughput.
	// Default: the sample's mean, else BytesPerFeature·MeanFeatures.
	DocBytes float64
	// Threshold is the Jaccard similarity t at or above which documents are
	// near duplicates. Default 0.8; range (0, 1).
	Threshold float64
	// Recall is the least probability with which a pair exactly at the
	// threshold must become a candidate. Default 0.99; range (0, 1].
	Recall float64
	// Precision is the least fraction of candidate pairs (before
	// verification) that must be true pairs. Default 0.9; a negative value
	// sets no target; range up to 1.
	Precision float64
	// FPWeight and FNWeight, when either is set, choose the banding of each
	// k by the weighted false-positive and false-negative areas under the
	// S-curve (datasketch's rule, lsh.Optimal) among the bandings that meet
	// the targets, instead of the fewest expected candidates. Default 0.
	FPWeight, FNWeight float64
	// Memory is the budget, in bytes, for signatures and the band index.
	// Default 0: no budget.
	Memory int64
	// DocsPerSecond is the ingestion rate to sustain, for the throughput
	// lines. Default 0: not shown.
	DocsPerSecond float64
	// Background is the Jaccard similarity assumed for every pair of
	// unrelated documents when there is no Sample. Default 0.05.
	Background float64
	// Duplicates is the number of near-duplicate partners (J ≥ Threshold)
	// a document has, spread evenly over [Threshold, 1], when there is no
	// Sample. Default 1.
	Duplicates float64
	// KeyBits is the width of a bucket key (neardup dedup's and
	// neardup-beam's --key-bits, the index's band keys): two unequal band
	// values share a key with probability 2^−KeyBits, and as every band of
	// every document is keyed in one key space, a pair of documents with B
	// keys each shares one by accident with probability 1 − (1 −
	// 2^−KeyBits)^(B²). Default 64; 32 shows the batch drivers' width
	// before issue 12.
	KeyBits int
	// K fixes the number of slots. Default 0: chosen from KLadder.
	K int
	// Bits fixes the slot width. Default 0: chosen from SlotWidths.
	Bits int
	// Scheme is the signature scheme. Default minhash.OnePermutation.
	Scheme minhash.Scheme
	// MaxVarianceInflation bounds the variance a slot narrower than 64
	// bits may add at the threshold. Default 1.1.
	MaxVarianceInflation float64
	// SignRate is the signing speed in text bytes per second per core.
	// Default DefaultSignRate for one-permutation hashing,
	// KHashSignRate128·128/k for k-hash.
	SignRate float64
	// Sample, when not nil, is the measured similarity distribution of a
	// sample of the corpus (see MeasureSample); it replaces Background and
	// Duplicates.
	Sample *Sample
}

// EnsureDefaults returns a copy of in with zero fields set to defaults.
func (in Input) EnsureDefaults() Input {
	if in.Sample != nil {
		if in.Documents == 0 {
			in.Documents = in.Sample.Docs
		}
		if in.MeanFeatures == 0 {
			in.MeanFeatures = in.Sample.MeanFeatures
		}
		if in.DocBytes == 0 {
			in.DocBytes = in.Sample.MeanBytes
		}
	}
	if in.DocBytes == 0 {
		in.DocBytes = BytesPerFeature * in.MeanFeatures
	}
	if in.Threshold == 0 {
		in.Threshold = DefaultThreshold
	}
	if in.Recall == 0 {
		in.Recall = DefaultRecall
	}
	if in.Precision == 0 {
		in.Precision = DefaultPrecision
	}
	if in.Background == 0 {
		in.Background = DefaultBackground
	}
	if in.Duplicates == 0 {
		in.Duplicates = DefaultDuplicates
	}
	if in.KeyBits == 0 {
		in.KeyBits = DefaultKeyBits
	}
	if in.Scheme == 0 {
		in.Scheme = minhash.OnePermutation
	}
	if in.MaxVarianceInflation == 0 {
		in.MaxVarianceInflation = DefaultMaxVarianceInflation
	}
	return in
}

// Validate reports whether in (after defaults) is usable; errors wrap
// ErrInput and name the field.
func (in Input) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInput}, args...)...)
	}
	switch {
	case in.Documents < 2 || in.Documents > MaxDocuments:
		return bad("documents %d; want 2 to 2^53", in.Documents)
	case !(in.MeanFeatures >= 1 && in.MeanFeatures <= MaxFeatures):
		return bad("mean features per document %v; want 1 to 2^30", in.MeanFeatures)
	case !(in.DocBytes >= 0) || math.IsInf(in.DocBytes, 0):
		return bad("bytes per document %v; want finite and non-negative", in.DocBytes)
	case !(in.Threshold > 0 && in.Threshold < 1):
		return bad("threshold %v; want 0 < t < 1", in.Threshold)
	case !(in.Recall > 0 && in.Recall <= 1):
		return bad("recall %v; want 0 < recall <= 1", in.Recall)
	case !(in.Precision <= 1) || math.IsNaN(in.Precision):
		return bad("precision %v; want at most 1 (negative: no target)", in.Precision)
	case !(in.FPWeight >= 0 && in.FNWeight >= 0) || math.IsInf(in.FPWeight+in.FNWeight, 0):
		return bad("weights %v/%v; want finite and non-negative", in.FPWeight, in.FNWeight)
	case in.Memory < 0:
		return bad("memory %d; want non-negative (0: no budget)", in.Memory)
	case !(in.DocsPerSecond >= 0):
		return bad("docs per second %v; want non-negative", in.DocsPerSecond)
	case !(in.Background >= 0 && in.Background < in.Threshold):
		return bad("background similarity %v; want in [0, threshold)", in.Background)
	case !(in.Duplicates >= 0) || float64(in.Documents-1) < in.Duplicates:
		return bad("duplicates per document %v; want in [0, documents-1]", in.Duplicates)
	case in.KeyBits < 16 || in.KeyBits > 64:
		return bad("key bits %d; want 16..64", in.KeyBits)
	case in.K < 0 || in.K > lsh.MaxSlots:
		return bad("k %d; want 0 (choose) or 1..%d", in.K, lsh.MaxSlots)
	case in.Bits != 0 && !slices.Contains(SlotWidths, in.Bits):
		return bad("bits %d; want 0 (choose), 1, 2, 4, 8, 16, 32 or 64", in.Bits)
	case in.Scheme != minhash.OnePermutation && in.Scheme != minhash.KHash:
		return bad("scheme %v; want oph or khash", in.Scheme)
	case !(in.MaxVarianceInflation >= 1):
		return bad("max variance inflation %v; want at least 1", in.MaxVarianceInflation)
	case in.Sample != nil && in.Sample.Docs < 2:
		return bad("sample of %d documents; want at least 2", in.Sample.Docs)
	}
	return nil
}

// Plan is a chosen configuration and what it is expected to cost and catch.
// All per-document figures are means over the corpus. Plain data.
type Plan struct {
	// Input is the input the plan was made for, defaults filled in.
	Input Input `json:"-"`

	// K is the chosen number of slots.
	K int `json:"k"`
	// Scheme is the signature scheme's name, "oph" or "khash".
	Scheme string `json:"scheme"`
	// Bits is the chosen slot width in bits.
	Bits int `json:"bits"`
	// Bands is the chosen banding, with no multi-probe (Probe 0); B and R
	// repeat its fields for JSON.
	Bands lsh.Params `json:"-"`
	// B is the number of bands, Bands.Bands.
	B int `json:"bands"`
	// R is the rows (slots) per band, Bands.Rows.
	R int `json:"rows"`

	// RecallAtThreshold is P(t): the chance that a pair exactly at the
	// threshold becomes a candidate (slot width and key width included).
	RecallAtThreshold float64 `json:"recall_at_threshold"`
	// ExpectedRecall is the mean of P over the true pairs (J ≥ t) of the
	// distribution: measured with a Sample, else Duplicates spread evenly
	// over [t, 1].
	ExpectedRecall float64 `json:"expected_recall"`
	// CandidatesPerDoc is the expected number of candidate partners per
	// document.
	CandidatesPerDoc float64 `json:"candidates_per_doc"`
	// TrueCandidatesPerDoc is how many of CandidatesPerDoc are true pairs
	// (J ≥ t).
	TrueCandidatesPerDoc float64 `json:"true_candidates_per_doc"`
	// Precision is TrueCandidatesPerDoc/CandidatesPerDoc (1 when there are
	// no candidates).
	Precision float64 `json:"precision_before_verification"`
	// FalsePositiveRate is 1 − Precision, the share of candidates
	// verification rejects.
	FalsePositiveRate float64 `json:"false_positive_rate"`
	// KeyCollisionsPerDoc is the part of CandidatesPerDoc due to unequal
	// bands sharing a key of Input.KeyBits bits: (N − 1)·(1 − (1 −
	// 2^−KeyBits)^(B²)) ≈ (N − 1)·B²·2^−KeyBits, B the keys per document
	// (lsh.Params.KeysPerDoc).
	KeyCollisionsPerDoc float64 `json:"key_collisions_per_doc"`
	// AccidentalPairs is the expected number of such accidental candidate
	// pairs in the corpus: N·KeyCollisionsPerDoc/2.
	AccidentalPairs float64 `json:"accidental_pairs"`
	// Key32CollisionsPerDoc and Key32Precision are KeyCollisionsPerDoc and
	// Precision at 32-bit keys, the batch drivers' width before issue 12
	// (--key-bits 32).
	Key32CollisionsPerDoc float64 `json:"key32_collisions_per_doc"`
	Key32Precision        float64 `json:"key32_precision_before_verification"`
	// FPArea is the S-curve's false-positive area ∫₀ᵗ P(s) ds (uniform
	// similarity prior, as lsh.Optimal weighs it).
	FPArea float64 `json:"fp_area"`
	// FNArea is the S-curve's false-negative area ∫ₜ¹ (1 − P(s)) ds.
	FNArea float64 `json:"fn_area"`
	// StdErr is the estimator's standard error at the threshold, for K
	// slots of Bits bits.
	StdErr float64 `json:"stderr_at_threshold"`
	// VarianceInflation is the estimator's variance at the threshold over
	// that of 64-bit slots; 1 at 64 bits.
	VarianceInflation float64 `json:"variance_inflation"`

	// SignatureBytes is the size of one signature: ⌈K·Bits/8⌉ bytes.
	SignatureBytes int64 `json:"signature_bytes_per_doc"`
	// BandEntryBytes is the size of one band-index entry: a key of
	// ⌈KeyBits/8⌉ bytes and a document number of 4 (8 past 2^32
	// documents).
	BandEntryBytes int64 `json:"band_entry_bytes"`
	// BandIndexBytes is the band index per document: B·BandEntryBytes.
	BandIndexBytes int64 `json:"band_index_bytes_per_doc"`
	// TotalSignatureBytes is SignatureBytes times Input.Documents.
	TotalSignatureBytes int64 `json:"total_signature_bytes"`
	// TotalBandIndexBytes is BandIndexBytes times Input.Documents.
	TotalBandIndexBytes int64 `json:"total_band_index_bytes"`
	// TotalBytes is the two totals' sum, the memory held to Input.Memory.
	TotalBytes int64 `json:"total_bytes"`

	// The throughput figures are set only when Input.DocsPerSecond is; 0
	// and omitted from JSON otherwise.

	// BytesPerSecond is the text bytes to sign per second:
	// DocsPerSecond·DocBytes.
	BytesPerSecond float64 `json:"bytes_per_second,omitempty"`
	// SignCores is the cores needed to sign them at Input.SignRate (or its
	// default for the scheme and K).
	SignCores float64 `json:"sign_cores,omitempty"`
	// KeysPerSecond is the band keys looked up per second:
	// DocsPerSecond·B.
	KeysPerSecond float64 `json:"keys_per_second,omitempty"`
	// CandidatesPerSecond is the candidates verified per second:
	// DocsPerSecond·CandidatesPerDoc.
	CandidatesPerSecond float64 `json:"candidates_per_second,omitempty"`
	// IngestSeconds is the time to ingest the corpus at DocsPerSecond, in
	// seconds.
	IngestSeconds float64 `json:"ingest_seconds,omitempty"`

	// Considered is the number of (k, bits, b, r) configurations examined.
	Considered int `json:"considered"`
}

// dist is a similarity distribution: weights are pairs per document.
type dist struct {
	j, w []float64
}

// distribution returns the pair-similarity distribution of the corpus, in
// partners per document, and the weight of true pairs (J ≥ t).
func (in *Input) distribution() dist {
	var d dist
	if s := in.Sample; s != nil {
		// Each sample pair stands for C(N,2)/C(n,2) corpus pairs; per
		// document, times 2/N. Pairs are binned (1,000 bins, each at its
		// pairs' mean similarity) to keep the search fast.
		n, N := float64(s.Docs), float64(in.Documents)
		scale := 2 * (N - 1) / (n * (n - 1))
		const bins = 1000
		// Bin i·2 + (j ≥ t): a bin straddling t keeps its sides apart.
		sumJ := make([]float64, 2*bins)
		cnt := make([]float64, 2*bins)
		add := func(j, w float64) {
			i := 2 * min(bins-1, int(j*bins))
			if j >= in.Threshold {
				i++
			}
			sumJ[i] += j * w
			cnt[i] += w
		}
		for _, j := range s.Pairs {
			add(j, 1)
		}
		below := n*(n-1)/2 - float64(len(s.Pairs))
		if len(s.Below) > 0 && below > 0 {
			w := below / float64(len(s.Below))
			for _, j := range s.Below {
				add(j, w)
			}
		}
		for i := range 2 * bins {
			if cnt[i] > 0 {
				j := sumJ[i] / cnt[i]
				if i%2 == 1 {
					j = max(j, in.Threshold) // rounding must not move it below t
				} else {
					j = min(j, math.Nextafter(in.Threshold, 0))
				}
				d.j = append(d.j, j)
				d.w = append(d.w, cnt[i]*scale)
			}
		}
		return d
	}
	// Duplicates spread evenly over [t, 1]: a midpoint rule on 200 points;
	// the other N−1−D partners at Background.
	const steps = 200
	t := in.Threshold
	for i := range steps {
		d.j = append(d.j, t+(1-t)*(float64(i)+0.5)/steps)
		d.w = append(d.w, in.Duplicates/steps)
	}
	d.j = append(d.j, in.Background)
	d.w = append(d.w, float64(in.Documents-1)-in.Duplicates)
	return d
}

// curve is the probability that a pair of similarity j becomes a candidate
// under banding p, slot width bits and key width keyBits.
func curve(p lsh.Params, bits, keyBits int) func(j float64) float64 {
	c := 0.0
	if bits < 64 {
		c = math.Ldexp(1, -bits)
	}
	// A band whose values differ still shares the key with probability
	// 2^-keyBits; every key of one document may meet every key of the
	// other (one key space for all bands), B² chances.
	kc := keyCollision(p, keyBits)
	return func(j float64) float64 {
		q := p.Probability(c + (1-c)*j)
		return q + (1-q)*kc
	}
}

// keyCollision is the probability that two documents with unrelated bands
// share one of their B = p.KeysPerDoc() keys of keyBits bits by accident:
// 1 − (1 − 2^−keyBits)^(B²).
func keyCollision(p lsh.Params, keyBits int) float64 {
	b := float64(p.KeysPerDoc())
	return -math.Expm1(b * b * math.Log1p(-math.Ldexp(1, -keyBits)))
}

// varianceInflation is Var(b-bit estimator)/Var(64-bit) at similarity t.
func varianceInflation(bits int, t float64) float64 {
	mb := minhash.Params{K: 1, Bits: bits}
	m64 := minhash.Params{K: 1, Bits: 64}
	return mb.Variance(t) / m64.Variance(t)
}

// evaluation is one configuration's figures.
type evaluation struct {
	recallT, recall, cand, trueCand, keyCand, prec float64
	memPerDoc                                      int64
}

func (in *Input) evaluate(d dist, p lsh.Params, k, bits int) evaluation {
	var e evaluation
	f := curve(p, bits, in.KeyBits)
	e.recallT = f(in.Threshold)
	var trueW float64
	for i, j := range d.j {
		pj := f(j)
		e.cand += d.w[i] * pj
		if j >= in.Threshold {
			e.trueCand += d.w[i] * pj
			trueW += d.w[i]
		}
	}
	e.recall = 1
	if trueW > 0 {
		e.recall = e.trueCand / trueW
	}
	e.prec = 1
	if e.cand > 0 {
		e.prec = e.trueCand / e.cand
	}
	e.keyCand = float64(in.Documents-1) * keyCollision(p, in.KeyBits)
	e.memPerDoc = sigBytes(k, bits) + int64(p.Bands)*in.entryBytes()
	return e
}

func sigBytes(k, bits int) int64 { return int64((k*bits + 7) / 8) }

// entryBytes is one band-index entry: the key and a document number of 4
// bytes (8 past 2^32 documents).
func (in *Input) entryBytes() int64 {
	id := int64(4)
	if in.Documents > math.MaxUint32 {
		id = 8
	}
	return int64((in.KeyBits+7)/8) + id
}

// Make chooses the plan for in: among all k (KLadder, or Input.K), slot
// widths (SlotWidths within MaxVarianceInflation, or Input.Bits) and
// bandings b·r ≤ k, the configurations that reach Recall at the threshold
// and Precision before verification and fit Memory; of each (k, bits) the
// banding with the fewest expected candidates (or the least weighted error,
// with weights); and of those the one with the least memory per document,
// ties going to fewer candidates, then smaller k. The result is
// deterministic. Without a feasible configuration the error wraps
// ErrInfeasible and names the best recall, precision and memory reached.
func Make(in Input) (*Plan, error) {
	in = in.EnsureDefaults()
	if err := in.Validate(); err != nil {
		return nil, err
	}
	ks := KLadder
	if in.K > 0 {
		ks = []int{in.K}
	}
	widths := SlotWidths
	if in.Bits > 0 {
		widths = []int{in.Bits}
	}
	d := in.distribution()
	type choice struct {
		k, bits int
		p       lsh.Params
		e       evaluation
	}
	var best *choice
	considered := 0
	var bestPrec float64
	var leastMem int64 = math.MaxInt64
	for _, k := range ks {
		for _, bits := range widths {
			if in.Bits == 0 && varianceInflation(bits, in.Threshold) > in.MaxVarianceInflation {
				continue
			}
			var local *choice
			var localScore float64
			for r := 1; r <= k; r++ {
				// The least b reaching the recall: more bands only add
				// candidates.
				var p lsh.Params
				for b := 1; b*r <= k; b++ {
					q := lsh.Params{Bands: b, Rows: r}
					if curve(q, bits, in.KeyBits)(in.Threshold) >= in.Recall {
						p = q
						break
					}
				}
				if p.Bands == 0 {
					continue
				}
				considered++
				e := in.evaluate(d, p, k, bits)
				precOK := in.Precision < 0 || e.prec >= in.Precision
				memOK := in.Memory == 0 || e.memPerDoc*in.Documents <= in.Memory
				if memOK {
					bestPrec = max(bestPrec, e.prec)
				}
				if precOK {
					leastMem = min(leastMem, e.memPerDoc)
				}
				if !precOK || !memOK {
					continue
				}
				score := e.cand
				if in.FPWeight > 0 || in.FNWeight > 0 {
					score = in.FPWeight*p.FalsePositiveArea(in.Threshold) + in.FNWeight*p.FalseNegativeArea(in.Threshold)
				}
				if local == nil || score < localScore {
					local, localScore = &choice{k, bits, p, e}, score
				}
			}
			if local == nil {
				continue
			}
			if best == nil || local.e.memPerDoc < best.e.memPerDoc ||
				local.e.memPerDoc == best.e.memPerDoc && local.e.cand < best.e.cand {
				best = local
			}
		}
	}
	if best == nil {
		if considered == 0 {
			return nil, fmt.Errorf("%w: no banding of at most %d slots reaches recall %v at J = %v", ErrInfeasible, ks[len(ks)-1], in.Recall, in.Threshold)
		}
		msg := fmt.Sprintf("of %d configurations reaching recall %v at J = %v,", considered, in.Recall, in.Threshold)
		if leastMem < math.MaxInt64 {
			msg += fmt.Sprintf(" those with precision ≥ %v need at least %s for %d documents (budget %s);", in.Precision, FormatBytes(leastMem*in.Documents), in.Documents, FormatBytes(in.Memory))
		} else {
			msg += fmt.Sprintf(" none has precision ≥ %v;", in.Precision)
		}
		msg += fmt.Sprintf(" within the budget the best precision before verification is %.4f", bestPrec)
		return nil, fmt.Errorf("%w: %s (lower --precision, raise --memory, or let more slots in)", ErrInfeasible, msg)
	}
	pl := &Plan{Input: in, K: best.k, Scheme: in.Scheme.String(), Bits: best.bits, Bands: best.p, B: best.p.Bands, R: best.p.Rows, Considered: considered}
	e := best.e
	pl.RecallAtThreshold, pl.ExpectedRecall = e.recallT, e.recall
	pl.CandidatesPerDoc, pl.TrueCandidatesPerDoc = e.cand, e.trueCand
	pl.Precision, pl.FalsePositiveRate = e.prec, 1-e.prec
	pl.KeyCollisionsPerDoc = e.keyCand
	pl.AccidentalPairs = float64(in.Documents) * e.keyCand / 2
	pl.Key32CollisionsPerDoc = float64(in.Documents-1) * keyCollision(best.p, 32)
	pl.Key32Precision = e.trueCand / (e.cand - e.keyCand + pl.Key32CollisionsPerDoc)
	pl.FPArea = best.p.FalsePositiveArea(in.Threshold)
	pl.FNArea = best.p.FalseNegativeArea(in.Threshold)
	mp := minhash.Params{K: best.k, Bits: best.bits}
	pl.StdErr = math.Sqrt(mp.Variance(in.Threshold))
	pl.VarianceInflation = varianceInflation(best.bits, in.Threshold)
	pl.SignatureBytes = sigBytes(best.k, best.bits)
	pl.BandEntryBytes = in.entryBytes()
	pl.BandIndexBytes = int64(best.p.Bands) * pl.BandEntryBytes
	pl.TotalSignatureBytes = pl.SignatureBytes * in.Documents
	pl.TotalBandIndexBytes = pl.BandIndexBytes * in.Documents
	pl.TotalBytes = pl.TotalSignatureBytes + pl.TotalBandIndexBytes
	if in.DocsPerSecond > 0 {
		pl.BytesPerSecond = in.DocsPerSecond * in.DocBytes
		pl.SignCores = pl.BytesPerSecond / in.signRate(best.k)
		pl.KeysPerSecond = in.DocsPerSecond * float64(best.p.Bands)
		pl.CandidatesPerSecond = in.DocsPerSecond * e.cand
		pl.IngestSeconds = float64(in.Documents) / in.DocsPerSecond
	}
	return pl, nil
}

func (in *Input) signRate(k int) float64 {
	if in.SignRate > 0 {
		return in.SignRate
	}
	if in.Scheme == minhash.KHash {
		return KHashSignRate128 * 128 / float64(k)
	}
	return DefaultSignRate
}

// Curve returns the plan's S-curve: the probability that a pair of Jaccard
// similarity j becomes a candidate, slot and key width included.
func (p *Plan) Curve() func(j float64) float64 { return curve(p.Bands, p.Bits, p.Input.KeyBits) }

// FormatBytes renders a byte count with a binary-free decimal unit (GB =
// 1e9 bytes), as memory budgets are usually quoted.
func FormatBytes(n int64) string {
	switch {
	case n >= 1e12:
		return fmt.Sprintf("%.2f TB", float64(n)/1e12)
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.2f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}
