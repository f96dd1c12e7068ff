package tune

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime/debug"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/internal/extsort"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/sigfile"
)

// docBits is how many low bits of a band-key entry hold the document's
// position: the job's rule (sketch.EntryDocBits), so that candidates are the
// pairs dedup finds.
const docBits = sketch.EntryDocBits

// keyBits is the width of the bucket keys: dedup's default
// (sketch.DefaultKeyBits), whose entries are (key, document) pairs
// (extsort.WideSorter).
const keyBits = sketch.DefaultKeyBits

// Bytes a posting takes where band keys are stored.
const (
	// DedupPostingBytes is a posting in dedup's batch driver: an entry of
	// the 64-bit band key and the document's 32-bit position, 16 bytes in
	// memory (extsort.Wide; 8 with --key-bits 32). Sorting a run needs as
	// much again as radix scratch.
	DedupPostingBytes = 16
	// IndexPostingBytes is a posting in a bulk-built or repacked index:
	// Rice-coded key gaps and fixed-width document numbers, about 4 bytes
	// (index/doc.go: 4.0 measured on 1M documents). Postings inserted
	// online take about 7.6 until a repack packs them.
	IndexPostingBytes = 4
)

// Result is what Run measured: the signatures and truth it read, and one
// Banding per banding compared. Plain data, deterministic for its inputs
// (whatever Options.Workers, Memory and TempDir); String renders it as
// tables.
type Result struct {
	// Signatures names the signatures read (the first file's name; a
	// caller may set another).
	Signatures string `json:"signatures"`
	// Truth names the truth file; Run leaves it empty for the caller.
	Truth string `json:"truth"`
	// Spec and Params are the canonical forms of the signatures' shingle
	// spec and MinHash params, seed included.
	Spec   string `json:"spec"`
	Params string `json:"params"`
	// K and Bits are the signatures' slots and slot width.
	K    int `json:"k"`
	Bits int `json:"bits"`
	// Documents is the number of records read; Empty of them have no
	// features (every slot all ones) and are banded nowhere, as in dedup.
	Documents int64 `json:"documents"`
	Empty     int64 `json:"empty"`

	// Threshold is Options.Threshold, BandWidth Options.BandWidth.
	Threshold float64 `json:"threshold"`
	BandWidth float64 `json:"band_width"`
	// Recall and Precision are the targets (0: none).
	Recall    float64 `json:"recall_target,omitempty"`
	Precision float64 `json:"precision_target,omitempty"`
	// BucketCap is Options.BucketCap.
	BucketCap int `json:"bucket_cap"`

	// TruthThreshold is the threshold the truth file says it lists every
	// pair at or above (its threshold= header, as eval truth writes it); 0
	// when it does not say, as for a labelled sample.
	TruthThreshold float64 `json:"truth_threshold"`
	// TruthComplete reports whether the truth lists every pair at J ≥
	// Threshold (0 < TruthThreshold ≤ Threshold), so that precision is
	// exact; otherwise it is a lower bound over the labelled pairs.
	TruthComplete bool `json:"truth_complete"`
	// TruthPairs is the number of truth pairs that count at Threshold
	// (similarity ≥ Threshold, or not given), TruthKnownJ how many of them
	// carry a similarity (only those fall in a band), and TruthMissing how
	// many name an id the signatures do not hold (counted as missed, as
	// eval score counts them).
	TruthPairs   int64 `json:"truth_pairs"`
	TruthKnownJ  int64 `json:"truth_known_j"`
	TruthMissing int64 `json:"truth_missing"`

	// Bandings holds one entry per banding compared, in the order of
	// Options.Bandings or of the frontier.
	Bandings []Banding `json:"bandings"`
	// Notes say what limits the figures: an incomplete truth, pairs
	// without similarities, missing ids, a spec that differs.
	Notes []string `json:"notes,omitempty"`
}

