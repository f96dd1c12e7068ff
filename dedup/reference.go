package dedup

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/neardup/neardup/internal/docstore"
	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/internal/ordered"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/sigfile"
)

// Reference documents (Options.Against; the rules are jobspec's, in the doc
// of internal/jobspec/reference.go). They are read first, in the "reference"
// stage, and numbered 0 … n−1 before the inputs: a corpus is signed as the
// inputs are, a signature file or an index has its stored signatures read
// and banded, never recomputed. Their band-key entries go into the run's
// one sorter with the inputs', within the memory budget; their signatures
// into the run's signature store and, for a corpus under exact
// verification, their texts into the text store. Their ids go to a store of
// their own, spilled past its share of the budget, so that what stays in
// memory per reference document is the stores' 8-byte offsets, not the ~40
// bytes of bookkeeping an input document takes. Once verified pairs are
// known, the reference documents that appear in them (and only those) are
// placed before the inputs in the document table (place), so that the
// stages after verification see one numbering: 0 … m−1 those reference
// documents, m … the inputs.

// refSource is one reference source: its documents are numbered lo … hi−1.
type refSource struct {
	path   string
	kind   jobspec.ReferenceKind
	lo, hi uint32
}

// refs is the reference documents of a run.
type refs struct {
	sources []refSource
	n       uint32          // reference documents, all sources
	ids     *docstore.Store // their ids, by number
	rep     *jobspec.ReferenceReport

	candidates int64 // candidate pairs with a reference document

	// Set by place, after verification.
	m        int      // reference documents in verified pairs, placed first
	used     []uint32 // their numbers, ascending
	verified int64    // verified pairs with a reference document
	placed   bool     // the edges are renumbered (run.eachEdge)
}

// textless reports whether reference document d has no text (a signature
// file's or an index's).
func (f *refs) textless(d uint32) bool {
	if d >= f.n {
		return false
	}
	i := sort.Search(len(f.sources), func(i int) bool { return f.sources[i].hi > d })
	return !f.sources[i].kind.HasTexts()
}

// refKind tells what the reference source path is: an index directory
// (a Pebble database: a manifest in it), a signature file (its first bytes are a
// signature file's magic: a file, the first file of a directory or of a
// glob's matches), or else a corpus.
func refKind(path string) (jobspec.ReferenceKind, error) {
	first := path
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		ents, err := os.ReadDir(path)
		if err != nil {
			return 0, err
		}
		for _, e := range ents {
			// A Pebble database: its manifest, or the marker naming it.
			if n := e.Name(); n == "CURRENT" || strings.HasPrefix(n, "MANIFEST-") || strings.HasPrefix(n, "marker.manifest.") {
				return jobspec.RefIndex, nil
			}
		}
		first = ""
		for _, e := range ents {
			if n := e.Name(); e.Type().IsRegular() && !strings.HasPrefix(n, ".") && !strings.HasPrefix(n, "_") {
				first = filepath.Join(path, n)
				break
			}
		}
	case err != nil && strings.ContainsAny(path, "*?["):
		m, gerr := filepath.Glob(path)
		if gerr != nil || len(m) == 0 {
			return 0, fmt.Errorf("%s: no file matches: %w", path, err)
		}
		first = m[0]
	case err != nil:
		return 0, err
	}
	if first == "" {
		return jobspec.RefCorpus, nil // an empty directory: corpus says so
	}
	f, err := os.Open(first)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var magic [4]byte
	n, _ := io.ReadFull(f, magic[:])
	if m := string(magic[:n]); m == sigfile.Magic || m == minhash.Magic {
		return jobspec.RefSignatures, nil
	}
	return jobspec.RefCorpus, nil
}

// reference reads every reference source, in order, numbering its
// documents from r.ref.n on.
func (r *run) reference(ctx context.Context) error {
	kinds := make([]jobspec.ReferenceKind, len(r.opts.Against))
	for i, p := range r.opts.Against {
		k, err := refKind(p)
		if err != nil {
			return fmt.Errorf("dedup: --against %s: %w", p, err)
		}
		kinds[i] = k
	}
	r.ref.rep = jobspec.NewReferenceReport(&r.job, r.opts.Against, kinds)
	for i, p := range r.opts.Against {
		src := refSource{path: p, kind: kinds[i], lo: r.ref.n}
		st := &r.ref.rep.Sources[i]
		var err error
		switch kinds[i] {
		case jobspec.RefCorpus:
			err = r.referenceCorpus(ctx, &src, st)
		case jobspec.RefSignatures:
			err = r.referenceSignatures(ctx, &src, st)
		case jobspec.RefIndex:
			err = r.referenceIndex(ctx, &src, st)
		}
		if err != nil {
			return err
		}
		src.hi = r.ref.n
		r.ref.sources = append(r.ref.sources, src)
		r.ref.rep.Documents += st.Documents
		r.ref.rep.Empty += st.Empty
	}
	return nil
}

