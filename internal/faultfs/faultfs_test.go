package faultfs

import (
	"errors"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestHookSeesEveryWriteOp: every write-side operation, of the FS and of
// the files it returns (reused ones too), reaches the hook with its name
// and size, and an error of the hook fails the operation unmade.
func TestHookSeesEveryWriteOp(t *testing.T) {
	var got []Event
	var fail Op = -1
	boom := errors.New("boom")
	mem := vfs.NewMem()
	fs := &FS{FS: mem, Hook: func(ev Event) error {
		got = append(got, ev)
		if ev.Op == fail {
			return boom
		}
		return nil
	}}
	f, err := fs.Create("a", vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("abc"))
	f.Sync()
	f.SyncData()
	f.SyncTo(1)
	f.Close()
	if err := fs.Rename("a", "b"); err != nil {
		t.Fatal(err)
	}
	r, err := fs.ReuseForWrite("b", "c", vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	r.Write([]byte("de"))
	r.Close()
	o, err := fs.OpenReadWrite("c", vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	o.WriteAt([]byte("f"), 0)
	want := []Event{{Create, "a", 0}, {Write, "a", 3}, {Sync, "a", 0}, {Sync, "a", 0}, {Sync, "a", 0},
		{Rename, "a", 0}, {Create, "c", 0}, {Write, "c", 2}, {Open, "c", 0}, {Write, "c", 1}}
	if !slices.Equal(got, want) {
		t.Errorf("events %v; want %v", got, want)
	}

	before, err := mem.Stat("c")
	if err != nil {
		t.Fatal(err)
	}
	fail = Write
	if n, err := o.Write([]byte("xyz")); n != 0 || !errors.Is(err, boom) {
		t.Errorf("a failed write: %d, %v; want 0, boom", n, err)
	}
	o.Close()
	if st, err := mem.Stat("c"); err != nil || st.Size() != before.Size() {
		t.Errorf("after the failed write: %v, %v; want size %d (unwritten)", st, err, before.Size())
	}
	fail = Create
	if _, err := fs.Create("d", vfs.WriteCategoryUnspecified); !errors.Is(err, boom) {
		t.Errorf("a failed create: %v; want boom", err)
	}
	if _, err := mem.Stat("d"); err == nil {
		t.Error("a failed create made the file")
	}
}
