package job

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"github.com/zeebo/xxh3"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/jobspec"
)

// Sorted, sharded outputs. Each output is cut into shards by ranges of its
// sort order, each shard sorted by one worker, so that the shards read in
// order are the single file neardup dedup writes:
//
//	kept       one shard per input split (input order is split order)
//	clusters   one shard per input split, by the split of the cluster's
//	           lowest member; numbered with the counts of earlier shards
//	pairs      ranges of the (idA, idB) order, cut at quantiles of a
//	           deterministic sample (the keys of least hash) so that shards
//	           hold about ShardLines lines
//
// Under SingleFile each output is one shard written by one worker, under
// dedup's file name.

// PairLine is a pairs.tsv line with its sort key: the row's (IDA, IDB, A,
// B) in an encoding whose bytewise order is jobspec.ComparePairRows's.
type PairLine struct {
	Key, Text []byte // the sort key; the line, newline included
	Marker    bool   // an empty placeholder that makes sure a shard is written
}

// appendKeyBytes appends b in an order-preserving, self-delimiting form:
// 0x00 escaped as 0x00 0xFF, terminated by 0x00 0x01.
func appendKeyBytes(dst, b []byte) []byte {
	for _, c := range b {
		dst = append(dst, c)
		if c == 0 {
			dst = append(dst, 0xFF)
		}
	}
	return append(dst, 0, 1)
}

func pairLine(e Edge) PairLine {
	r := jobspec.NewPairRow(e.IDA, e.IDB, e.A, e.B, jobspec.Verdict{Est: e.Est, Exact: e.Exact})
	k := appendKeyBytes(nil, r.IDA)
	k = appendKeyBytes(k, r.IDB)
	k = binary.BigEndian.AppendUint64(k, r.A)
	k = binary.BigEndian.AppendUint64(k, r.B)
	return PairLine{Key: k, Text: r.AppendLine(nil)}
}

// sampleSize is how many keys the pairs sample keeps.
const sampleSize = 4096

// PairSample is the number of pair lines and the sampleSize keys of least
// xxh3 hash among them: a uniform sample that does not depend on bundling.
type PairSample struct {
	Count int64    // pair lines seen
	Keys  [][]byte // the sampleSize keys of least xxh3 hash and maybe others; at most 2·sampleSize
}

type pairSampleFn struct{}

// AddInput counts line l and adds its key to the sample.
func (pairSampleFn) AddInput(s PairSample, l PairLine) PairSample {
	s.Count++
	s.Keys = bottomK(append(s.Keys, l.Key))
	return s
}

// MergeAccumulators merges two samples.
func (pairSampleFn) MergeAccumulators(a, b PairSample) PairSample {
	return PairSample{Count: a.Count + b.Count, Keys: bottomK(append(slices.Clone(a.Keys), b.Keys...))}
}

func bottomK(keys [][]byte) [][]byte {
	if len(keys) <= 2*sampleSize {
		return keys
	}
	slices.SortFunc(keys, func(x, y []byte) int {
		hx, hy := xxh3.Hash(x), xxh3.Hash(y)
		switch {
		case hx < hy:
			return -1
		case hx > hy:
			return 1
		}
		return bytes.Compare(x, y)
	})
	return slices.Clone(keys[:sampleSize])
}

// Splitters are the first keys of pairs shards 1…N−1.
type Splitters struct {
	N    int      // number of pairs shards, at least 1
	Keys [][]byte // N−1 distinct keys, ascending
}

// splittersFn picks N = ⌈count/ShardLines⌉ shards (one under SingleFile) and
// cuts the sorted sample at its N-quantiles.
type splittersFn struct{ C Config }