// addRef numbers one reference document: its id, its signature (nil for a
// bad or empty one) and, when texts are kept, its text.
func (r *run) addRef(id, text []byte, sig []uint64, textless bool) error {
	if r.ref.n == 1<<sketch.EntryDocBits-1 {
		return fmt.Errorf("dedup: more than %d reference documents", 1<<sketch.EntryDocBits-1)
	}
	if _, err := r.ref.ids.Append(id); err != nil {
		return err
	}
	if r.texts != nil && (r.textsOn || !textless) {
		if !r.textsOn {
			r.textsOn, r.textBase = true, r.ref.n
		}
		if err := r.texts.appendText(text); err != nil {
			return err
		}
	}
	r.ref.n++
	_, err := r.sigs.AppendUint64s(sig)
	return err
}

// referenceCorpus signs a corpus as the inputs are signed.
func (r *run) referenceCorpus(ctx context.Context, src *refSource, st *jobspec.ReferenceSource) error {
	words := r.sketch.Words()
	var records int64 // records numbered, bad ones included
	// Signed as the inputs are; report.json's signing metrics are the
	// inputs' only.
	parse, read, _, _, err := r.signCorpus(ctx, "reference", []string{src.path}, src.lo, false, false, func(s *signed) error {
		id0, tx0, sg := 0, 0, 0
		for j := range s.docs {
			d := &s.docs[j]
			for records < d.index { // records the reader skipped
				if err := r.addRef(nil, nil, nil, false); err != nil {
					return err
				}
				records++
			}
			var sig []uint64
			switch d.status {
			case docOK:
				sig = s.sigs[sg : sg+words]
				sg += words
			case docEmpty:
				st.Empty++
			}
			if err := r.addRef(s.ids[id0:d.idEnd], s.texts[tx0:d.textEnd], sig, false); err != nil {
				return err
			}
			records++
			id0, tx0 = d.idEnd, d.textEnd
		}
		return r.entries.Add(s.entries...)
	})
	if err != nil {
		return fmt.Errorf("dedup: --against %s: %w", src.path, err)
	}
	st.Documents = records
	st.Bad = parse.Bad + read.Bad
	return nil
}

// referenceSignatures reads and bands a signature file's signatures.
func (r *run) referenceSignatures(ctx context.Context, src *refSource, st *jobspec.ReferenceSource) error {
	sr, err := sigfile.Open(src.path, nil)
	if err != nil {
		return fmt.Errorf("dedup: --against %s: %w", src.path, err)
	}
	defer sr.Close()
	h := sr.Header()
	if h.Sketch != sigfile.MinHash {
		return fmt.Errorf("dedup: --against %s: %w: it holds %s signatures (%s); the job's are minhash", src.path, sigfile.ErrSketchMismatch, h.Sketch, h.Params())
	}
	if err := r.job.CheckSignatures("--against "+src.path, h.Spec, h.SpecFingerprint(), h.Params(), h.ParamsFingerprint()); err != nil {
		return err
	}
	err = r.bandStored(ctx, st, func(fn func(id []byte, sig []uint64) error) error {
		var rec sigfile.Record
		for {
			err := sr.Next(&rec)
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if err := fn(rec.ID, rec.Sig); err != nil {
				return err
			}
		}
	})
	if err != nil {
		return fmt.Errorf("dedup: --against %s: %w", src.path, err)
	}
	return nil
}

// referenceIndex reads and bands the stored signatures of an index,
// opened with Options.OpenIndex.
func (r *run) referenceIndex(ctx context.Context, src *refSource, st *jobspec.ReferenceSource) error {
	if r.opts.OpenIndex == nil {
		return fmt.Errorf("dedup: --against %s: %w: an index directory, and this program reads no index (Options.OpenIndex is not set)", src.path, ErrInvalidOptions)
	}
	db, err := r.opts.OpenIndex(src.path, r.job.Sketch.Spec)
	if err != nil {
		return fmt.Errorf("dedup: --against %s: %w", src.path, err)
	}
	defer db.Close()
	spec, specFP, params, paramsFP := db.Made()
	if err := r.job.CheckSignatures("--against "+src.path, spec, specFP, params, paramsFP); err != nil {
		return err
	}
	err = r.bandStored(ctx, st, func(fn func(id []byte, sig []uint64) error) error { return db.Each(ctx, fn) })
	if err != nil {
		return fmt.Errorf("dedup: --against %s: %w", src.path, err)
	}
	return nil
}

