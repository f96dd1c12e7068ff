package jobspec

import (
	"context"
	"fmt"
	"strings"

	"github.com/neardup/neardup/cluster"
)

// Reference documents ("neardup dedup --against REF"). A job may be given,
// besides its inputs, reference sources: documents seen before (an archive,
// last month's dump) that the inputs are deduplicated against. The rules,
// for every driver that runs them:
//
//   - Numbering: reference documents are numbered before the inputs' —
//     source after source in the order given, each in its own order — so
//     that every rule applied by index treats them as the oldest
//     documents: a capped bucket links its other members to its first
//     member, a reference document whenever it holds one; the keep
//     policy's ties and clusters.jsonl's order put them first. The
//     numbering is the one `dedup A B` gives A, so the candidates of an
//     input document are the same as there.
//   - Pairs: an input document is paired with reference documents and with
//     other input documents; two reference documents are never paired (a
//     bucket of only reference documents yields nothing;
//     lsh.CandidateOptions.Reference).
//   - Verification: pairs with a reference document whose text is known
//     (a corpus) are verified as the job says; pairs with one known only
//     by its signature (a signature file, an index) by the estimate
//     (ReferenceVerify), and pairs.tsv writes "-" for their exact
//     similarity.
//   - Keeping: reference documents are never removed and never written to
//     kept.jsonl; a cluster that holds one keeps one, and none of its
//     input documents (cluster.Options.Reference).
//   - Comparability: stored signatures must be made under the job's spec
//     and params, seed included (CheckSignatures).

// ReferenceKind is what a reference source holds.
type ReferenceKind uint8

// Reference source kinds.
const (
	// RefCorpus is a corpus, read as the inputs are: texts, signed by the
	// job. Its pairs are verified as the job says.
	RefCorpus ReferenceKind = iota
	// RefSignatures is a signature file (package sigfile: one file, a
	// directory of shards or a glob), read, not signed again: no texts.
	RefSignatures
	// RefIndex is an index directory (package index, Pebble), whose stored
	// signatures are read: no texts.
	RefIndex
)

// String returns "corpus", "signatures" or "index".
func (k ReferenceKind) String() string {
	switch k {
	case RefCorpus:
		return "corpus"
	case RefSignatures:
		return "signatures"
	case RefIndex:
		return "index"
	}
	return fmt.Sprintf("reference(%d)", k)
}

// HasTexts reports whether documents of this kind come with their texts.
func (k ReferenceKind) HasTexts() bool { return k == RefCorpus }

// ReferenceVerify returns how the job verifies a pair of an input document
// with a reference document of kind k: as the job says when the reference
// has texts; otherwise by the signature estimate under VerifyExact (there
// is no text to compute the exact similarity from), as the job says under
// VerifyEstimate and VerifyNone.
func (j *Job) ReferenceVerify(k ReferenceKind) Verify {
	if j.Verify == VerifyExact && !k.HasTexts() {
		return VerifyEstimate
	}
	return j.Verify
}

// ReferenceClusterOptions returns ClusterOptions for a clustering whose
// first reference documents are reference documents (cluster.Options.Reference).
func (j *Job) ReferenceClusterOptions(reference int) *cluster.Options {
	c := j.ClusterOptions()
	c.Reference = reference
	return c
}

// CheckSignatures reports whether signatures made under the shingle spec
// and the minhash params whose canonical forms (shingle.Spec.String,
// minhash.Params.String, seed included) are spec and params, and whose
// fingerprints are specFP and paramsFP, can be compared with the job's: both
// fingerprints must equal the job's. The error, wrapping
// ErrSignatureMismatch, names source and both sides' forms and
// fingerprints.
func (j *Job) CheckSignatures(source, spec string, specFP uint64, params string, paramsFP uint64) error {
	mine := j.Sketch.Spec
	p := j.Sketch.Params
	p.EnsureDefaults()
	var what []string
	if specFP != mine.Fingerprint() {
		what = append(what, fmt.Sprintf("shingle spec %s (fingerprint %016x), the job's is %s (%016x)", spec, specFP, mine, mine.Fingerprint()))
	}
	if paramsFP != p.Fingerprint() {
		what = append(what, fmt.Sprintf("params %s (fingerprint %016x), the job's are %s (%016x)", params, paramsFP, p, p.Fingerprint()))
	}
	if len(what) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s: signatures made under %s; sign with the same --shingle, --scheme, --num-perm, --bits and --seed",
		ErrSignatureMismatch, source, strings.Join(what, "; "))
}

