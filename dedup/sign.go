package dedup

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"sync/atomic"

	"github.com/neardup/neardup/cluster"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/corpuspipe"
	"github.com/neardup/neardup/internal/drift"
	"github.com/neardup/neardup/internal/dupid"
	"github.com/neardup/neardup/internal/extsort"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/minhash"
)

// Document states.
const (
	docOK    uint8 = iota // signed and banded
	docEmpty              // no features: never a near duplicate, always kept
	docBad                // skipped under SkipBad: not written
	docCopy               // an exact copy of an earlier document (exact.go): not banded
)

// signed is what a worker makes of one batch of records, in record order.
type signed struct {
	// docs holds each record's fixed-size fields in one struct (docRes):
	// a worker writes a document's bookkeeping into one place, where a
	// slice for each field made a dozen streams of stores into memory no
	// longer in the caches (results of batches reused long after), the
	// stores that most of signer.document's samples waited on.
	docs []docRes
	// files and srcs are the batch's distinct input files (Record.File)
	// and record sources (Record.Source and what reading a record back
	// needs), in order of first use: each document names them by
	// position, so that its own fields hold no strings (no pointers for
	// the garbage collector's write barriers, a few bytes where four
	// strings took 64).
	files   []string
	srcs    []recordSrc
	ids     []byte
	texts   []byte
	sigs    []uint64 // Words() per OK document (none when signatures are stored)
	entries []uint64
	hashes  []uint64 // per OK or copy document under the exact pass: its text hash, 2 words
	srcNums []uint32 // the collector's: the text store's number of each of srcs (textStore.source)
}

// docRes is one document of a batch's result (signed.docs).
type docRes struct {
	index  int64
	line   int64 // Record.Line, for the check of repeated ids and the errors of stored signatures
	length int64
	keep   float64
	idHash uint64 // dupid.Hash of its id, for the check of repeated ids
	// off and n are where its record is in its source (or, text, where
	// its text is in the record's bytes: see setTextLoc), when src > 0:
	// its text is kept by location (not in texts).
	off int64
	n   int
	// the signing metrics of its signature (zero when not signed). The
	// collector counts those of the documents it keeps as signed (see
	// signCorpus), so that the counts do not depend on which copies a
	// worker happened to sign before the exact pass knew them.
	metrics minhash.Metrics
	// Its id, text and band-key entries end at these offsets of ids, texts
	// and entries (each starts where the document before it ends).
	idEnd, textEnd, entEnd int
	file                   uint32 // its input file: signed.files[file]
	src                    uint32 // its record's source: signed.srcs[src-1]; 0: none
	status                 uint8
	hasKeep                bool
	text                   bool // off and n are those of the text within the record (textRaw)
	// Under the exact pass: what the worker found of the document's hash
	// (known: knownTable, first is the document the pass's table holds
	// for it; knownBatch, first is the position in the batch of an earlier
	// document with it; knownAbsent, the table did not hold it and first
	// is the empty slot of array gen where the worker's probe ended), so
	// that the collector need not probe the table again where the answer
	// cannot differ (see resolve); then what the collector
	// decided (res: resTable, the table holds the hash with document
	// first, the document itself or its first; resLate, the document went
	// to the late detector), for the batch's later documents of that hash.
	known, res uint8
	first      uint32
	gen        uint32 // under knownAbsent: the table's array (hashTable.lookup)
}

// docRes.known and docRes.res.
const (
	knownNone   uint8 = iota // the worker found no earlier document of the hash
	knownTable               // the table holds the hash (docRes.first: its document)
	knownBatch               // an earlier document of the batch has it (docRes.first: its position)
	knownAbsent              // the table did not hold it, its probe ending at empty slot docRes.first of array docRes.gen
)
const (
	resNone  uint8 = iota // not resolved (no hash, or a document not banded)
	resTable              // the table holds the hash (docRes.first: its document)
	resLate               // the document went to the late detector
)

// recordSrc is a record's source, as textStore keeps it (sourceFile).
type recordSrc struct {
	src    string // Record.Source
	file   string // Record.File, for errors
	name   string // Record.Name (FormatDir's document id)
	format corpus.Format
}

// loc returns document d's location, for the text store (src > 0).
func (s *signed) loc(d *docRes) recordLoc {
	rs := &s.srcs[d.src-1]
	return recordLoc{src: rs.src, file: rs.file, name: rs.name, format: rs.format, off: d.off, n: d.n, text: d.text}
}

// fileOf returns the index in s.files of name, added if it is not the
// last one there (a batch's records are mostly of one file).
func (s *signed) fileOf(name string) uint32 {
	if n := len(s.files); n > 0 && s.files[n-1] == name {
		return uint32(n - 1)
	}
	s.files = append(s.files, name)
	return uint32(len(s.files) - 1)
}

// srcOf returns rec's source's number (one more than its index in
// s.srcs), added if it is not the last one there; 0 if rec has none.
func (s *signed) srcOf(rec *corpus.Record) uint32 {
	if rec.Source == "" {
		return 0
	}
	if n := len(s.srcs); n > 0 {
		if l := &s.srcs[n-1]; l.src == rec.Source && l.file == rec.File && l.name == rec.Name && l.format == rec.Format {
			return uint32(n)
		}
	}
	s.srcs = append(s.srcs, recordSrc{src: rec.Source, file: rec.File, name: rec.Name, format: rec.Format})
	return uint32(len(s.srcs))
}

