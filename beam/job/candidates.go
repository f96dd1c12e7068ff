package job

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/lsh"
)

// LargeBucket is a bucket: its size, key and first (lowest) member, which
// every other member of a bucket over the cap was linked to.
type LargeBucket struct {
	Size  int    // distinct documents in the bucket
	Key   uint64 // the bucket key in place (an lsh.Bucket.Key: sketch.EntryBucket gives the key)
	First uint64 // ord of the lowest member
}

// BucketStats sums lsh.CandidateMetrics over buckets.
type BucketStats struct {
	// Entries are the band-key entries grouped (duplicates included),
	// Buckets the distinct keys, Shared the buckets of two or more
	// documents, Pairs the pairs emitted (before deduplication), Capped the
	// buckets over the cap and CappedMembers the documents in those.
	Entries, Buckets, Shared, Pairs, Capped, CappedMembers int64
	Largest                                                []LargeBucket // over the cap; by size descending, then key
	Top                                                    []LargeBucket // shared, capped or not; the same order
	// Sent are the candidates sent to their lower documents (pairs
	// emitted less the repeats removed in the partition), in Records
	// shuffled records (candShuffle).
	Sent, Records int64
}

func (a BucketStats) merge(b BucketStats) BucketStats {
	a.Entries += b.Entries
	a.Buckets += b.Buckets
	a.Shared += b.Shared
	a.Pairs += b.Pairs
	a.Capped += b.Capped
	a.CappedMembers += b.CappedMembers
	a.Sent += b.Sent
	a.Records += b.Records
	a.Largest = topLargest(append(slices.Clone(a.Largest), b.Largest...))
	a.Top = topLargest(append(slices.Clone(a.Top), b.Top...))
	return a
}

// topLargest keeps the lsh.DefaultLargest largest buckets, ordered as
// lsh.CandidateMetrics.Largest is: size descending, then key ascending.
func topLargest(l []LargeBucket) []LargeBucket {
	slices.SortFunc(l, func(x, y LargeBucket) int {
		if x.Size != y.Size {
			return y.Size - x.Size
		}
		return cmp.Compare(x.Key, y.Key)
	})
	return l[:min(len(l), lsh.DefaultLargest)]
}

// Band-key entries travel in batches: a partition of the bucket-key space
// (the top bits of the bucket key) and the packed entries of one split that
// fall in it, each the bucket key's high bytes (keyBytes: 8 for the default
// 64-bit keys, 4 for 32) and the 8-byte document ord. One shuffled
// record per batch instead of per entry saves the per-record overhead of the
// shuffle (bytes and CPU), and the reducer of a partition does what dedup
// does with a sorted run: radix-sort the entries and stream them through an
// lsh.Grouper. Every bucket lies whole in one partition.
const (
	// batchEntries is the size at which a partition's batch is sent
	// (768 KiB), and splitEntries the entries a split buffers in all (96
	// MiB) before it sends every batch.
	batchEntries = 64 << 10
	splitEntries = 8 << 20
	// MaxPartitions bounds Options.Partitions.
	MaxPartitions = 1 << 16
)

// keyBytes is the width of a bucket key of keyBits bits (sketch.Sketch.KeyBits)
// in a batch: its high ⌈keyBits/8⌉ bytes, the rest being zero.
func keyBytes(keyBits int) int { return (keyBits + 7) / 8 }

// putKey appends the high n bytes of key (in place) to buf, little-endian.
func putKey(buf []byte, key uint64, n int) []byte {
	v := key >> (64 - 8*n)
	for range n {
		buf = append(buf, byte(v))
		v >>= 8
	}
	return buf
}

// getKey reads a key of n bytes written by putKey, in place.
func getKey(b []byte, n int) uint64 {
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v << (64 - 8*n)
}

// partitionOf returns the partition of a bucket key (in place) among
// 1<<bits: its top bits.
func partitionOf(key uint64, bits uint) int {
	if bits == 0 {
		return 0
	}
	return int(key >> (64 - bits))
}

// batcher collects a split's entries into per-partition batches.
type batcher struct {
	bits     uint
	keyBytes int // keyBytes of the sketch's key width
	bufs     map[int][]byte
	total    int
	emit     func(int, []byte)
}