// ProcessElement chooses the pairs shards from sample s and emits their
// Splitters.
func (f *splittersFn) ProcessElement(s PairSample, emit func(Splitters)) {
	keys := bottomK(s.Keys)
	if len(keys) > sampleSize {
		keys = keys[:sampleSize]
	}
	slices.SortFunc(keys, bytes.Compare)
	n := 1
	if !f.C.SingleFile && f.C.ShardLines > 0 {
		n = int(min(int64(len(keys)), (s.Count+int64(f.C.ShardLines)-1)/int64(f.C.ShardLines)))
		n = max(n, 1)
	}
	sp := Splitters{N: n}
	for j := 1; j < n; j++ {
		sp.Keys = append(sp.Keys, keys[j*len(keys)/n])
	}
	sp.Keys = slices.CompactFunc(sp.Keys, bytes.Equal)
	sp.N = len(sp.Keys) + 1
	emit(sp)
}

// shardPairFn sends a line to its shard.
func shardPairFn(l PairLine, sp Splitters, emit func(int, PairLine)) {
	i, found := slices.BinarySearchFunc(sp.Keys, l.Key, bytes.Compare)
	if found {
		i++
	}
	emit(i, l)
}

// pairMarkersFn emits one placeholder per shard, so that empty shards (only
// possible with no pairs at all) are written too.
func pairMarkersFn(sp Splitters, emit func(int, PairLine)) {
	for i := range sp.N {
		emit(i, PairLine{Marker: true})
	}
}

// writePairsFn sorts and writes one pairs shard.
type writePairsFn struct{ C Config }