// signer is one worker's state. Documents are numbered by their input
// position in band-key entries (sketch.PackEntry), after the reference
// documents (base of them), so a run takes up to 2^sketch.EntryDocBits
// documents.
type signer struct {
	sk      sketch.Sketcher
	band    bool // make bucket keys (else they wait for the corpus size: bandFingerprints)
	keys    []uint64
	keyBits int    // the sketch's bucket-key width (sketch.AppendKeyEntries)
	base    uint32 // documents numbered before these records'
	keepTx  bool   // keep texts (exact verification, stored signatures)
	locate  bool   // keep, of an input's texts, the records' locations where they have one (see textStore)
	stored  bool   // signatures are read, not made (Options.Signatures): parse only
	maxText int    // capacity of texts kept across batches
	last    int64  // the index of the batch's last record (begin)

	// The exact-duplicate pass (exact.go), when th is not nil.
	th    sketch.TextHasher
	exact *exactPass
	batch *hashTable // the hashes of this batch's documents, the first of each
	// signAll: a copy the table already knows is signed all the same
	// (Options.SignaturesOut writes every document's signature).
	signAll bool
	// kss are sks as KeySigners when the signatures serve only for band
	// keys (signCorpus says when), else nil.
	kss [2]sketch.KeySigner
	// Under the pass a document is decided and signed one call later
	// (document): pend[ahead] is the one waiting, if any. Two sketchers take
	// turns (sks, ths; par is the next one's), so that the one that hashed
	// a document, whose shingler keeps the text's normalisation for the
	// Sign that follows (sketch.TextHasher), still has it when the
	// document is signed: each hashes a copy of its document's text
	// (texts) and then signs it. metrics are each one's counts after its
	// last signature.
	sks     [2]sketch.Sketcher
	ths     [2]sketch.TextHasher
	metrics [2]minhash.Metrics
	texts   [2][]byte
	par     int
	// pend holds each sketcher's document (pending), written in place
	// (see document); pend[ahead] is the one waiting, if waiting.
	pend    [2]pending
	ahead   int
	waiting bool
}

// pending is a document hashed and waiting for its decision and signature
// (signer.document).
type pending struct {
	j      int   // its position in the batch's result
	index  int64 // the record's
	text   []byte
	hi, lo uint64
	hashed bool // its text has a hash (not empty)
	whole  bool // its text cannot be read back by location: keep it (see textStore)
	par    int  // the sketcher that hashed it
}

// begin empties out, which holds an earlier batch's documents, for b.
func (w *signer) begin(out *signed, b *corpus.Batch) {
	if cap(out.texts) > w.maxText {
		// A huge document grew the buffer: let it go, so that each batch in
		// flight returns to about a batch's worth of text.
		out.texts = nil
	}
	clear(out.files) // the file names of earlier batches
	clear(out.srcs)
	out.docs, out.files, out.srcs, out.ids = out.docs[:0], out.files[:0], out.srcs[:0], out.ids[:0]
	out.texts, out.sigs, out.entries, out.hashes = out.texts[:0], out.sigs[:0], out.entries[:0], out.hashes[:0]
	if w.batch != nil {
		w.batch.reset()
	}
	w.waiting = false
	w.pend = [2]pending{} // the texts of earlier batches
	w.last = -1
	n := len(b.Records)
	if n > 0 {
		w.last = b.Records[n-1].Index
	}
	// Each record has one element: grown here once a batch, not by the
	// appends of its documents.
	out.docs = slices.Grow(out.docs, n)
	for i := range w.texts {
		if cap(w.texts[i]) > w.maxText {
			w.texts[i] = nil
		}
	}
	if w.keepTx && cap(out.texts) < b.Bytes() && (w.stored || !w.locate || !located(b)) {
		// Texts are no longer than their raw records: one allocation of the
		// right size rather than append's doubling, which would leave every
		// batch in flight holding up to twice its text.
		out.texts = make([]byte, 0, b.Bytes())
	}
}

// located reports whether every record of b is stored as is in a file
// (corpus.Record.Source), so that exact verification can read it back.
func located(b *corpus.Batch) bool {
	for i := range b.Records {
		if b.Records[i].Source == "" {
			return false
		}
	}
	return true
}