func (b *batcher) add(key uint64, o uint64) {
	p := partitionOf(key, b.bits)
	entryBytes := b.keyBytes + 8
	buf := b.bufs[p]
	if buf == nil {
		buf = make([]byte, 0, min(batchEntries, 1024)*entryBytes)
	}
	buf = putKey(buf, key, b.keyBytes)
	buf = binary.LittleEndian.AppendUint64(buf, o)
	b.bufs[p] = buf
	b.total++
	if len(buf) >= batchEntries*entryBytes {
		b.emit(p, buf)
		delete(b.bufs, p)
	}
	if b.total >= splitEntries {
		b.flush()
	}
}

func (b *batcher) flush() {
	ps := make([]int, 0, len(b.bufs))
	for p := range b.bufs {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	for _, p := range ps {
		b.emit(p, b.bufs[p])
	}
	clear(b.bufs)
	b.total = 0
}

// bucketFn turns one partition of band-key entries into candidate pairs.
// Its documents are numbered 0…n−1 in document order, and the entries
// sketch.PackEntry(key, number) sorted and streamed through an lsh.Grouper
// (keys wider than 32 bits by their rank among the partition's distinct
// keys, which sorts as they do):
// as in dedup, every bucket (documents sharing a bucket key) of at
// most Cap documents yields all its pairs, a larger one links every member to
// its lowest. The numbering keeps document order, so the rules apply
// unchanged.
type bucketFn struct {
	Cap      int
	KeyBytes int // keyBytes of the sketch's key width

	keys    []uint64
	ukeys   []uint64 // with wide keys: the partition's distinct keys, ascending
	ords    []uint64
	uniq    []uint64
	entries []uint64
	scratch []uint64
	pairs   []uint64
	held    []heldCand // candShuffle's
	stats   BucketStats
}

// StartBundle resets the bundle's statistics.
func (f *bucketFn) StartBundle(_ func(uint64, []byte), _ func(BucketStats)) { f.stats = BucketStats{} }

// ProcessElement groups one partition's band-key entries into buckets,
// sends their candidate pairs to their lower documents (KV<lower ord,
// packed Cands>, see candShuffle) and adds the partition's statistics to
// the bundle's.
func (f *bucketFn) ProcessElement(part int, batches func(*[]byte) bool, emit func(uint64, []byte), _ func(BucketStats)) error {
	f.keys, f.ords = f.keys[:0], f.ords[:0]
	var b []byte
	for batches(&b) {
		entryBytes := f.KeyBytes + 8
		for ; len(b) >= entryBytes; b = b[entryBytes:] {
			f.keys = append(f.keys, getKey(b, f.KeyBytes))
			f.ords = append(f.ords, binary.LittleEndian.Uint64(b[f.KeyBytes:]))
		}
	}
	wide := f.KeyBytes > sketch.BucketKeyBits/8
	if wide {
		f.ukeys = append(f.ukeys[:0], f.keys...)
		f.ukeys, f.scratch = lsh.SortUnique(f.ukeys, f.scratch)
		if len(f.ukeys) > 1<<sketch.BucketKeyBits {
			return fmt.Errorf("partition %d holds more than 2^%d distinct keys: use more partitions", part, sketch.BucketKeyBits)
		}
	}
	f.uniq = append(f.uniq[:0], f.ords...)
	f.uniq, f.scratch = lsh.SortUnique(f.uniq, f.scratch)
	if len(f.uniq) > 1<<sketch.EntryDocBits {
		return fmt.Errorf("partition %d holds more than 2^%d documents: use more partitions", part, sketch.EntryDocBits)
	}
	f.entries = f.entries[:0]
	for i, k := range f.keys {
		n, _ := slices.BinarySearch(f.uniq, f.ords[i])
		if wide {
			r, _ := slices.BinarySearch(f.ukeys, k)
			f.entries = append(f.entries, sketch.PackEntry(uint64(r), uint32(n)))
			continue
		}
		f.entries = append(f.entries, k|uint64(n))
	}
	f.scratch = lsh.SortEntries(f.entries, f.scratch, sketch.EntryDocBits)

	g, err := lsh.NewGrouper(sketch.EntryDocBits, &lsh.CandidateOptions{Cap: f.Cap})
	if err != nil {
		return err
	}
	st, err := f.group(g, f.key, emit)
	if err != nil {
		return err
	}
	f.stats = f.stats.merge(st)
	return nil
}

// bucketGrouper is what group needs of lsh.Grouper and sketch.Grouper: the
// stream of eachBucket and the metrics.
type bucketGrouper interface {
	grouper
	Metrics() lsh.CandidateMetrics
}

// group streams the partition's sorted entries (f.entries, documents
// numbered by their rank in f.uniq) through g, sends each shared bucket's
// pairs to their lower documents in batches (candShuffle: KV<lower ord,
// packed Cands>, a pair that shares several buckets of the partition once)
// and returns the partition's statistics, each listed bucket's key its
// entry key bits mapped by key. MinHash (bucketFn) and SimHash
// (simBucketFn) group through it.
func (f *bucketFn) group(g bucketGrouper, key func(uint64) uint64, emit func(uint64, []byte)) (BucketStats, error) {
	var st BucketStats
	cs := candShuffle{held: f.held[:0], emit: emit, st: &st}
	var err error
	if f.pairs, err = eachBucket(g, f.entries, f.pairs, func(bucket uint64, size int, pairs []uint64) {
		for _, p := range pairs {
			a, b := lsh.UnpackPair(p)
			cs.add(f.uniq[a], Cand{B: f.uniq[b], Bucket: bucket, Size: size})
		}
	}); err != nil {
		return BucketStats{}, err
	}
	cs.flush()
	f.held = cs.held
	m := g.Metrics()
	st.Entries, st.Buckets, st.Shared, st.Pairs = m.Entries, m.Buckets, m.SharedBuckets, m.Pairs
	st.Capped, st.CappedMembers = m.CappedBuckets, m.CappedMembers
	for _, lb := range m.Largest {
		st.Largest = append(st.Largest, LargeBucket{Size: lb.Size, Key: key(lb.Key), First: f.uniq[lb.First]})
	}
	st.Top = f.top(key)
	return st, nil
}

// top returns the partition's lsh.DefaultLargest largest shared buckets,
// capped or not, from its sorted entries, as neardup dedup lists them in
// report.json (buckets.top; jobspec.TopBuckets), keys mapped by key:
// lsh.Grouper lists only the capped ones.
func (f *bucketFn) top(key func(uint64) uint64) []LargeBucket {
	var t jobspec.TopBuckets
	t.Add(f.entries)
	var top []LargeBucket
	for _, b := range t.Buckets() {
		top = append(top, LargeBucket{Size: b.Size, Key: key(b.Key), First: f.uniq[b.First]})
	}
	return top
}

// key returns the LargeBucket.Key of an entry's key bits: the bucket key's
// high 32 bits in place, what neardup dedup's report lists (with wide keys,
// the entry holds the key's rank).
func (f *bucketFn) key(e uint64) uint64 {
	if f.KeyBytes > sketch.BucketKeyBits/8 {
		e = f.ukeys[sketch.EntryBucket(e)]
	}
	return e &^ (1<<sketch.EntryDocBits - 1)
}

// FinishBundle emits the bundle's statistics if it grouped any bucket.
func (f *bucketFn) FinishBundle(_ func(uint64, []byte), stats func(BucketStats)) {
	if f.stats.Buckets > 0 {
		stats(f.stats)
	}
}

// Cand is a candidate pair (a, B) on its way to its lower document a: the
// higher document and the bucket that paired them.
type Cand struct {
	B      uint64 // ord of the pair's higher document
	Bucket uint64 // the bucket's key in place (sketch.PackEntry(key, 0))
	Size   int    // the bucket's distinct documents
}

// Candidate pairs leave a partition in batches, one shuffled record per
// lower document a and up to candBatch of its pairs, KV<a, packed Cands>,
// instead of one record per pair emitted: a pair found in several buckets
// of the partition (near copies share most of their bands) is sent once,
// with the bucket distinctFn would choose among them. The shuffle's records
// drop from the pairs emitted (68k on the licence corpus of BENCHMARKS.md,
// each held several times by a local runner) to about the lower documents
// a partition pairs (a few hundred there). A packed Cand is candBytes:
// B (8 bytes), the bucket key's high 32 bits (4; the rest are zero) and the
// size less one (4; a partition holds at most 2^32 documents),
// little-endian.
const (
	candBytes = 16
	// candBatch is the most Cands in one record (256 KiB), and
	// candBuffered the most a partition's reducer holds (at 32 bytes each,
	// 8 MiB) before it sends them.
	candBatch    = 16 << 10
	candBuffered = 256 << 10
)

// heldCand is a candidate pair held by candShuffle.
type heldCand struct {
	a uint64
	Cand
}

// candShuffle collects a partition's candidate pairs and sends them in
// batches by lower document, each distinct pair once with its chosen
// bucket (the largest, then the lowest key). It sends when it holds
// candBuffered pairs and when flushed, so a pair may still come from
// several flushes or partitions: distinctFn removes those repeats.
type candShuffle struct {
	held []heldCand
	emit func(uint64, []byte)
	st   *BucketStats
}

// add holds the candidate pair (a, c.B), sending the pairs held if full.
func (s *candShuffle) add(a uint64, c Cand) {
	s.held = append(s.held, heldCand{a, c})
	if len(s.held) >= candBuffered {
		s.flush()
	}
}

// flush sends the pairs held: sorted by a, then b, then the bucket chosen,
// each distinct pair once, one record per a and candBatch pairs.
func (s *candShuffle) flush() {
	slices.SortFunc(s.held, func(x, y heldCand) int {
		if c := cmp.Compare(x.a, y.a); c != 0 {
			return c
		}
		return compareCands(x.Cand, y.Cand)
	})
	s.held = slices.CompactFunc(s.held, func(x, y heldCand) bool { return x.a == y.a && x.B == y.B })
	for i := 0; i < len(s.held); {
		a := s.held[i].a
		j := i
		for j < len(s.held) && j-i < candBatch && s.held[j].a == a {
			j++
		}
		buf := make([]byte, 0, (j-i)*candBytes)
		for _, h := range s.held[i:j] {
			buf = binary.LittleEndian.AppendUint64(buf, h.B)
			buf = binary.LittleEndian.AppendUint32(buf, uint32(h.Bucket>>sketch.EntryDocBits))
			buf = binary.LittleEndian.AppendUint32(buf, uint32(h.Size-1))
		}
		s.emit(a, buf)
		s.st.Sent += int64(j - i)
		s.st.Records++
		i = j
	}
	s.held = s.held[:0]
}

// appendCands appends the Cands packed in b by candShuffle to dst.
func appendCands(dst []Cand, b []byte) []Cand {
	for ; len(b) >= candBytes; b = b[candBytes:] {
		dst = append(dst, Cand{B: binary.LittleEndian.Uint64(b),
			Bucket: uint64(binary.LittleEndian.Uint32(b[8:])) << sketch.EntryDocBits,
			Size:   int(binary.LittleEndian.Uint32(b[12:])) + 1})
	}
	return dst
}

// compareCands orders candidates of one lower document by higher document,
// then the bucket a pair is verified in first: the largest, of equal ones
// the lowest key.
func compareCands(x, y Cand) int {
	if c := cmp.Compare(x.B, y.B); c != 0 {
		return c
	}
	if c := cmp.Compare(y.Size, x.Size); c != 0 {
		return c
	}
	return cmp.Compare(x.Bucket, y.Bucket)
}

// grouper is what eachBucket needs of lsh.Grouper and sketch.Grouper.
type grouper interface {
	Append(dst, entries []uint64) ([]uint64, error)
	Flush(dst []uint64) []uint64
}

// eachBucket streams sorted entries through g and calls send with the pairs
// of each shared bucket, the bucket's key in place and its size: it ends g's stream
// (Flush) after every shared bucket, so each call's pairs are that bucket's.
// Entries go in chunks and a capped bucket's pairs are sent as they come,
// bounding the pairs held. It returns pairs, the scratch buffer, for reuse.
// Flushing between buckets changes neither the pairs nor the metrics: a
// Grouper holds only the open bucket.
func eachBucket(g grouper, entries, pairs []uint64, send func(bucket uint64, size int, pairs []uint64)) ([]uint64, error) {
	const keyMask = ^uint64(1<<sketch.EntryDocBits - 1)
	const chunk = 1 << 14
	var err error
	feed := func(es []uint64, bucket uint64, size int) error {
		for len(es) > 0 {
			n := min(chunk, len(es))
			if pairs, err = g.Append(pairs[:0], es[:n]); err != nil {
				return err
			}
			if len(pairs) > 0 {
				send(bucket, size, pairs)
			}
			es = es[n:]
		}
		return nil
	}
	done := 0 // entries[:done] are fed
	for i := 0; i < len(entries); {
		key := entries[i] & keyMask
		j, size := i+1, 1
		for ; j < len(entries) && entries[j]&keyMask == key; j++ {
			if entries[j] != entries[j-1] {
				size++
			}
		}
		if size > 1 {
			// The entries before i are buckets of one document: no pairs.
			if err := feed(entries[done:j], key, size); err != nil {
				return pairs, err
			}
			if pairs = g.Flush(pairs[:0]); len(pairs) > 0 {
				send(key, size, pairs)
			}
			done = j
		}
		i = j
	}
	if err := feed(entries[done:], 0, 1); err != nil {
		return pairs, err
	}
	if pairs = g.Flush(pairs[:0]); len(pairs) > 0 {
		return pairs, fmt.Errorf("job: %d pairs from buckets of one document", len(pairs))
	}
	return pairs, nil
}

// Verification tasks. Each distinct candidate pair is verified in one
// task: the largest bucket among those that paired it (of equal ones the
// lowest key), where its documents most likely meet their other pairs, and a
// chunk of at most taskDocs of its lower document's pairs there. A
// document's info goes once to each task holding one of its pairs, so at
// most once per shared bucket it is in (once per taskDocs pairs for the
// lower end of more pairs than that in one bucket, the first member of a
// capped bucket): at most L times for L band keys a document, whatever the
// number of its candidate pairs. A task holds at most max(Cap, taskDocs+1)
// documents.
const taskDocs = 1024

// taskOf is the task of a bucket's chunk: the key in place, the chunk in
// the document bits (a chunk number stays below 2^EntryDocBits / taskDocs).
func taskOf(bucket uint64, chunk int) uint64 { return bucket | uint64(chunk) }

// distinctFn removes the duplicate candidates of one document a (pairs found
// in several buckets), counts the distinct ones and assigns each to its
// verification task: it emits KV<task, Pair> and, for both documents,
// KV<split, Need>.
type distinctFn struct {
	cs []Cand
	n  int64
}

// StartBundle resets the bundle's count.
func (f *distinctFn) StartBundle(_ func(uint64, Pair), _ func(int, Need), _ func(int64)) { f.n = 0 }

// ProcessElement emits each distinct candidate pair (a, b) of document a
// once, to its task, with the documents the task needs, and counts them.
func (f *distinctFn) ProcessElement(a uint64, it func(*[]byte) bool, emitPair func(uint64, Pair), emitNeed func(int, Need), _ func(int64)) {
	f.cs = f.cs[:0]
	var b []byte
	for it(&b) {
		f.cs = appendCands(f.cs, b)
	}
	// The largest bucket of each b (of equal ones the lowest key), then a's
	// pairs by bucket.
	slices.SortFunc(f.cs, compareCands)
	f.cs = slices.CompactFunc(f.cs, func(x, y Cand) bool { return x.B == y.B })
	slices.SortFunc(f.cs, func(x, y Cand) int {
		if c := cmp.Compare(x.Bucket, y.Bucket); c != 0 {
			return c
		}
		return cmp.Compare(x.B, y.B)
	})
	sa, la := splitOf(a), localOf(a)
	first := 0 // the first pair of the current bucket
	for i, c := range f.cs {
		if i > 0 && c.Bucket != f.cs[i-1].Bucket {
			first = i
		}
		t := taskOf(c.Bucket, (i-first)/taskDocs)
		if (i-first)%taskDocs == 0 {
			emitNeed(sa, Need{Local: la, Task: t}) // a, once per task
		}
		emitNeed(splitOf(c.B), Need{Local: localOf(c.B), Task: t})
		emitPair(t, Pair{A: a, B: c.B})
	}
	f.n += int64(len(f.cs))
}

// FinishBundle emits the bundle's count of distinct pairs, if not zero.
func (f *distinctFn) FinishBundle(_ func(uint64, Pair), _ func(int, Need), count func(int64)) {
	if f.n > 0 {
		count(f.n)
	}
}
