package index

import (
	"strings"
	"testing"
)

// memoryBackend opens Memory indexes; reopen opens a new handle on the same
// contents, as Open does a directory.
func memoryBackend() backend {
	return backend{
		name: "memory",
		open: func(t *testing.T, opts *Options) (Index, func(*Options) (Index, error)) {
			data := newMemData()
			x, err := openMemory(data, opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { x.Close() })
			return x, func(opts *Options) (Index, error) {
				y, err := openMemory(data, opts)
				if err != nil {
					return nil, err
				}
				return y, nil
			}
		},
	}
}

func TestMemory(t *testing.T) { runSuite(t, memoryBackend()) }

// TestMemoryCheck: Check finds a missing posting, a stray one, an id
// without its record and a bucket out of order.
func TestMemoryCheck(t *testing.T) {
	g := newTextGen(30)
	for _, tc := range []struct {
		name  string
		spoil func(d *memData, num uint32, bk uint64)
		want  string
	}{
		{"a posting removed", func(d *memData, num uint32, bk uint64) { d.buckets[bk] = nil }, "lacks its posting"},
		{"a stray posting", func(d *memData, num uint32, bk uint64) { d.buckets[bk^1] = []uint32{num} }, "which has no record with that key"},
		{"a record removed", func(d *memData, num uint32, bk uint64) { delete(d.recs, num) }, "whose record is for"},
		{"a bucket out of order", func(d *memData, num uint32, bk uint64) { d.buckets[bk] = []uint32{num + 1, num} }, "not ascending"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := newMemData()
			x, err := openMemory(data, nil)
			if err != nil {
				t.Fatal(err)
			}
			doc := docOf(t, x.Config(), "a", g.text(50))
			if err := x.Insert(ctx, []Doc{doc}); err != nil {
				t.Fatal(err)
			}
			mustCheck(t, x)
			var kb keyBuf
			tc.spoil(data, data.ids["a"], kb.of(&x.cfg, doc.Sig)[0])
			r, err := x.Check(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if r.OK() || !strings.Contains(r.String(), tc.want) {
				t.Errorf("Check found %s; want a problem saying %q", r, tc.want)
			}
		})
	}
}