// document signs and bands one document. Under the exact pass it hashes
// the document's text, starts fetching the text's slot of the pass's table
// (exactPass.fetch) and then decides on and signs the document before it
// (flush), so that the fetch, a cache miss most of the time (the table is
// megabytes, the text most often new), overlaps that work instead of
// stalling the lookup; the batch's last document is decided at once. The
// decisions are those of a lookup made straight away, a document later: the
// collector decides which documents are copies whatever the workers do.
func (w *signer) document(out *signed, rec *corpus.Record, doc *corpus.Document) error {
	j := len(out.docs)
	out.ids = append(out.ids, doc.ID...)
	// The document's fields are stored one by one into its element, not
	// as a literal appended: the compiler builds a literal on the stack
	// with 8-byte stores and copies it with 16-byte loads, which cannot
	// take their bytes from the stores still in flight and wait for every
	// store before them to reach the cache (those of earlier documents'
	// results into memory no longer there): signer.document's most
	// sampled instructions. The same goes for pending and the metrics
	// (finish).
	out.docs = growOne(out.docs)
	d := &out.docs[j]
	*d = docRes{}
	d.index, d.line, d.length, d.keep = rec.Index, rec.Line, int64(len(doc.Text)), doc.Keep
	d.idHash, d.idEnd, d.file, d.hasKeep = dupid.Hash(doc.ID), len(out.ids), out.fileOf(rec.File), doc.HasKeep
	if w.keepTx && w.locate {
		if d.src = out.srcOf(rec); d.src != 0 {
			d.off, d.n, d.text = textLocIn(rec, doc)
		}
	}
	whole := d.src == 0
	p := &w.pend[w.par]
	*p = pending{}
	p.j, p.index, p.whole, p.par, p.text = j, rec.Index, whole, w.par, doc.Text
	if w.th == nil {
		w.finish(out, p)
		return nil
	}
	if !inRecord(rec, doc.Text) {
		// In the parser's buffer (escapes decoded), which the next record
		// overwrites: the sketcher's own copy. A text that is bytes of the
		// record stays as it is until the batch is done, and the document
		// waits at most until the batch's last one.
		w.texts[p.par] = append(w.texts[p.par][:0], doc.Text...)
		p.text = w.texts[p.par]
	}
	// p.text is held as it is until this sketcher's Sign of it (its own
	// copy, or the batch's record): the memo needs no check of its bytes.
	hi, lo, empty := w.ths[p.par].TextHashHeld(p.text)
	if !empty {
		p.hi, p.lo, p.hashed = hi, lo, true
		out.hashes = append(out.hashes, hi, lo)
		w.exact.fetch([2]uint64{hi, lo})
	}
	w.flush(out)
	w.par ^= 1
	if rec.Index == w.last {
		w.finish(out, p)
		return nil
	}
	w.ahead, w.waiting = p.par, true
	return nil
}

// growOne returns docs one element longer, the new one not cleared.
func growOne(docs []docRes) []docRes {
	if len(docs) == cap(docs) {
		docs = slices.Grow(docs, 1)
	}
	return docs[:len(docs)+1]
}

// flush decides on and signs the document waiting, if any.
func (w *signer) flush(out *signed) {
	if w.waiting {
		// w.pend[w.ahead] is left as it is: the next document of that
		// sketcher overwrites it.
		w.waiting = false
		w.finish(out, &w.pend[w.ahead])
	}
}

// finish decides whether document p is a copy the pass already knows and,
// if not, signs and bands it.
func (w *signer) finish(out *signed, p *pending) {
	d := &out.docs[p.j]
	if p.hashed {
		// One probe of the batch's table finds an earlier document of the
		// batch or adds this one. One the pass's table knows is added all
		// the same: a later document of the batch with its hash then
		// names it (knownBatch), and the collector, which decided it
		// first, finds the table's document in its decision (resolve).
		hi, lo := p.hi, p.lo
		if j, ok := w.batch.getOrPut(hi, lo, uint32(p.j), true); ok {
			d.known, d.first = knownBatch, j
		} else if f, ok, slot, gen := w.exact.lookup([2]uint64{hi, lo}); ok {
			d.known, d.first = knownTable, f
		} else if slot <= math.MaxUint32 {
			// Where the collector's insert goes if the table takes no key
			// there before (resolveAbsent): its probe is saved.
			d.known, d.first, d.gen = knownAbsent, uint32(slot), gen
		}
		if (d.known == knownTable || d.known == knownBatch) && !w.signAll {
			// A copy of an earlier document: not signed (nor, with
			// stored signatures, banded).
			d.status, d.textEnd, d.entEnd = docCopy, len(out.texts), len(out.entries)
			return
		}
	}
	if w.stored {
		// The collector takes the stored signature, in input order, and
		// makes the band-key entries (takeStored). The features are not
		// counted (report.json's drift has none): that takes hashing.
		out.texts = append(out.texts, p.text...)
		d.status, d.textEnd, d.entEnd = docOK, len(out.texts), len(out.entries)
		return
	}
	sk := w.sks[p.par]
	n := len(out.sigs)
	var sigs []uint64
	var empty bool
	if ks := w.kss[p.par]; ks != nil {
		sigs, empty = ks.SignForKeys(out.sigs, p.text)
	} else {
		sigs, empty = sk.Sign(out.sigs, p.text)
	}
	// Only Sign moves the counts: the difference from the last reading
	// is this signature's.
	m := sk.Metrics()
	d.metrics = m.Sub(w.metrics[p.par])
	w.metrics[p.par] = m
	if empty {
		out.sigs = sigs[:n]
		d.status, d.textEnd, d.entEnd = docEmpty, len(out.texts), len(out.entries)
		return
	}
	out.sigs = sigs
	if w.keepTx && p.whole {
		// Kept whole: the record cannot be read back (see textStore).
		out.texts = append(out.texts, p.text...)
	}
	if w.band {
		w.keys = sk.AppendKeys(w.keys[:0], sigs[n:])
		out.entries = sketch.AppendKeyEntries(out.entries, w.keys, w.base+uint32(p.index), w.keyBits)
	}
	d.status, d.textEnd, d.entEnd = docOK, len(out.texts), len(out.entries)
}

