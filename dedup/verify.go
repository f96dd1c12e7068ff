package dedup

import (
	"context"
	"fmt"
	"slices"

	"github.com/neardup/neardup/internal/docstore"
	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/internal/ordered"
	"github.com/neardup/neardup/internal/sketch"
)

// edge is a verified pair: documents a < b and the verdict (the signature
// estimate and, when computed, the exact Jaccard similarity).
type edge struct {
	a, b uint32
	jobspec.Verdict
}

// verify checks every candidate pair and keeps the verified ones as edges.
//
// Under exact verification the signatures were not kept while signing (512
// bytes a document at K = 128, most of them never in a candidate pair, which
// made their spill the largest write of a run): featureSets recomputes those
// of the documents in candidate pairs from their texts, beside their feature
// sets, numbered as the feature sets, and sigOf reads them (the stored
// signatures of reference documents without texts are kept in r.sigs: see
// Run).
func (r *run) verify(ctx context.Context) error {
	defer r.pairs.close()
	sigs := r.sigs
	var feats *docstore.Store
	var featRec []int32 // by document − r.textBase
	if r.job.Verify == VerifyExact {
		var err error
		feats, sigs, featRec, err = r.featureSets(ctx)
		if err != nil {
			return err
		}
		defer feats.Close()
		defer sigs.Close()
		r.rep.Spill.SigBytes = sigs.SpilledBytes()
	}
	// sigOf appends document d's signature to dst: recomputed under exact
	// verification (stored, or made from its text for a document in one
	// pair only: direct), but for a reference document without text, whose
	// stored signature r.sigs keeps (numbered as the reference documents);
	// else the one kept while signing. featOf appends its feature set.
	sigOf := func(dst []uint64, dc *directDocs, d uint32) ([]uint64, error) {
		if featRec != nil && !r.ref.textless(d) {
			if rec := featRec[d-r.textBase]; rec != directRec {
				return sigs.GetUint64s(dst, int(rec))
			}
			return append(dst, dc.sig(d)...), nil
		}
		return r.signature(dst, d)
	}
	featOf := func(dst []uint64, dc *directDocs, d uint32) ([]uint64, error) {
		if rec := featRec[d-r.textBase]; rec != directRec {
			return feats.GetUint64s(dst, int(rec))
		}
		return append(dst, dc.feats(d)...), nil
	}
	r.bar.CountStage("verify", "pairs", r.pairs.n)
	defer r.bar.Finish()
	err := ordered.Pipeline(ctx, r.opts.Workers,
		func(emit func([]uint64) error) error {
			return r.pairs.each(func(c []uint64) error { return emit(slices.Clone(c)) })
		},
		func() func([]uint64) ([]edge, error) {
			v, err := r.job.NewVerifier(r.sketch)
			var sa, sb []uint64
			var fa, fb []uint64
			lastA := int64(-1)
			var dc *directDocs
			if err == nil && featRec != nil {
				dc, err = r.newDirectDocs()
			}
			return func(pairs []uint64) ([]edge, error) {
				if err != nil {
					return nil, err
				}
				var out []edge
				for lo := 0; lo < len(pairs); lo += directChunk {
					part := pairs[lo:min(lo+directChunk, len(pairs))]
					if dc != nil {
						if err := dc.load(part, featRec, v); err != nil {
							return nil, err
						}
					}
					for _, p := range part {
						a, b := uint32(p>>32), uint32(p)
						// A reference document known only by its signature
						// is verified by the estimate (jobspec.ReferenceVerify).
						textless := r.ref.textless(a)
						var err error
						if int64(a) != lastA {
							if sa, err = sigOf(sa[:0], dc, a); err != nil {
								return nil, err
							}
							if feats != nil && !textless {
								if fa, err = featOf(fa[:0], dc, a); err != nil {
									return nil, err
								}
							}
							lastA = int64(a)
						}
						if sb, err = sigOf(sb[:0], dc, b); err != nil {
							return nil, err
						}
						var d jobspec.Verdict
						var ok bool
						if textless {
							d, ok = v.VerifyWithoutTexts(sa, sb)
						} else {
							if feats != nil {
								if fb, err = featOf(fb[:0], dc, b); err != nil {
									return nil, err
								}
							}
							d, ok = v.Verify(sa, sb, fa, fb)
						}
						if ok {
							out = append(out, edge{a: a, b: b, Verdict: d})
						}
					}
				}
				r.bar.Add(int64(len(pairs)), 0) // pairs checked
				return out, nil
			}
		},
		func(es []edge) error {
			r.edges = append(r.edges, es...)
			return nil
		})
	if r.texts != nil {
		r.texts.Close()
		r.texts = nil
	}
	if err != nil {
		return err
	}
	return r.expandExact()
}

