package index

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// Memory is an Index held in memory: the same answers as a Pebble or Redis
// index of the same documents, lost when the process ends. It suits a
// short-lived or rebuilt-at-start index (a shadow index, tests, `neardup
// serve --memory`) and shows what a backend needs (storage.go): a document
// is a number, its record the bytes a Pebble index stores, a bucket the
// numbers of its documents, oldest first.
//
// Its memory is about the records (Params.Bytes() plus the id and the
// metadata), the ids twice, and 4 bytes a posting, plus Go's map overhead.
// Stats.Bytes counts the first three.
//
// A Memory is safe for concurrent use. Its zero value is not usable: call
// NewMemory.
type Memory struct {
	engine[uint32] // the algorithm; Memory is its storage (see storage.go)

	data *memData
}

// memData is a Memory's contents, apart from the handle so that tests can
// open it again.
type memData struct {
	mu      sync.RWMutex
	meta    []byte              // the meta record, as a Pebble index stores it
	df      []byte              // a TF-IDF SimHash index's document-frequency table (simhash.DFTable)
	ids     map[string]uint32   // id → document number
	recs    map[uint32][]byte   // document number → record
	buckets map[uint64][]uint32 // bucket key → document numbers, ascending
	next    atomic.Uint64       // the next document number
	bytes   int64               // records, ids and postings
}

func newMemData() *memData {
	return &memData{ids: map[string]uint32{}, recs: map[uint32][]byte{}, buckets: map[uint64][]uint32{}}
}

// NewMemory returns an empty index in memory under opts (nil for the
// defaults, as for a new Open). Of the Options, Spec, Params, Bands,
// Threshold, Recall and BucketCap apply; the others, about files and
// Pebble, do not.
func NewMemory(opts *Options) (*Memory, error) {
	return openMemory(newMemData(), opts)
}

// openMemory opens a Memory over data, as Open does a directory: an index
// made under another spec, params or banding than opts asks for fails.
func openMemory(data *memData, opts *Options) (*Memory, error) {
	o, err := resolved(opts)
	if err != nil {
		return nil, err
	}
	data.mu.Lock()
	defer data.mu.Unlock()
	cfg, err := resolveConfig(&o, data.meta)
	if err != nil {
		return nil, fmt.Errorf("index: open memory index: %w", err)
	}
	if data.meta == nil {
		if cfg.needsDF() {
			// The table the meta record names, kept beside it.
			if data.df, err = o.SimHash.DF.MarshalBinary(); err != nil {
				return nil, err
			}
		}
		data.meta = encodeMeta(cfg)
	} else if cfg.needsDF() {
		if err := cfg.SimHash.decodeDF(data.df); err != nil {
			return nil, fmt.Errorf("index: open memory index: %w", err)
		}
	}
	m := &Memory{data: data}
	m.setup(m)
	m.cfg = cfg
	return m, nil
}

// Close ends the handle; the contents go with the last reference to it.
func (m *Memory) Close() error { return m.shut(func() error { return nil }) }

// Stats counts the documents and the bytes of their records, ids and
// postings.
func (m *Memory) Stats(ctx context.Context) (Stats, error) {
	done, err := m.enter(ctx, false)
	if err != nil {
		return Stats{}, err
	}
	defer done()
	d := m.data
	d.mu.RLock()
	defer d.mu.RUnlock()
	return Stats{Documents: int64(len(d.ids)), Bytes: d.bytes}, nil
}

// Check verifies that ids, records and postings agree (see Index.Check).
func (m *Memory) Check(ctx context.Context) (CheckReport, error) {
	done, err := m.enter(ctx, false)
	if err != nil {
		return CheckReport{}, err
	}
	defer done()
	d := m.data
	d.mu.RLock()
	defer d.mu.RUnlock()
	var r CheckReport
	var kb keyBuf
	keysOf := map[uint32][]uint64{}
	for id, num := range d.ids {
		r.Documents++
		rr, err := decodeRecord(nil, &m.cfg.Params, d.recs[num])
		if err != nil || string(rr.id) != id {
			r.problem("id %q maps to document %d, whose record is for %q (%v)", id, num, rr.id, err)
			continue
		}
		keys := slices.Clone(kb.of(&m.cfg, rr.sig))
		keysOf[num] = keys
		for i, bk := range keys {
			_, present := slices.BinarySearch(d.buckets[bk], num)
			r.posting(id, bk, present, rr.droppedAt(i))
		}
	}
	if len(d.recs) != len(d.ids) {
		r.problem("%d ids but %d records", len(d.ids), len(d.recs))
	}
	for bk, nums := range d.buckets {
		if !slices.IsSorted(nums) || len(nums) == 0 {
			r.problem("bucket %016x holds %v: not ascending, or empty", bk, nums)
		}
		for _, num := range nums {
			r.Postings++
			if !slices.Contains(keysOf[num], bk) {
				r.problem("posting in bucket %016x names document %d, which has no record with that key", bk, num)
			}
		}
	}
	return r, nil
}

