package lsh

import (
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

func TestIndexBasic(t *testing.T) {
	var x Index // the zero value is ready to use
	if err := x.Insert(10, []uint64{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := x.Insert(20, []uint64{3, 4, 3}); err != nil { // a repeated key counts once
		t.Fatal(err)
	}
	if err := x.Insert(5, []uint64{4, 5}); err != nil {
		t.Fatal(err)
	}
	if err := x.Insert(20, []uint64{9}); !errors.Is(err, ErrDuplicateID) {
		t.Fatalf("second Insert(20) error = %v; want ErrDuplicateID", err)
	}
	check := func(keys []uint64, want ...uint64) {
		t.Helper()
		got := x.Query([]uint64{99}, keys)
		if got[0] != 99 || !slices.Equal(got[1:], want) {
			t.Errorf("Query(%v) = %v; want [99] followed by %v", keys, got, want)
		}
	}
	check([]uint64{3}, 10, 20)
	check([]uint64{4, 3, 1}, 5, 10, 20)
	check([]uint64{4, 5}, 5, 20)
	check([]uint64{7})
	check(nil)
	if !x.Contains(20) || x.Contains(21) || x.Len() != 3 {
		t.Errorf("Contains(20), Contains(21), Len() = %v, %v, %d; want true, false, 3", x.Contains(20), x.Contains(21), x.Len())
	}
	m := x.Metrics()
	if m.IDs != 3 || m.Buckets != 5 || m.Postings != 7 || m.Inserts != 3 || m.Queries != 5 || m.Candidates != 7 {
		t.Errorf("metrics after inserts:\n%v", m)
	}

	if !x.Remove(20) || x.Remove(20) {
		t.Fatalf("Remove(20) twice did not report true then false")
	}
	check([]uint64{3, 4}, 5, 10)
	if err := x.Insert(20, []uint64{9}); err != nil { // an id can come back after Remove
		t.Fatal(err)
	}
	check([]uint64{9, 3}, 10, 20)
	m = x.Metrics()
	if m.IDs != 3 || m.Buckets != 6 || m.Postings != 6 || m.Removes != 1 {
		t.Errorf("metrics after remove and re-insert:\n%v", m)
	}
}

func TestIndexBucketCap(t *testing.T) {
	x, err := NewIndex(&IndexOptions{BucketCap: 3, Shards: 4})
	if err != nil {
		t.Fatal(err)
	}
	for id := uint64(1); id <= 5; id++ {
		if err := x.Insert(id, []uint64{100, 200 + id}); err != nil {
			t.Fatal(err)
		}
	}
	// The bucket of key 100 stopped growing at 3 ids; the other keys of ids 4 and 5 were stored.
	if got := x.Query(nil, []uint64{100}); !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Errorf("Query(full bucket) = %v; want [1 2 3]", got)
	}
	if got := x.Query(nil, []uint64{100, 205}); !slices.Equal(got, []uint64{1, 2, 3, 5}) {
		t.Errorf("Query(full bucket, 205) = %v; want [1 2 3 5]", got)
	}
	m := x.Metrics()
	if m.FullBuckets != 1 || m.DroppedPostings != 2 || m.Postings != 8 || m.BucketCap != 3 {
		t.Errorf("metrics with a full bucket:\n%v", m)
	}
	// Removing a member makes room again; removing an id that was dropped
	// from the bucket leaves it alone.
	x.Remove(5)
	if m := x.Metrics(); m.FullBuckets != 1 || m.Postings != 7 {
		t.Errorf("after removing a dropped id:\n%v", m)
	}
	x.Remove(2)
	if m := x.Metrics(); m.FullBuckets != 0 || m.Postings != 5 {
		t.Errorf("after removing a member:\n%v", m)
	}
	if err := x.Insert(6, []uint64{100}); err != nil {
		t.Fatal(err)
	}
	if got := x.Query(nil, []uint64{100}); !slices.Equal(got, []uint64{1, 3, 6}) {
		t.Errorf("Query after making room = %v; want [1 3 6]", got)
	}

	// Unlimited buckets never fill.
	u, _ := NewIndex(&IndexOptions{BucketCap: Unlimited})
	for id := range uint64(2000) {
		u.Insert(id, []uint64{7})
	}
	if got := len(u.Query(nil, []uint64{7})); got != 2000 {
		t.Errorf("unlimited bucket holds %d ids; want 2000", got)
	}
	if m := u.Metrics(); m.FullBuckets != 0 || m.DroppedPostings != 0 {
		t.Errorf("unlimited index metrics:\n%v", m)
	}
}

func TestIndexOptions(t *testing.T) {
	for _, o := range []IndexOptions{{BucketCap: -2}, {Shards: -1}, {Shards: 1 << 17}} {
		if _, err := NewIndex(&o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("NewIndex(%+v) error = %v; want ErrInvalidOptions", o, err)
		}
	}
	for _, shards := range []int{1, 3, 64} {
		x, err := NewIndex(&IndexOptions{Shards: shards})
		if err != nil {
			t.Fatal(err)
		}
		x.Insert(1, []uint64{1, 2})
		x.Insert(2, []uint64{2})
		if got := x.Query(nil, []uint64{2}); !slices.Equal(got, []uint64{1, 2}) {
			t.Errorf("Shards %d: Query = %v; want [1 2]", shards, got)
		}
	}
}

// TestIndexConcurrent inserts, queries and removes from several goroutines
// (run it with -race) and checks the final state against a sequentially
// built reference.
func TestIndexConcurrent(t *testing.T) {
	const (
		workers = 8
		perW    = 400
	)
	p := Params{Bands: 8, Rows: 2}
	rng := rand.New(rand.NewPCG(9, 9))
	// Slot values from a tiny alphabet, so that many documents share keys.
	docs := make([][]uint64, workers*perW)
	for i := range docs {
		slots := make([]uint64, p.Slots())
		for s := range slots {
			slots[s] = rng.Uint64N(12)
		}
		docs[i] = p.AppendKeys(nil, slots)
	}
	x, _ := NewIndex(&IndexOptions{BucketCap: Unlimited, Shards: 8})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var buf []uint64
			for i := w * perW; i < (w+1)*perW; i++ {
				if err := x.Insert(uint64(i), docs[i]); err != nil {
					t.Error(err)
				}
				buf = x.Query(buf[:0], docs[(i*7)%len(docs)])
				if !slices.IsSorted(buf) {
					t.Error("Query result not sorted")
				}
			}
			for i := w * perW; i < (w+1)*perW; i += 2 {
				if !x.Remove(uint64(i)) {
					t.Errorf("Remove(%d) = false", i)
				}
			}
		})
	}
	wg.Wait()

	ref := map[uint64][]uint64{}
	for i := 1; i < len(docs); i += 2 {
		for _, k := range slices.Compact(slices.Sorted(slices.Values(docs[i]))) {
			ref[k] = append(ref[k], uint64(i))
		}
	}
	for i := range docs {
		var want []uint64
		for _, k := range docs[i] {
			want = append(want, ref[k]...)
		}
		want = slices.Compact(slices.Sorted(slices.Values(want)))
		if got := x.Query(nil, docs[i]); !slices.Equal(got, want) {
			t.Fatalf("Query(doc %d) = %d ids; want %d", i, len(got), len(want))
		}
	}
	if m := x.Metrics(); m.IDs != int64(len(docs)/2) || m.Buckets != int64(len(ref)) {
		t.Errorf("metrics: %d ids, %d buckets; want %d, %d", m.IDs, m.Buckets, len(docs)/2, len(ref))
	}
}

func TestIndexQueryAllocs(t *testing.T) {
	var x Index
	for id := range uint64(100) {
		x.Insert(id, []uint64{id % 10, 100 + id%7})
	}
	dst := make([]uint64, 0, 256)
	keys := []uint64{3, 4, 105}
	if allocs := testing.AllocsPerRun(100, func() { dst = x.Query(dst[:0], keys) }); allocs != 0 {
		t.Errorf("Query with enough capacity: got %v allocs/op; want 0", allocs)
	}
}