// skip records a record that did not parse (under SkipBad) as a bad document.
func (w *signer) skip(out *signed, rec *corpus.Record, _ error) {
	w.flush(out)
	out.docs = append(out.docs, docRes{
		index: rec.Index, line: rec.Line, file: out.fileOf(rec.File), status: docBad,
		idEnd: len(out.ids), textEnd: len(out.texts), entEnd: len(out.entries),
	})
}

// sign reads every input, signs every document on all workers (or takes
// its stored signature) and hands the results, in input order, to
// r.collect.
//
// The inputs' ids go to the check of repeated ids (checkIDs), within a
// sixteenth of the budget (see Run). Reference documents are not part of
// it: an input may have a reference document's id (the same page crawled
// again is the usual near duplicate of a reference), and reference ids
// repeated across or within reference sources are the reference's own
// business; only the inputs' ids name the outputs' records.
func (r *run) sign(ctx context.Context) error {
	var err error
	// The ids are in the document table: the check keeps only their
	// hashes and positions.
	r.ids, err = dupid.New(&dupid.Options{Memory: idCheckMemory(r.opts.Memory), TempDir: r.tmp,
		IDAt: func(i int64) []byte { return r.docs.id(uint32(len(r.docs.pre)) + uint32(i)) }})
	if err != nil {
		return err
	}
	defer r.ids.Close()
	r.feed = newEntryFeed(r.entries.Add)
	var dr drift.Distributions
	r.parseStats, r.readStats, r.hashMetrics, dr, err = r.signCorpus(ctx, "sign", r.inputs, r.ref.n, r.stored != nil, true, r.collect)
	ferr := r.feed.stop() // every entry is in the sorter (or it failed)
	r.feed = nil
	if err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	if err := r.rep.Drift.Merge(dr); err != nil {
		return err
	}
	// Records the reader skipped as bad after the last one it handed out
	// leave no gap for collect to fill: they are bad documents too.
	for int64(r.docs.len()) < r.readStats.Records {
		if err := r.addDoc(docBad, nil, 0, 0, false, nil, nil, nil); err != nil {
			return err
		}
	}
	if err := r.finishSign(); err != nil {
		return err
	}
	// The check of repeated ids reads only the ids, the exact pass's
	// finish only its own table: they run side by side, and the repeats
	// are made bad once both are done (a copy whose id repeats is bad).
	idErr := make(chan error, 1)
	go func() { idErr <- r.checkIDs() }()
	if r.exact != nil {
		// Copies are numbered as in band-key entries, after the
		// reference documents.
		err = r.exact.finish(func(c, _ uint32) { r.docs.status[c-r.ref.n] = docCopy })
	}
	if ierr := <-idErr; err == nil {
		err = ierr
	}
	if err != nil {
		return err
	}
	for _, d := range r.droppedDocs {
		r.docs.status[d] = docBad
	}
	if r.exact != nil && r.dropped > 0 {
		if err := r.exact.dropBad(r.docs.status, r.ref.n, r.docs.id); err != nil {
			return err
		}
	}
	if err := r.checkMissing(); err != nil {
		return err
	}
	if err := r.finishSignaturesOut(); err != nil {
		return err
	}
	if r.bad != nil {
		if err := r.bad.Flush(); err != nil {
			return err
		}
	}
	r.warnKeep()
	r.warnMemory()
	if !r.job.Sketch.Resolved() {
		return r.bandFingerprints()
	}
	return nil
}

// signCorpus reads the corpus inputs, signs every document on all workers
// (only parses it, if stored) and hands the results, in input order, to
// collect; the records' documents are numbered from base on. Only the
// inputs (input) go through the exact-duplicate pass: a reference document
// is never a copy nor the first of copies, so an input that is an exact
// copy of one is signed and paired with it as a run without the pass pairs
// it. It returns the parsers' and the reader's statistics, the signing
// metrics and the drift distributions of the documents signed.
func (r *run) signCorpus(ctx context.Context, stage string, inputs []string, base uint32, stored, input bool, collect func(*signed) error) (parse, read corpus.Stats, hash minhash.Metrics, dr drift.Distributions, err error) {
	dr = drift.NewDistributions()
	reader, err := corpus.NewReader(inputs, &r.opts.Corpus)
	if err != nil {
		return parse, read, hash, dr, err
	}
	defer reader.Close()
	r.bar.Stage(stage, reader.Progress().Total, func() int64 { return reader.Progress().Read })
	defer r.bar.Finish()

	parse, err = corpuspipe.Run(ctx, reader, &r.opts.Corpus, r.opts.Workers,
		func() (corpuspipe.Worker[signed], error) {
			w, err := r.newSigner()
			if err != nil {
				return corpuspipe.Worker[signed]{}, err
			}
			w.base, w.stored = base, stored
			w.keepTx = w.keepTx || stored
			if !input {
				w.th = nil
			}
			w.locate = input && r.texts != nil
			w.signAll = r.sigOut != nil
			// The input's signatures make band keys and nothing else when
			// no signature file is written and pairs are verified exactly
			// (verify signs the documents in pairs again for their
			// estimates; reference documents' signatures are stored):
			// only the slots the bands read are densified then.
			if input && !stored && r.sigOut == nil && r.job.Verify == VerifyExact && !r.sketch.GroupsBySignature() {
				for i, sk := range w.sks {
					w.kss[i], _ = sk.(sketch.KeySigner)
				}
			}
			return corpuspipe.Worker[signed]{Begin: w.begin, Document: w.document, Skip: w.skip}, nil
		},
		func(b *corpuspipe.Batch[signed]) error {
			if err := collect(&b.Result); err != nil {
				return err
			}
			// The documents signed, as the collector decided in input
			// order: the first of each text (and texts without features),
			// never a copy, whether or not a worker signed it before the
			// exact pass knew it was one. So the counts are the same
			// whatever the workers and their timing.
			res := &b.Result
			for j := range res.docs {
				d := &res.docs[j]
				if d.status != docOK && d.status != docEmpty {
					continue
				}
				if stored {
					// Not hashed: the features are not counted.
					dr.TextBytes.Add(float64(d.length))
					continue
				}
				hash = hash.Add(d.metrics)
				dr.AddDocument(d.length, d.metrics.Features)
			}
			if r.bad != nil {
				if err := r.bad.Add(b.Bad); err != nil {
					return err
				}
			}
			r.bar.Add(int64(len(b.Result.docs)), b.RawBytes)
			return nil
		})
	if err != nil {
		return parse, read, hash, dr, err
	}
	return parse, reader.Stats(), hash, dr, nil
}

