package docstore

import (
	"runtime"
	"testing"
)

func TestOffsetsPast4GiB(t *testing.T) {
	var o Offsets
	// Values that cross 2^32 by small steps, jump over several 4 GiB
	// spans at once, and stay put: At returns each as appended.
	var want []int64
	v := int64(1<<32 - 3*offsetPageLen)
	for i := range 5 * offsetPageLen {
		switch {
		case i == 2*offsetPageLen:
			v += 5<<32 + 7 // past several spans in one step
		case i%3 != 0:
			v += int64(i % 5) // equal values too
		}
		o.Append(v)
		want = append(want, v)
	}
	if o.Len() != len(want) || o.Last() != want[len(want)-1] {
		t.Fatalf("Len %d, Last %d; want %d, %d", o.Len(), o.Last(), len(want), want[len(want)-1])
	}
	for i, w := range want {
		if got := o.At(i); got != w {
			t.Fatalf("At(%d) = %d; want %d", i, got, w)
		}
	}
	if len(o.hiAt) != 2 {
		t.Errorf("%d changes of the high bits recorded; want 2", len(o.hiAt))
	}
}

func TestOffsetsDecreasingPanics(t *testing.T) {
	var o Offsets
	o.Append(10)
	defer func() {
		if recover() == nil {
			t.Error("Append of a smaller value did not panic")
		}
	}()
	o.Append(9)
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestStoreOffsetBytes measures what a record costs a Store beside its
// bytes: OffsetBytes, plus at most a page. The offsets were an []int64
// grown by append: 8 bytes a record and up to a quarter more of slack.
func TestStoreOffsetBytes(t *testing.T) {
	const n = 1 << 20
	before := liveHeap()
	s := New(t.TempDir(), "test", 0)
	defer s.Close()
	for range n {
		if _, err := s.Append(nil); err != nil { // no bytes: only the offset
			t.Fatal(err)
		}
	}
	got := int64(liveHeap()) - int64(before)
	runtime.KeepAlive(s)
	limit := int64(n*OffsetBytes + 2*offsetPageLen*4)
	t.Logf("%d records: %d bytes (%.2f a record)", n, got, float64(got)/n)
	if got > limit {
		t.Errorf("%d records hold %d bytes (%.2f a record); want at most %d (%d a record and a page)", n, got, float64(got)/n, limit, OffsetBytes)
	}
	if m := s.offs.MemoryBytes(); m > limit {
		t.Errorf("MemoryBytes %d; want at most %d", m, limit)
	}
}
