package dedup

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/neardup/neardup/internal/extsort"
	"github.com/neardup/neardup/internal/jobspec"
)

// The verified pairs past the budget.
//
// A corpus with hubs (boilerplate pages, many exact copies) has far more
// verified pairs than documents: a group of G copies alone adds G(G−1)/2
// (expander). So the pairs are never held: verify and the expander add
// them to an external sort by (a, b) within a sixteenth of the budget
// (edgeStore), which leaves them in memory when they fit and else in one
// file of fixed-size records, and every later stage reads them in (a, b)
// order, as many times as it needs, in passes: place, cluster (which tallies
// what the report needs on the way, edgeTally), writePairs (which sorts them
// again by ids, within another sixteenth), the HTML report's samples and the
// golden score. What is held is per document (O(n)) or per cluster.

// edgeRecordBytes is the size of one edge in the sorted file: a and b
// (uint32) and the verdict's two float64s, little-endian.
const edgeRecordBytes = 24

// edgeStore collects edges and, once sealed, yields them in (a, b) order.
type edgeStore struct {
	dir    string
	sorter *extsort.RecordSorter // while collecting
	n      int64

	mem   []edge   // sealed, when nothing was spilled
	file  *os.File // sealed, when some was: edgeRecordBytes a record
	bytes int64    // bytes spilled: the sort's runs and the sorted file
}

// newEdgeStore returns a store that holds up to memory bytes of edges and
// spills the rest into dir.
func newEdgeStore(dir string, memory int64) *edgeStore {
	return &edgeStore{dir: dir, sorter: extsort.NewRecords(dir, "edges", int(memory/extsort.RecordBytes))}
}

// edgeRecord is e as a record sorting by (a, b).
func edgeRecord(e edge) extsort.Record {
	return extsort.Record{
		Key: [2]uint64{uint64(e.a)<<32 | uint64(e.b)},
		Val: [2]uint64{math.Float64bits(e.Est), math.Float64bits(e.Exact)},
	}
}

// verdictOf reads the verdict of a record made by edgeRecord or pairRecord.
func verdictOf(rec extsort.Record) jobspec.Verdict {
	return jobspec.Verdict{Est: math.Float64frombits(rec.Val[0]), Exact: math.Float64frombits(rec.Val[1])}
}

// add adds an edge (before seal).
func (s *edgeStore) add(e edge) error {
	s.n++
	return s.sorter.Add(edgeRecord(e))
}

// len is the number of edges added.
func (s *edgeStore) len() int64 { return s.n }

// seal sorts the edges: into memory when none was spilled, else into a file.
func (s *edgeStore) seal() error {
	spilled := s.sorter.Runs() > 0
	s.bytes = s.sorter.SpilledBytes()
	it, err := s.sorter.Iter()
	if err != nil {
		return err
	}
	defer it.Close()
	s.sorter = nil
	if !spilled {
		s.mem = make([]edge, 0, s.n)
		for rec, ok := it.Next(); ok; rec, ok = it.Next() {
			s.mem = append(s.mem, edge{a: uint32(rec.Key[0] >> 32), b: uint32(rec.Key[0]), Verdict: verdictOf(rec)})
		}
		return it.Err()
	}
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
	s.sorter, s.file, s.mem = nil, nil, nil
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
