package dedup

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/neardup/neardup/internal/docstore"
	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/internal/ordered"
	"github.com/neardup/neardup/internal/sketch"
)

// verifyStats counts, for the tests, what report.json does not say: the
// signatures verify's pair checks made (or read), and the bytes of feature
// sets spilled by the last run's featureSets.
var verifyStats struct {
	signatures   atomic.Int64
	featureSpill atomic.Int64
}

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
// made their spill the largest write of a run): featureSets makes the
// feature sets of the documents in candidate pairs from their texts, and a
// MinHash signature is made from the feature set where a pair needs it
// (sketch.FeatureSigner: one shingling a document, and no signature
// stored): a pair is decided by the exact similarity of its feature sets,
// and only a pair that passes is signed, for the estimate pairs.tsv writes; a sketch that signs texts only (SimHash) has its signatures
// recomputed from the texts beside the feature sets and stored, numbered as
// them. The stored signatures of reference documents without texts are kept
// in r.sigs (see Run).
func (r *run) verify(ctx context.Context) error {
	defer r.pairs.close()
	// The expander's groups of copies and the pairs within them, which
	// depend on no verdict, are made meanwhile (they ran alone after the
	// pair checks).
	x := r.newExpander()
	grouped := make(chan error, 1)
	go func() { grouped <- x.addGroups() }()
	var feats, sigs *docstore.Store
	var featRec []int32 // by document − r.textBase
	if r.job.Verify == VerifyExact {
		var err error
		feats, sigs, featRec, err = r.featureSets(ctx)
		if err != nil {
			<-grouped
			return err
		}
		defer feats.Close()
		if sigs != nil {
			defer sigs.Close()
			r.rep.Spill.SigBytes = sigs.SpilledBytes()
		}
	}
	if err := <-grouped; err != nil {
		return err
	}
	r.bar.CountStage("verify", "pairs", r.pairs.n)
	defer r.bar.Finish()
	err := ordered.Pipeline(ctx, r.opts.Workers,
		func(emit func([]uint64) error) error {
			return r.pairs.each(func(c []uint64) error { return emit(slices.Clone(c)) })
		},
		func() func([]uint64) ([]edge, error) {
			v, err := r.job.NewVerifier(r.sketch)
			var fs sketch.FeatureSigner
			if err == nil && featRec != nil && sigs == nil {
				var sk sketch.Sketcher
				sk, err = r.sketch.NewSketcher()
				fs, _ = sk.(sketch.FeatureSigner)
			}
			// sigOf appends document d's signature to dst: made from its
			// feature set f, or read from the recomputed ones, under exact
			// verification, but for a reference document without text,
			// whose stored signature r.sigs keeps (numbered as the
			// reference documents); else the one kept while signing.
			sigOf := func(dst []uint64, d uint32, f []uint64) ([]uint64, error) {
				switch {
				case featRec == nil || r.ref.textless(d):
					return r.signature(dst, d)
				case fs != nil:
					// The document was signed before, so its signature
					// is not that of the empty set.
					dst, _ = fs.SignFeatures(dst, f)
					return dst, nil
				}
				return sigs.GetUint64s(dst, int(featRec[d-r.textBase]))
			}
			var sa, sb []uint64
			var fa, fb, bufA, bufB []uint64 // fa, fb in the store's memory, or in bufA, bufB
			lastA, signedA := int64(-1), false
			return func(pairs []uint64) ([]edge, error) {
				if err != nil {
					return nil, err
				}
				var out []edge
				signed := 0
				for _, p := range pairs {
					a, b := uint32(p>>32), uint32(p)
					// A reference document known only by its signature
					// is verified by the estimate (jobspec.ReferenceVerify).
					textless := r.ref.textless(a)
					var err error
					if int64(a) != lastA {
						if feats != nil && !textless {
							if fa, bufA, err = feats.ViewUint64s(bufA, int(featRec[a-r.textBase])); err != nil {
								return nil, err
							}
						}
						lastA, signedA = int64(a), false
					}
					if feats != nil && (!textless || fs != nil) {
						if fb, bufB, err = feats.ViewUint64s(bufB, int(featRec[b-r.textBase])); err != nil {
							return nil, err
						}
					}
					d := jobspec.Verdict{Exact: -1}
					if feats != nil && !textless {
						// Exact verification decides by the feature sets:
						// the signatures only give the estimate of a pair
						// that passes, and are made for those only.
						var ok bool
						if d.Exact, ok = v.Decide(fa, fb); !ok {
							continue
						}
					}
					if !signedA {
						if sa, err = sigOf(sa[:0], a, fa); err != nil {
							return nil, err
						}
						signedA = true
						signed++
					}
					if sb, err = sigOf(sb[:0], b, fb); err != nil {
						return nil, err
					}
					signed++
					var ok bool
					switch {
					case textless:
						d, ok = v.VerifyWithoutTexts(sa, sb)
					case feats != nil:
						d.Est, ok = v.Estimate(sa, sb), true
					default:
						d, ok = v.Verify(sa, sb, fa, fb)
					}
					if ok {
						out = append(out, edge{a: a, b: b, Verdict: d})
					}
				}
				verifyStats.signatures.Add(int64(signed))
				r.bar.Add(int64(len(pairs)), 0) // pairs checked
				return out, nil
			}
		},
		func(es []edge) error {
			for _, e := range es {
				if err := x.add(e); err != nil {
					return err
				}
			}
			return nil
		})
	if err != nil {
		return err
	}
	return x.finish()
}