// directRec marks, in featRec, a document in a single candidate pair: its
// feature set and signature are made from its text when its pair is
// verified (directDocs), never stored.
const directRec = -2

// directChunk is how many pairs a verify worker makes the direct documents
// of at once.
const directChunk = 1024

// directDocs are the feature sets and signatures of the direct documents of
// a few pairs, made from their texts by one verify worker.
type directDocs struct {
	r      *run
	sk     sketch.Sketcher
	tr     *textReader
	docs   []uint32 // ascending
	store  []uint32 // docs numbered in the text store
	fs     []uint64
	allFs  []uint64
	fsEnd  []int
	allSig []uint64
}

func (r *run) newDirectDocs() (*directDocs, error) {
	sk, err := r.sketch.NewSketcher()
	if err != nil {
		return nil, err
	}
	tr, err := r.texts.newReader(&r.opts.Corpus)
	if err != nil {
		return nil, err
	}
	return &directDocs{r: r, sk: sk, tr: tr}, nil
}

// load makes the feature sets and signatures of the direct documents of
// pairs, in document order (so that neighbouring records are read at once).
func (dc *directDocs) load(pairs []uint64, featRec []int32, v *jobspec.Verifier) error {
	r := dc.r
	dc.docs = dc.docs[:0]
	for _, p := range pairs {
		a, b := uint32(p>>32), uint32(p)
		if !r.ref.textless(a) && featRec[a-r.textBase] == directRec {
			dc.docs = append(dc.docs, a)
		}
		if featRec[b-r.textBase] == directRec {
			dc.docs = append(dc.docs, b)
		}
	}
	slices.Sort(dc.docs)
	dc.docs = slices.Compact(dc.docs)
	dc.store = dc.store[:0]
	for _, d := range dc.docs {
		dc.store = append(dc.store, d-r.textBase)
	}
	dc.allFs, dc.fsEnd, dc.allSig = dc.allFs[:0], dc.fsEnd[:0], dc.allSig[:0]
	return dc.tr.each(dc.store, func(_ int, text []byte) error {
		dc.fs = v.Features(dc.fs, text)
		dc.allFs = append(dc.allFs, dc.fs...)
		dc.fsEnd = append(dc.fsEnd, len(dc.allFs))
		// The document was signed before, so its signature is not that
		// of the empty set.
		dc.allSig, _ = dc.sk.Sign(dc.allSig, text)
		return nil
	})
}

func (dc *directDocs) index(d uint32) int {
	i, ok := slices.BinarySearch(dc.docs, d)
	if !ok {
		panic(fmt.Sprintf("dedup: internal error: document %d was not made for its pair", d))
	}
	return i
}

// sig returns document d's signature; it aliases dc's memory.
func (dc *directDocs) sig(d uint32) []uint64 {
	w := dc.r.sketch.Words()
	i := dc.index(d)
	return dc.allSig[i*w : (i+1)*w]
}

// feats returns document d's feature set; it aliases dc's memory.
func (dc *directDocs) feats(d uint32) []uint64 {
	i, lo := dc.index(d), 0
	if i > 0 {
		lo = dc.fsEnd[i-1]
	}
	return dc.allFs[lo:dc.fsEnd[i]]
}

// featSig is what a worker makes of a chunk of documents: their feature
// sets, one after the other (feature set i ends at end[i]), and their
// signatures, Words() words each.
type featSig struct {
	feats []uint64
	end   []int
	sigs  []uint64
}