// The storage of the engine (see storage.go). The engine's stripes
// serialise writers of the same ids and buckets; data.mu guards the maps.
var _ storage[uint32] = (*Memory)(nil)

func (m *Memory) admit(bool) error      { return nil }
func (m *Memory) fault(err error) error { return err }
func (m *Memory) durable(uint32) bool   { return true } // nothing outlives the process
func (m *Memory) syncBarrier() error    { return nil }

func (m *Memory) acquire(context.Context, []string, []uint64, bool) (func(), error) {
	return noUnlock, nil
}

func (m *Memory) begin(context.Context) (txn[uint32], error) { return &memTxn{d: m.data}, nil }

// memTxn reads the data under its read lock and collects writes, which
// commit applies under its write lock.
type memTxn struct {
	d       *memData
	adds    []memAdd
	removes []memAdd
}

// memAdd is a document written (or removed) by a transaction.
type memAdd struct {
	num  uint32
	id   string
	post []uint64
	rec  []byte
}

func (t *memTxn) has(ids []string, found []bool) error {
	t.d.mu.RLock()
	defer t.d.mu.RUnlock()
	for i, id := range ids {
		_, found[i] = t.d.ids[id]
	}
	return nil
}

func (t *memTxn) lookup(id string) (uint32, []byte, bool, error) {
	t.d.mu.RLock()
	defer t.d.mu.RUnlock()
	num, ok := t.d.ids[id]
	return num, t.d.recs[num], ok, nil // records are never changed in place
}

func (t *memTxn) buckets(keys []uint64, limit int, collect bool, counts []int, cands []uint32) ([]uint32, error) {
	t.d.mu.RLock()
	defer t.d.mu.RUnlock()
	for i, bk := range keys {
		nums := t.d.buckets[bk]
		if limit != Unlimited && len(nums) > limit {
			nums = nums[:limit]
		}
		counts[i] = len(nums)
		if collect {
			cands = append(cands, nums...)
		}
	}
	return cands, nil
}

func (t *memTxn) records(nums []uint32, fn func(uint32, []byte) error) error {
	t.d.mu.RLock()
	defer t.d.mu.RUnlock()
	for _, num := range nums {
		if rec, ok := t.d.recs[num]; ok {
			if err := fn(num, rec); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *memTxn) insert(id string, post []uint64, rec []byte) error {
	num := t.d.next.Add(1) - 1
	if num > maxDocNum {
		return ErrFull
	}
	t.adds = append(t.adds, memAdd{uint32(num), id, slices.Clone(post), slices.Clone(rec)})
	return nil
}

func (t *memTxn) remove(num uint32, id string, post []uint64) error {
	t.removes = append(t.removes, memAdd{num, id, slices.Clone(post), nil})
	return nil
}

// commit applies the writes at once. Writers of a bucket hold its stripe
// from the numbering of their documents to here, so a bucket's numbers are
// appended in ascending order.
func (t *memTxn) commit(func()) error {
	d := t.d
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, a := range t.removes {
		d.bytes -= int64(len(d.recs[a.num]) + len(a.id) + 4*len(a.post))
		delete(d.ids, a.id)
		delete(d.recs, a.num)
		for _, bk := range a.post {
			nums := d.buckets[bk]
			if i, ok := slices.BinarySearch(nums, a.num); ok {
				nums = slices.Delete(nums, i, i+1)
			}
			if len(nums) == 0 {
				delete(d.buckets, bk)
			} else {
				d.buckets[bk] = nums
			}
		}
	}
	for _, a := range t.adds {
		d.ids[a.id] = a.num
		d.recs[a.num] = a.rec
		for _, bk := range a.post {
			d.buckets[bk] = append(d.buckets[bk], a.num)
		}
		d.bytes += int64(len(a.rec) + len(a.id) + 4*len(a.post))
	}
	return nil
}

func (t *memTxn) abort() {}
