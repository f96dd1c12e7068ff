package index

import (
	"path/filepath"
	"testing"
)

// pebbleBackend opens Pebble indexes with the given bucket filter size.
func pebbleBackend(filterBytes int) backend {
	return backend{
		name: "pebble",
		open: func(t *testing.T, opts *Options) (Index, func(*Options) (Index, error)) {
			dir := filepath.Join(t.TempDir(), "index")
			var o Options
			if opts != nil {
				o = *opts
			}
			o.CacheSize, o.MemTableSize, o.FilterBytes = 8<<20, 4<<20, filterBytes
			x, err := Open(dir, &o)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { x.Close() })
			return x, func(opts *Options) (Index, error) {
				y, err := Open(dir, opts)
				if err != nil {
					return nil, err
				}
				return y, nil
			}
		},
	}
}

func TestPebble(t *testing.T) { runSuite(t, pebbleBackend(1<<20)) }

// TestPebbleFilterSizes runs the suite without the bucket filter and with
// one so small that every bit is set: the filter only saves work.
func TestPebbleFilterSizes(t *testing.T) {
	if testing.Short() {
		t.Skip("the suite with other filter sizes")
	}
	t.Run("off", func(t *testing.T) { runSuite(t, pebbleBackend(-1)) })
	t.Run("tiny", func(t *testing.T) { runSuite(t, pebbleBackend(8)) })
}

func TestBucketFilter(t *testing.T) {
	f := newBucketFilter(1 << 10) // 8192 bits
	if f.shift != 32-13 {
		t.Fatalf("shift %d; want 19", f.shift)
	}
	for _, bk32 := range []uint32{0, 1 << 19, 0xffffffff} {
		bk := uint64(bk32) << 32 // keys are left-aligned
		if f.mayHold(bk) {
			t.Errorf("empty filter holds %016x", bk)
		}
		f.set(bk)
		if !f.mayHold(bk) || !f.mayHold(bk^1<<32) || !f.mayHold(bk^0xffffffff) {
			t.Errorf("after set(%016x): mayHold false", bk)
		}
	}
	if f.mayHold(2 << 19 << 32) {
		t.Error("an unset stripe reads as set")
	}
	if got := f.fill(); got != 3.0/8192 {
		t.Errorf("fill %v; want 3/8192", got)
	}
	var off *bucketFilter
	off.set(5)
	if !off.mayHold(5) || newBucketFilter(-1) != nil {
		t.Error("a nil filter must hold everything")
	}
}
