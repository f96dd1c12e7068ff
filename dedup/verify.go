package dedup

import (
	"context"
	"math/bits"
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
	var fd *featDocs // nil: no feature sets
	if r.job.Verify == VerifyExact {
		var err error
		feats, sigs, fd, err = r.featureSets(ctx)
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
			// In pieces of pairCheckChunk: the pair list's chunks of 8,192
			// took about 15 ms of CPU each, and the last one checked left
			// the other core idle that long.
			return r.pairs.each(func(c []uint64) error {
				for len(c) > 0 {
					n := min(len(c), pairCheckChunk)
					if err := emit(slices.Clone(c[:n])); err != nil {
						return err
					}
					c = c[n:]
				}
				return nil
			})
		},
		func() func([]uint64) ([]edge, error) {
			v, err := r.job.NewVerifier(r.sketch)
			var fs sketch.FeatureSigner
			if err == nil && fd != nil && sigs == nil {
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
				case fd == nil || r.ref.textless(d):
					return r.signature(dst, d)
				case fs != nil:
					// The document was signed before, so its signature
					// is not that of the empty set.
					dst, _ = fs.SignFeatures(dst, f)
					return dst, nil
				}
				return sigs.GetUint64s(dst, fd.record(d-r.textBase))
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
							if fa, bufA, err = feats.ViewUint64s(bufA, fd.record(a-r.textBase)); err != nil {
								return nil, err
							}
						}
						lastA, signedA = int64(a), false
					}
					if feats != nil && (!textless || fs != nil) {
						if fb, bufB, err = feats.ViewUint64s(bufB, fd.record(b-r.textBase)); err != nil {
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

// pairCheckChunk is the most candidate pairs a pair check worker takes at
// once. A run of pairs of one document split between two pieces signs that
// document twice where its run passes in both: at 5M short documents that
// is under 0.3 % more signatures.
const pairCheckChunk = 2048

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
// The collector hands it back to the workers once stored (featureSets'
// free list): a fresh one for each chunk grew its feature slice by
// doubling, from empty, and the allocations, copies and zeroing were a
// fifth of the workers' time beyond the feature sets themselves.
type featSig struct {
	feats []uint64
	end   []int
	sigs  []uint64
}

// featDocs is the set of documents whose feature sets verify makes,
// numbered from r.textBase, as a bitmap with the count of members before
// each word: the feature sets are stored in the documents' order, so a
// document's record is its rank, found in constant time, in 2 bits a
// document (1.25 MB at 5M) where an array of records took 32 (20 MB,
// filled, written and read at random), and the documents to make are read
// from the bitmap in order, with no list of them.
type featDocs struct {
	words []featWord
	n     int // members
}

// featWord is 64 documents' bits and the members before them, side by
// side: one cache line for a look-up.
type featWord struct {
	bits uint64
	rank uint64
}

// newFeatDocs returns an empty set of documents 0 to n−1.
func newFeatDocs(n int) *featDocs {
	return &featDocs{words: make([]featWord, (n+63)/64)}
}

// add adds document i (before seal).
func (s *featDocs) add(i uint32) { s.words[i/64].bits |= 1 << (i % 64) }

// seal counts the members before each word, after the last add.
func (s *featDocs) seal() {
	n := 0
	for w := range s.words {
		s.words[w].rank = uint64(n)
		n += bits.OnesCount64(s.words[w].bits)
	}
	s.n = n
}

// record returns the rank of member i among the members (after seal): the
// index of its feature set, and signature, in featureSets' stores.
func (s *featDocs) record(i uint32) int {
	w := &s.words[i/64]
	return int(w.rank) + bits.OnesCount64(w.bits&(1<<(i%64)-1))
}

// each calls fn with the members, ascending, in chunks of up to size;
// fn owns each chunk.
func (s *featDocs) each(size int, fn func([]uint32) error) error {
	c := make([]uint32, 0, size)
	for w, fw := range s.words {
		for b := fw.bits; b != 0; b &= b - 1 {
			c = append(c, uint32(w*64+bits.TrailingZeros64(b)))
			if len(c) == size {
				if err := fn(c); err != nil {
					return err
				}
				c = make([]uint32, 0, size)
			}
		}
	}
	if len(c) > 0 {
		return fn(c)
	}
	return nil
}

// featureSets computes, for every document in a candidate pair, its sorted
// feature set, in parallel, and stores it; fd is the set of those
// documents, numbered from r.textBase, whose ranks are their records.
// Where the sketch signs feature sets (sketch.FeatureSigner) no signature
// is stored (sigs is nil) and the feature sets have the signatures' share
// of the budget too (sigShare); else the signatures are recomputed from the
// texts beside the feature sets, numbered as them. A reference document
// without text (a signature file's or an index's) has neither: its pairs
// are verified by the estimate, from its stored signature (r.sigs) and its
// input's recomputed one.
func (r *run) featureSets(ctx context.Context) (feats, sigs *docstore.Store, fd *featDocs, err error) {
	sk, err := r.sketch.NewSketcher()
	if err != nil {
		return nil, nil, nil, err
	}
	_, bySet := sk.(sketch.FeatureSigner)
	fd = newFeatDocs(int(r.ref.n) + r.docs.len() - int(r.textBase))
	if err := r.pairs.each(func(c []uint64) error {
		for _, p := range c {
			if a := uint32(p >> 32); !r.ref.textless(a) {
				fd.add(a - r.textBase)
			}
			fd.add(uint32(p) - r.textBase) // an input: its signature is recomputed
		}
		return nil
	}); err != nil {
		return nil, nil, nil, err
	}
	fd.seal()
	r.rep.Counts.VerifiedDocs = int64(fd.n)
	r.bar.CountStage("features", "docs", int64(fd.n))
	defer r.bar.Finish()
	if bySet {
		feats = docstore.New(r.tmp, "features", r.opts.Memory/8+r.sigShare())
	} else {
		feats = docstore.New(r.tmp, "features", r.opts.Memory/8)
		sigs = docstore.New(r.tmp, "sigs", r.sigShare())
	}
	words := r.sketch.Words()
	// Documents a worker takes at once: 256 short ones are about 0.3 ms
	// of work, where 64 (70 µs) made 14,500 hand-offs between the
	// producer, the workers and the collector at 5M short documents (and
	// perf of a quiet run found the two cores 90 % busy in the pass); the
	// last chunk is still short.
	const chunk = 256
	// The free list has room for more than are usually out at once (a
	// chunk in each worker, as many queued for the collector, as many
	// waiting for their turn, the collector's): with room for 2·workers + 2
	// the collector dropped some that the workers then made afresh, for
	// 346 of the 690 chunks of the first 1M documents of s5m on a loaded
	// machine (134 with this room: a worker held off the core lets the
	// other run ahead, and its chunks wait for their turn).
	free := make(chan *featSig, 4*r.opts.Workers+4)
	err = ordered.Pipeline(ctx, r.opts.Workers,
		func(emit func([]uint32) error) error { return fd.each(chunk, emit) },
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
			// perDoc is the features a document of the last chunk had,
			// rounded up: a chunk's feature slice is grown once, to what
			// a chunk like the last needs and an eighth more, where
			// growing it as the shingler fills it copied it a few times.
			perDoc := 0
			return func(docs []uint32) (*featSig, error) {
				if err != nil {
					return nil, err
				}
				var out *featSig
				select {
				case out = <-free:
					out.feats, out.end, out.sigs = out.feats[:0], out.end[:0], out.sigs[:0]
				default:
					out = &featSig{}
				}
				out.end = slices.Grow(out.end, len(docs))[:len(docs)]
				out.feats = slices.Grow(out.feats, len(docs)*perDoc+len(docs)*perDoc/8)
				if sk != nil {
					out.sigs = slices.Grow(out.sigs, len(docs)*words)
				}
				err := tr.each(docs, func(i int, text []byte) error {
					out.feats = v.AppendFeatures(out.feats, text)
					out.end[i] = len(out.feats)
					if sk != nil {
						// The document was signed before, so its
						// signature is not that of the empty set.
						out.sigs, _ = sk.Sign(out.sigs, text)
					}
					return nil
				})
				perDoc = (len(out.feats) + len(docs) - 1) / len(docs)
				return out, err
			}
		},
		func(fsg *featSig) error {
			lo := 0
			for i, hi := range fsg.end {
				if _, err := feats.AppendUint64s(fsg.feats[lo:hi]); err != nil {
					return err
				}
				if sigs != nil {
					if _, err := sigs.AppendUint64s(fsg.sigs[i*words : (i+1)*words]); err != nil {
						return err
					}
				}
				lo = hi
			}
			r.bar.Add(int64(len(fsg.end)), 0)
			select {
			case free <- fsg:
			default:
			}
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
	return feats, sigs, fd, nil
}