// idCheckMemory is the check of repeated ids' share of the budget (a
// variable for tests that make it spill).
var idCheckMemory = func(memory int64) int64 { return memory / 16 }

// checkIDs finds the ids that repeat an earlier document's. Without SkipBad
// the first such document fails the run, with an error naming its file and
// line and those of the first occurrence; under SkipBad each is listed in
// r.droppedDocs (ascending) and the bad-record list, and the caller makes
// it a bad document, which candidates leaves out and the outputs do not
// hold. It reads the document table's ids, and writes nothing else the
// exact pass's finish, which runs beside it, reads or writes.
func (r *run) checkIDs() error {
	if !r.opts.Corpus.SkipBad {
		dup, err := r.ids.First()
		if err != nil {
			return err
		}
		if dup != nil {
			return dup.RecordError("")
		}
		return nil
	}
	return r.ids.All(func(dup *dupid.Duplicate) error {
		r.dropped++
		r.droppedDocs = append(r.droppedDocs, dup.Second.Index)
		if r.bad != nil {
			return r.bad.Write(dup.RecordError(""))
		}
		return nil
	})
}

// warnKeep warns, in the report, of a keep field that no good record holds:
// most likely a misspelt name, under which every cluster keeps its first
// document.
func (r *run) warnKeep() {
	field := r.opts.Corpus.KeepField
	if r.opts.Keep.Kind != cluster.KeepField || field == "" || r.parseStats.Keep > 0 {
		return
	}
	for _, st := range r.docs.status {
		if st != docBad {
			r.rep.Warnings = append(r.rep.Warnings, fmt.Sprintf(
				"keep field %q is in no record: every cluster keeps its first document", field))
			return
		}
	}
}

// warnMemory warns, in the report, when the per-document bookkeeping the
// budget does not bound (see Run's doc: statuses, ids and their ends, text
// locations, what verification and clustering keep a document) is past a
// quarter of the budget: the budget's shares leave about three eighths of
// it free while signing, and runs past a quarter peaked over the budget
// plus 10 % (5M documents under 256 MiB: 1.2 times; BENCHMARKS.md,
// "Per-document memory"). It names the budget of which the bookkeeping is
// a quarter. Checked once the documents are known, after the sign stage;
// the documents in candidate pairs (8 bytes each more) are not known yet
// and not counted.
func (r *run) warnMemory() {
	n := int64(r.docs.len())
	need := n*bookkeepingBytes(r.opts.Keep.Kind, r.job.Verify == VerifyExact) + r.docs.idEnd.Last()
	budget := r.opts.Memory
	if n == 0 || need*4 <= budget {
		return
	}
	const mib = 1 << 20
	r.rep.Warnings = append(r.rep.Warnings, fmt.Sprintf(
		"%d documents keep about %d MiB of per-document bookkeeping outside the budget of %d MiB: peak memory may exceed the budget by more than 10 %%; --memory %dMiB or more keeps it within",
		n, (need+mib-1)/mib, budget/mib, (4*need+mib-1)/mib))
}

// bookkeepingBytes is what a run keeps a document outside the budget, its
// id's bytes aside (Run's doc): what it keeps while signing
// (signingBytes), then verification's 4 and clustering's 8 (16 under
// KeepLongest).
func bookkeepingBytes(policy cluster.PolicyKind, exact bool) int64 {
	b := signingBytes(policy, exact) + 4 + 8
	if policy == cluster.KeepLongest {
		b += 8
	}
	return b
}

// signingBytes is what a run keeps a document outside the budget while
// signing, its id's bytes aside: its status and id end (docTableBytes), 4
// for where its text is under exact verification, and what the keep
// policy adds to the document table (a length under KeepLongest, a value
// under KeepField).
func signingBytes(policy cluster.PolicyKind, exact bool) int64 {
	b := int64(docTableBytes)
	if exact {
		b += 4
	}
	switch policy {
	case cluster.KeepLongest:
		b += docTableLengthBytes
	case cluster.KeepField:
		b += docTableKeepBytes
	}
	return b
}

