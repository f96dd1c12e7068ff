// Package dupid finds the document ids that occur more than once in a corpus,
// in memory bounded by a budget however many ids there are: it is the check
// that turns a repeated id (which would make outputs such as pairs.tsv
// ambiguous) into an error naming the file and line of the second
// occurrence, or into a record skipped as bad.
//
// It is exact, not probabilistic: ids are hashed to 64 bits and sorted by
// hash with their positions, spilling sorted runs to temporary files beyond
// the budget, and the ids of records whose hashes are equal are compared
// byte for byte. Its results do not depend on the budget or on whether
// anything spilled.
package dupid

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"

	"github.com/zeebo/xxh3"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/extsort"
)

// Sentinel errors; check with errors.Is.
var (
	// ErrDuplicate means an id occurs more than once. Duplicate.RecordError
	// wraps it with the id and where it first occurred.
	ErrDuplicate = errors.New("dupid: duplicate id")
	// ErrBadOptions means an Options field breaks its rule.
	ErrBadOptions = errors.New("dupid: invalid options")
	// ErrDone means Add, First or All was called after First or All.
	ErrDone = errors.New("dupid: detector already finished")
)

// DefaultMemory is the default Options.Memory: 64 MiB.
const DefaultMemory = 64 << 20

// minMemory is the smallest effective budget; smaller budgets (which tests
// use to force spills) are raised to it.
const minMemory = 64 << 10

// Options configures a Detector. A nil *Options or a zero field means the
// default.
type Options struct {
	// Memory is the budget, in bytes, for the ids and positions held in
	// memory; beyond it they are spilled to temporary files in TempDir. An
	// id costs about 16 bytes plus its length (8 for its sorted hash, the
	// rest for its position), in memory or on disk; 8 bytes under IDAt.
	// Default: 64 MiB (DefaultMemory); budgets under 64 KiB count as 64 KiB.
	Memory int64
	// TempDir is where runs are spilled. Default: "" (os.TempDir()).
	TempDir string
	// IDAt, when set, gives back the id added with Position.Index index:
	// the Detector then keeps no id, only its hash and number (8 bytes)
	// and its position as runs of consecutive records (a few bytes a
	// file, where lines and indexes advance by one), and asks IDAt for
	// the ids whose hashes share their high 32 bits with another's (the
	// repeated ones, and about n²/2^33 of n others). Every Add's Index
	// must then be distinct, and IDAt(index) must return the id added
	// with it until First or All returns; the slice is not kept.
	IDAt func(index int64) []byte
}

// EnsureDefaults fills zero fields with their defaults and returns o; it is
// safe on a nil *Options, returning a new Options.
func (o *Options) EnsureDefaults() *Options {
	if o == nil {
		o = &Options{}
	}
	if o.Memory == 0 {
		o.Memory = DefaultMemory
	}
	return o
}

// Validate reports a field that breaks its rule, wrapping ErrBadOptions.
func (o *Options) Validate() error {
	if o != nil && o.Memory < 0 {
		return fmt.Errorf("%w: Memory %d is negative", ErrBadOptions, o.Memory)
	}
	return nil
}

// Position is where an id occurred: plain data, as the caller gives it.
type Position struct {
	// File is the input file (corpus.Record.File).
	File string
	// Line is the 1-based line or row number in File; 0 if there is none
	// (a whole file under corpus.FormatDir).
	Line int64
	// Index is the caller's record number, such as corpus.Record.Index.
	Index int64
}

// String returns "file:line", or the file alone when Line is 0.
func (p Position) String() string {
	if p.Line > 0 {
		return p.File + ":" + strconv.FormatInt(p.Line, 10)
	}
	return p.File
}

// Duplicate is one later occurrence of an id: the occurrence (Second, the
// N-th call of Add) and the first occurrence of the same id (First, the
// FirstN-th call). An id added three times gives two Duplicates, both with
// the same First.
type Duplicate struct {
	// ID is the id. It aliases the Detector's memory: it is valid only until
	// First or All's callback returns.
	ID []byte
	// First and Second are where the id occurred first and this time.
	First, Second Position
	// FirstN and N are the 0-based numbers of the Add calls of the first
	// occurrence and of this one.
	FirstN, N int64
}