// storedChunk is a chunk of stored signatures on their way through
// bandStored: read in order, banded in parallel, stored in order.
type storedChunk struct {
	ids     []byte
	idEnd   []int
	sigs    []uint64 // Words() per document
	empty   []bool
	entries []uint64
	first   uint32 // number of the first document
}

// storedChunkDocs is the number of documents in a storedChunk.
const storedChunkDocs = 1024

// bandStored numbers, stores and bands the documents each hands it, in its
// order: one goroutine reads, the workers band, one stores.
func (r *run) bandStored(ctx context.Context, st *jobspec.ReferenceSource, each func(fn func(id []byte, sig []uint64) error) error) error {
	words := r.sketch.Words()
	r.bar.CountStage("reference", "docs", -1)
	defer r.bar.Finish()
	free := make(chan *storedChunk, 2*r.opts.Workers+2)
	for range cap(free) {
		free <- &storedChunk{}
	}
	next := r.ref.n
	return ordered.Pipeline(ctx, r.opts.Workers,
		func(emit func(*storedChunk) error) error {
			var c *storedChunk
			take := func() error {
				select {
				case c = <-free:
				case <-ctx.Done():
					return ctx.Err()
				}
				c.ids, c.idEnd, c.sigs, c.first = c.ids[:0], c.idEnd[:0], c.sigs[:0], next
				return nil
			}
			if err := take(); err != nil {
				return err
			}
			err := each(func(id []byte, sig []uint64) error {
				if len(sig) != words {
					return fmt.Errorf("%w: a signature of %d words; the job's have %d", jobspec.ErrSignatureMismatch, len(sig), words)
				}
				c.ids = append(c.ids, id...)
				c.idEnd = append(c.idEnd, len(c.ids))
				c.sigs = append(c.sigs, sig...)
				next++
				if len(c.idEnd) < storedChunkDocs {
					return nil
				}
				if err := emit(c); err != nil {
					return err
				}
				return take()
			})
			if err != nil {
				return err
			}
			return emit(c)
		},
		func() func(*storedChunk) (*storedChunk, error) {
			var keys, scratch []uint64
			return func(c *storedChunk) (*storedChunk, error) {
				c.empty, c.entries = c.empty[:0], c.entries[:0]
				for i := range c.idEnd {
					sig := c.sigs[i*words : (i+1)*words]
					empty := r.sketch.Empty(sig)
					c.empty = append(c.empty, empty)
					if !empty {
						keys, scratch = r.sketch.AppendKeys(keys[:0], scratch, sig)
						c.entries = sketch.AppendKeyEntries(c.entries, keys, c.first+uint32(i), r.sketch.KeyBits())
					}
				}
				return c, nil
			}
		},
		func(c *storedChunk) error {
			id0 := 0
			for i, end := range c.idEnd {
				var sig []uint64
				if c.empty[i] {
					st.Empty++
				} else {
					sig = c.sigs[i*words : (i+1)*words]
				}
				if err := r.addRef(c.ids[id0:end], nil, sig, true); err != nil {
					return err
				}
				id0 = end
			}
			st.Documents += int64(len(c.idEnd))
			r.bar.Add(int64(len(c.idEnd)), 0)
			err := r.entries.Add(c.entries...)
			free <- c
			return err
		})
}

// place puts the reference documents that appear in verified pairs before
// the inputs in the document table and renumbers the edges to match
// (run.eachEdge, as it reads them): 0 … m−1 for those, in their order,
// m … for the inputs. Both numberings order documents alike, so every rule
// by index gives the same result in either, and the edges stay in (a, b)
// order.
func (r *run) place() error {
	f := &r.ref
	if f.n == 0 {
		return nil
	}
	if err := r.eachEdge(func(e edge) error { // in (a, b) order: a ascends
		if e.a < f.n {
			f.verified++
			if len(f.used) == 0 || f.used[len(f.used)-1] != e.a {
				f.used = append(f.used, e.a)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	f.m = len(f.used)
	ids := make([][]byte, f.m)
	for i, d := range f.used {
		id, err := f.ids.Get(nil, int(d))
		if err != nil {
			return err
		}
		ids[i] = id
	}
	r.docs.prepend(ids)
	f.placed = true
	return nil
}

// globalID returns the id of document d numbered as in band-key entries
// (reference documents first, all of them).
func (r *run) globalID(d uint32) ([]byte, error) {
	if d < r.ref.n {
		return r.ref.ids.Get(nil, int(d))
	}
	return r.docs.id(d - r.ref.n + uint32(r.ref.m)), nil
}
