package job

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/jobspec"
)

// DocInfo is what verification and clustering need of a document in a
// candidate pair: its id, keep-policy attributes, signature and, for exact
// verification, its text. The signature words are packed little-endian, 8
// bytes each (as []uint64 Beam would write each as a varint, up to 10 bytes
// for a hash).
type DocInfo struct {
	ID      []byte  // the document's id
	Length  int64   // its text length in bytes
	Keep    float64 // its keep-field value, if HasKeep
	HasKeep bool    // whether it has a keep-field value
	Sig     []byte  // its signature words, packed
	Text    []byte  // its text under VerifyExact; nil otherwise
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

// Half is a candidate pair (A, B) on its way to B, carrying A's DocInfo.
type Half struct {
	A    uint64  // ord of the pair's lower document
	Info DocInfo // A's DocInfo
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

// Roles of a document in the candidate pairs, carried in the high bits of
// its local index on the way to docInfoFn (local indices use 40 bits).
const (
	roleA = 1 << 62 // the lower document of some pair
	roleB = 1 << 61 // the higher document of some pair
	roles = roleA | roleB
)

// docInfoFn re-reads one split and emits the DocInfo of every document of
// the split that is in a candidate pair: to the join at a (first output) if
// it is the lower document of some pair, and to the join at b (second
// output) if it is the higher of some pair. Re-signing and re-reading these
// few documents costs less than shuffling every document's signature and
// text. For exact verification it carries the text, not the feature set,
// which verifyFn recomputes: a text is about 6 bytes a word, a feature set 8
// bytes a shingle (dedup keeps texts for the same reason).
type docInfoFn struct {
	C Config

	st Stats
}

// StartBundle resets the bundle's statistics.
func (f *docInfoFn) StartBundle(_, _ func(uint64, DocInfo), _ func(Stats)) { f.st = Stats{} }

// ProcessElement takes a split and the local indices, tagged with their
// roles, of its documents in candidate pairs; it re-reads the split and
// emits each such document's DocInfo to the outputs of its roles, counting
// them.
func (f *docInfoFn) ProcessElement(ctx context.Context, split int, it func(*int64) bool, emitA, emitB func(uint64, DocInfo), _ func(Stats)) error {
	var need []int64
	var l int64
	for it(&l) {
		need = append(need, l)
	}
	slices.SortFunc(need, func(x, y int64) int { return cmp.Compare(x&^roles, y&^roles) })
	// Merge the roles of each document.
	n := 0
	for i, l := range need {
		if i > 0 && l&^roles == need[n-1]&^roles {
			need[n-1] |= l
			continue
		}
		need[n] = l
		n++
	}
	need = need[:n]
	parser, k, err := newReading(ctx, &f.C)
	if err != nil {
		return err
	}
	exact := f.C.Job.Verify == jobspec.VerifyExact
	var doc corpus.Document
	next := 0
	_, err = eachRecord(ctx, &f.C, split, func(rec *corpus.Record) (bool, error) {
		want := need[next] &^ roles
		if rec.Index < want {
			return true, nil
		}
		if rec.Index > want {
			return false, fmt.Errorf("%s: record %d not found on a second reading: the input changed", f.C.Splits[split], want)
		}
		role := need[next] & roles
		next++
		if err := parser.Parse(rec, &doc); err != nil {
			return false, fmt.Errorf("%s: record %d failed to parse on a second reading: %w", f.C.Splits[split], rec.Index, err)
		}
		if !k.sign(doc.Text) {
			return false, fmt.Errorf("%s: record %d empty on a second reading", f.C.Splits[split], rec.Index)
		}
		info := DocInfo{ID: slices.Clone(doc.ID), Length: int64(len(doc.Text)), Keep: doc.Keep, HasKeep: doc.HasKeep, Sig: packWords(nil, k.sig)}
		if exact {
			info.Text = slices.Clone(doc.Text)
		}
		o := ord(split, rec.Index)
		var sends int64
		if role&roleA != 0 {
			emitA(o, info)
			sends++
		}
		if role&roleB != 0 {
			emitB(o, info)
			sends++
		}
		f.st.Shuffle.add(&info, sends)
		f.st.VerifiedDocs++
		return next < len(need), nil
	})
	if err != nil {
		return err
	}
	if next < len(need) {
		return fmt.Errorf("%s: record %d not found on a second reading: the input changed", f.C.Splits[split], need[next]&^roles)
	}
	return nil
}

// FinishBundle emits the bundle's statistics, if it read any document.
func (f *docInfoFn) FinishBundle(_, _ func(uint64, DocInfo), stats func(Stats)) {
	if f.st.VerifiedDocs > 0 {
		stats(f.st)
	}
}

// halfFn sends each distinct candidate pair (a, b) to b with a's DocInfo.
type halfFn struct{ st InfoShuffle }

// StartBundle resets the bundle's statistics.
func (f *halfFn) StartBundle(_ func(uint64, Half), _ func(InfoShuffle)) { f.st = InfoShuffle{} }

// ProcessElement sends each pair of a to its b with a's DocInfo.
func (f *halfFn) ProcessElement(a uint64, infos func(*DocInfo) bool, bs func(*uint64) bool, emit func(uint64, Half), _ func(InfoShuffle)) error {
	var info DocInfo
	if !infos(&info) {
		return fmt.Errorf("candidate document %d/%d has no features", splitOf(a), localOf(a))
	}
	var b uint64
	var n int64
	for bs(&b) {
		emit(b, Half{A: a, Info: info})
		n++
	}
	f.st.add(&info, n)
	return nil
}

// FinishBundle emits the bundle's statistics.
func (f *halfFn) FinishBundle(_ func(uint64, Half), stats func(InfoShuffle)) {
	if f.st.Sends > 0 {
		stats(f.st)
	}
}

// verifyFn checks the candidate pairs (a, b) that arrive at b with the job's
// verifier (jobspec.Verifier: the signature estimate always, the exact
// Jaccard similarity of the feature sets under VerifyExact) and emits those
// that pass as Edges.
type verifyFn struct {
	C Config

	v              *jobspec.Verifier
	sa, sb, fa, fb []uint64
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
	return err
}

// ProcessElement verifies the candidate pairs (a, b) arriving at b, given
// b's DocInfo and the pairs' Halves, and emits those that pass as Edges.
func (f *verifyFn) ProcessElement(b uint64, infos func(*DocInfo) bool, halves func(*Half) bool, emit func(Edge)) error {
	var ib DocInfo
	if !infos(&ib) {
		return fmt.Errorf("candidate document %d/%d has no features", splitOf(b), localOf(b))
	}
	f.sb = unpackWords(f.sb[:0], ib.Sig)
	if f.v.Exact() {
		f.fb = f.v.Features(f.fb, ib.Text)
	}
	var h Half
	for halves(&h) {
		ia := &h.Info
		f.sa = unpackWords(f.sa[:0], ia.Sig)
		if f.v.Exact() {
			f.fa = f.v.Features(f.fa, ia.Text)
		}
		d, ok := f.v.Verify(f.sa, f.sb, f.fa, f.fb)
		if !ok {
			continue
		}
		emit(Edge{A: h.A, B: b, IDA: ia.ID, IDB: ib.ID, Est: d.Est, Exact: d.Exact,
			LenA: ia.Length, LenB: ib.Length, KeepA: ia.Keep, KeepB: ib.Keep, HasKeepA: ia.HasKeep, HasKeepB: ib.HasKeep})
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