// RecordError describes the duplicate as a corpus.RecordError at the second
// occurrence, naming the id field field (as corpus.Options.IDField) and
// wrapping ErrDuplicate:
//
//	b.jsonl:7: field "id": dupid: duplicate id "t120", first at a.jsonl:3
func (d *Duplicate) RecordError(field string) *corpus.RecordError {
	return &corpus.RecordError{
		File: d.Second.File, Line: d.Second.Line, Index: d.Second.Index, Field: field,
		Err: fmt.Errorf("%w %s, first at %s", ErrDuplicate, strconv.Quote(string(d.ID)), d.First),
	}
}

// Detector finds the ids added more than once. Add every id, in input order,
// then call First or All once, then Close. The zero value is not usable: make
// one with New. Not safe for concurrent use. Its results are deterministic:
// they depend only on the ids and positions added, not on the budget.
//
// # Method
//
// Add hashes the id to 64 bits (Hash; AddHash takes a hash made
// elsewhere) and adds the hash's high 32 bits with the id's number to a
// store of packed uint64: 256 buckets by the top byte in memory, sorted
// (by the high bits alone) and scanned on every core at the end, or past
// the budget a spilling sorter
// (internal/extsort). Without Options.IDAt it appends the id and its
// position to a log (in memory, then in a temporary file); with it, only
// the position, as a run of records whose lines and indexes advance by one.
// Sorting brings ids with equal high bits together: those are the
// candidates, the true duplicates plus about n²/2^33 ids of n whose hashes
// merely share those bits. One sequential pass over the log picks the
// candidates out (their ids asked of IDAt), and they are sorted again by
// their full hash, with their ids, in a sorter of records; ids of equal
// full hash are then compared byte for byte. So every id costs a hash, 8
// bytes sorted and its log record written and read once; only candidates
// cost more.
type Detector struct {
	hashes *packedStore // high 32 bits of the hash | number of the id
	recs   recordLog    // per id, or per run of positions under IDAt: file, line, index (, id)
	hash   func([]byte) uint64
	opts   Options

	// Under IDAt: the run of positions being extended (its first Add's
	// number and position), and the position of the previous Add.
	runOpen          bool
	runN             int64
	runPos, lastPos  Position
	runFile, runLast uint64

	files   []string
	fileIdx map[string]uint64
	last    string // files[lastIdx], the file of the previous Add
	lastIdx uint64
	buf     []byte
	n       int64
	done    bool
}

// MaxIDs is the most ids a Detector takes: an id's number has 32 bits.
const MaxIDs = 1 << 32

// New returns an empty Detector.
func New(opts *Options) (*Detector, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o := *opts.EnsureDefaults()
	o.Memory = max(o.Memory, minMemory)
	// Half the budget for the hashes (8 bytes a value), a quarter for the
	// log's buffer; under IDAt, whose log is small, three quarters and an
	// eighth. The later stages, which handle the candidates only, use an
	// eighth each.
	hashMem, logMem := o.Memory/2, o.Memory/4
	if o.IDAt != nil {
		hashMem, logMem = o.Memory*3/4, o.Memory/8
	}
	d := &Detector{
		hashes:  newPackedStore(o.TempDir, "neardup-dupid-hashes", hashMem/8),
		recs:    recordLog{dir: o.TempDir, limit: int(logMem)},
		hash:    xxh3.Hash,
		opts:    o,
		fileIdx: map[string]uint64{},
	}
	return d, nil
}

// Hash is the 64-bit hash of an id that Add computes and AddHash takes.
func Hash(id []byte) uint64 { return xxh3.Hash(id) }

// Add records that id occurred at pos. id is copied (not kept under
// Options.IDAt).
func (d *Detector) Add(id []byte, pos Position) error {
	return d.AddHash(d.hash(id), id, pos)
}

