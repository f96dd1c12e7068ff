package dedup

import (
	"errors"
	"fmt"
	"io"

	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/sigfile"
)

// Stored signatures of the inputs (Options.Signatures) and the signatures
// written out (Options.SignaturesOut).
//
// With stored signatures the workers only parse; the collector, which sees
// the documents in input order, takes each parsed document's record from
// the signature file, checks that the ids agree and bands the signature.
// A stored signature is the empty set's for a text without features, and
// for a text with features only with probability 2^−(K·Bits); so only when
// it is, the text (which the workers keep for this) is signed to decide, as
// signing the inputs would have. The outputs are then those of signing
// again.

// storedSigs reads the stored signatures of the inputs.
type storedSigs struct {
	path string
	r    *sigfile.Reader
	rec  sigfile.Record
	sk   sketch.Sketcher // bands, and signs a text whose stored signature is the empty set's
	keys []uint64
}

// openStored opens the signature file of the inputs and checks that its
// signatures are comparable with the job's.
func (r *run) openStored() error {
	path := r.opts.Signatures
	sr, err := sigfile.Open(path, nil)
	if err != nil {
		return fmt.Errorf("dedup: --signatures %s: %w", path, err)
	}
	h := sr.Header()
	if h.Sketch != sigfile.MinHash {
		sr.Close()
		return fmt.Errorf("dedup: --signatures %s: %w: it holds %s signatures (%s); the job's are minhash", path, sigfile.ErrSketchMismatch, h.Sketch, h.Params())
	}
	if err := r.job.CheckSignatures("--signatures "+path, h.Spec, h.SpecFingerprint(), h.Params(), h.ParamsFingerprint()); err != nil {
		sr.Close()
		return err
	}
	sk, err := r.sketch.NewSketcher()
	if err != nil {
		sr.Close()
		return err
	}
	r.stored = &storedSigs{path: path, r: sr, sk: sk}
	return nil
}

// takeStored gives the parsed documents of s (status docOK from the
// workers) their stored signatures and band-key entries, and marks those
// without features docEmpty.
func (r *run) takeStored(s *signed) error {
	st := r.stored
	words := r.sketch.Words()
	id0, tx0 := 0, 0
	for j, idx := range s.index {
		id, text := s.ids[id0:s.idEnd[j]], s.texts[tx0:s.textEnd[j]]
		id0, tx0 = s.idEnd[j], s.textEnd[j]
		if s.status[j] != docOK {
			continue
		}
		err := st.r.Next(&st.rec)
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("dedup: %w: --signatures %s ends after %d records; %s:%d (id %q) has none",
				jobspec.ErrStoredSignatures, st.path, st.r.Count(), s.files[j], s.lines[j], id)
		}
		if err != nil {
			return fmt.Errorf("dedup: --signatures: %w", err)
		}
		if string(st.rec.ID) != string(id) {
			return fmt.Errorf("dedup: %w: record %d of --signatures %s has id %q; %s:%d, the document it stands for, has id %q",
				jobspec.ErrStoredSignatures, st.r.Count()-1, st.path, st.rec.ID, s.files[j], s.lines[j], id)
		}
		sig := st.rec.Sig
		if r.sketch.Empty(sig) {
			if _, empty := st.sk.Sign(nil, text); empty {
				s.status[j] = docEmpty
				continue
			}
		}
		s.sigs = append(s.sigs, sig...)
		st.keys = st.sk.AppendBucketKeys(st.keys[:0], s.sigs[len(s.sigs)-words:])
		s.entries = sketch.AppendEntries(s.entries, st.keys, r.ref.n+uint32(idx))
	}
	return nil
}

// finishSign checks, after the last input, that the stored signatures
// have no record left.
func (r *run) finishSign() error {
	st := r.stored
	if st == nil {
		return nil
	}
	n := st.r.Count()
	err := st.r.Next(&st.rec)
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil:
		return fmt.Errorf("dedup: --signatures: %w", err)
	}
	return fmt.Errorf("dedup: %w: --signatures %s holds more records than the inputs' %d documents: record %d has id %q",
		jobspec.ErrStoredSignatures, st.path, n, n, st.rec.ID)
}

// openSignaturesOut starts the signature file Options.SignaturesOut.
func (r *run) openSignaturesOut() error {
	w, err := sigfile.Create(r.opts.SignaturesOut, sigfile.MinHashHeader(r.job.Sketch.Spec, r.job.Sketch.Params))
	if err != nil {
		return fmt.Errorf("dedup: --signatures-out: %w", err)
	}
	sk, err := r.sketch.NewSketcher()
	if err != nil {
		w.Abort()
		return err
	}
	r.sigOut = w
	r.emptySig, _ = sk.Sign(nil, nil)
	return nil
}

// writeSignature writes a document's record to Options.SignaturesOut, if
// set: the signature of a document without features is the empty set's,
// and a bad record has none, as neardup sign writes them.
func (r *run) writeSignature(status uint8, id []byte, sig []uint64) error {
	if r.sigOut == nil || status == docBad {
		return nil
	}
	if status == docEmpty {
		sig = r.emptySig
	}
	if err := r.sigOut.Add(id, sig); err != nil {
		return fmt.Errorf("dedup: --signatures-out: %w", err)
	}
	return nil
}