func (r *run) newSigner() (*signer, error) {
	sk, err := r.sketch.NewSketcher()
	if err != nil {
		return nil, err
	}
	batchBytes := r.opts.Corpus.BatchBytes
	if batchBytes <= 0 {
		batchBytes = corpus.DefaultBatchBytes
	}
	w := &signer{sk: sk, keyBits: r.sketch.KeyBits(), band: r.job.Sketch.Resolved(), keepTx: r.job.Verify == VerifyExact, maxText: 4 * batchBytes}
	w.sks[0], w.sks[1] = sk, sk
	if r.exact != nil {
		if w.ths[0], _ = sk.(sketch.TextHasher); w.ths[0] != nil {
			// The second sketcher of the turns (see signer).
			if w.sks[1], err = r.sketch.NewSketcher(); err != nil {
				return nil, err
			}
			w.ths[1] = w.sks[1].(sketch.TextHasher)
			w.th = w.ths[0]
		}
		w.exact, w.batch = r.exact, newHashTable(1<<10)
	}
	return w, nil
}

// collect appends one batch's documents to the run's tables and stores.
func (r *run) collect(s *signed) error {
	if r.stored != nil {
		if err := r.takeStored(s); err != nil {
			return err
		}
	}
	if !r.docs.sized && len(s.docs) > 1 {
		// Sized once, from the first batch, for the documents expected:
		// the exact pass's table and the document table then do not grow
		// by copying on their way.
		n := expectedDocs(r.inputs, s)
		n += n / 8 // the estimate's error
		if r.exact != nil {
			r.exact.presize(n)
		}
		// The status array's reserve, a byte a document, is held
		// against the garbage collector's limit before it is used: at
		// most a 64th of the budget, should the estimate be far off.
		r.docs.reserve(int(min(n, r.opts.Memory/64, 1<<sketch.EntryDocBits))) // 0: unknown, nothing reserved
		if p, ok := r.entries.(*extsort.Partitioned); ok && allLocated(s) {
			p.Grow(r.entryHold(n, s))
		}
	}
	words := r.sketch.Words()
	if r.texts != nil {
		// The text store's number of each of the batch's sources, looked
		// up once a batch.
		s.srcNums = s.srcNums[:0]
		for k := range s.srcs {
			i, err := r.texts.source(&s.srcs[k])
			if err != nil {
				return err
			}
			s.srcNums = append(s.srcNums, i)
		}
	}
	id0, tx0, sg, hs, en, kept := 0, 0, 0, 0, 0, 0
	for j := range s.docs {
		d := &s.docs[j]
		idx := d.index
		// Records the reader skipped (too large, under SkipBad) leave gaps.
		for int64(r.docs.len()) < idx {
			if err := r.addDoc(docBad, nil, 0, 0, false, nil, nil, nil); err != nil {
				return err
			}
		}
		if int64(r.docs.len()) != idx {
			return fmt.Errorf("dedup: internal error: record %d arrived at position %d", idx, r.docs.len())
		}
		st := d.status
		id := s.ids[id0:d.idEnd]
		if st != docBad {
			pos := dupid.Position{File: s.files[d.file], Line: d.line, Index: idx}
			if err := r.ids.AddHash(d.idHash, id, pos); err != nil {
				return err
			}
		}
		var sig []uint64
		if st == docOK {
			sig = s.sigs[sg : sg+words]
			sg += words
		}
		text := s.texts[tx0:d.textEnd]
		var loc *textLoc // where the text or record is, when kept by location
		var at textLoc
		if st != docOK {
			text = nil // kept only for the stored signatures' check
		} else if d.src != 0 && r.texts != nil {
			at = textLoc{file: s.srcNums[d.src-1], off: d.off, n: d.n, raw: d.text}
			loc = &at
		}
		// The signature file gets every signed document's signature, a
		// copy's included (signed: signer.signAll), before the exact pass
		// drops it.
		if err := r.writeSignature(st, id, sig); err != nil {
			return err
		}
		entries := s.entries[en:d.entEnd]
		if (st == docOK || st == docCopy) && len(s.hashes) > 0 {
			// The exact pass decides, in input order, whether the document
			// is the first of its text or a copy (whose signature and band
			// keys, if a worker made them, are dropped). Documents are
			// numbered as in band-key entries, after the reference ones.
			if hs%(2*prefetchDocs) == 0 {
				// The table's slots of the next documents, at once.
				r.exact.prefetch(s.hashes[hs:min(hs+2*prefetchDocs, len(s.hashes))])
			}
			first, err := r.resolve(s, d, [2]uint64{s.hashes[hs], s.hashes[hs+1]}, r.ref.n+uint32(idx))
			if err != nil {
				return err
			}
			hs += 2
			if first >= 0 {
				st, sig, text, loc, entries = docCopy, nil, nil, nil, nil
				d.status = st // not counted as signed (signCorpus)
			}
		}
		if err := r.addDoc(st, id, d.length, d.keep, d.hasKeep, text, loc, sig); err != nil {
			return err
		}
		// The entries kept move down over those dropped (none, mostly).
		if kept != en {
			kept += copy(s.entries[kept:], entries)
		} else {
			kept += len(entries)
		}
		id0, tx0, en = d.idEnd, d.textEnd, d.entEnd
	}
	s.entries = s.entries[:kept]
	if r.feed != nil {
		return r.feed.add(s)
	}
	return r.entries.Add(s.entries...)
}