// AddHash is Add with the id's hash, Hash(id), made by the caller (on a
// goroutine of its own, say). A hash that is not Hash(id) makes the
// Detector miss repeats of id.
func (d *Detector) AddHash(h uint64, id []byte, pos Position) error {
	if d.done {
		return ErrDone
	}
	if d.n >= MaxIDs {
		return fmt.Errorf("dupid: more than %d ids", int64(MaxIDs))
	}
	if pos.File != d.last || len(d.files) == 0 {
		i, ok := d.fileIdx[pos.File]
		if !ok {
			i = uint64(len(d.files))
			d.files = append(d.files, pos.File)
			d.fileIdx[pos.File] = i
		}
		d.last, d.lastIdx = pos.File, i
	}
	if d.opts.IDAt != nil {
		if err := d.extendRun(pos); err != nil {
			return err
		}
	} else {
		b := binary.AppendUvarint(d.buf[:0], d.lastIdx)
		b = binary.AppendVarint(b, pos.Line)
		b = binary.AppendVarint(b, pos.Index)
		b = append(b, id...)
		d.buf = b
		if err := d.recs.append(b); err != nil {
			return err
		}
	}
	if err := d.hashes.add(h&^(MaxIDs-1) | uint64(d.n)); err != nil {
		return fmt.Errorf("dupid: %w", err)
	}
	d.n++
	return nil
}

// extendRun records pos, the position of Add number d.n, under IDAt: it
// extends the current run of positions if pos follows the previous one
// (same file, next index, next line or no line), and otherwise logs the
// run and starts another.
func (d *Detector) extendRun(pos Position) error {
	if d.runOpen && d.lastIdx == d.runLast && pos.Index == d.lastPos.Index+1 &&
		(pos.Line == 0 && d.lastPos.Line == 0 || d.lastPos.Line > 0 && pos.Line == d.lastPos.Line+1) {
		d.lastPos = pos
		return nil
	}
	if err := d.flushRun(); err != nil {
		return err
	}
	d.runOpen, d.runN, d.runPos, d.runFile = true, d.n, pos, d.lastIdx
	d.lastPos, d.runLast = pos, d.lastIdx
	return nil
}

// flushRun logs the current run of positions: its first Add's number,
// file, line and index.
func (d *Detector) flushRun() error {
	if !d.runOpen {
		return nil
	}
	b := binary.AppendUvarint(d.buf[:0], uint64(d.runN))
	b = binary.AppendUvarint(b, d.runFile)
	b = binary.AppendVarint(b, d.runPos.Line)
	b = binary.AppendVarint(b, d.runPos.Index)
	d.buf = b
	d.runOpen = false
	return d.recs.append(b)
}

// Len returns the number of ids added.
func (d *Detector) Len() int64 { return d.n }

// SpilledBytes returns the bytes written to temporary files so far: while
// adding, perhaps not yet those of the last few thousand ids (their hashes
// are placed on a goroutine of the Detector's own); all of them once First
// or All has returned.
func (d *Detector) SpilledBytes() int64 { return d.hashes.spilledBytes() + d.recs.written }

// decode reads a log record written by Add.
func (d *Detector) decode(p []byte) (Position, []byte, error) {
	f, n := binary.Uvarint(p)
	if n <= 0 || f >= uint64(len(d.files)) {
		return Position{}, nil, errCorrupt
	}
	p = p[n:]
	line, n := binary.Varint(p)
	if n <= 0 {
		return Position{}, nil, errCorrupt
	}
	p = p[n:]
	index, n := binary.Varint(p)
	if n <= 0 {
		return Position{}, nil, errCorrupt
	}
	return Position{File: d.files[f], Line: line, Index: index}, p[n:], nil
}

var errCorrupt = errors.New("dupid: corrupt temporary record")

