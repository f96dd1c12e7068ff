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
}

func (a BucketStats) merge(b BucketStats) BucketStats {
	a.Entries += b.Entries
	a.Buckets += b.Buckets
	a.Shared += b.Shared
	a.Pairs += b.Pairs
	a.Capped += b.Capped
	a.CappedMembers += b.CappedMembers
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
	stats   BucketStats
}

// StartBundle resets the bundle's statistics.
func (f *bucketFn) StartBundle(_ func(uint64, uint64), _ func(BucketStats)) { f.stats = BucketStats{} }

// ProcessElement groups one partition's band-key entries into buckets,
// emits their candidate pairs as KV<lower ord, higher ord> (a pair that
// shares several buckets once per bucket) and adds the partition's
// statistics to the bundle's.
func (f *bucketFn) ProcessElement(part int, batches func(*[]byte) bool, emit func(uint64, uint64), _ func(BucketStats)) error {
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
	send := func() {
		for _, p := range f.pairs {
			a, b := lsh.UnpackPair(p)
			emit(f.uniq[a], f.uniq[b])
		}
	}
	const chunk = 1 << 14 // a capped bucket emits as it goes; bound the pairs held
	for i := 0; i < len(f.entries); i += chunk {
		if f.pairs, err = g.Append(f.pairs[:0], f.entries[i:min(i+chunk, len(f.entries))]); err != nil {
			return err
		}
		send()
	}
	f.pairs = g.Flush(f.pairs[:0])
	send()
	m := g.Metrics()
	st := BucketStats{Entries: m.Entries, Buckets: m.Buckets, Shared: m.SharedBuckets, Pairs: m.Pairs,
		Capped: m.CappedBuckets, CappedMembers: m.CappedMembers}
	for _, lb := range m.Largest {
		st.Largest = append(st.Largest, LargeBucket{Size: lb.Size, Key: f.key(lb.Key), First: f.uniq[lb.First]})
	}
	st.Top = f.top()
	f.stats = f.stats.merge(st)
	return nil
}

// top returns the partition's lsh.DefaultLargest largest shared buckets,
// capped or not, from its sorted entries, as neardup dedup lists them in
// report.json (buckets.top; jobspec.TopBuckets): lsh.Grouper lists only the
// capped ones.
func (f *bucketFn) top() []LargeBucket {
	var t jobspec.TopBuckets
	t.Add(f.entries)
	var top []LargeBucket
	for _, b := range t.Buckets() {
		top = append(top, LargeBucket{Size: b.Size, Key: f.key(b.Key), First: f.uniq[b.First]})
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
func (f *bucketFn) FinishBundle(_ func(uint64, uint64), stats func(BucketStats)) {
	if f.stats.Buckets > 0 {
		stats(f.stats)
	}
}

// distinctFn removes the duplicate candidates of one document a (pairs found
// in several bands) and counts the distinct ones.
type distinctFn struct {
	bs []uint64
	n  int64
}

// StartBundle resets the bundle's count.
func (f *distinctFn) StartBundle(_ func(uint64, uint64), _ func(int64)) { f.n = 0 }

// ProcessElement emits each distinct candidate pair (a, b) of document a
// once and counts them.
func (f *distinctFn) ProcessElement(a uint64, it func(*uint64) bool, emit func(uint64, uint64), _ func(int64)) {
	f.bs = f.bs[:0]
	var b uint64
	for it(&b) {
		f.bs = append(f.bs, b)
	}
	slices.Sort(f.bs)
	f.bs = slices.Compact(f.bs)
	for _, b := range f.bs {
		emit(a, b)
	}
	f.n += int64(len(f.bs))
}

// FinishBundle emits the bundle's count of distinct pairs, if not zero.
func (f *distinctFn) FinishBundle(_ func(uint64, uint64), count func(int64)) {
	if f.n > 0 {
		count(f.n)
	}
}

// needFn emits both documents of a candidate pair by split, with their
// roles, for the pass that reads their signatures and texts.
func needFn(a, b uint64, emit func(int, int64)) {
	emit(splitOf(a), localOf(a)|roleA)
	emit(splitOf(b), localOf(b)|roleB)
}
