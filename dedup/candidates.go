package dedup

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/neardup/neardup/internal/extsort"
	"github.com/neardup/neardup/internal/sketch"
)

// candidates sorts the band-key entries, groups them into buckets and
// collects the unique candidate pairs, spilling both to disk past the budget.
func (r *run) candidates(ctx context.Context) error {
	r.bar.CountStage("candidates", "keys", r.entries.Len())
	defer r.bar.Finish()
	r.rep.Spill.EntryRuns = r.entries.Runs()
	r.rep.Spill.EntryBytes = r.entries.SpilledBytes()
	it, err := r.entries.Iter(false)
	if err != nil {
		return err
	}
	defer it.Close()

	// Reference documents, numbered first, are never paired with each
	// other (jobspec's rules).
	g, err := r.sketch.NewGrouper(r.sigMem, r.job.BucketCap, r.ref.n)
	if err != nil {
		return err
	}
	sorter := extsort.New(r.tmp, "pairs", int(r.opts.Memory/32/8))
	chunk := make([]uint64, 0, 1<<14)
	var pairs []uint64
	read := int64(0) // keys read since the last flush, those left out too
	flush := func() error {
		var err error
		r.top.Add(chunk)
		pairs, err = g.Append(pairs[:0], chunk)
		if err != nil {
			return err
		}
		r.bar.Add(read, 0)
		chunk, read = chunk[:0], 0
		return sorter.Add(pairs...)
	}
	lateCopies := r.exact != nil && r.exact.lateCopies
	// Documents made bad after signing (a repeated id) still have entries:
	// they are left out here, so that they pair with nothing, as if they had
	// never been read.
	dropped := r.dropped > 0
	// Entries number documents after the reference documents, which are
	// neither.
	status := func(v uint64) uint8 {
		if d := sketch.EntryDoc(v); d >= r.ref.n {
			return r.docs.status[d-r.ref.n]
		}
		return docOK
	}
	for v, ok := it.Next(); ok; v, ok = it.Next() {
		read++
		if lateCopies && status(v) == docCopy {
			continue // a copy found after signing: banded, but not paired
		}
		if dropped && status(v) == docBad {
			continue
		}
		chunk = append(chunk, v)
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
	if err := sorter.Add(g.Flush(pairs[:0])...); err != nil {
		return err
	}
	r.buckets = g.Metrics()
	r.rep.Spill.PairRuns = sorter.Runs()
	r.rep.Spill.PairBytes = sorter.SpilledBytes()

	pit, err := sorter.Iter(true)
	if err != nil {
		return err
	}
	defer pit.Close()
	r.pairs = newPairList(r.tmp, int(r.opts.Memory/16/8))
	for v, ok := pit.Next(); ok; v, ok = pit.Next() {
		if err := r.pairs.add(v); err != nil {
			return err
		}
		if uint32(v>>32) < r.ref.n {
			r.ref.candidates++
		}
	}
	if err := pit.Err(); err != nil {
		return err
	}
	r.buckets.UniquePairs = r.pairs.n
	return r.pairs.done()
}

// pairList holds the sorted unique candidate pairs (a<<32 | b), in memory up
// to a limit and in a file of little-endian uint64s past it. It is read
// front to back, as often as needed.
type pairList struct {
	dir   string
	limit int
	mem   []uint64
	f     *os.File
	w     *bufio.Writer
	n     int64
}

func newPairList(dir string, limit int) *pairList {
	return &pairList{dir: dir, limit: max(limit, 1024)}
}

func (l *pairList) add(v uint64) error {
	l.n++
	if l.f == nil {
		if len(l.mem) < l.limit {
			l.mem = append(l.mem, v)
			return nil
		}
		f, err := os.CreateTemp(l.dir, "candidates-*")
		if err != nil {
			return fmt.Errorf("dedup: %w", err)
		}
		l.f, l.w = f, bufio.NewWriterSize(f, 1<<20)
		for _, m := range l.mem {
			l.w.Write(binary.LittleEndian.AppendUint64(nil, m))
		}
		l.mem = nil
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	_, err := l.w.Write(b[:])
	return err
}

func (l *pairList) done() error {
	if l.w != nil {
		return l.w.Flush()
	}
	return nil
}

// each calls fn with consecutive chunks of the pairs, in order.
func (l *pairList) each(fn func([]uint64) error) error {
	const chunk = 1 << 13
	if l.f == nil {
		for i := 0; i < len(l.mem); i += chunk {
			if err := fn(l.mem[i:min(i+chunk, len(l.mem))]); err != nil {
				return err
			}
		}
		return nil
	}
	if _, err := l.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	br := bufio.NewReaderSize(l.f, 1<<20)
	buf := make([]byte, 8*chunk)
	vals := make([]uint64, chunk)
	for {
		n, err := io.ReadFull(br, buf)
		if n%8 != 0 {
			return fmt.Errorf("dedup: candidate file cut mid-value")
		}
		for i := 0; i < n/8; i++ {
			vals[i] = binary.LittleEndian.Uint64(buf[8*i:])
		}
		if n > 0 {
			if err := fn(vals[:n/8]); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (l *pairList) close() {
	if l.f != nil {
		l.f.Close()
		os.Remove(l.f.Name())
	}
}