// ProcessElement sorts the lines of pairs shard shard and writes it.
func (f *writePairsFn) ProcessElement(ctx context.Context, shard int, it func(*PairLine) bool, sp Splitters) error {
	var lines []PairLine
	var l PairLine
	for it(&l) {
		if !l.Marker {
			lines = append(lines, l)
		}
	}
	slices.SortFunc(lines, func(x, y PairLine) int { return bytes.Compare(x.Key, y.Key) })
	return writeOutput(ctx, f.C.Out, f.C.shardName(jobspec.PairsFile, shard, sp.N), func(w *bufio.Writer) error {
		for _, l := range lines {
			if _, err := w.Write(l.Text); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeOutput writes one output file under dir through a buffer; the file
// appears under its name only once complete (see outputFile).
func writeOutput(ctx context.Context, dir, name string, fn func(*bufio.Writer) error) error {
	path := joinPath(dir, name)
	out, err := openOutput(ctx, path)
	if err != nil {
		return err
	}
	defer out.abort()
	w := bufio.NewWriterSize(out, 1<<20)
	if err := fn(w); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return out.commit()
}

// clusterShardFn sends a cluster to its shard: the split of its lowest
// member, or 0 for a single file.
type clusterShardFn struct{ C Config }

// ProcessElement keys cluster c by its clusters.jsonl shard.
func (f *clusterShardFn) ProcessElement(c ClusterOut, emit func(int, ClusterOut)) {
	if f.C.SingleFile {
		emit(0, c)
	} else {
		emit(splitOf(c.First), c)
	}
}

// ShardCount is one output shard's number of clusters.
type ShardCount struct {
	Shard int   // the clusters.jsonl shard
	Count int64 // clusters in it
}

func countOne(shard int, _ ClusterOut) (int, int64) { return shard, 1 }
func sumCount(a, b int64) int64                     { return a + b }
func toShardCount(shard int, n int64) ShardCount    { return ShardCount{shard, n} }

// writeClustersFn sorts one clusters shard by lowest member, numbers it
// after the clusters of the earlier shards and writes it.
type writeClustersFn struct {
	C      Config
	Shards int
}

// ProcessElement sorts the clusters of shard shard by lowest member,
// numbers them after the clusters of the earlier shards and writes them.
func (f *writeClustersFn) ProcessElement(ctx context.Context, shard int, it func(*ClusterOut) bool, counts func(*ShardCount) bool) error {
	var offset int64
	var sc ShardCount
	for counts(&sc) {
		if sc.Shard < shard {
			offset += sc.Count
		}
	}
	var cs []ClusterOut
	var c ClusterOut
	for it(&c) {
		if !c.Marker {
			cs = append(cs, c)
		}
	}
	slices.SortFunc(cs, func(x, y ClusterOut) int {
		switch {
		case x.First < y.First:
			return -1
		case x.First > y.First:
			return 1
		}
		return 0
	})
	var line []byte
	return writeOutput(ctx, f.C.Out, f.C.shardName(jobspec.ClustersFile, shard, f.Shards), func(w *bufio.Writer) error {
		for i, c := range cs {
			line = jobspec.AppendClusterLine(line[:0], int(offset)+i, c.Kept, c.Members)
			if _, err := w.Write(line); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeKeptFn writes one kept.jsonl shard: the input records of its splits,
// in order, except the removed documents and, under SkipBad, the records
// that fail to parse (dedup never keeps them). Records are copied with
// corpus.Writer, as corpus.CopyKept copies them.
type writeKeptFn struct {
	C      Config
	Shards int
}

// ProcessElement writes kept.jsonl shard shard from the records of its
// splits less the removed ones (and, under SkipBad, those that fail to
// parse), and emits the number of records written.
func (f *writeKeptFn) ProcessElement(ctx context.Context, shard int, splits func(*int) bool, removedIt func(*uint64) bool, kept func(int64)) error {
	var sps []int
	var sp int
	for splits(&sp) {
		sps = append(sps, sp)
	}
	slices.Sort(sps)
	var removed []uint64
	var o uint64
	for removedIt(&o) {
		removed = append(removed, o)
	}
	slices.Sort(removed)
	parser, err := corpus.NewParser(f.C.Corpus.options())
	if err != nil {
		return err
	}
	var doc corpus.Document
	if f.C.KeptName != jobspec.KeptFile {
		return writeOutput(ctx, f.C.Out, f.C.shardName(f.C.KeptName, shard, f.Shards), func(w *bufio.Writer) error {
			var n int64
			for _, sp := range sps {
				m, err := f.copyWARC(ctx, w, sp, removed, parser)
				if err != nil {
					return err
				}
				n += m
			}
			kept(n)
			return nil
		})
	}
	return writeOutput(ctx, f.C.Out, f.C.shardName(jobspec.KeptFile, shard, f.Shards), func(w *bufio.Writer) error {
		cw, err := corpus.NewWriter(w, f.C.Corpus.options())
		if err != nil {
			return err
		}
		for _, sp := range sps {
			_, err := eachRecord(ctx, &f.C, sp, func(rec *corpus.Record) (bool, error) {
				if _, found := slices.BinarySearch(removed, ord(sp, rec.Index)); found {
					return true, nil
				}
				if f.C.Corpus.SkipBad && parser.Parse(rec, &doc) != nil {
					return true, nil
				}
				return true, cw.Write(rec)
			})
			if err != nil {
				return err
			}
		}
		if err := cw.Flush(); err != nil {
			return err
		}
		kept(cw.Count())
		return nil
	})
}

// copyWARC writes the kept records of WARC or WET split sp to w as
// corpus.CopyKept writes them (each record's gzip member byte for byte): it
// reads the split once to list them — every document handed out, less the
// removed and, under SkipBad, those that fail to parse — and once to copy
// them. It returns how many it wrote.
func (f *writeKeptFn) copyWARC(ctx context.Context, w io.Writer, sp int, removed []uint64, parser *corpus.Parser) (int64, error) {
	path, cleanup, err := localize(ctx, f.C.Splits[sp])
	if err != nil {
		return 0, err
	}
	defer cleanup()
	var keep corpus.Indices
	var doc corpus.Document
	_, err = eachRecordAt(ctx, &f.C, path, func(rec *corpus.Record) (bool, error) {
		if _, found := slices.BinarySearch(removed, ord(sp, rec.Index)); found {
			return true, nil
		}
		if f.C.Corpus.SkipBad && parser.Parse(rec, &doc) != nil {
			return true, nil
		}
		keep = append(keep, rec.Index)
		return true, nil
	})
	if err != nil {
		return 0, err
	}
	return corpus.CopyKept(ctx, w, []string{path}, f.C.Corpus.options(), keep)
}
