package dedup

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/neardup/neardup/internal/extsort"
	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/internal/radix"
)

// The verified pairs past the budget.
//
// A corpus with hubs (boilerplate pages, many exact copies) has far more
// verified pairs than documents: a group of G copies alone adds G(G−1)/2
// (expander). So the pairs are never held: verify and the expander add
// them to an external sort by (a, b) within a sixteenth of the budget
// (edgeStore), which leaves them in memory when they fit and else in one
// file of fixed-size records, and every later stage reads them in (a, b)
// order, as many times as it needs, in passes: place, cluster (beside a
// pass that tallies what the report needs, edgeTally), writePairs (which sorts them
// again by ids, within another sixteenth), the HTML report's samples and the
// golden score. What is held is per document (O(n)) or per cluster.

// edgeRecordBytes is the size of one edge in the sorted file: a and b
// (uint32) and the verdict's two float64s, little-endian.
const edgeRecordBytes = 24

// edgeStore collects edges and, once sealed, yields them in (a, b) order,
// ties by the verdict's bits (extsort.CompareRecords), whatever the order
// of adding.
//
// Up to its limit the edges are held in memory, where seal sorts them: the
// pairs within the groups of copies, which share one verdict (addSame), as
// bare keys that the expander sorts while the feature sets are made
// (sortSame), and the others as edges. At 5M short documents the groups
// were 372k of the 487k edges, and the sort of all of them in
// extsort.RecordSorter at seal ran alone after the pair checks (0.08 s
// wall, one core idle). Past the limit every edge goes to an external sort
// (sorter), as it always did.
type edgeStore struct {
	dir   string
	limit int // edges held in memory: as many as the sorter's records
	n     int64

	// While collecting, before any spill.
	same       []uint64 // a<<32 | b, of the edges whose verdict is sameV
	sameV      jobspec.Verdict
	sameSorted int // len(same) when last sorted
	buf        []edge
	sorter     *extsort.RecordSorter // past limit: every edge

	mem   []edge   // sealed, when nothing was spilled
	file  *os.File // sealed, when some was: edgeRecordBytes a record
	bytes int64    // bytes spilled: the sort's runs and the sorted file
}

// newEdgeStore returns a store that holds up to memory bytes of edges and
// spills the rest into dir.
func newEdgeStore(dir string, memory int64) *edgeStore {
	return &edgeStore{dir: dir, limit: max(int(memory/extsort.RecordBytes), 1024)}
}

// edgeRecord is e as a record sorting by (a, b).
func edgeRecord(e edge) extsort.Record {
	return extsort.Record{
		Key: [2]uint64{uint64(e.a)<<32 | uint64(e.b)},
		Val: [2]uint64{math.Float64bits(e.Est), math.Float64bits(e.Exact)},
	}
}

// compareEdges orders edges as their records sort (extsort.CompareRecords):
// by (a, b), then by the bits of the verdict's floats.
func compareEdges(x, y edge) int {
	if c := cmp.Compare(uint64(x.a)<<32|uint64(x.b), uint64(y.a)<<32|uint64(y.b)); c != 0 {
		return c
	}
	if c := cmp.Compare(math.Float64bits(x.Est), math.Float64bits(y.Est)); c != 0 {
		return c
	}
	return cmp.Compare(math.Float64bits(x.Exact), math.Float64bits(y.Exact))
}

// verdictOf reads the verdict of a record made by edgeRecord or pairRecord.
func verdictOf(rec extsort.Record) jobspec.Verdict {
	return jobspec.Verdict{Est: math.Float64frombits(rec.Val[0]), Exact: math.Float64frombits(rec.Val[1])}
}

// add adds an edge (before seal).
func (s *edgeStore) add(e edge) error {
	s.n++
	if s.sorter != nil {
		return s.sorter.Add(edgeRecord(e))
	}
	s.buf = append(s.buf, e)
	return s.checkLimit()
}

// addSame adds the edge (a, b) with verdict v (before seal). Edges that
// share a verdict are held as their keys alone: v should be that of the
// first call (the expander's groups of copies have one), and any other is
// added as add does.
func (s *edgeStore) addSame(a, b uint32, v jobspec.Verdict) error {
	if s.sorter != nil || (len(s.same) > 0 && !sameVerdict(v, s.sameV)) {
		return s.add(edge{a: a, b: b, Verdict: v})
	}
	s.n++
	s.sameV = v
	s.same = append(s.same, uint64(a)<<32|uint64(b))
	return s.checkLimit()
}

// sameVerdict reports whether x and y have the same bits (as records
// compare them: NaNs and signed zeros are not merged).
func sameVerdict(x, y jobspec.Verdict) bool {
	return math.Float64bits(x.Est) == math.Float64bits(y.Est) && math.Float64bits(x.Exact) == math.Float64bits(y.Exact)
}

// sortSame sorts the edges addSame added so far, so that seal does not:
// the expander calls it where the rest of the run does not wait for it.
func (s *edgeStore) sortSame() {
	if s.sorter != nil || s.sameSorted == len(s.same) {
		return
	}
	radix.Sort(s.same, nil)
	s.sameSorted = len(s.same)
}

