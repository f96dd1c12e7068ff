package dedup

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

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
	held bool // rec is read and not yet matched to a document (SkipBad)
	eof  bool // the file has no record left (SkipBad)
	// missing are the documents the file had no record for (SkipBad).
	missing []missingSig
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
//
// Under SkipBad a stored file (from neardup sign, or dedup's
// --signatures-out) has no record for the later occurrences of a repeated
// id, which is known only after the last input: a document whose id is not
// the next record's is then signed from its text, its record kept for the
// next document, and it must turn out to be such an occurrence
// (checkMissing).
func (r *run) takeStored(s *signed) error {
	words := r.sketch.Words()
	id0, tx0 := 0, 0
	// The entries are made here, document by document: entEnd is rebuilt.
	s.entries = s.entries[:0]
	for j := range s.docs {
		d := &s.docs[j]
		id, text := s.ids[id0:d.idEnd], s.texts[tx0:d.textEnd]
		id0, tx0 = d.idEnd, d.textEnd
		if err := r.takeStoredDoc(s, d, id, text, words); err != nil {
			return err
		}
		d.entEnd = len(s.entries)
	}
	return nil
}

// takeStoredDoc is takeStored's work on document d of s. A copy the exact
// pass's workers already found (docCopy) has its record read and its id
// checked, and no signature nor entries: a copy needs no signing anyway.
func (r *run) takeStoredDoc(s *signed, d *docRes, id, text []byte, words int) error {
	st := r.stored
	idx, file := d.index, s.files[d.file]
	isCopy := d.status == docCopy
	if d.status != docOK && !isCopy {
		return nil
	}
	if !st.held {
		err := st.r.Next(&st.rec)
		if errors.Is(err, io.EOF) && !r.opts.Corpus.SkipBad {
			return fmt.Errorf("dedup: %w: --signatures %s ends after %d records; %s:%d (id %q) has none",
				jobspec.ErrStoredSignatures, st.path, st.r.Count(), file, d.line, id)
		}
		switch {
		case errors.Is(err, io.EOF):
			st.eof = true
		case err != nil:
			return fmt.Errorf("dedup: --signatures: %w", err)
		}
	}
	var sig []uint64
	switch {
	case !st.eof && string(st.rec.ID) == string(id):
		st.held = false
		if isCopy {
			return nil
		}
		sig = st.rec.Sig
		if r.sketch.Empty(sig) {
			if _, empty := st.sk.Sign(nil, text); empty {
				d.status = docEmpty
				return nil
			}
		}
	case r.opts.Corpus.SkipBad:
		st.held = !st.eof
		st.missing = append(st.missing, missingSig{index: idx, file: file, line: d.line, id: string(id)})
		if isCopy {
			return nil
		}
		var empty bool
		if sig, empty = st.sk.Sign(nil, text); empty {
			d.status = docEmpty
			return nil
		}
	default:
		return fmt.Errorf("dedup: %w: record %d of --signatures %s has id %q; %s:%d, the document it stands for, has id %q",
			jobspec.ErrStoredSignatures, st.r.Count()-1, st.path, st.rec.ID, file, d.line, id)
	}
	s.sigs = append(s.sigs, sig...)
	st.keys = st.sk.AppendKeys(st.keys[:0], s.sigs[len(s.sigs)-words:])
	s.entries = sketch.AppendKeyEntries(s.entries, st.keys, r.ref.n+uint32(idx), r.sketch.KeyBits())
	return nil
}

// missingSig is an input document the stored signatures have no record
// for (under SkipBad).
type missingSig struct {
	index int64
	file  string
	line  int64
	id    string
}

// finishSign checks, after the last input, that the stored signatures
// have no record left.
func (r *run) finishSign() error {
	st := r.stored
	if st == nil {
		return nil
	}
	n := st.r.Count()
	if st.held {
		n--
	} else if !st.eof {
		err := st.r.Next(&st.rec)
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return fmt.Errorf("dedup: --signatures: %w", err)
		}
	} else {
		return nil
	}
	return fmt.Errorf("dedup: %w: --signatures %s holds more records than the inputs' %d documents: record %d has id %q",
		jobspec.ErrStoredSignatures, st.path, n, n, st.rec.ID)
}

// checkMissing checks, once the check of repeated ids has made them bad,
// that every input document the stored signatures had no record for is a
// later occurrence of a repeated id (under SkipBad, the only documents
// neardup sign leaves out besides bad ones).
func (r *run) checkMissing() error {
	if r.stored == nil {
		return nil
	}
	dropped := r.droppedDocs
	for _, m := range r.stored.missing {
		for len(dropped) > 0 && dropped[0] < m.index {
			dropped = dropped[1:]
		}
		if len(dropped) == 0 || dropped[0] != m.index {
			return fmt.Errorf("dedup: %w: --signatures %s has no record for %s:%d (id %q), which is not a repeated id",
				jobspec.ErrStoredSignatures, r.stored.path, m.file, m.line, m.id)
		}
	}
	return nil
}

// openSignaturesOut starts the signature file Options.SignaturesOut, an
// output committed with the others. Under SkipBad the records go first to a
// staged file in the run's temporary directory, copied by
// finishSignaturesOut without the documents the check of repeated ids made
// bad, as neardup sign leaves them out.
func (r *run) openSignaturesOut() error {
	h := r.job.Sketch.SignatureHeader()
	var w *sigfile.Writer
	var err error
	if r.opts.Corpus.SkipBad {
		r.sigStage = filepath.Join(r.tmp, "signatures.ndsf")
		w, err = sigfile.Create(r.sigStage, h)
	} else {
		w, err = r.createSignaturesOut(h)
	}
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

// createSignaturesOut starts Options.SignaturesOut among the run's outputs.
func (r *run) createSignaturesOut(h sigfile.Header) (*sigfile.Writer, error) {
	f, err := r.out.create(r.opts.SignaturesOut)
	if err != nil {
		return nil, err
	}
	return sigfile.NewWriter(f, h)
}

// finishSignaturesOut, once the check of repeated ids is done, copies the
// staged signature file (under SkipBad) to Options.SignaturesOut without
// the records of r.droppedDocs. The records are in input order, one per
// document that was not bad when signed.
func (r *run) finishSignaturesOut() error {
	if r.sigStage == "" {
		return nil
	}
	if err := r.sigOut.Close(); err != nil {
		return fmt.Errorf("dedup: --signatures-out: %w", err)
	}
	sr, err := sigfile.Open(r.sigStage, nil)
	if err != nil {
		return fmt.Errorf("dedup: --signatures-out: %w", err)
	}
	defer sr.Close()
	w, err := r.createSignaturesOut(sr.Header())
	if err != nil {
		return fmt.Errorf("dedup: --signatures-out: %w", err)
	}
	r.sigOut, r.sigStage = w, ""
	var rec sigfile.Record
	dropped := r.droppedDocs
	for d, st := range r.docs.status {
		drop := len(dropped) > 0 && dropped[0] == int64(d)
		if drop {
			dropped = dropped[1:]
		} else if st == docBad {
			continue // bad when signed: no record
		}
		if err := sr.Next(&rec); err != nil {
			return fmt.Errorf("dedup: --signatures-out: the staged file: %w", err)
		}
		if drop {
			continue
		}
		if err := w.Add(rec.ID, rec.Sig); err != nil {
			return fmt.Errorf("dedup: --signatures-out: %w", err)
		}
	}
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
