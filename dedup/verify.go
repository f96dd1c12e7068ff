package dedup

import (
	"context"
	"slices"

	"github.com/neardup/neardup/internal/docstore"
	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/internal/ordered"
)

// edge is a verified pair: documents a < b and the verdict (the signature
// estimate and, when computed, the exact Jaccard similarity).
type edge struct {
	a, b uint32
	jobspec.Verdict
}

// verify checks every candidate pair and keeps the verified ones as edges.
func (r *run) verify(ctx context.Context) error {
	defer r.pairs.close()
	var feats *docstore.Store
	var featRec []int32
	if r.job.Verify == VerifyExact {
		var err error
		feats, featRec, err = r.featureSets(ctx)
		if err != nil {
			return err
		}
		defer feats.Close()
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
			return func(pairs []uint64) ([]edge, error) {
				if err != nil {
					return nil, err
				}
				var out []edge
				for _, p := range pairs {
					a, b := uint32(p>>32), uint32(p)
					var err error
					if int64(a) != lastA {
						if sa, err = r.signature(sa[:0], a); err != nil {
							return nil, err
						}
						if feats != nil {
							if fa, err = feats.GetUint64s(fa[:0], int(featRec[a])); err != nil {
								return nil, err
							}
						}
						lastA = int64(a)
					}
					if sb, err = r.signature(sb[:0], b); err != nil {
						return nil, err
					}
					if feats != nil {
						if fb, err = feats.GetUint64s(fb[:0], int(featRec[b])); err != nil {
							return nil, err
						}
					}
					if d, ok := v.Verify(sa, sb, fa, fb); ok {
						out = append(out, edge{a: a, b: b, Verdict: d})
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
	if err != nil {
		return err
	}
	return r.expandExact()
}

// featureSets computes, for every document in a candidate pair, its sorted
// feature set, in parallel, and stores them; featRec maps a document to its
// record (or -1).
func (r *run) featureSets(ctx context.Context) (*docstore.Store, []int32, error) {
	n := r.docs.len()
	featRec := make([]int32, n)
	for i := range featRec {
		featRec[i] = -1
	}
	var need []uint32
	mark := func(d uint32) {
		if featRec[d] == -1 {
			featRec[d] = -2
			need = append(need, d)
		}
	}
	if err := r.pairs.each(func(c []uint64) error {
		for _, p := range c {
			mark(uint32(p >> 32))
			mark(uint32(p))
		}
		return nil
	}); err != nil {
		return nil, nil, err
	}
	slices.Sort(need)
	r.rep.Counts.VerifiedDocs = int64(len(need))
	r.bar.CountStage("features", "docs", int64(len(need)))
	defer r.bar.Finish()
	feats := docstore.New(r.tmp, "features", r.opts.Memory/8)
	const chunk = 64
	pos := 0 // next document of need to store
	err := ordered.Pipeline(ctx, r.opts.Workers,
		func(emit func([]uint32) error) error {
			for i := 0; i < len(need); i += chunk {
				if err := emit(need[i:min(i+chunk, len(need))]); err != nil {
					return err
				}
			}
			return nil
		},
		func() func([]uint32) ([][]uint64, error) {
			v, err := r.job.NewVerifier(r.sketch)
			var text []byte
			return func(docs []uint32) ([][]uint64, error) {
				if err != nil {
					return nil, err
				}
				out := make([][]uint64, len(docs))
				for i, d := range docs {
					var err error
					if text, err = r.texts.Get(text[:0], int(d)); err != nil {
						return nil, err
					}
					out[i] = v.Features(nil, text)
				}
				return out, nil
			}
		},
		func(sets [][]uint64) error {
			for _, s := range sets {
				d := need[pos]
				pos++
				rec, err := feats.AppendUint64s(s)
				if err != nil {
					return err
				}
				featRec[d] = int32(rec)
			}
			r.bar.Add(int64(len(sets)), 0)
			return nil
		})
	if err != nil {
		feats.Close()
		return nil, nil, err
	}
	// The texts are no longer needed.
	r.rep.Spill.TextBytes = r.texts.SpilledBytes()
	r.texts.Close()
	r.texts = nil
	return feats, featRec, nil
}
