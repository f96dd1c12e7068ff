package job

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"slices"

	"github.com/klauspost/compress/s2"
	"github.com/zeebo/xxh3"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/jobspec"
)

// DocInfo is what verification and clustering need of a document in a
// candidate pair: its number, id, keep-policy attributes, signature and, for
// exact verification, its text. The signature words are packed
// little-endian, 8 bytes each (as []uint64 Beam would write each as a
// varint, up to 10 bytes for a hash).
//
// A copy (Copy) is the info of a document whose text is that of another
// document of the same task and split, SameAs, sent to the task before it:
// the signature and text are SameAs's (same text, same features), sent once
// with SameAs's info, and Sig and Text are nil. Licences, templates and
// mirrored pages make exact copies common among candidates: on the licence
// corpus of BENCHMARKS.md two thirds of the text bytes sent to tasks were
// copies of a text the task already had.
type DocInfo struct {
	Ord     uint64  // the document's ord
	ID      []byte  // its id
	Length  int64   // its text length in bytes
	Keep    float64 // its keep-field value, if HasKeep
	HasKeep bool    // whether it has a keep-field value
	Sig     []byte  // its signature words, packed; nil for a copy
	Text    []byte  // its text under VerifyExact, compressed (s2 blocks); nil otherwise and for a copy
	Copy    bool    // whether the document's text is SameAs's
	SameAs  uint64  // for a copy, the ord of the task's document with the same text
}

func packWords(dst []byte, w []uint64) []byte {
	for _, x := range w {
		dst = binary.LittleEndian.AppendUint64(dst, x)
	}
	return dst
}

func unpackWords(dst []uint64, b []byte) []uint64 {
	for i := 0; i+8 <= len(b); i += 8 {
		dst = append(dst, binary.LittleEndian.Uint64(b[i:]))
	}
	return dst
}

// Edge is a verified pair, A < B in document order, with what the outputs
// and the keep policy need of both documents.
type Edge struct {
	A, B               uint64  // the documents' ords
	IDA, IDB           []byte  // their ids
	Est, Exact         float64 // estimated and exact similarity; Exact < 0: not computed
	LenA, LenB         int64   // their text lengths in bytes
	KeepA, KeepB       float64 // their keep-field values, if HasKeepA, HasKeepB
	HasKeepA, HasKeepB bool    // whether they have keep-field values
}

// Need is a document that a verification task needs, sent to the document's
// split: its local index and the task.
type Need struct {
	Local int64  // the document's record index in its split
	Task  uint64 // the task (see taskOf)
}

// docInfoFn re-reads one split and emits the DocInfo of every document of
// the split that is in a candidate pair, once to each verification task
// that needs it. Re-signing and re-reading these few documents costs less
// than shuffling every document's signature and text. For exact
// verification it carries the text, not the feature set, which verifyFn
// recomputes: a text is about 6 bytes a word, a feature set 8 bytes a
// shingle (dedup keeps texts for the same reason). A document whose text
// (by its 128-bit hash, as neardup dedup's exact pass finds copies) an
// earlier document of the split sent to the same task goes there as a
// copy of it, without signature or text.
type docInfoFn struct {
	C Config

	st Stats
	// sent holds the first document of the split sent to each task with
	// each text.
	sent map[taskText]uint64
}

// taskText is a task and the 128-bit hash of a text sent to it.
type taskText struct {
	task   uint64
	hi, lo uint64
}

// StartBundle resets the bundle's statistics.
func (f *docInfoFn) StartBundle(_ func(uint64, DocInfo), _ func(Stats)) { f.st = Stats{} }

