package jobspec

import (
	"math"

	"github.com/neardup/neardup/cluster"
	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
)

// Job is a resolved job: what decides a deduplication's outputs, after
// defaults, validation and the choice of bands, as plain data that every
// driver's stages read (neardup-beam ships it to its workers inside its
// DoFns; it round-trips through encoding/json). The corpus options are not
// part of it (standard input cannot be shipped); neither are the driver's
// resources (workers, memory, temporary directory). Make one with
// Options.Job; a Job is a value, safe to copy and to share.
type Job struct {
	// Sketch chooses and parameterises the sketch.
	Sketch sketch.Config
	// Threshold is the Jaccard similarity of a near duplicate.
	Threshold float64
	// Recall is the recall target the bands were chosen for (reported even
	// when Options.Bands fixed them).
	Recall float64
	// BucketCap is the largest bucket paired in full, in documents.
	BucketCap int
	// Verify is how candidate pairs are checked.
	Verify Verify
	// Cluster is how verified pairs become clusters.
	Cluster ClusterMode
	// Keep chooses the document each cluster keeps.
	Keep cluster.Policy
}

// Job returns the job o describes: o with defaults filled in (o itself is
// not changed), validated, and its bands chosen (Options.Banding). Errors
// wrap ErrInvalidOptions or the failing package's sentinel.
func (o *Options) Job() (Job, error) {
	var c Options
	if o != nil {
		c = *o
	}
	c.EnsureDefaults()
	if err := c.Validate(); err != nil {
		return Job{}, err
	}
	j := Job{Threshold: c.Threshold, Recall: c.Recall, BucketCap: c.BucketCap, Verify: c.Verify, Cluster: c.Cluster, Keep: c.Keep}
	if c.Sketch == sketch.SimHash {
		s := c.SimHash
		j.Sketch = sketch.Config{Spec: c.Spec, Kind: sketch.SimHash, SimHash: sketch.SimHashConfig{
			Params: sigfile.SimHashParams{Weighting: sigfile.TF}, K: s.k(), Blocks: s.Blocks}}
		if s.Weight == sigfile.TFIDF {
			j.Sketch.SimHash.Params.Weighting = sigfile.TFIDF
			if s.DF != nil {
				j.Sketch = j.Sketch.WithDF(s.DF)
			}
		}
		return j, nil
	}
	bands, err := c.Banding()
	if err != nil {
		return Job{}, err
	}
	j.Sketch = sketch.Config{Spec: c.Spec, Params: c.Params, Bands: bands, KeyBits: c.KeyBits}
	return j, nil
}

// NeedsDF reports whether the job weighs SimHash features by TF-IDF and has
// no document-frequency table yet: the driver counts one over its inputs
// (sketch.DFCounter, documents that parse, empty ones included) and sets it
// with Sketch = Sketch.WithDF(table) before signing.
func (j *Job) NeedsDF() bool {
	s := &j.Sketch
	return s.Kind == sketch.SimHash && s.SimHash.Params.Weighting == sigfile.TFIDF && s.SimHash.IDF == nil
}

// ClusterOptions returns the cluster options the verified pairs are
// clustered with: the threshold as the similarity floor (0 under
// VerifyNone, where every candidate links) and the keep policy.
func (j *Job) ClusterOptions() *cluster.Options {
	c := &cluster.Options{Threshold: j.Threshold, Keep: j.Keep}
	if j.Verify == VerifyNone {
		c.Threshold = 0
	}
	return c
}

// Verdict is what verification made of a candidate pair.
type Verdict struct {
	// Est is the similarity estimated from the signatures.
	Est float64
	// Exact is the exact Jaccard similarity of the feature sets, or −1
	// when it was not computed (written as "-").
	Exact float64
}

// Sim returns the similarity that decided the pair, and that clustering
// compares with the threshold: the exact one when computed, else the
// estimate.
func (v Verdict) Sim() float64 {
	if v.Exact >= 0 {
		return v.Exact
	}
	return v.Est
}

// Verifier checks candidate pairs as the job says, for one goroutine: the
// signature estimate always, the exact Jaccard similarity of the feature
// sets under VerifyExact, and the threshold unless VerifyNone. Not safe for
// concurrent use; deterministic.
type Verifier struct {
	sketch    sketch.Sketch
	mode      Verify
	threshold float64
	sh        *shingle.Shingler // under VerifyExact
	sorter    setSorter
}

