package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"

	"github.com/neardup/neardup/minhash"
)

// The shadow journal is an append-only file of the writes the server
// acknowledged, in order, waiting to be applied to the shadow index. A
// record is
//
//	u32 length of the payload, little-endian
//	u32 CRC-32C of the payload
//	payload: op ('I' insert, 'D' delete), uvarint id length, id,
//	         and for an insert uvarint meta length, meta, uvarint word
//	         count, words (u64 little-endian): the signature under the
//	         shadow's config
//
// A record is synced before the write it records is acknowledged; appends
// beside each other share one sync (group commit). The file is grown with
// zeros, 4 MiB at a time, synced once, so that an append only overwrites
// allocated blocks and a data sync (fdatasync) makes it durable: a record of
// length 0 ends the journal. A torn or damaged tail (a crash in the middle
// of an append, never acknowledged) is cut off when the journal is opened. Replaying records in order from any
// earlier point leaves the shadow as replaying them once does (an insert of
// a stored id and a delete of an absent one change nothing, and the last
// record of an id decides), so the journal is applied at least once (from
// its start after a restart) and emptied once everything in it is applied
// and it has passed 4 MiB, or the server stops.

// journalName is the journal's file name in the shadow's data directory.
const journalName = "neardup-shadow.journal"

// maxJournalRecord bounds a record's payload (an id, metadata of at most a
// body and a signature), against a damaged length field.
const maxJournalRecord = 64 << 20

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Journal operations.
const (
	opInsert = 'I'
	opDelete = 'D'
)

// journalRecord is one acknowledged write.
type journalRecord struct {
	op   byte
	id   string
	meta []byte
	sig  minhash.Signature
}

// journalChunk is how much the journal grows at a time, with zeros synced
// once, so that an append overwrites allocated blocks and needs only a data
// sync (fdatasync), not a sync of the file's size; and how large it grows
// before it is emptied, once applied.
const journalChunk = 4 << 20

// journal is the shadow's journal file: whole records from offset 0, then
// zeros (a record of length 0 ends it). Safe for concurrent use. Appends
// are group-committed: concurrent appends wait for one sync. Reads (ReadAt)
// run beside appends, below end().
type journal struct {
	path string

	mu      sync.Mutex
	cond    *sync.Cond // signalled when a sync ends
	f       *os.File
	size    int64 // end of the whole records written
	synced  int64 // end of those durable
	alloc   int64 // the file's size
	syncing bool  // a sync is in progress (mu not held)
	err     error // a failed write or sync: the journal refuses appends
	// base is the bytes of records emptied out by reset since the journal
	// was opened: a record's position, which never goes back, is base plus
	// its offset.
	base int64

	// notify wakes the applier after an append (capacity 1).
	notify chan struct{}
}

// JournalPath returns the path of the shadow journal of the shadow index in
// dir: a file in dir that the server keeps the acknowledged writes in until
// they are applied to the shadow.
func JournalPath(dir string) string { return dir + string(os.PathSeparator) + journalName }

// openJournal opens (or creates) the journal at path, cuts off a torn tail
// and allocates room for appends.
func openJournal(path string) (*journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("shadow journal: %w", err)
	}
	j := &journal{path: path, f: f, notify: make(chan struct{}, 1)}
	j.cond = sync.NewCond(&j.mu)
	var off int64
	for {
		_, next, err := j.readRecord(off)
		if err != nil {
			break // zeros or the end; a torn or damaged record otherwise
		}
		off = next
	}
	// Cut what follows the whole records (zeros, or a torn record) and
	// allocate zeros again: a torn record left behind could be taken for
	// whole once later records are written over its start.
	if err = f.Truncate(off); err == nil {
		err = f.Sync()
	}
	j.size, j.synced, j.alloc = off, off, off
	if err == nil {
		err = j.grow(off + 1)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("shadow journal %s: %w", path, err)
	}
	if off > 0 {
		j.notify <- struct{}{}
	}
	return j, nil
}

// grow extends the file with zeros, by whole chunks, to at least n bytes,
// and syncs it (its size). mu is held.
func (j *journal) grow(n int64) error {
	if n <= j.alloc {
		return nil
	}
	target := (n + journalChunk - 1) / journalChunk * journalChunk
	zeros := make([]byte, 1<<20)
	for off := j.alloc; off < target; {
		w := min(int64(len(zeros)), target-off)
		if _, err := j.f.WriteAt(zeros[:w], off); err != nil {
			return err
		}
		off += w
	}
	if err := j.f.Sync(); err != nil {
		return err
	}
	j.alloc = target
	return nil
}