// Banding is what one banding does on the signatures: its candidates, the
// recall and precision they give against the truth, and the memory of its
// band index. Plain data.
type Banding struct {
	// Params is the banding; Bands, Rows and Probe repeat it for JSON.
	Params lsh.Params `json:"-"`
	Bands  int        `json:"bands"`
	Rows   int        `json:"rows"`
	Probe  int        `json:"probe,omitempty"`
	// Label names it as ParseBandings reads it ("16x6", "9x13/p1").
	Label string `json:"label"`
	// KeysPerDoc is the band keys (postings) per document:
	// Bands·C(Rows, Probe).
	KeysPerDoc int `json:"keys_per_doc"`
	// RecallAtThreshold is the S-curve at the threshold, P(t), slot width
	// included (eval.SCurve).
	RecallAtThreshold float64 `json:"recall_at_threshold"`
	// FPArea is the S-curve's false-positive area ∫₀ᵗ P(s) ds, the cost
	// the frontier trades against P(t).
	FPArea float64 `json:"fp_area"`

	// Candidates is the number of distinct candidate pairs, as dedup's
	// report counts them before verification.
	Candidates int64 `json:"candidates"`
	// CandidatesPerDoc is the candidate partners per document:
	// 2·Candidates/Documents.
	CandidatesPerDoc float64 `json:"candidates_per_doc"`
	// Pairs scores the candidates against the truth at Threshold:
	// Predicted is Candidates, TruePositives the truth pairs among them,
	// Recall the share of truth pairs found, Bands the recall per
	// similarity band beside the S-curve's prediction, and Precision the
	// precision before verification (TruePositives/Candidates), exact only
	// when Result.TruthComplete.
	Pairs eval.PairScore `json:"pairs"`
	// SharedBuckets counts the band keys shared by two or more documents,
	// CappedBuckets those larger than the bucket cap (linked to their first
	// member), and LargestBucket is the most documents one key held.
	SharedBuckets int64 `json:"shared_buckets"`
	CappedBuckets int64 `json:"capped_buckets"`
	LargestBucket int64 `json:"largest_bucket"`

	// Postings is the band index's size in postings: (Documents −
	// Empty)·KeysPerDoc. DedupBytes and IndexBytes are what they take in
	// dedup's sorted runs (DedupPostingBytes each) and in a packed index
	// (IndexPostingBytes each).
	Postings   int64 `json:"postings"`
	DedupBytes int64 `json:"dedup_bytes"`
	IndexBytes int64 `json:"index_bytes"`

	// MeetsRecall and MeetsPrecision report whether the banding meets the
	// recall and precision targets; nil when that target is not set.
	MeetsRecall    *bool `json:"meets_recall,omitempty"`
	MeetsPrecision *bool `json:"meets_precision,omitempty"`
	// Meets is true when at least one target is set and the banding meets
	// every target set.
	Meets bool `json:"meets_targets"`
}

// Run bands the signatures sigs under every banding of opts in one pass,
// groups each banding's sorted band-key entries into candidate pairs as
// neardup dedup does (32-bit bucket keys, documents without features left
// out, buckets past the cap linked to their first member), and scores the
// candidates against truth at opts.Threshold. truth is a pair file as
// eval.ReadPairFile returns it: sorted by (A, B), A < B, without repeats;
// its pairs are matched with the signatures' records by id.
//
// Run reads sigs to the end (it does not close it) and refuses SimHash
// fingerprints and more than 2^32 records (ErrSignatures), a truth id held
// by two records (ErrRepeatedID), and invalid options or a banding needing
// more slots than the signatures have (ErrInvalidOptions). Errors reading
// sigs come back as sigfile returns them, naming the file and offset.
//
// Memory beyond opts.Memory: the truth pairs (as read) and a map of their
// ids, and a few batches of records. Run sets the runtime's soft memory
// limit (debug.SetMemoryLimit) to opts.Memory while it runs, as dedup does,
// and restores it on return. The result does not depend on Workers, Memory
// or TempDir.
func Run(ctx context.Context, sigs *sigfile.Reader, truth *eval.PairFile, opts *Options) (*Result, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o := opts.EnsureDefaults()
	h := sigs.Header()
	if h.Sketch != sigfile.MinHash {
		return nil, fmt.Errorf("%w: %s holds %s fingerprints; tune bands MinHash signatures", ErrSignatures, sigs.Name(), h.Sketch)
	}
	mp := h.MinHash
	if !slices.IsSortedFunc(truth.Pairs, comparePairs) {
		return nil, fmt.Errorf("%w: truth pairs not sorted by id (read them with eval.ReadPairFile)", ErrInvalidOptions)
	}
	bandings := o.Bandings
	if bandings == nil {
		var err error
		if bandings, err = Frontier(o.Threshold, mp.K, o.Recalls, o.Probe); err != nil {
			return nil, err
		}
		if len(bandings) == 0 {
			return nil, fmt.Errorf("%w: no banding of at most %d slots reaches recall levels %v at J = %v", ErrInvalidOptions, mp.K, o.Recalls, o.Threshold)
		}
	}
	for _, p := range bandings {
		if p.Slots() > mp.K {
			return nil, fmt.Errorf("%w: banding %s reads %d slots; the signatures have k = %d", ErrInvalidOptions, Label(p), p.Slots(), mp.K)
		}
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(o.Memory))
	// Half the budget for the entries, shared by the bandings, a quarter
	// for the pairs of the bandings grouped at once; an entry costs 32
	// bytes in an extsort.WideSorter, a pair 16 in an extsort.Sorter
	// (themselves and sort scratch).
	workers := min(o.Workers, len(bandings))
	entryLimit := int(o.Memory / 2 / 32 / int64(len(bandings)))
	pairLimit := int(o.Memory / 4 / 16 / int64(workers))
	return run(ctx, sigs, truth, o, bandings, entryLimit, pairLimit)
}

