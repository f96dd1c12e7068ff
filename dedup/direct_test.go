package dedup

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestDirectWriter: what a directWriter is given, in writes of every size
// (empty, under a block, across buffers), is the file it leaves, whatever
// the total (none, under a block, whole blocks, whole buffers, a tail),
// through O_DIRECT where the file system takes it, through the ordinary
// descriptor without it, and after a direct write refused with EINVAL (a
// buffer that is not a whole number of blocks).
func TestDirectWriter(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	dir := t.TempDir()
	ways := []struct {
		name   string
		direct bool
		buf    int
	}{
		{"direct", true, 2 * directBlock},
		{"direct, larger buffers", true, 64 * directBlock},
		{"plain", false, 2 * directBlock},
		{"direct refused", true, 3000},
	}
	for _, w := range ways {
		for _, total := range []int{0, 1, 100, directBlock - 1, directBlock, 2 * directBlock, 5*directBlock + 7, 600 << 10, 1<<20 + 12345} {
			name := filepath.Join(dir, "out")
			f, err := os.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			var direct *os.File
			if w.direct {
				if direct, err = openDirect(name); err != nil {
					t.Logf("O_DIRECT refused here (%v): written through the ordinary descriptor", err)
				}
			}
			dw := newDirectWriter(f, direct, w.buf)
			want := make([]byte, total)
			for i := range want {
				want[i] = byte(rng.Uint32())
			}
			for p := want; len(p) > 0; {
				k := min(len(p), []int{0, 1, 13, directBlock, 3 * directBlock / 2, 1 << 20}[rng.IntN(6)])
				if rng.IntN(3) == 0 {
					// Appended to AvailableBuffer first, as bufio.Writer's
					// users do (and written over itself).
					ab := dw.AvailableBuffer()
					if len(ab) != 0 || cap(ab) == 0 {
						t.Fatalf("AvailableBuffer: len %d cap %d; want 0, room left", len(ab), cap(ab))
					}
					k = min(k, cap(ab))
					ab = append(ab, p[:k]...)
					if n, err := dw.Write(ab); n != k || err != nil {
						t.Fatalf("%s, %d bytes: Write of AvailableBuffer's %d: %d, %v", w.name, total, k, n, err)
					}
					p = p[k:]
					continue
				}
				if n, err := dw.Write(p[:k]); n != k || err != nil {
					t.Fatalf("%s, %d bytes: Write of %d: %d, %v", w.name, total, k, n, err)
				}
				p = p[k:]
			}
			if err := dw.close(); err != nil {
				t.Fatalf("%s, %d bytes: close: %v", w.name, total, err)
			}
			if _, err := dw.Write([]byte("x")); !errors.Is(err, os.ErrClosed) {
				t.Errorf("%s: Write after close: %v; want os.ErrClosed", w.name, err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s, %d bytes: the file holds %d bytes, not those written", w.name, total, len(got))
			}
		}
	}
}

// TestDirectWriterError: a write that fails (the file is closed under the
// writer) is returned by a later Write or by close, not lost.
func TestDirectWriterError(t *testing.T) {
	name := filepath.Join(t.TempDir(), "out")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	dw := newDirectWriter(f, nil, directBlock)
	var werr error
	for range 8 {
		if _, werr = dw.Write(make([]byte, directBlock)); werr != nil {
			break
		}
	}
	if cerr := dw.close(); !errors.Is(cerr, os.ErrClosed) || (werr != nil && !errors.Is(werr, os.ErrClosed)) {
		t.Fatalf("Write: %v, close: %v; want os.ErrClosed", werr, cerr)
	}
}