// StoredSignatures are signatures read from a store that is not a
// signature file (an index, through Options.OpenIndex), as reference
// documents. Not safe for concurrent use.
type StoredSignatures interface {
	// Made returns the canonical forms and fingerprints of the shingle
	// spec and the minhash params the signatures were made under, for
	// Job.CheckSignatures.
	Made() (spec string, specFP uint64, params string, paramsFP uint64)
	// Each calls fn with the id and signature of every document, in the
	// store's order; id and sig are valid only until fn returns. An error
	// of fn, or ctx's cancellation, stops it and is returned.
	Each(ctx context.Context, fn func(id []byte, sig []uint64) error) error
	// Close releases the store.
	Close() error
}

// ReferenceReport is report.json's account of the reference documents of a
// run with reference sources (dedup --against); absent without.
type ReferenceReport struct {
	// Sources are the reference sources, in the order given (the order
	// their documents are numbered in).
	Sources []ReferenceSource `json:"sources"`
	// Documents is the number of reference documents read, over every
	// source, bad ones included.
	Documents int64 `json:"documents"`
	// Empty is the number of them without features, never paired.
	Empty int64 `json:"empty"`
	// InputPairs are the pairs of two input documents.
	InputPairs PairKind `json:"input_input"`
	// ReferencePairs are the pairs of an input document with a reference
	// document.
	ReferencePairs PairKind `json:"input_reference"`
	// Clustered is the number of reference documents in clusters.
	Clustered int64 `json:"clustered"`
	// RemovedByReference is the number of input documents removed from
	// clusters that hold a reference document (Counts.Removed counts them
	// too, with those removed for another input document).
	RemovedByReference int64 `json:"removed_by_reference"`
}

// ReferenceSource is one reference source in report.json.
type ReferenceSource struct {
	Path      string `json:"path"`      // as given to --against
	Kind      string `json:"kind"`      // "corpus", "signatures" or "index" (ReferenceKind.String)
	Documents int64  `json:"documents"` // documents read, bad ones included
	Empty     int64  `json:"empty"`     // documents without features (for signatures: Sketch.Empty)
	Bad       int64  `json:"bad"`       // records skipped as bad (a corpus under --skip-bad)
	Verify    string `json:"verify"`    // how its pairs with input documents were verified (ReferenceVerify)
}

// PairKind counts the candidate and verified pairs of one kind.
type PairKind struct {
	// Verify is how the pairs were verified: "exact", "estimate" or
	// "none", or several joined by "+" when reference sources of different
	// kinds were verified differently ("exact+estimate").
	Verify     string `json:"verify"`
	Candidates int64  `json:"candidates"` // distinct candidate pairs
	Verified   int64  `json:"verified"`   // pairs that passed verification
}

// NewReferenceReport returns the reference report of sources (paths and
// kinds, in order) for job j, with each source's and each pair kind's
// verification filled in and every count zero.
func NewReferenceReport(j *Job, paths []string, kinds []ReferenceKind) *ReferenceReport {
	r := &ReferenceReport{Sources: make([]ReferenceSource, len(paths)), InputPairs: PairKind{Verify: j.Verify.String()}}
	var modes []string
	for i, p := range paths {
		v := j.ReferenceVerify(kinds[i]).String()
		r.Sources[i] = ReferenceSource{Path: p, Kind: kinds[i].String(), Verify: v}
		if !strings.Contains("+"+strings.Join(modes, "+")+"+", "+"+v+"+") {
			modes = append(modes, v)
		}
	}
	r.ReferencePairs.Verify = strings.Join(modes, "+")
	return r
}