// ProcessElement takes a split and the documents of it that verification
// tasks need; it re-reads the split and emits each such document's DocInfo
// once to each of its tasks, as KV<task, DocInfo>, counting them.
func (f *docInfoFn) ProcessElement(ctx context.Context, split int, it func(*Need) bool, emit func(uint64, DocInfo), _ func(Stats)) error {
	var need []Need
	var n Need
	for it(&n) {
		need = append(need, n)
	}
	slices.SortFunc(need, func(x, y Need) int {
		if c := cmp.Compare(x.Local, y.Local); c != 0 {
			return c
		}
		return cmp.Compare(x.Task, y.Task)
	})
	need = slices.Compact(need)
	if f.sent == nil {
		f.sent = map[taskText]uint64{}
	}
	parser, k, err := newReading(ctx, &f.C)
	if err != nil {
		return err
	}
	exact := f.C.Job.Verify == jobspec.VerifyExact
	var doc corpus.Document
	next := 0
	_, err = eachRecord(ctx, &f.C, split, func(rec *corpus.Record) (bool, error) {
		want := need[next].Local
		if rec.Index < want {
			return true, nil
		}
		if rec.Index > want {
			return false, fmt.Errorf("%s: record %d not found on a second reading: the input changed", f.C.Splits[split], want)
		}
		if err := parser.Parse(rec, &doc); err != nil {
			return false, fmt.Errorf("%s: record %d failed to parse on a second reading: %w", f.C.Splits[split], rec.Index, err)
		}
		if !k.sign(doc.Text) {
			return false, fmt.Errorf("%s: record %d empty on a second reading", f.C.Splits[split], rec.Index)
		}
		o := ord(split, rec.Index)
		cp := DocInfo{Ord: o, ID: slices.Clone(doc.ID), Length: int64(len(doc.Text)), Keep: doc.Keep, HasKeep: doc.HasKeep, Copy: true}
		var info DocInfo // with signature and text, made once if a task needs it
		h := xxh3.Hash128(doc.Text)
		var sends int64
		for ; next < len(need) && need[next].Local == want; next++ {
			t := need[next].Task
			tt := taskText{task: t, hi: h.Hi, lo: h.Lo}
			if first, ok := f.sent[tt]; ok {
				cp.SameAs = first
				emit(t, cp)
				f.st.Shuffle.add(&cp)
			} else {
				if info.Sig == nil {
					info = cp
					info.Copy, info.Sig = false, packWords(nil, k.sig)
					if exact {
						info.Text = s2.Encode(nil, doc.Text)
					}
				}
				f.sent[tt] = o
				emit(t, info)
				f.st.Shuffle.add(&info)
			}
			sends++
		}
		f.st.Shuffle.Max = max(f.st.Shuffle.Max, sends)
		f.st.VerifiedDocs++
		return next < len(need), nil
	})
	clear(f.sent)
	if err != nil {
		return err
	}
	if next < len(need) {
		return fmt.Errorf("%s: record %d not found on a second reading: the input changed", f.C.Splits[split], need[next].Local)
	}
	return nil
}

// FinishBundle emits the bundle's statistics, if it read any document.
func (f *docInfoFn) FinishBundle(_ func(uint64, DocInfo), stats func(Stats)) {
	if f.st.VerifiedDocs > 0 {
		stats(f.st)
	}
}

// verifyFn checks the candidate pairs of one verification task with the
// job's verifier (jobspec.Verifier: the signature estimate always, the
// exact Jaccard similarity of the feature sets under VerifyExact) and emits
// those that pass as Edges. It holds the task's documents: their infos, and
// each one's signature and feature set, computed once for all its pairs.
type verifyFn struct {
	C Config

	v     *jobspec.Verifier
	docs  []taskDoc
	pairs []Pair
	text  []byte
	// byText indexes the task's documents whose feature sets are made,
	// by a hash of their compressed text: a document with the same text
	// shares the first one's feature set instead of making its own.
	byText map[uint64]int
	seed   maphash.Seed
}

// taskDoc is a document of a task, its signature and feature set unpacked
// when a pair first needs them.
type taskDoc struct {
	info      DocInfo
	sig, feat []uint64
	ready     bool
}

// Setup builds the job's verifier (of the keyed spec, its key read back,
// for a keyed job: exact verification shingles under it).
func (f *verifyFn) Setup(ctx context.Context) error {
	job, err := f.C.sketchJob(ctx)
	if err != nil {
		return err
	}
	sk, err := job.Sketch.New()
	if err != nil {
		return err
	}
	f.v, err = job.NewVerifier(sk)
	f.byText, f.seed = map[uint64]int{}, maphash.MakeSeed()
	return err
}

