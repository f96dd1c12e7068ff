package dupid

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"slices"

	"github.com/neardup/neardup/internal/radix"
)

// entryBytes is what one buffered record costs in memory besides its
// payload: its key (8 bytes), its payload offset (4), and the packed sort
// key and the radix sort's scratch (8 each).
const entryBytes = 28

// maxBuffered bounds the records of one in-memory buffer: a record's place
// in the buffer takes the low 24 bits of the packed sort key.
const maxBuffered = 1 << 24

// maxArena bounds the payload bytes of one buffer, so that offsets fit in
// 32 bits.
const maxArena = 1 << 31

// sorter collects (key, payload) records and yields them ordered by key,
// records of equal key in the order they were added. It holds records in
// memory up to a byte budget, then sorts them and writes them to a
// temporary file as a run; reading merges the runs with what is in memory.
// Each record carries its sequence number (0, 1, 2, … in Add order). Not
// safe for concurrent use.
type sorter struct {
	dir, prefix string
	limit       int64 // bytes of buffered records before a spill

	keys    []uint64
	offs    []uint32 // payload i is arena[offs[i]:offs[i+1]] (or to the end)
	arena   []byte
	pack    []uint64
	scratch []uint64
	seq     uint64 // sequence number of the next record
	seq0    uint64 // sequence number of keys[0]

	runs    []string
	spilled int64 // bytes written to runs
}

func newSorter(dir, prefix string, limit int64) *sorter {
	return &sorter{dir: dir, prefix: prefix, limit: limit}
}

// add adds a record; payload is copied. It may spill a run.
func (s *sorter) add(key uint64, payload []byte) error {
	s.keys = append(s.keys, key)
	s.offs = append(s.offs, uint32(len(s.arena)))
	s.arena = append(s.arena, payload...)
	s.seq++
	if int64(len(s.keys))*entryBytes+int64(len(s.arena)) >= s.limit || len(s.keys) >= maxBuffered || len(s.arena) >= maxArena {
		return s.spill()
	}
	return nil
}

// memBytes is what the buffered records cost.
func (s *sorter) memBytes() int64 { return int64(len(s.keys))*entryBytes + int64(len(s.arena)) }

func (s *sorter) payload(i uint32) []byte {
	end := uint32(len(s.arena))
	if int(i)+1 < len(s.offs) {
		end = s.offs[i+1]
	}
	return s.arena[s.offs[i]:end]
}

// order sorts the buffered records by (key, place) and returns their places
// in that order, in s.pack's memory.
//
// A radix sort of packed values is several times faster than a comparison
// sort: each value is 40 bits of the key, from its highest varying bit
// down, above the record's 24-bit place. Records whose 40 bits are equal but
// whose keys differ below them (rare for hashes, none for keys under 2^40)
// are then put in order with a comparison sort of their run.
func (s *sorter) order() []uint64 {
	n := len(s.keys)
	var all uint64
	for _, k := range s.keys {
		all |= k
	}
	shift := max(0, bits.Len64(all)-40)
	s.pack = slices.Grow(s.pack[:0], n)[:n]
	for i, k := range s.keys {
		s.pack[i] = (k>>shift)<<24 | uint64(i)
	}
	s.scratch = radix.Sort(s.pack, s.scratch[:cap(s.scratch)])
	const place = 1<<24 - 1
	if shift > 0 {
		for i := 0; i < n; {
			j := i + 1
			for j < n && s.pack[j]>>24 == s.pack[i]>>24 {
				j++
			}
			if j-i > 1 {
				slices.SortFunc(s.pack[i:j], func(a, b uint64) int {
					ka, kb := s.keys[a&place], s.keys[b&place]
					if ka != kb {
						if ka < kb {
							return -1
						}
						return 1
					}
					return int(a&place) - int(b&place)
				})
			}
			i = j
		}
	}
	for i, p := range s.pack {
		s.pack[i] = p & place
	}
	return s.pack
}