// featureSets computes, for every document in more than one candidate pair,
// its sorted feature set and its signature, in parallel, and stores them;
// featRec maps a document d ≥ r.textBase to its record in both stores, at
// d − r.textBase, or to directRec for a document in one pair (made when its
// pair is verified: most documents at 5M short ones, 1.3M of 1.8M), or -1. A reference document without text (a signature file's or an
// index's) has neither: its pairs are verified by the estimate, from its
// stored signature (r.sigs) and its input's recomputed one.
func (r *run) featureSets(ctx context.Context) (feats, sigs *docstore.Store, featRec []int32, err error) {
	n := int(r.ref.n) + r.docs.len() - int(r.textBase)
	featRec = make([]int32, n)
	for i := range featRec {
		featRec[i] = -1
	}
	var need []uint32
	mark := func(d uint32) {
		switch featRec[d-r.textBase] {
		case -1: // first seen: direct, unless seen again
			featRec[d-r.textBase] = directRec
			need = append(need, d)
		case directRec:
			featRec[d-r.textBase] = -3
		}
	}
	if err := r.pairs.each(func(c []uint64) error {
		for _, p := range c {
			if a := uint32(p >> 32); !r.ref.textless(a) {
				mark(a)
			}
			mark(uint32(p)) // an input: its signature is recomputed

		}
		return nil
	}); err != nil {
		return nil, nil, nil, err
	}
	r.rep.Counts.VerifiedDocs = int64(len(need))
	// Only the documents in more than one pair are made here and stored;
	// those in one pair are made when it is verified.
	need = slices.DeleteFunc(need, func(d uint32) bool { return featRec[d-r.textBase] == directRec })
	slices.Sort(need)
	r.bar.CountStage("features", "docs", int64(len(need)))
	defer r.bar.Finish()
	// The shares of the budget: an eighth for feature sets, a sixteenth for
	// signatures (see Run).
	feats = docstore.New(r.tmp, "features", r.opts.Memory/8)
	sigs = docstore.New(r.tmp, "sigs", r.opts.Memory/16)
	words := r.sketch.Words()
	const chunk = 64
	pos := 0 // next document of need to store
	err = ordered.Pipeline(ctx, r.opts.Workers,
		func(emit func([]uint32) error) error {
			for i := 0; i < len(need); i += chunk {
				if err := emit(slices.Clone(need[i:min(i+chunk, len(need))])); err != nil {
					return err
				}
			}
			return nil
		},
		func() func([]uint32) (*featSig, error) {
			v, err := r.job.NewVerifier(r.sketch)
			var sk sketch.Sketcher
			if err == nil {
				sk, err = r.sketch.NewSketcher()
			}
			var tr *textReader
			if err == nil {
				tr, err = r.texts.newReader(&r.opts.Corpus)
			}
			var fs []uint64
			return func(docs []uint32) (*featSig, error) {
				if err != nil {
					return nil, err
				}
				out := &featSig{end: make([]int, len(docs)), sigs: make([]uint64, 0, len(docs)*words)}
				for i := range docs {
					docs[i] -= r.textBase // numbered in the store
				}
				err := tr.each(docs, func(i int, text []byte) error {
					fs = v.Features(fs, text)
					out.feats = append(out.feats, fs...)
					out.end[i] = len(out.feats)
					// The document was signed before, so its signature
					// is not that of the empty set.
					out.sigs, _ = sk.Sign(out.sigs, text)
					return nil
				})
				return out, err
			}
		},
		func(fsg *featSig) error {
			lo := 0
			for i, hi := range fsg.end {
				d := need[pos]
				pos++
				rec, err := feats.AppendUint64s(fsg.feats[lo:hi])
				if err != nil {
					return err
				}
				if _, err := sigs.AppendUint64s(fsg.sigs[i*words : (i+1)*words]); err != nil {
					return err
				}
				featRec[d-r.textBase] = int32(rec)
				lo = hi
			}
			r.bar.Add(int64(len(fsg.end)), 0)
			return nil
		})
	if err != nil {
		feats.Close()
		sigs.Close()
		return nil, nil, nil, err
	}
	// The texts are read again for the direct documents (closed by verify).
	r.rep.Spill.TextBytes = r.texts.SpilledBytes()
	return feats, sigs, featRec, nil
}