// resolve is the exact pass's decision on document d of batch s (number
// doc, hash k), in input order (exactPass.resolve), without the table's
// probe where the worker's finding settles it: a hash the worker found in
// the table is there still, with the same document; one an earlier
// document of the batch has was decided for that document a moment ago
// (its first, itself, or the late detector, which d then goes to as well:
// the table was full then and has taken no key since). One the worker found
// absent goes straight into the slot where its probe ended, if that slot is
// still empty in the same array (exactPass.resolveAbsent). A document of the
// batch that was not resolved (its signature empty) settles nothing.
func (r *run) resolve(s *signed, d *docRes, k [2]uint64, doc uint32) (int64, error) {
	first, late, done := int64(-1), false, false
	var err error
	switch d.known {
	case knownTable:
		first, done = r.exact.copyOf(doc, d.first), true
	case knownBatch:
		switch b := &s.docs[d.first]; b.res {
		case resTable:
			first, done = r.exact.copyOf(doc, b.first), true
		case resLate:
			late, done, err = true, true, r.exact.addLate(k, doc)
		}
	}
	if !done {
		if d.known == knownAbsent {
			first, late, err = r.exact.resolveAbsent(k, doc, uint64(d.first), d.gen)
		} else {
			first, late, err = r.exact.resolveLate(k, doc)
		}
	}
	switch {
	case err != nil:
		return -1, err
	case first >= 0:
		d.res, d.first = resTable, uint32(first)
	case late:
		d.res = resLate
	default:
		d.res, d.first = resTable, doc
	}
	return first, nil
}

// entryHold returns the bytes of band-key entries the run's entry store
// may hold while signing (extsort.Partitioned.Grow), for n documents
// expected (expectedDocs, its error included; 0 or less: unknown), batch s
// being the first: what the budget leaves once the shares that may be live
// while signing or finding candidates are counted whole (the exact pass's
// eighth; the repeated-id check's sixteenth, or the candidate pairs'; the
// entries' own reading share; the signatures' sixteenth and the reference
// ids' 64th where they are kept), an eighth of the budget and 32 MiB more
// for the batches in flight and the garbage collector, the texts' records
// (within their share) and the per-document bookkeeping the budget does
// not bound (signingBytes and the ids), as the first batch's documents
// took them, for n documents. It is 0 when nothing is left.
//
// At 5M short documents under 1 GiB the entries' share held 192 MiB of
// their 610 MB and spilled the rest, written and read back, while the run
// peaked at 0.57 GiB; it holds about 450 MiB now, spills 131 MB and peaks
// at 0.81 GiB. At 20M under 2 GiB it holds about 630 MiB instead of 384
// and peaks at 1.96-1.98 GiB (1.76-1.80 before), within the budget plus
// 10 % (BENCHMARKS.md). Deterministic: the same input and budget give the
// same hold.
func (r *run) entryHold(n int64, s *signed) int64 {
	docs := int64(len(s.docs))
	if n <= 0 || docs == 0 {
		return 0
	}
	m := r.opts.Memory
	left := m - m/16 - max(idCheckMemory(m), m/16) - m/8 - entryReserve
	if r.exact != nil {
		left -= m / 8
	}
	if r.sigs != nil {
		left -= m / 16
	}
	if len(r.opts.Against) > 0 {
		left -= m / 64
	}
	perDoc := signingBytes(r.opts.Keep.Kind, r.job.Verify == VerifyExact) + (int64(len(s.ids))+docs-1)/docs
	left -= n * perDoc
	if r.texts != nil {
		// A text kept by its location takes a record of about 9 bytes
		// (appendTextLoc), one kept whole its bytes and a tag.
		text := int64(len(s.texts)) + 10*docs
		left -= min(m/8+m/16, n*((text+docs-1)/docs))
	}
	return max(left, 0)
}

// entryReserve is what entryHold leaves, beside an eighth of the budget,
// for the batches in flight and the garbage collector whatever the budget
// (so that a small budget leaves the entries' share as it is); tests lower
// it.
var entryReserve int64 = 32 << 20

// allLocated reports whether every document of batch s was read from a
// record its input stores as it is (a file not compressed), so that
// expectedDocs estimates from the records' positions, not from a
// compressed file's size.
func allLocated(s *signed) bool {
	for j := range s.docs {
		if s.docs[j].src == 0 {
			return false
		}
	}
	return len(s.docs) > 0
}