// spill writes the buffered records, sorted, to a new run.
//
// A run is a sequence of records: uvarint key minus the previous record's
// key, uvarint sequence number, uvarint payload length, payload.
func (s *sorter) spill() error {
	if len(s.keys) == 0 {
		return nil
	}
	order := s.order()
	f, err := os.CreateTemp(s.dir, s.prefix+"-run-*")
	if err != nil {
		return fmt.Errorf("dupid: spill: %w", err)
	}
	s.runs = append(s.runs, f.Name()) // removed by close, even if incomplete
	w := bufio.NewWriterSize(f, 1<<20)
	var tmp []byte
	prev := uint64(0)
	for _, i := range order {
		k := s.keys[i]
		p := s.payload(uint32(i))
		tmp = binary.AppendUvarint(tmp[:0], k-prev)
		tmp = binary.AppendUvarint(tmp, s.seq0+i)
		tmp = binary.AppendUvarint(tmp, uint64(len(p)))
		prev = k
		w.Write(tmp)
		w.Write(p) // a write error stays in w for Flush
	}
	err = w.Flush()
	if st, serr := f.Stat(); serr == nil {
		s.spilled += st.Size()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("dupid: spill %s: %w", f.Name(), err)
	}
	s.seq0 = s.seq
	s.keys, s.offs, s.arena = s.keys[:0], s.offs[:0], s.arena[:0]
	return nil
}

// close removes the runs and drops the buffer.
func (s *sorter) close() error {
	var first error
	for _, name := range s.runs {
		if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) && first == nil {
			first = fmt.Errorf("dupid: %w", err)
		}
	}
	s.runs = nil
	s.keys, s.offs, s.arena, s.pack, s.scratch = nil, nil, nil, nil, nil
	return first
}

// merge returns an iterator over every record added, in (key, sequence)
// order. No record may be added afterwards; close the sorter when done.
func (s *sorter) merge() (*merger, error) {
	m := &merger{}
	if len(s.keys) > 0 {
		m.srcs = append(m.srcs, &source{s: s, order: s.order()})
	}
	for _, name := range s.runs {
		f, err := os.Open(name)
		if err != nil {
			m.close()
			return nil, fmt.Errorf("dupid: %w", err)
		}
		m.srcs = append(m.srcs, &source{f: f, r: bufio.NewReaderSize(f, 1<<16)})
	}
	for _, src := range m.srcs {
		ok, err := src.next()
		if err != nil {
			m.close()
			return nil, err
		}
		if ok {
			m.h = append(m.h, src)
		}
	}
	heap.Init(&m.h)
	return m, nil
}

// source is the buffered records or one run, as the merge reads them.
type source struct {
	// buffered records
	s     *sorter
	order []uint64
	pos   int
	// a run
	f   *os.File
	r   *bufio.Reader
	buf []byte

	key, seq uint64
	payload  []byte // valid until the next call of next
}

func (src *source) next() (bool, error) {
	if src.s != nil {
		if src.pos >= len(src.order) {
			return false, nil
		}
		i := src.order[src.pos]
		src.pos++
		src.key, src.seq, src.payload = src.s.keys[i], src.s.seq0+i, src.s.payload(uint32(i))
		return true, nil
	}
	d, err := binary.ReadUvarint(src.r)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, src.corrupt(err)
	}
	seq, err := binary.ReadUvarint(src.r)
	if err != nil {
		return false, src.corrupt(err)
	}
	n, err := binary.ReadUvarint(src.r)
	if err != nil || n > maxArena {
		return false, src.corrupt(err)
	}
	src.buf = slices.Grow(src.buf[:0], int(n))[:n]
	if _, err := io.ReadFull(src.r, src.buf); err != nil {
		return false, src.corrupt(err)
	}
	src.key += d
	src.seq, src.payload = seq, src.buf
	return true, nil
}

func (src *source) corrupt(err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("dupid: read run %s: %w", src.f.Name(), err)
}

type sourceHeap []*source

func (h sourceHeap) Len() int { return len(h) }
func (h sourceHeap) Less(i, j int) bool {
	if h[i].key != h[j].key {
		return h[i].key < h[j].key
	}
	return h[i].seq < h[j].seq
}
func (h sourceHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *sourceHeap) Push(x any)   { *h = append(*h, x.(*source)) }
func (h *sourceHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// merger yields the records of every source in (key, sequence) order.
type merger struct {
	srcs []*source
	h    sourceHeap
	cur  *source // source of the record last returned; advanced by next
}

// next returns the next record; payload is valid until the following call.
func (m *merger) next() (key, seq uint64, payload []byte, ok bool, err error) {
	if m.cur != nil {
		ok, err := m.cur.next()
		if err != nil {
			return 0, 0, nil, false, err
		}
		if ok {
			heap.Fix(&m.h, 0)
		} else {
			heap.Pop(&m.h)
		}
		m.cur = nil
	}
	if len(m.h) == 0 {
		return 0, 0, nil, false, nil
	}
	src := m.h[0]
	m.cur = src
	return src.key, src.seq, src.payload, true, nil
}

func (m *merger) close() {
	for _, src := range m.srcs {
		if src.f != nil {
			src.f.Close()
		}
	}
	m.srcs, m.h = nil, nil
}