// candidates returns, in a sorter of records keyed by the full hash, every
// id whose hash shares its high 32 bits with another's, with its number and
// log record; nil if there is none.
func (d *Detector) candidates() (*sorter, error) {
	cand := extsort.New(d.opts.TempDir, "neardup-dupid-cand", int(d.opts.Memory/8/16))
	defer cand.Close()
	const low = MaxIDs - 1
	// Held in memory, the buckets are sorted and scanned on every core:
	// the caller waits for this at the end of its stage.
	shared, _, err := d.hashes.shared(low, runtime.GOMAXPROCS(0))
	if err != nil {
		return nil, err
	}
	if err := cand.Add(shared...); err != nil {
		return nil, fmt.Errorf("dupid: %w", err)
	}
	shared = nil
	// On the sorter's way (or with nothing left in the buckets) the values
	// are scanned in order here.
	it, err := d.hashes.iter()
	if err != nil {
		return nil, err
	}
	defer it.close()
	var prev uint64
	started, added := false, false // added: prev's group is in cand
	for v, ok := it.next(); ok; v, ok = it.next() {
		switch {
		case !started || v&^low != prev&^low:
			started, added = true, false // a new group
		case added:
			err = cand.Add(v & low)
		default:
			err = cand.Add(prev&low, v&low)
			added = true
		}
		if err != nil {
			return nil, fmt.Errorf("dupid: %w", err)
		}
		prev = v
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	it.close()
	if err := d.hashes.close(); err != nil { // its memory, for the later stages
		return nil, err
	}
	if cand.Len() == 0 {
		return nil, nil
	}
	cit, err := cand.Iter(false)
	if err != nil {
		return nil, fmt.Errorf("dupid: %w", err)
	}
	defer cit.Close()
	if err := d.flushRun(); err != nil {
		return nil, err
	}
	rd, err := d.recs.reader()
	if err != nil {
		return nil, err
	}
	exact := newSorter(d.opts.TempDir, "neardup-dupid-exact", d.opts.Memory/8)
	if d.opts.IDAt != nil {
		if err := d.lookUp(cit, rd, exact); err != nil {
			exact.close()
			return nil, err
		}
		return exact, nil
	}
	var rec, payload []byte
	k := uint64(0)
	for want, ok := cit.Next(); ok; want, ok = cit.Next() {
		for ; ; k++ {
			size, err := binary.ReadUvarint(rd)
			if err != nil {
				exact.close()
				return nil, errCorrupt
			}
			if k < want {
				if _, err := rd.Discard(int(size)); err != nil {
					exact.close()
					return nil, errCorrupt
				}
				continue
			}
			rec = slices.Grow(rec[:0], int(size))[:size]
			if _, err := io.ReadFull(rd, rec); err != nil {
				exact.close()
				return nil, errCorrupt
			}
			_, id, err := d.decode(rec)
			if err != nil {
				exact.close()
				return nil, err
			}
			payload = append(binary.AppendUvarint(payload[:0], k), rec...)
			if err := exact.add(d.hash(id), payload); err != nil {
				exact.close()
				return nil, err
			}
			k++
			break
		}
	}
	if err := cit.Err(); err != nil {
		exact.close()
		return nil, fmt.Errorf("dupid: %w", err)
	}
	return exact, nil
}

// lookUp adds to exact, under IDAt, each candidate that cit yields (their
// numbers, ascending) with its position, from the runs rd reads, and its
// id, from IDAt: the records candidates makes from the log otherwise.
func (d *Detector) lookUp(cit *extsort.Iterator, rd *bufio.Reader, exact *sorter) error {
	// The run holding the candidate (cur), and the next one (next: its
	// first number is nextN, or none).
	var cur, next Position
	var curN, nextN int64 = -1, -1
	var nextFile uint64
	var rec []byte
	readRun := func() error {
		size, err := binary.ReadUvarint(rd)
		if errors.Is(err, io.EOF) {
			nextN = -1
			return nil
		}
		if err != nil {
			return errCorrupt
		}
		if size > maxRunRecord {
			return errCorrupt
		}
		rec = slices.Grow(rec[:0], int(size))[:size]
		if _, err := io.ReadFull(rd, rec); err != nil {
			return errCorrupt
		}
		n, k := binary.Uvarint(rec)
		if k <= 0 {
			return errCorrupt
		}
		f, k2 := binary.Uvarint(rec[k:])
		if k2 <= 0 || f >= uint64(len(d.files)) {
			return errCorrupt
		}
		line, k3 := binary.Varint(rec[k+k2:])
		if k3 <= 0 {
			return errCorrupt
		}
		index, k4 := binary.Varint(rec[k+k2+k3:])
		if k4 <= 0 {
			return errCorrupt
		}
		nextN, nextFile, next = int64(n), f, Position{File: d.files[f], Line: line, Index: index}
		return nil
	}
	if err := readRun(); err != nil {
		return err
	}
	var curFile uint64
	var payload []byte
	for want, ok := cit.Next(); ok; want, ok = cit.Next() {
		k := int64(want)
		for nextN >= 0 && nextN <= k {
			cur, curN, curFile = next, nextN, nextFile
			if err := readRun(); err != nil {
				return err
			}
		}
		if curN < 0 {
			return errCorrupt
		}
		pos := cur
		pos.Index += k - curN
		if pos.Line > 0 {
			pos.Line += k - curN
		}
		id := d.opts.IDAt(pos.Index)
		payload = binary.AppendUvarint(payload[:0], uint64(k))
		payload = binary.AppendUvarint(payload, curFile)
		payload = binary.AppendVarint(payload, pos.Line)
		payload = binary.AppendVarint(payload, pos.Index)
		payload = append(payload, id...)
		if err := exact.add(d.hash(id), payload); err != nil {
			return err
		}
	}
	if err := cit.Err(); err != nil {
		return fmt.Errorf("dupid: %w", err)
	}
	return nil
}

// maxRunRecord bounds a logged run of positions: four varints.
const maxRunRecord = 4 * binary.MaxVarintLen64

// occurrence is the first occurrence of one distinct id of a hash group;
// the id is arena[start:end] of the group.
type occurrence struct {
	start, end int
	pos        Position
	n          int64
}

// scan calls found for every later occurrence of an id, in hash order.
func (d *Detector) scan(found func(dup *Duplicate) error) error {
	if d.done {
		return ErrDone
	}
	d.done = true
	defer d.release()
	exact, err := d.candidates()
	if err != nil || exact == nil {
		return err
	}
	defer exact.close()
	m, err := exact.merge()
	if err != nil {
		return err
	}
	defer m.close()
	var (
		group    []occurrence // distinct ids of the current hash, first occurrences
		arena    []byte       // their ids
		groupKey uint64
		dup      Duplicate
		// index finds a group's member by id once the group is too large
		// to scan: many distinct ids sharing a 64-bit hash (only if
		// crafted to) must not cost quadratic time.
		index map[string]int
	)
	for {
		key, _, payload, ok, err := m.next()
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		k, n := binary.Uvarint(payload)
		if n <= 0 {
			return errCorrupt
		}
		pos, id, err := d.decode(payload[n:])
		if err != nil {
			return err
		}
		if len(group) == 0 || key != groupKey {
			group, arena, groupKey = group[:0], arena[:0], key
			clear(index)
		}
		at := -1
		if len(group) > maxScan {
			if i, ok := index[string(id)]; ok {
				at = i
			}
		} else {
			for i, g := range group {
				if bytes.Equal(arena[g.start:g.end], id) {
					at = i
					break
				}
			}
		}
		if at >= 0 {
			g := group[at]
			dup = Duplicate{ID: id, First: g.pos, Second: pos, FirstN: g.n, N: int64(k)}
			if err := found(&dup); err != nil {
				return err
			}
			continue
		}
		start := len(arena)
		arena = append(arena, id...)
		group = append(group, occurrence{start: start, end: len(arena), pos: pos, n: int64(k)})
		if len(group) > maxScan {
			if index == nil {
				index = map[string]int{}
			}
			if len(index) == 0 {
				for i, g := range group {
					index[string(arena[g.start:g.end])] = i
				}
			} else {
				index[string(id)] = len(group) - 1
			}
		}
	}
}

// maxScan is the size of a hash group up to which a new id is compared with
// each member in turn rather than looked up in a map.
const maxScan = 8

// release removes the temporary files and drops the buffers.
func (d *Detector) release() error {
	err := d.hashes.close()
	if rerr := d.recs.close(); err == nil {
		err = rerr
	}
	return err
}

// First returns the later occurrence of an id that comes first in input
// order (the smallest N), or nil if every id is distinct. It finishes the
// Detector: Add, First and All fail afterwards.
func (d *Detector) First() (*Duplicate, error) {
	var first *Duplicate
	var id []byte
	err := d.scan(func(dup *Duplicate) error {
		if first == nil || dup.N < first.N {
			id = append(id[:0], dup.ID...)
			c := *dup
			c.ID = id
			first = &c
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return first, nil
}

// All calls fn for every later occurrence of an id, in input order
// (ascending N), and stops at fn's first error, which it returns. The
// Duplicate and its ID are valid only until fn returns. The duplicates are
// sorted within the memory budget, spilling to disk beyond it. All finishes
// the Detector: Add, First and All fail afterwards.
func (d *Detector) All(fn func(dup *Duplicate) error) error {
	dups := newSorter(d.opts.TempDir, "neardup-dupid-found", d.opts.Memory/8)
	defer dups.close()
	var buf []byte
	err := d.scan(func(dup *Duplicate) error {
		b := buf[:0]
		for _, v := range [...]int64{dup.FirstN, int64(d.fileIdx[dup.First.File]), dup.First.Line, dup.First.Index,
			int64(d.fileIdx[dup.Second.File]), dup.Second.Line, dup.Second.Index} {
			b = binary.AppendVarint(b, v)
		}
		b = append(b, dup.ID...)
		buf = b
		return dups.add(uint64(dup.N), b)
	})
	if err != nil {
		return err
	}
	m, err := dups.merge()
	if err != nil {
		return err
	}
	defer m.close()
	for {
		key, _, p, ok, err := m.next()
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		var dup Duplicate
		var v [7]int64
		for i := range v {
			var n int
			if v[i], n = binary.Varint(p); n <= 0 {
				return errors.New("dupid: corrupt duplicate record")
			}
			p = p[n:]
		}
		if v[1] < 0 || v[1] >= int64(len(d.files)) || v[4] < 0 || v[4] >= int64(len(d.files)) {
			return errors.New("dupid: corrupt duplicate record")
		}
		dup.FirstN, dup.N = v[0], int64(key)
		dup.First = Position{File: d.files[v[1]], Line: v[2], Index: v[3]}
		dup.Second = Position{File: d.files[v[4]], Line: v[5], Index: v[6]}
		dup.ID = p
		if err := fn(&dup); err != nil {
			return err
		}
	}
}

// Close removes the temporary files. It may be called at any time, more than
// once; the Detector is unusable afterwards.
func (d *Detector) Close() error {
	d.done = true
	return d.release()
}

// recordLog holds one record per id, in Add order, each preceded by its
// length: in memory, in chunks (not one growing slice, whose copies cost
// more than the rest of Add), up to limit bytes, then in a temporary file.
type recordLog struct {
	dir     string
	limit   int
	chunks  [][]byte // full chunks, then the one being filled
	held    int      // bytes in chunks
	f       *os.File
	w       *bufio.Writer
	written int64 // bytes in f
	hdr     [binary.MaxVarintLen64]byte
}

// logChunk is the size of the log's memory chunks.
const logChunk = 256 << 10

func (l *recordLog) append(rec []byte) error {
	hdr := l.hdr[:binary.PutUvarint(l.hdr[:], uint64(len(rec)))]
	if l.w != nil {
		l.w.Write(hdr)
		if _, err := l.w.Write(rec); err != nil {
			return fmt.Errorf("dupid: write %s: %w", l.f.Name(), err)
		}
		l.written += int64(len(hdr) + len(rec))
		return nil
	}
	if len(l.chunks) == 0 || len(l.chunks[len(l.chunks)-1])+len(hdr)+len(rec) > logChunk {
		l.chunks = append(l.chunks, make([]byte, 0, max(logChunk, len(hdr)+len(rec))))
	}
	c := &l.chunks[len(l.chunks)-1]
	*c = append(append(*c, hdr...), rec...)
	l.held += len(hdr) + len(rec)
	if l.held < l.limit {
		return nil
	}
	// Over the budget: everything so far, and all that follows, goes to a
	// file.
	f, err := os.CreateTemp(l.dir, "neardup-dupid-log-*")
	if err != nil {
		return fmt.Errorf("dupid: %w", err)
	}
	l.f, l.w = f, bufio.NewWriterSize(f, 1<<20)
	for _, c := range l.chunks {
		l.w.Write(c)
	}
	l.written += int64(l.held)
	l.chunks, l.held = nil, 0
	if err := l.w.Flush(); err != nil {
		return fmt.Errorf("dupid: write %s: %w", f.Name(), err)
	}
	return nil
}

// reader returns a reader of every record, from the start.
func (l *recordLog) reader() (*bufio.Reader, error) {
	if l.f == nil {
		rs := make([]io.Reader, len(l.chunks))
		for i, c := range l.chunks {
			rs[i] = bytes.NewReader(c)
		}
		return bufio.NewReader(io.MultiReader(rs...)), nil
	}
	if err := l.w.Flush(); err != nil {
		return nil, fmt.Errorf("dupid: write %s: %w", l.f.Name(), err)
	}
	if _, err := l.f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("dupid: %w", err)
	}
	return bufio.NewReaderSize(l.f, 1<<20), nil
}

func (l *recordLog) close() error {
	l.chunks, l.held, l.w = nil, 0, nil
	if l.f == nil {
		return nil
	}
	l.f.Close()
	err := os.Remove(l.f.Name())
	l.f = nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("dupid: %w", err)
	}
	return nil
}