// expectedDocs estimates the number of records in inputs from their size
// and the bytes a record of batch s (the first) takes: from where its
// records are in their file, when they are located (the bytes between the
// first and the last one's starts, over the records between them), else
// from their texts and ids (fewer bytes than the records': the estimate is
// then high). It returns 0 when it cannot tell (standard input, a
// directory, a batch of fewer than two records). A compressed input's size
// makes it low. The exact pass sizes its table by it (exactPass.presize):
// an estimate off costs a growth of the table or unused slots, never a
// different decision.
func expectedDocs(inputs []string, s *signed) int64 {
	if len(s.docs) < 2 {
		return 0
	}
	var total int64
	for _, in := range inputs {
		if in == "-" {
			return 0
		}
		fi, err := os.Stat(in)
		if err != nil || !fi.Mode().IsRegular() {
			return 0
		}
		total += fi.Size()
	}
	// Located: the first and last records of one source in the batch.
	first, last := -1, -1
	for j := range s.docs {
		if s.docs[j].src == 0 {
			continue
		}
		if first < 0 {
			first = j
		} else if s.srcs[s.docs[j].src-1].src == s.srcs[s.docs[first].src-1].src {
			last = j
		}
	}
	if last > first && first >= 0 {
		f, l := &s.docs[first], &s.docs[last]
		if l.index > f.index && l.off > f.off {
			per := float64(l.off-f.off) / float64(l.index-f.index)
			return int64(float64(total) / per)
		}
	}
	var bytes int64
	for j := range s.docs {
		bytes += s.docs[j].length + 1
	}
	bytes += int64(len(s.ids))
	return total / max(bytes/int64(len(s.docs)), 1)
}

// prefetchDocs is how many documents' slots of the exact pass's table the
// collector reads ahead at once (exactPass.prefetch): enough for their
// cache misses to overlap, few enough for what they bring in (a tag line
// and a slot line each, 32 KiB) to stay in the cache until resolve uses it.
const prefetchDocs = 256

// feedDepth is the most batches of band-key entries waiting for the
// sorter (each about a batch's documents times the bands, 16 bytes an
// entry: 1 MiB for a batch of 4,000 short documents at 16 bands).
const feedDepth = 4

// entryFeed adds the sign stage's band-key entries to the run's sorter on a
// goroutine of its own, so that the sorter's work (its appends into key
// ranges and the writes of the ranges it spills, or the sorts and runs of
// extsort.Sorter) overlaps the collector's instead of stalling the pipeline
// behind it. The sorter sorts what it is given, so
// the order of the batches does not matter to the outputs; they go in input
// order all the same. The collector hands a batch's entries over by taking
// its buffer and giving the batch an empty one back (see add).
type entryFeed struct {
	add1   func(words ...uint64) error // the sorter's Add
	work   chan []uint64
	free   chan []uint64
	done   chan struct{}
	failed atomic.Bool
	err    error // the sorter's first error, read once done is closed
	closed bool
}

func newEntryFeed(add func(words ...uint64) error) *entryFeed {
	f := &entryFeed{add1: add, work: make(chan []uint64, feedDepth), free: make(chan []uint64, feedDepth+2), done: make(chan struct{})}
	go f.run()
	return f
}

func (f *entryFeed) run() {
	defer close(f.done)
	for e := range f.work {
		if f.err == nil {
			if f.err = f.add1(e...); f.err != nil {
				f.failed.Store(true)
			}
		}
		select {
		case f.free <- e[:0]:
		default: // enough buffers wait: let this one go
		}
	}
}

// add hands s's entries over to the sorter, and s an empty buffer for its
// next batch. It returns the sorter's error, if it has failed.
func (f *entryFeed) add(s *signed) error {
	if f.failed.Load() {
		return f.stop()
	}
	if len(s.entries) == 0 {
		return nil
	}
	var buf []uint64
	select {
	case buf = <-f.free:
	default:
	}
	f.work <- s.entries
	s.entries = buf
	return nil
}

// stop waits for the sorter to take every entry handed over and returns
// its first error. It may be called more than once.
func (f *entryFeed) stop() error {
	if !f.closed {
		f.closed = true
		close(f.work)
	}
	<-f.done
	return f.err
}

// addDoc numbers the next input document; its text, under exact
// verification, is text or, when loc is not nil, the one at loc (of a
// source the text store numbered: textStore.source).
func (r *run) addDoc(status uint8, id []byte, length int64, keep float64, hasKeep bool, text []byte, loc *textLoc, sig []uint64) error {
	if uint64(r.ref.n)+uint64(r.docs.len()) >= 1<<sketch.EntryDocBits {
		return fmt.Errorf("dedup: more than %d documents, reference documents included", uint64(1)<<sketch.EntryDocBits-1)
	}
	r.docs.add(status, id, length, keep, hasKeep)
	if r.texts != nil {
		if !r.textsOn {
			r.textsOn, r.textBase = true, r.ref.n
		}
		var err error
		if loc != nil {
			err = r.texts.appendLoc(*loc)
		} else {
			err = r.texts.appendText(text)
		}
		if err != nil {
			return err
		}
	}
	if r.sketch.GroupsBySignature() {
		if sig == nil {
			r.sigMem = append(r.sigMem, make([]uint64, r.sketch.Words())...)
		} else {
			r.sigMem = append(r.sigMem, sig...)
		}
		return nil
	}
	if r.sigs == nil || r.job.Verify == VerifyExact { // exact verification recomputes them (see verify)
		return nil
	}
	_, err := r.sigs.AppendUint64s(sig)
	return err
}

// signature appends document d's signature to dst.
func (r *run) signature(dst []uint64, d uint32) ([]uint64, error) {
	if r.sketch.GroupsBySignature() {
		w := r.sketch.Words()
		return append(dst, r.sigMem[int(d)*w:(int(d)+1)*w]...), nil
	}
	return r.sigs.GetUint64s(dst, int(d))
}