// sigShare is the budget of the recomputed signatures' store (or, where
// none is stored, the feature sets' share beyond their eighth): a sixteenth
// (see Run), and the band-key entries' quarter, free since candidates, less
// what the texts hold in memory and the reference signatures' sixteenth, so
// that the live data of the feature-set pass (candidate pairs m/16, feature
// sets m/8, texts, signatures) stays within the half of the budget m that
// signing peaks at (entries m/4, texts 3m/16, repeated ids m/16). Where the
// records are read back by location the texts hold a few bytes a document,
// and signatures that used to spill (411 MB of 475 at 5M short documents
// under 1 GiB) mostly fit.
func (r *run) sigShare() int64 {
	m := r.opts.Memory
	spare := m / 4
	if r.texts != nil {
		spare -= r.texts.st.MemoryBytes()
	}
	if r.sigs != nil {
		spare -= m / 16
	}
	return m/16 + max(spare, 0)
}

// featSig is what a worker makes of a chunk of documents: their feature
// sets, one after the other (feature set i ends at end[i]), and, where the
// sketch cannot sign a feature set, their signatures, Words() words each.
type featSig struct {
	feats []uint64
	end   []int
	sigs  []uint64
}

// featureSets computes, for every document in a candidate pair, its sorted
// feature set, in parallel, and stores it; featRec maps a document d ≥
// r.textBase to its record, at d − r.textBase (or -1). Where the sketch
// signs feature sets (sketch.FeatureSigner) no signature is stored (sigs is
// nil) and the feature sets have the signatures' share of the budget too
// (sigShare); else the signatures are recomputed from the texts beside the
// feature sets, numbered as them. A reference document without text (a
// signature file's or an index's) has neither: its pairs are verified by
// the estimate, from its stored signature (r.sigs) and its input's
// recomputed one.
func (r *run) featureSets(ctx context.Context) (feats, sigs *docstore.Store, featRec []int32, err error) {
	sk, err := r.sketch.NewSketcher()
	if err != nil {
		return nil, nil, nil, err
	}
	_, bySet := sk.(sketch.FeatureSigner)
	n := int(r.ref.n) + r.docs.len() - int(r.textBase)
	featRec = make([]int32, n)
	for i := range featRec {
		featRec[i] = -1
	}
	mark := func(d uint32) { featRec[d-r.textBase] = -2 }
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
	// The documents to make, ascending: a scan of the marks rather than a
	// sort of the documents as the pairs list them.
	var need []uint32
	for i, m := range featRec {
		if m == -2 {
			need = append(need, uint32(i)+r.textBase)
		}
	}
	r.rep.Counts.VerifiedDocs = int64(len(need))
	r.bar.CountStage("features", "docs", int64(len(need)))
	defer r.bar.Finish()
	if bySet {
		feats = docstore.New(r.tmp, "features", r.opts.Memory/8+r.sigShare())
	} else {
		feats = docstore.New(r.tmp, "features", r.opts.Memory/8)
		sigs = docstore.New(r.tmp, "sigs", r.sigShare())
	}
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
			if err == nil && !bySet {
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
				out := &featSig{end: make([]int, len(docs))}
				if sk != nil {
					out.sigs = make([]uint64, 0, len(docs)*words)
				}
				for i := range docs {
					docs[i] -= r.textBase // numbered in the store
				}
				err := tr.each(docs, func(i int, text []byte) error {
					fs = v.Features(fs, text)
					out.feats = append(out.feats, fs...)
					out.end[i] = len(out.feats)
					if sk != nil {
						// The document was signed before, so its
						// signature is not that of the empty set.
						out.sigs, _ = sk.Sign(out.sigs, text)
					}
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
				if sigs != nil {
					if _, err := sigs.AppendUint64s(fsg.sigs[i*words : (i+1)*words]); err != nil {
						return err
					}
				}
				featRec[d-r.textBase] = int32(rec)
				lo = hi
			}
			r.bar.Add(int64(len(fsg.end)), 0)
			return nil
		})
	if err != nil {
		feats.Close()
		if sigs != nil {
			sigs.Close()
		}
		return nil, nil, nil, err
	}
	verifyStats.featureSpill.Store(feats.SpilledBytes())
	// The texts are no longer needed.
	r.rep.Spill.TextBytes = r.texts.SpilledBytes()
	r.texts.Close()
	r.texts = nil
	return feats, sigs, featRec, nil
}