// NewVerifier returns a Verifier of j's pairs, whose signatures are of
// sketch sk (j.Sketch.New()).
func (j *Job) NewVerifier(sk sketch.Sketch) (*Verifier, error) {
	v := &Verifier{sketch: sk, mode: j.Verify, threshold: j.Threshold}
	if j.Verify == VerifyExact {
		var err error
		if v.sh, err = shingle.New(j.Sketch.Spec); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// VerifyWithoutTexts checks a pair one of whose documents is known only by
// its signature (a reference document of a signature file or an index; see
// Job.ReferenceVerify): by the estimate under VerifyExact and
// VerifyEstimate, every pair under VerifyNone. The verdict's Exact is −1.
func (v *Verifier) VerifyWithoutTexts(sa, sb []uint64) (Verdict, bool) {
	d := Verdict{Est: v.sketch.Similarity(sa, sb), Exact: -1}
	if v.mode == VerifyNone {
		return d, true
	}
	return d, d.Est >= v.threshold
}

// Exact reports whether the Verifier needs feature sets (VerifyExact), so
// that a driver keeps texts to compute them from.
func (v *Verifier) Exact() bool { return v.mode == VerifyExact }

// Features returns the feature set of text that exact verification compares:
// its features sorted ascending without repeats, in dst's memory (dst[:0]
// grown as needed). Only for a Verifier that is Exact.
func (v *Verifier) Features(dst []uint64, text []byte) []uint64 {
	f := v.sh.AppendFeatures(dst[:0], text)
	return v.sorter.sortSet(f)
}

// AppendFeatures appends the feature set of text (as Features returns it)
// to dst and returns the extended slice: a driver that stores many sets one
// after the other makes each in place, not in a buffer it then copies. Only
// for a Verifier that is Exact.
func (v *Verifier) AppendFeatures(dst []uint64, text []byte) []uint64 {
	n := len(dst)
	dst = v.sh.AppendFeatures(dst, text)
	set := v.sorter.sortSet(dst[n:])
	return dst[:n+len(set)]
}

// Verify checks the candidate pair whose signatures are sa and sb and, for
// an Exact Verifier, whose feature sets (from Features) are fa and fb
// (ignored otherwise). It returns the verdict and whether the pair passes.
func (v *Verifier) Verify(sa, sb, fa, fb []uint64) (Verdict, bool) {
	d := Verdict{Est: v.sketch.Similarity(sa, sb), Exact: -1}
	switch v.mode {
	case VerifyExact:
		var ok bool
		d.Exact, ok = v.VerifyFeatures(fa, fb)
		return d, ok
	case VerifyEstimate:
		return d, d.Est >= v.threshold
	}
	return d, true
}

// VerifyFeatures decides a candidate pair of an Exact Verifier by its
// feature sets alone (from Features), which is how Verify decides it: it
// returns the exact Jaccard similarity, Verdict.Exact, and whether the pair
// passes. The signatures then only give the verdict's Est (Estimate), which
// a driver need make for the pairs that pass only.
func (v *Verifier) VerifyFeatures(fa, fb []uint64) (exact float64, ok bool) {
	exact = eval.Jaccard(fa, fb)
	return exact, exact >= v.threshold
}

// Decide decides a candidate pair as VerifyFeatures does, for a driver that
// drops the pairs that fail: exact is the exact Jaccard similarity of a pair
// that passes, and unspecified for one that fails. A pair whose sizes alone
// keep it below the threshold is not merged: |a ∩ b| ≤ min(|a|, |b|), so its
// similarity, computed as eval.Jaccard computes it, is at most
// min(|a|, |b|) / max(|a|, |b|) (the quotient grows with the overlap). The
// others are merged until the overlap they can still reach is below the
// least that passes (minOverlap; eval.OverlapAtLeast): most candidate
// pairs of short documents share a fragment only, and fail within their
// first elements.
func (v *Verifier) Decide(fa, fb []uint64) (exact float64, ok bool) {
	lo, hi := min(len(fa), len(fb)), max(len(fa), len(fb))
	if hi > 0 && float64(lo)/float64(hi) < v.threshold {
		return 0, false
	}
	need, ok := minOverlap(len(fa), len(fb), v.threshold)
	if !ok {
		return 0, false
	}
	o, ok := eval.OverlapAtLeast(fa, fb, need)
	if !ok {
		return 0, false
	}
	if u := len(fa) + len(fb) - o; u > 0 {
		// eval.Jaccard's quotient, to the bit.
		exact = float64(o) / float64(u)
	}
	return exact, exact >= v.threshold
}

// minOverlap returns the least overlap k ≤ min(na, nb) of sets of na and nb
// elements whose similarity, as eval.Jaccard computes it (k / (na + nb − k)
// in float64), is at least t; false if none is. The quotient grows with k
// (a correctly rounded division is monotonic in both operands), so k is
// found from the real-valued bound t(na + nb)/(1 + t) and moved by ones
// to where the float64 comparison itself changes.
func minOverlap(na, nb int, t float64) (int, bool) {
	m := min(na, nb)
	pass := func(k int) bool {
		u := na + nb - k
		if u == 0 {
			return 0 >= t // eval.Jaccard of two empty sets
		}
		return float64(k)/float64(u) >= t
	}
	k := 0
	if t > 0 {
		k = min(max(int(math.Ceil(t*float64(na+nb)/(1+t))), 0), m)
	}
	for k > 0 && pass(k-1) {
		k--
	}
	for k <= m && !pass(k) {
		k++
	}
	return k, k <= m
}

// Estimate returns the similarity of the documents whose signatures are sa
// and sb estimated from them: Verdict.Est.
func (v *Verifier) Estimate(sa, sb []uint64) float64 {
	return v.sketch.Similarity(sa, sb)
}
