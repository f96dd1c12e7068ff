package job

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/lsh"
)

// SimHash on Beam. Its bucket keys depend on the number of blocks, which by
// default waits for the number of documents (sketch.Config.Resolve), as in
// neardup dedup; and its candidate test reads the two fingerprints. So with
// SimHash the sign stage emits each split's fingerprints (ord, fingerprint:
// 16 bytes a document) instead of entries, a global count of them resolves
// the sketch as a side input of the next two stages, simEntriesFn makes the
// entries with their fingerprints (key, ord, fingerprint: 20 bytes), and
// simBucketFn groups a partition's entries with the sketch's Grouper, which
// keeps the pairs within the Hamming distance. Pairs, verification and
// everything after are MinHash's. The ids of the buckets the report lists
// are read back from the splits (firstIDReadFn): a bucket's first member
// need not be in a candidate pair, as it always is with MinHash.

const (
	fpBytes       = 16                 // ord, fingerprint
	simEntryBytes = 4 + 8 + 8          // key (sketch.BucketKeyBits), ord, fingerprint
	simBatch      = batchEntries       // entries a partition's batch holds before it is sent
	simSplitBatch = 64 << 10           // fingerprints a split sends at a time
	_             = simEntryBytes - 20 // 4 + 8 + 8
)

// simHashJob reports whether c's job is SimHash.
func (c *Config) simHashJob() bool { return c.Job.Sketch.Kind == sketch.SimHash }

// resolvedSketch returns the job's sketch resolved for n documents.
func (c *Config) resolvedSketch(n int64) (sketch.Sketch, sketch.Config, error) {
	sc, err := c.Job.Sketch.Resolve(n)
	if err != nil {
		return nil, sc, err
	}
	sk, err := sc.New()
	return sk, sc, err
}

// fpBatcher collects a split's fingerprints into batches.
type fpBatcher struct {
	split int
	buf   []byte
	emit  func(int, []byte)
}

func (b *fpBatcher) add(o, fp uint64) {
	b.buf = binary.LittleEndian.AppendUint64(b.buf, o)
	b.buf = binary.LittleEndian.AppendUint64(b.buf, fp)
	if len(b.buf) >= simSplitBatch*fpBytes {
		b.flush()
	}
}

func (b *fpBatcher) flush() {
	if len(b.buf) > 0 {
		b.emit(b.split, b.buf)
		b.buf = nil
	}
}

// signedDocs returns the documents of a split that have a signature.
func signedDocs(s SplitStats) int64 { return s.Emitted - s.ParseBad - s.Empty }

// countSigned turns a split's statistics into its count of signed documents.
func countSigned(s SplitStats) int64 { return signedDocs(s) }

// sumInt64 adds counts.
func sumInt64(a, b int64) int64 { return a + b }

// simEntriesFn makes the entries of a batch of fingerprints under the
// sketch resolved for the side input's document count, and sends them to
// their partitions with their fingerprints.
type simEntriesFn struct {
	C Config

	n  int64
	sk sketch.Sketcher
}