// appendRecords writes recs after the journal's records and returns once
// they are durable (one data sync, shared with the appends beside it).
func (j *journal) appendRecords(recs []journalRecord) error {
	if len(recs) == 0 {
		return nil
	}
	var buf []byte
	for i := range recs {
		buf = appendJournalRecord(buf, &recs[i])
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.f == nil:
		return fmt.Errorf("shadow journal %s: closed", j.path)
	case j.err != nil:
		return j.err
	}
	if err := j.grow(j.size + int64(len(buf))); err != nil {
		j.err = fmt.Errorf("shadow journal %s: %w", j.path, err)
		return j.err
	}
	if _, err := j.f.WriteAt(buf, j.size); err != nil {
		j.err = fmt.Errorf("shadow journal %s: %w", j.path, err)
		return j.err
	}
	j.size += int64(len(buf))
	end := j.size
	for j.synced < end {
		if j.err != nil {
			return j.err
		}
		if j.syncing {
			j.cond.Wait()
			continue
		}
		j.syncing = true
		target := j.size
		j.mu.Unlock()
		err := fdatasync(j.f)
		j.mu.Lock()
		j.syncing = false
		if err != nil {
			j.err = fmt.Errorf("shadow journal %s: %w", j.path, err)
		} else {
			j.synced = target
		}
		j.cond.Broadcast()
	}
	select {
	case j.notify <- struct{}{}:
	default:
	}
	return nil
}

// end returns the end of the durable records.
func (j *journal) end() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.synced
}

// pos returns the position of the end of the durable records: base plus
// end(). Unlike an offset it never goes back when the journal is emptied,
// so positions taken at different times compare.
func (j *journal) pos() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.base + j.synced
}

// reset empties the journal if its records end at off (everything in it is
// applied) and reports whether it did; with regrow it allocates room again.
// Positions (pos) go on from where the emptied records ended.
func (j *journal) reset(off int64, regrow bool) (bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil || j.err != nil || j.syncing || j.size != off || j.synced != off {
		return false, nil
	}
	if err := j.f.Truncate(0); err != nil {
		return false, fmt.Errorf("shadow journal %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return false, fmt.Errorf("shadow journal %s: %w", j.path, err)
	}
	j.base += off
	j.size, j.synced, j.alloc = 0, 0, 0
	if regrow {
		if err := j.grow(1); err != nil {
			j.err = fmt.Errorf("shadow journal %s: %w", j.path, err)
			return true, j.err
		}
	}
	return true, nil
}

// close closes the file.
func (j *journal) close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}

// errJournalRecord marks a torn or damaged record.
var errJournalRecord = errors.New("torn or damaged journal record")

// readRecord reads the record at off and returns it and the offset of the
// next; io.EOF at the end.
func (j *journal) readRecord(off int64) (journalRecord, int64, error) {
	var r journalRecord
	var hdr [8]byte
	n, err := j.f.ReadAt(hdr[:], off)
	if n == 0 && errors.Is(err, io.EOF) {
		return r, off, io.EOF
	}
	if n < len(hdr) {
		return r, off, errJournalRecord
	}
	size := binary.LittleEndian.Uint32(hdr[:4])
	if size == 0 || size > maxJournalRecord {
		return r, off, errJournalRecord
	}
	payload := make([]byte, size)
	if n, _ := j.f.ReadAt(payload, off+8); n < len(payload) {
		return r, off, errJournalRecord
	}
	if crc32.Checksum(payload, crcTable) != binary.LittleEndian.Uint32(hdr[4:]) {
		return r, off, errJournalRecord
	}
	if err := decodeJournalPayload(payload, &r); err != nil {
		return r, off, err
	}
	return r, off + 8 + int64(size), nil
}

// appendJournalRecord appends the encoding of r to dst.
func appendJournalRecord(dst []byte, r *journalRecord) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
	dst = append(dst, r.op)
	dst = binary.AppendUvarint(dst, uint64(len(r.id)))
	dst = append(dst, r.id...)
	if r.op == opInsert {
		dst = binary.AppendUvarint(dst, uint64(len(r.meta)))
		dst = append(dst, r.meta...)
		dst = binary.AppendUvarint(dst, uint64(len(r.sig)))
		for _, w := range r.sig {
			dst = binary.LittleEndian.AppendUint64(dst, w)
		}
	}
	payload := dst[start+8:]
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(dst[start+4:], crc32.Checksum(payload, crcTable))
	return dst
}

// decodeJournalPayload decodes a record's payload into r.
func decodeJournalPayload(p []byte, r *journalRecord) error {
	if len(p) < 1 {
		return errJournalRecord
	}
	r.op, p = p[0], p[1:]
	field := func() ([]byte, bool) {
		n, w := binary.Uvarint(p)
		if w <= 0 || n > uint64(len(p)-w) {
			return nil, false
		}
		b := p[w : w+int(n)]
		p = p[w+int(n):]
		return b, true
	}
	id, ok := field()
	if !ok {
		return errJournalRecord
	}
	r.id = string(id)
	switch r.op {
	case opDelete:
	case opInsert:
		meta, ok := field()
		if !ok {
			return errJournalRecord
		}
		if len(meta) > 0 {
			r.meta = meta
		}
		n, w := binary.Uvarint(p)
		if w <= 0 || n > uint64(len(p)-w)/8 {
			return errJournalRecord
		}
		p = p[w:]
		r.sig = make(minhash.Signature, n)
		for i := range r.sig {
			r.sig[i] = binary.LittleEndian.Uint64(p[8*i:])
		}
		p = p[8*n:]
	default:
		return errJournalRecord
	}
	if len(p) != 0 {
		return errJournalRecord
	}
	return nil
}