// ProcessElement verifies the candidate pairs of a task, given the infos of
// the task's documents, and emits those that pass as Edges.
func (f *verifyFn) ProcessElement(task uint64, infos func(*DocInfo) bool, pairs func(*Pair) bool, emit func(Edge)) error {
	f.docs, f.pairs = f.docs[:0], f.pairs[:0]
	var info DocInfo
	for infos(&info) {
		f.docs = append(f.docs, taskDoc{info: info})
	}
	slices.SortFunc(f.docs, func(x, y taskDoc) int { return cmp.Compare(x.info.Ord, y.info.Ord) })
	var p Pair
	for pairs(&p) {
		f.pairs = append(f.pairs, p)
	}
	var doc func(o uint64) (*taskDoc, error)
	doc = func(o uint64) (*taskDoc, error) {
		i, ok := slices.BinarySearchFunc(f.docs, o, func(d taskDoc, o uint64) int { return cmp.Compare(d.info.Ord, o) })
		if !ok {
			return nil, fmt.Errorf("verification task %#x: candidate document %d/%d has no features", task, splitOf(o), localOf(o))
		}
		d := &f.docs[i]
		switch {
		case d.ready:
		case d.info.Copy:
			// The signature and feature set of the document with its text.
			j, ok := slices.BinarySearchFunc(f.docs, d.info.SameAs, func(d taskDoc, o uint64) int { return cmp.Compare(d.info.Ord, o) })
			if !ok || f.docs[j].info.Copy {
				return nil, fmt.Errorf("verification task %#x: document %d/%d: the document with its text, %d/%d, has no features",
					task, splitOf(o), localOf(o), splitOf(d.info.SameAs), localOf(d.info.SameAs))
			}
			r, err := doc(d.info.SameAs)
			if err != nil {
				return nil, err
			}
			d.sig, d.feat, d.ready = r.sig, r.feat, true
		default:
			d.sig = unpackWords(d.sig[:0], d.info.Sig)
			if f.v.Exact() {
				if err := f.features(i); err != nil {
					return nil, fmt.Errorf("verification task %#x: document %d/%d: text: %w", task, splitOf(o), localOf(o), err)
				}
			}
			d.ready = true
		}
		return d, nil
	}
	for _, p := range f.pairs {
		da, err := doc(p.A)
		if err != nil {
			return err
		}
		db, err := doc(p.B)
		if err != nil {
			return err
		}
		d, ok := f.v.Verify(da.sig, db.sig, da.feat, db.feat)
		if !ok {
			continue
		}
		ia, ib := &da.info, &db.info
		emit(Edge{A: p.A, B: p.B, IDA: ia.ID, IDB: ib.ID, Est: d.Est, Exact: d.Exact,
			LenA: ia.Length, LenB: ib.Length, KeepA: ia.Keep, KeepB: ib.Keep, HasKeepA: ia.HasKeep, HasKeepB: ib.HasKeep})
	}
	clear(f.docs) // drop the task's texts until the next one
	clear(f.byText)
	return nil
}

// features sets the feature set of the task's i-th document: that of a
// document of the task with the same text if there is one (copies of a
// licence or a template are common among candidates, and a feature set is
// about 1.3 times its text's size), else made from its text.
func (f *verifyFn) features(i int) error {
	d := &f.docs[i]
	h := maphash.Bytes(f.seed, d.info.Text)
	if j, ok := f.byText[h]; ok && bytes.Equal(f.docs[j].info.Text, d.info.Text) {
		d.feat = f.docs[j].feat
		return nil
	}
	text, err := s2.Decode(f.text[:cap(f.text)], d.info.Text)
	if err != nil {
		return err
	}
	f.text = text
	d.feat = f.v.Features(nil, text)
	if _, ok := f.byText[h]; !ok {
		f.byText[h] = i
	}
	return nil
}

// edgeGraph is the edge's pair, for connected components.
func edgeGraph(e Edge) (uint64, uint64) { return e.A, e.B }

// Member is a clustered document: its id and keep-policy attributes.
type Member struct {
	Ord     uint64  // the document's ord
	ID      []byte  // its id
	Length  int64   // its text length in bytes
	Keep    float64 // its keep-field value, if HasKeep
	HasKeep bool    // whether it has a keep-field value
}

// edgeMembers emits both documents of an edge as Members.
func edgeMembers(e Edge, emit func(uint64, Member)) {
	emit(e.A, Member{Ord: e.A, ID: e.IDA, Length: e.LenA, Keep: e.KeepA, HasKeep: e.HasKeepA})
	emit(e.B, Member{Ord: e.B, ID: e.IDB, Length: e.LenB, Keep: e.KeepB, HasKeep: e.HasKeepB})
}

// Hist is the pair-similarity histogram of the verified pairs (bins of
// jobspec.HistogramBin).
type Hist struct {
	// Est and Exact count the pairs by estimated and by exact similarity;
	// Exact is filled even when not computed (bin 0), and the driver then
	// drops it. Both are nil when there are no pairs.
	Est, Exact []int64
}

const histBins = jobspec.HistogramBins

func histBin(x float64) int { return jobspec.HistogramBin(x) }
