package dedup

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/neardup/neardup/cluster"
)

// liveHeap is the heap in use after a collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestDocTableBytes measures what a document costs the table, by policy,
// against the documented figures: docTableBytes and the id's bytes, plus
// docTableLengthBytes under KeepLongest and docTableKeepBytes under
// KeepField. Allowed beside them: a page of ids and one of offsets, and the
// growth slack of the slices of statuses and of lengths or values (a
// quarter of their bytes). Before, every
// document cost 34 bytes and its id's whatever the policy (the id's end,
// length and keep value 8 bytes each, 1 for the status and 1 for whether
// it has a keep value) and the slices' slack.
func TestDocTableBytes(t *testing.T) {
	const n = 1 << 20
	id := []byte("s000000000") // 10 bytes, as the generator's
	for _, c := range []struct {
		name   string
		policy cluster.PolicyKind
		extra  int64 // the policy's bytes a document
	}{
		{"first", cluster.KeepFirst, 0},
		{"longest", cluster.KeepLongest, docTableLengthBytes},
		{"field", cluster.KeepField, docTableKeepBytes},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := liveHeap()
			d := newDocTable(c.policy)
			for i := range n {
				d.add(docOK, id, int64(i), float64(i), true)
			}
			got := liveHeap() - before
			runtime.KeepAlive(&d)
			perDoc := docTableBytes + c.extra + int64(len(id))
			limit := n*perDoc + n*(1+c.extra)/4 + idPageSize + 64<<10
			t.Logf("%d documents: %d bytes, %.2f a document (documented %d)", n, got, float64(got)/n, perDoc)
			if got > limit {
				t.Errorf("%d documents hold %d bytes (%.2f a document); want at most %d (%d a document and the slack)", n, got, float64(got)/n, limit, perDoc)
			}
		})
	}
}

// TestDocTableIDs checks the ids read back across pages: empty ids, ids
// that end a page, one longer than a page, and the ids placed before the
// others.
func TestDocTableIDs(t *testing.T) {
	d := newDocTable(cluster.KeepFirst)
	var want [][]byte
	add := func(id []byte) {
		d.add(docOK, id, 0, 0, false)
		want = append(want, id)
	}
	for i := range 100_000 {
		switch {
		case i%7 == 0:
			add(nil)
		case i == 50_000:
			add(bytes.Repeat([]byte("x"), 3*idPageSize+5))
		default:
			add(fmt.Appendf(nil, "doc-%d-%s", i, bytes.Repeat([]byte("y"), i%29)))
		}
	}
	check := func(off int) {
		t.Helper()
		for i, w := range want {
			if got := d.id(uint32(i + off)); !bytes.Equal(got, w) {
				t.Fatalf("id(%d) = %.40q; want %.40q", i+off, got, w)
			}
		}
	}
	check(0)
	if len(d.idPages) < 4 {
		t.Fatalf("%d pages of ids; the test wants several", len(d.idPages))
	}
	ref := [][]byte{[]byte("ref-a"), []byte("ref-b")}
	d.prepend(ref)
	for i, w := range ref {
		if got := d.id(uint32(i)); !bytes.Equal(got, w) {
			t.Errorf("id(%d) = %q; want %q", i, got, w)
		}
	}
	check(len(ref))
	if d.len() != len(want)+len(ref) || d.status[0] != docOK || d.status[len(ref)] != docOK {
		t.Errorf("len %d, status %v…; want %d", d.len(), d.status[:3], len(want)+len(ref))
	}
}

// TestDocTableAttrs checks the attributes handed to the keep policy: the
// lengths as int64 (one past 32 bits included), the keep values with NaN
// where a document has none, and the prepended documents' zero length and
// missing value.
func TestDocTableAttrs(t *testing.T) {
	long := int64(math.MaxUint32) + 10
	d := newDocTable(cluster.KeepLongest)
	d.add(docOK, []byte("a"), 5, 0, false)
	d.add(docOK, []byte("b"), long, 0, false)
	d.prepend([][]byte{[]byte("r")})
	a := d.attrs()
	if fmt.Sprint(a.Lengths) != fmt.Sprint([]int64{0, 5, long}) || a.Values != nil || a.Has != nil {
		t.Errorf("KeepLongest attrs %v %v %v; want lengths [0 5 %d] only", a.Lengths, a.Values, a.Has, long)
	}
	d = newDocTable(cluster.KeepField)
	d.add(docOK, []byte("a"), 5, 2.5, true)
	d.add(docOK, []byte("b"), 6, 7, false)
	d.prepend([][]byte{[]byte("r")})
	a = d.attrs()
	if len(a.Values) != 3 || !math.IsNaN(a.Values[0]) || a.Values[1] != 2.5 || !math.IsNaN(a.Values[2]) || a.Lengths != nil {
		t.Errorf("KeepField attrs %v %v; want values [NaN 2.5 NaN] only", a.Lengths, a.Values)
	}
	d = newDocTable(cluster.KeepFirst)
	d.add(docOK, []byte("a"), 5, 2.5, true)
	if a := d.attrs(); a.Lengths != nil || a.Values != nil {
		t.Errorf("KeepFirst attrs %v %v; want none", a.Lengths, a.Values)
	}
}

// TestDocTableReserve: a table reserved for n documents adds n without
// moving its per-document arrays, holds what was added before and after,
// and grows as before past n.
func TestDocTableReserve(t *testing.T) {
	for _, policy := range []cluster.PolicyKind{cluster.KeepFirst, cluster.KeepLongest, cluster.KeepField} {
		d := newDocTable(policy)
		d.add(docOK, []byte("a"), 10, 1.5, true)
		d.reserve(1000)
		if !d.sized {
			t.Fatalf("policy %v: not marked sized", policy)
		}
		status := &d.status[:1][0]
		for i := 1; i < 1000; i++ {
			d.add(uint8(i%4), []byte(fmt.Sprint(i)), int64(i), float64(i), i%2 == 0)
		}
		if &d.status[0] != status {
			t.Errorf("policy %v: status moved within the reserve", policy)
		}
		d.add(docOK, []byte("past"), 5, 5, true) // past the reserve
		if d.len() != 1001 || d.status[999] != uint8(999%4) || string(d.id(1000)) != "past" || string(d.id(0)) != "a" {
			t.Fatalf("policy %v: len %d, status[999] %d, ids %q %q", policy, d.len(), d.status[999], d.id(0), d.id(1000))
		}
		switch policy {
		case cluster.KeepLongest:
			if len(d.lengths) != 1001 || d.lengths[0] != 10 || d.lengths[999] != 999 {
				t.Errorf("lengths: %d of them, [0] %d, [999] %d", len(d.lengths), d.lengths[0], d.lengths[999])
			}
		case cluster.KeepField:
			if len(d.keep) != 1001 || d.keep[0] != 1.5 || !math.IsNaN(d.keep[999]) || d.keep[998] != 998 {
				t.Errorf("keep: %d of them, [0] %v, [998] %v, [999] %v", len(d.keep), d.keep[0], d.keep[998], d.keep[999])
			}
		}
		d.reserve(10) // never shrinks
		if d.len() != 1001 {
			t.Errorf("policy %v: reserve below the length changed it to %d", policy, d.len())
		}
	}
}