// run is Run after validation, with the sorters' limits in values.
func run(ctx context.Context, sigs *sigfile.Reader, truth *eval.PairFile, o *Options, bandings []lsh.Params, entryLimit, pairLimit int) (*Result, error) {
	h := sigs.Header()
	mp := h.MinHash
	res := &Result{
		Signatures: sigs.Name(), Spec: h.Spec, Params: h.Params(), K: mp.K, Bits: mp.Bits,
		Threshold: o.Threshold, BandWidth: o.BandWidth, Recall: o.Recall, Precision: o.Precision,
		BucketCap: o.BucketCap, TruthThreshold: truth.Threshold,
		TruthComplete: truth.Threshold > 0 && truth.Threshold <= o.Threshold,
	}
	tr := newTruthIndex(truth, o.Threshold)
	res.TruthPairs, res.TruthKnownJ = int64(len(tr.counted)), tr.knownJ

	runs := make([]*bandingRun, len(bandings))
	for i, p := range bandings {
		runs[i] = &bandingRun{p: p, sorter: extsort.NewWide(o.TempDir, fmt.Sprintf("tune-entries-%d", i), entryLimit)}
	}
	defer func() {
		for _, r := range runs {
			r.close()
		}
	}()
	if err := bandAll(ctx, sigs, mp, runs, tr, o.Workers, res); err != nil {
		return nil, err
	}

	tp, missing := tr.docPairs()
	res.TruthMissing = missing
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(min(o.Workers, len(runs)))
	for _, r := range runs {
		r.found = make([]bool, len(tr.counted))
		g.Go(func() error { return r.group(gctx, o.BucketCap, o.TempDir, pairLimit, tp) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}

	for _, r := range runs {
		res.Bandings = append(res.Bandings, r.score(res, truth, tr))
	}
	res.Notes = notes(res, truth)
	return res, nil
}

// truthIndex holds the truth pairs that count at the threshold and the
// records their ids name.
type truthIndex struct {
	pairs   []eval.LabeledPair
	counted []int32          // indices into pairs of those that count
	ids     map[string]int32 // id → index into doc
	doc     []int64          // record of each id, or -1
	knownJ  int64
}

func newTruthIndex(truth *eval.PairFile, t float64) *truthIndex {
	tr := &truthIndex{pairs: truth.Pairs, ids: make(map[string]int32)}
	id := func(s string) {
		if _, ok := tr.ids[s]; !ok {
			tr.ids[s] = int32(len(tr.doc))
			tr.doc = append(tr.doc, -1)
		}
	}
	for i, p := range truth.Pairs {
		if p.HasJ() && p.J < t {
			continue // as eval.ScorePairs leaves it out
		}
		tr.counted = append(tr.counted, int32(i))
		if p.HasJ() {
			tr.knownJ++
		}
		id(p.A)
		id(p.B)
	}
	return tr
}

// see notes the record n with the given id; only ids of the truth are kept.
func (tr *truthIndex) see(id []byte, n int64) error {
	i, ok := tr.ids[string(id)]
	if !ok {
		return nil
	}
	if prev := tr.doc[i]; prev >= 0 {
		return fmt.Errorf("%w: id %q is record %d and record %d of the signatures; truth pairs are matched by id", ErrRepeatedID, id, prev, n)
	}
	tr.doc[i] = n
	return nil
}

// truthDocPair is a counted truth pair by record positions, packed as
// lsh.PackPair packs candidates, with its index into counted.
type truthDocPair struct {
	key uint64
	idx int32
}

// docPairs returns the counted truth pairs whose ids both name a record,
// by packed positions ascending, and how many name a missing id.
func (tr *truthIndex) docPairs() ([]truthDocPair, int64) {
	var out []truthDocPair
	var missing int64
	for ci, pi := range tr.counted {
		p := tr.pairs[pi]
		a, b := tr.doc[tr.ids[p.A]], tr.doc[tr.ids[p.B]]
		if a < 0 || b < 0 {
			missing++
			continue
		}
		if a > b {
			a, b = b, a
		}
		out = append(out, truthDocPair{lsh.PackPair(uint32(a), uint32(b)), int32(ci)})
	}
	slices.SortFunc(out, func(x, y truthDocPair) int {
		switch {
		case x.key < y.key:
			return -1
		case x.key > y.key:
			return 1
		}
		return 0
	})
	return out, missing
}

// batch is records read, ready to band: the slots of the documents with
// features and their positions.
type batch struct {
	slots []uint64 // K per document
	docs  []uint32
}

// batchSlots is the slots a batch holds: 2 MiB, 2048 documents at k = 128.
const batchSlots = 1 << 18

// flushEntries is how many entries a banding collects before handing them
// to its sorter (512 KiB).
const flushEntries = 1 << 16

// bandAll reads every record of sigs and adds the band-key entries of each
// document with features to every banding's sorter: one goroutine reads and
// widens the slots, and each batch is banded by up to workers goroutines,
// one banding each.
func bandAll(ctx context.Context, sigs *sigfile.Reader, mp minhash.Params, runs []*bandingRun, tr *truthIndex, workers int, res *Result) error {
	const inFlight = 3
	batchDocs := max(1, batchSlots/mp.K)
	free := make(chan *batch, inFlight)
	for range inFlight {
		free <- &batch{slots: make([]uint64, 0, batchDocs*mp.K), docs: make([]uint32, 0, batchDocs)}
	}
	full := make(chan *batch, inFlight)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(full)
		send := func(b *batch) error {
			select {
			case full <- b:
				return nil
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		bt := <-free
		var rec sigfile.Record
		allOnes := uint64(math.MaxUint64)
		if mp.Bits < 64 {
			allOnes = 1<<mp.Bits - 1
		}
		for {
			err := sigs.Next(&rec)
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			n := res.Documents
			if n >= 1<<docBits {
				return fmt.Errorf("%w: %s holds more than 2^32 records", ErrSignatures, sigs.Name())
			}
			res.Documents++
			if err := tr.see(rec.ID, n); err != nil {
				return err
			}
			start := len(bt.slots)
			bt.slots = mp.AppendSlots(bt.slots, rec.Sig)
			if empty(bt.slots[start:], allOnes) {
				bt.slots = bt.slots[:start]
				res.Empty++
				continue
			}
			bt.docs = append(bt.docs, uint32(n))
			if len(bt.docs) < batchDocs {
				continue
			}
			if err := send(bt); err != nil {
				return err
			}
			select {
			case bt = <-free:
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		if len(bt.docs) > 0 {
			return send(bt)
		}
		return nil
	})
	g.Go(func() error {
		for bt := range full {
			if err := gctx.Err(); err != nil {
				return err
			}
			var bg errgroup.Group
			bg.SetLimit(workers)
			for _, r := range runs {
				bg.Go(func() error { return r.add(bt, mp.K) })
			}
			if err := bg.Wait(); err != nil {
				return err
			}
			bt.slots, bt.docs = bt.slots[:0], bt.docs[:0]
			free <- bt
		}
		return nil
	})
	return g.Wait()
}

// empty reports whether a signature's slots are all ones: the signature of
// a document without features, which dedup never bands (it would match
// every other empty text). A file does not mark such documents; a document
// with features has this signature with probability 2^−(K·bits), which at
// the narrowest (1-bit slots, K = 16) is 1.5e-5. dedup knows such
// documents from their text (docEmpty in dedup/sign.go); a signature file
// tells only by the slots.
func empty(slots []uint64, allOnes uint64) bool {
	for _, v := range slots {
		if v != allOnes {
			return false
		}
	}
	return true
}

// bandingRun is one banding's state through the passes.
type bandingRun struct {
	p       lsh.Params
	keys    []uint64
	entries []uint64
	sorter  *extsort.WideSorter

	candidates int64
	metrics    lsh.CandidateMetrics
	largest    int64
	found      []bool // by index into truthIndex.counted
}

// add bands a batch's documents into the sorter.
func (r *bandingRun) add(bt *batch, k int) error {
	e := r.entries[:0]
	for i, d := range bt.docs {
		r.keys = r.p.AppendKeys(r.keys[:0], bt.slots[i*k:(i+1)*k])
		e = sketch.AppendKeyEntries(e, r.keys, d, keyBits)
		if len(e) >= flushEntries {
			if err := r.sorter.Add(e...); err != nil {
				return err
			}
			e = e[:0]
		}
	}
	r.entries = e[:0]
	return r.sorter.Add(e...)
}

// group merges the banding's sorted entries into buckets, collects the
// distinct candidate pairs (through a second sorter, spilling past
// pairLimit values), counts them and marks the truth pairs among them: the
// steps of dedup's candidate stage (dedup/candidates.go).
func (r *bandingRun) group(ctx context.Context, bucketCap int, tmp string, pairLimit int, tp []truthDocPair) error {
	it, err := r.sorter.Iter()
	r.sorter = nil
	if err != nil {
		return err
	}
	defer it.Close()
	g, err := lsh.NewGrouper(docBits, &lsh.CandidateOptions{Cap: bucketCap, Largest: lsh.NoLargest})
	if err != nil {
		return err
	}
	pairsSorter := extsort.New(tmp, "tune-pairs", pairLimit)
	merged := false
	defer func() {
		if !merged { // remove the runs spilled before a failure
			if it, err := pairsSorter.Iter(false); err == nil {
				it.Close()
			}
		}
	}()
	chunk := make([]uint64, 0, 1<<14)
	var pairs []uint64
	// Bucket sizes are tracked here: the Grouper reports only capped ones.
	var last uint64
	var size int64
	flush := func() error {
		var err error
		if pairs, err = g.Append(pairs[:0], chunk); err != nil {
			return err
		}
		chunk = chunk[:0]
		return pairsSorter.Add(pairs...)
	}
	var lastDoc uint32
	for w, ok := it.Next(); ok; w, ok = it.Next() {
		switch {
		case size == 0 || w.Key != last:
			if size > 0 && w.Key>>docBits == last>>docBits {
				// Another key with the same high 32 bits, which the
				// Grouper's entries hold: close its bucket (as dedup does).
				if err := flush(); err != nil {
					return err
				}
				if err := pairsSorter.Add(g.Flush(pairs[:0])...); err != nil {
					return err
				}
			}
			size = 1
		case w.Doc != lastDoc: // an entry repeated (two bands of a document sharing a key) is one member
			size++
		}
		last, lastDoc = w.Key, w.Doc
		r.largest = max(r.largest, size)
		chunk = append(chunk, w.Key&^(1<<docBits-1)|uint64(w.Doc))
		if len(chunk) == cap(chunk) {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	if err := pairsSorter.Add(g.Flush(pairs[:0])...); err != nil {
		return err
	}
	r.metrics = g.Metrics()
	pit, err := pairsSorter.Iter(true)
	merged = true
	if err != nil {
		return err
	}
	defer pit.Close()
	ti := 0
	for v, ok := pit.Next(); ok; v, ok = pit.Next() {
		r.candidates++
		for ti < len(tp) && tp[ti].key < v {
			ti++
		}
		if ti < len(tp) && tp[ti].key == v {
			r.found[tp[ti].idx] = true
		}
	}
	return pit.Err()
}

// close removes the runs of a banding that never reached group.
func (r *bandingRun) close() {
	if r.sorter != nil {
		r.sorter.Close()
		r.sorter = nil
	}
}

// score turns a grouped banding's counts into its Banding.
func (r *bandingRun) score(res *Result, truth *eval.PairFile, tr *truthIndex) Banding {
	p := r.p
	curve := eval.SCurve(p, res.Bits)
	c := 0.0
	if res.Bits < 64 {
		c = math.Ldexp(1, -res.Bits)
	}
	b := Banding{
		Params: p, Bands: p.Bands, Rows: p.Rows, Probe: p.Probe, Label: Label(p),
		KeysPerDoc:        p.KeysPerDoc(),
		RecallAtThreshold: curve(res.Threshold),
		// ∫₀ᵗ P(c + (1−c)s) ds, substituting u = c + (1−c)s.
		FPArea:        (p.FalsePositiveArea(c+(1-c)*res.Threshold) - p.FalsePositiveArea(c)) / (1 - c),
		Candidates:    r.candidates,
		SharedBuckets: r.metrics.SharedBuckets,
		CappedBuckets: r.metrics.CappedBuckets,
		LargestBucket: r.largest,
	}
	if res.Documents > 0 {
		b.CandidatesPerDoc = 2 * float64(r.candidates) / float64(res.Documents)
	}
	var found []eval.LabeledPair
	for ci, pi := range tr.counted {
		if r.found[ci] {
			found = append(found, truth.Pairs[pi])
		}
	}
	s := eval.ScorePairs(truth.Pairs, found, eval.ScoreOptions{Threshold: res.Threshold, BandWidth: res.BandWidth, Curve: curve})
	// The candidates, not only the truth pairs among them, are the
	// prediction.
	s.Predicted = r.candidates
	s.FalsePositives = s.Predicted - s.TruePositives
	s.Precision = 1
	if s.Predicted > 0 {
		s.Precision = float64(s.TruePositives) / float64(s.Predicted)
	}
	s.F1 = 0
	if s.Precision+s.Recall > 0 {
		s.F1 = 2 * s.Precision * s.Recall / (s.Precision + s.Recall)
	}
	b.Pairs = s
	b.Postings = (res.Documents - res.Empty) * int64(b.KeysPerDoc)
	b.DedupBytes = b.Postings * DedupPostingBytes
	b.IndexBytes = b.Postings * IndexPostingBytes
	if res.Recall > 0 {
		ok := meets(s.Recall, res.Recall)
		b.MeetsRecall = &ok
	}
	if res.Precision > 0 {
		ok := meets(s.Precision, res.Precision)
		b.MeetsPrecision = &ok
	}
	b.Meets = (b.MeetsRecall != nil || b.MeetsPrecision != nil) &&
		(b.MeetsRecall == nil || *b.MeetsRecall) && (b.MeetsPrecision == nil || *b.MeetsPrecision)
	return b
}

// notes says what limits the figures of res.
func notes(res *Result, truth *eval.PairFile) []string {
	var out []string
	switch {
	case truth.Threshold == 0:
		out = append(out, "the truth file does not say it lists every pair above a threshold (no threshold= header, as eval truth writes): "+
			"it is a labelled sample, so precision counts only its pairs and is a lower bound")
	case truth.Threshold > res.Threshold:
		out = append(out, fmt.Sprintf("the truth file lists the pairs at J ≥ %v only: pairs in [%v, %v) are missing from recall, and precision is a lower bound",
			truth.Threshold, res.Threshold, truth.Threshold))
	}
	if res.TruthPairs == 0 {
		out = append(out, fmt.Sprintf("no truth pair counts at J ≥ %v: recall is 1 by convention", res.Threshold))
	} else if n := res.TruthPairs - res.TruthKnownJ; n > 0 {
		out = append(out, fmt.Sprintf("%d of %d truth pairs carry no similarity: they count in recall but fall in no band", n, res.TruthPairs))
	}
	if res.TruthMissing > 0 {
		out = append(out, fmt.Sprintf("%d truth pairs name an id the signatures do not hold: counted as missed, as eval score counts them", res.TruthMissing))
	}
	if truth.Spec != "" && truth.Spec != res.Spec {
		out = append(out, fmt.Sprintf("the truth's similarities are over spec %s, the signatures' over %s", truth.Spec, res.Spec))
	}
	if truth.Documents > 0 && truth.Documents != res.Documents {
		out = append(out, fmt.Sprintf("the truth file was computed over %d documents, the signatures hold %d", truth.Documents, res.Documents))
	}
	return out
}

func comparePairs(x, y eval.LabeledPair) int {
	switch {
	case x.A < y.A:
		return -1
	case x.A > y.A:
		return 1
	case x.B < y.B:
		return -1
	case x.B > y.B:
		return 1
	}
	return 0
}