// ProcessElement emits the entries of one batch of fingerprints in
// per-partition batches KV<partition, (key, ord, fingerprint)…>.
func (f *simEntriesFn) ProcessElement(_ int, fps []byte, n int64, emit func(int, []byte)) error {
	if f.sk == nil || f.n != n {
		sk, _, err := f.C.resolvedSketch(n)
		if err != nil {
			return err
		}
		if f.sk, err = sk.NewSketcher(); err != nil {
			return err
		}
		f.n = n
	}
	bufs := map[int][]byte{}
	var keys []uint64
	for ; len(fps) >= fpBytes; fps = fps[fpBytes:] {
		o, fp := binary.LittleEndian.Uint64(fps), binary.LittleEndian.Uint64(fps[8:])
		keys = f.sk.AppendBucketKeys(keys[:0], []uint64{fp})
		for _, k := range keys {
			p := partitionOf(k<<sketch.EntryDocBits, f.C.PartitionBits)
			buf := binary.LittleEndian.AppendUint32(bufs[p], uint32(k))
			buf = binary.LittleEndian.AppendUint64(buf, o)
			bufs[p] = binary.LittleEndian.AppendUint64(buf, fp)
			if len(bufs[p]) >= simBatch*simEntryBytes {
				emit(p, bufs[p])
				delete(bufs, p)
			}
		}
	}
	ps := make([]int, 0, len(bufs))
	for p := range bufs {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	for _, p := range ps {
		emit(p, bufs[p])
	}
	return nil
}

// simBucketFn is bucketFn for SimHash: the documents of a partition are
// numbered 0…n−1 in document order, their fingerprints kept by number, and
// the sorted entries streamed through the sketch's Grouper, which emits the
// pairs within the Hamming distance from the first table they share (as
// neardup dedup does over all entries: a bucket lies whole in one
// partition).
type simBucketFn struct {
	C Config

	keys    []uint32
	ords    []uint64
	fps     []uint64
	uniq    []uint64
	byNum   []uint64
	entries []uint64
	scratch []uint64
	pairs   []uint64
	held    []heldCand
	stats   BucketStats
}

// StartBundle resets the bundle's statistics.
func (f *simBucketFn) StartBundle(_ int64, _ func(uint64, []byte), _ func(BucketStats)) {
	f.stats = BucketStats{}
}

// ProcessElement groups one partition's entries into candidate pairs, sent
// to their lower documents as bucketFn sends them, and adds the partition's statistics
// to the bundle's.
func (f *simBucketFn) ProcessElement(part int, batches func(*[]byte) bool, n int64, emit func(uint64, []byte), _ func(BucketStats)) error {
	sk, _, err := f.C.resolvedSketch(n)
	if err != nil {
		return err
	}
	f.keys, f.ords, f.fps = f.keys[:0], f.ords[:0], f.fps[:0]
	var b []byte
	for batches(&b) {
		for ; len(b) >= simEntryBytes; b = b[simEntryBytes:] {
			f.keys = append(f.keys, binary.LittleEndian.Uint32(b))
			f.ords = append(f.ords, binary.LittleEndian.Uint64(b[4:]))
			f.fps = append(f.fps, binary.LittleEndian.Uint64(b[12:]))
		}
	}
	f.uniq = append(f.uniq[:0], f.ords...)
	f.uniq, f.scratch = lsh.SortUnique(f.uniq, f.scratch)
	if len(f.uniq) > 1<<sketch.EntryDocBits {
		return fmt.Errorf("partition %d holds more than 2^%d documents: use more partitions", part, sketch.EntryDocBits)
	}
	f.byNum = slices.Grow(f.byNum[:0], len(f.uniq))[:len(f.uniq)]
	f.entries = f.entries[:0]
	for i, k := range f.keys {
		num, _ := slices.BinarySearch(f.uniq, f.ords[i])
		f.byNum[num] = f.fps[i]
		f.entries = append(f.entries, sketch.PackEntry(uint64(k), uint32(num)))
	}
	f.scratch = lsh.SortEntries(f.entries, f.scratch, sketch.EntryDocBits)
	g, err := sk.NewGrouper(f.byNum, f.C.Job.BucketCap, 0)
	if err != nil {
		return err
	}
	// The grouping and statistics are MinHash's; the keys are listed as
	// they are (entry key bits, as SimHash's table keys are narrow).
	bf := bucketFn{entries: f.entries, uniq: f.uniq, pairs: f.pairs, held: f.held}
	st, err := bf.group(g, func(k uint64) uint64 { return k }, emit)
	f.pairs, f.held = bf.pairs, bf.held
	if err != nil {
		return err
	}
	f.stats = f.stats.merge(st)
	return nil
}

// FinishBundle emits the bundle's statistics if it grouped any bucket.
func (f *simBucketFn) FinishBundle(_ int64, _ func(uint64, []byte), stats func(BucketStats)) {
	if f.stats.Buckets > 0 {
		stats(f.stats)
	}
}

// listedFirstsFn emits, by split, the local index of the first member of
// every bucket the report lists (capped, and the largest shared).
func listedFirstsFn(st Stats, emit func(int, int64)) {
	seen := map[uint64]bool{}
	for _, list := range [...][]LargeBucket{st.Buckets.Largest, st.Buckets.Top} {
		for _, b := range list {
			if !seen[b.First] {
				seen[b.First] = true
				emit(splitOf(b.First), localOf(b.First))
			}
		}
	}
}

// firstIDReadFn reads a split again for the ids of the listed buckets'
// first members.
type firstIDReadFn struct{ C Config }

// ProcessElement emits the ids of the split's documents at the given local
// indices.
func (f *firstIDReadFn) ProcessElement(ctx context.Context, split int, it func(*int64) bool, emit func(Stats)) error {
	var need []int64
	var l int64
	for it(&l) {
		need = append(need, l)
	}
	slices.Sort(need)
	parser, err := corpus.NewParser(f.C.Corpus.options())
	if err != nil {
		return err
	}
	var doc corpus.Document
	_, err = eachRecord(ctx, &f.C, split, func(rec *corpus.Record) (bool, error) {
		if _, found := slices.BinarySearch(need, rec.Index); !found {
			return rec.Index < need[len(need)-1], nil
		}
		if err := parser.Parse(rec, &doc); err != nil {
			return false, err
		}
		emit(Stats{FirstIDs: []OrdID{{ord(split, rec.Index), slices.Clone(doc.ID)}}})
		return rec.Index < need[len(need)-1], nil
	})
	return err
}

// buildSimHashCandidates is the SimHash part of the candidates pipeline:
// from the sign stage's fingerprint batches and split statistics to raw
// candidate pairs and bucket statistics, and the ids of the listed buckets.
func buildSimHashCandidates(s beam.Scope, c *Config, fps, splitStats beam.PCollection) (rawPairs, bucketStats beam.PCollection, firstIDs func(total beam.PCollection) beam.PCollection) {
	cand := s.Scope("candidates")
	n := beam.Combine(cand, sumInt64, beam.Flatten(cand, beam.ParDo(cand, countSigned, splitStats), beam.Create(cand, int64(0))))
	entries := beam.ParDo(cand, &simEntriesFn{C: *c}, fps, beam.SideInput{Input: n})
	rawPairs, bucketStats = beam.ParDo2(cand, &simBucketFn{C: *c}, beam.GroupByKey(cand, entries), beam.SideInput{Input: n})
	firstIDs = func(total beam.PCollection) beam.PCollection {
		st := s.Scope("stats")
		firsts := beam.ParDo(st, listedFirstsFn, total)
		return beam.ParDo(st, &firstIDReadFn{C: *c}, beam.GroupByKey(st, firsts))
	}
	return rawPairs, bucketStats, firstIDs
}