// checkLimit moves every edge held into the external sort once there are
// limit: it spills them in runs of limit, as it did when they were added
// to it one by one.
func (s *edgeStore) checkLimit() error {
	if len(s.same)+len(s.buf) < s.limit {
		return nil
	}
	s.sorter = extsort.NewRecords(s.dir, "edges", s.limit)
	same, buf := s.same, s.buf
	s.same, s.buf, s.sameSorted = nil, nil, 0
	for _, k := range same {
		if err := s.sorter.Add(edgeRecord(edge{a: uint32(k >> 32), b: uint32(k), Verdict: s.sameV})); err != nil {
			return err
		}
	}
	for _, e := range buf {
		if err := s.sorter.Add(edgeRecord(e)); err != nil {
			return err
		}
	}
	return nil
}

// len is the number of edges added.
func (s *edgeStore) len() int64 { return s.n }

// seal sorts the edges: into memory when none was spilled, else into a file.
func (s *edgeStore) seal() error {
	if s.sorter == nil {
		s.sortSame()
		slices.SortFunc(s.buf, compareEdges)
		s.mem = mergeEdges(make([]edge, 0, s.n), s.same, s.sameV, s.buf)
		s.same, s.buf = nil, nil
		return nil
	}
	s.bytes = s.sorter.SpilledBytes()
	it, err := s.sorter.Iter()
	if err != nil {
		return err
	}
	defer it.Close()
	s.sorter = nil
	f, err := os.CreateTemp(s.dir, "edges-sorted-*")
	if err != nil {
		return fmt.Errorf("dedup: verified pairs: %w", err)
	}
	s.file = f
	w := bufio.NewWriterSize(f, 1<<20)
	var buf [edgeRecordBytes]byte
	for rec, ok := it.Next(); ok; rec, ok = it.Next() {
		binary.LittleEndian.PutUint64(buf[:], rec.Key[0])
		binary.LittleEndian.PutUint64(buf[8:], rec.Val[0])
		binary.LittleEndian.PutUint64(buf[16:], rec.Val[1])
		if _, err := w.Write(buf[:]); err != nil {
			return fmt.Errorf("dedup: verified pairs: %w", err)
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("dedup: verified pairs: %w", err)
	}
	s.bytes += s.n * edgeRecordBytes
	return nil
}

// mergeEdges appends to dst the edges of keys (sorted, each with verdict v)
// and of es (sorted by compareEdges), in compareEdges's order.
func mergeEdges(dst []edge, keys []uint64, v jobspec.Verdict, es []edge) []edge {
	i := 0
	for _, k := range keys {
		e := edge{a: uint32(k >> 32), b: uint32(k), Verdict: v}
		for i < len(es) && compareEdges(es[i], e) < 0 {
			dst = append(dst, es[i])
			i++
		}
		dst = append(dst, e)
	}
	return append(dst, es[i:]...)
}

// errStopEdges ends a pass early (a consumer that stopped reading).
var errStopEdges = errors.New("dedup: edge pass stopped")

// each calls fn with every edge, in (a, b) order (after seal). Passes may
// run concurrently.
func (s *edgeStore) each(fn func(edge) error) error {
	if s.file == nil {
		for _, e := range s.mem {
			if err := fn(e); err != nil {
				return err
			}
		}
		return nil
	}
	// Read at offsets, not from the file's position: passes may run at
	// once (pairs.tsv and the HTML report's samples, in the write stage).
	rd := bufio.NewReaderSize(io.NewSectionReader(s.file, 0, s.n*edgeRecordBytes), 1<<20)
	var buf [edgeRecordBytes]byte
	for range s.n {
		if _, err := io.ReadFull(rd, buf[:]); err != nil {
			return fmt.Errorf("dedup: verified pairs: %w", err)
		}
		ab := binary.LittleEndian.Uint64(buf[:])
		e := edge{a: uint32(ab >> 32), b: uint32(ab), Verdict: jobspec.Verdict{
			Est:   math.Float64frombits(binary.LittleEndian.Uint64(buf[8:])),
			Exact: math.Float64frombits(binary.LittleEndian.Uint64(buf[16:])),
		}}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// close drops the edges and removes what was spilled.
func (s *edgeStore) close() {
	if s.sorter != nil {
		s.sorter.Close()
	}
	if s.file != nil {
		s.file.Close()
		os.Remove(s.file.Name())
	}
	s.sorter, s.file, s.mem, s.same, s.buf = nil, nil, nil, nil, nil
}

// eachEdge calls fn with every verified pair in (a, b) order, numbered as
// the document table numbers documents (after place).
func (r *run) eachEdge(fn func(edge) error) error {
	f := &r.ref
	if !f.placed || f.n == 0 {
		return r.edges.each(fn)
	}
	return r.edges.each(func(e edge) error {
		if e.a < f.n {
			j, _ := slices.BinarySearch(f.used, e.a)
			e.a = uint32(j)
		} else {
			e.a = e.a - f.n + uint32(f.m)
		}
		e.b = e.b - f.n + uint32(f.m)
		return fn(e)
	})
}
