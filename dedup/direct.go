package dedup

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/neardup/neardup/internal/atomicfile"
)

// kept.jsonl through O_DIRECT.
//
// kept.jsonl is about the size of the input (97 % of it at 5M short
// documents): written through the page cache, the kernel's copy into fresh
// page-cache pages took 2.5–3 s of system time a GB on the 2-core machine
// (copy_folio_from_iter_atomic, more than the rest of the write stage), and
// the commit's fsync then wrote the GB of dirty pages out. Written with
// O_DIRECT from aligned buffers, whole blocks go from the process's memory
// to the device (0.15 s of system time a GB, measured with dd), and a
// second buffer is filled while one is written. The last partial block goes
// through the file's ordinary descriptor. Where O_DIRECT is refused (tmpfs,
// other systems) or a direct write fails with EINVAL (a device with larger
// blocks), every block goes through the ordinary descriptor instead, still
// written by the second goroutine.

const (
	// directBlock is the alignment of direct writes: of the buffer's
	// address, the file offset and the length (4 KiB covers devices with
	// 512-byte and 4 KiB logical blocks).
	directBlock = 4096
	// directBufSize is the size of each of the writer's buffers.
	directBufSize = 4 << 20
	// directBufs is the number of buffers: one filled while the others
	// wait to be written, one at a time. With two, a filler descheduled
	// for a few milliseconds left the disk idle, and a slow write the
	// filler (time the writing goroutine waited for a buffer, copying
	// kept.jsonl of 5M short documents on the loaded 2-core machine:
	// median 180 ms with two, 77 ms with eight); eight are 32 MiB.
	directBufs = 8
)

// directWriter writes a new file from its start, whole buffers at a time,
// on a goroutine of its own. Not safe for concurrent use; call close once
// done, whether the writing failed or not.
type directWriter struct {
	direct *os.File // opened with O_DIRECT, or nil
	plain  *os.File // the same file
	bufSz  int
	buf    []byte // being filled
	off    int64  // file offset of buf[0]
	full   chan directBlockRun
	free   chan []byte
	done   chan struct{}
	err    atomic.Pointer[error] // the writing goroutine's first error
	closed bool
}

// directBlockRun is a buffer to write at a file offset.
type directBlockRun struct {
	p   []byte
	off int64
}

// newDirectWriter returns a writer of plain, a file just created and empty,
// through direct (plain opened again with O_DIRECT), or through plain alone
// when direct is nil; bufSize is a multiple of directBlock.
func newDirectWriter(plain, direct *os.File, bufSize int) *directWriter {
	w := &directWriter{direct: direct, plain: plain, bufSz: bufSize,
		full: make(chan directBlockRun, directBufs), free: make(chan []byte, directBufs), done: make(chan struct{})}
	for range directBufs - 1 {
		w.free <- alignedBuffer(bufSize)
	}
	w.buf = alignedBuffer(bufSize)
	go w.writeBlocks()
	return w
}

// alignedBuffer returns an empty slice of capacity n whose memory starts at
// a multiple of directBlock.
func alignedBuffer(n int) []byte {
	b := make([]byte, n+directBlock)
	k := int(uintptr(unsafe.Pointer(&b[0])) & (directBlock - 1))
	if k != 0 {
		k = directBlock - k
	}
	return b[k : k : k+n]
}

// writeBlocks writes the buffers handed over, in order, until full closes.
func (w *directWriter) writeBlocks() {
	defer close(w.done)
	for b := range w.full {
		if w.err.Load() == nil {
			if err := w.writeAt(b.p, b.off); err != nil {
				w.err.Store(&err)
			}
		}
		w.free <- b.p[:0]
	}
}

// writeAt writes p at off: directly while that works, else through the
// ordinary descriptor (from then on).
func (w *directWriter) writeAt(p []byte, off int64) error {
	if w.direct != nil {
		_, err := w.direct.WriteAt(p, off)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EINVAL) {
			return err
		}
		// The device wants another alignment: write as usual.
		w.direct.Close()
		w.direct = nil
	}
	_, err := w.plain.WriteAt(p, off)
	return err
}

// failed returns the writing goroutine's first error, if any.
func (w *directWriter) failed() error {
	if p := w.err.Load(); p != nil {
		return *p
	}
	return nil
}

// Write copies p into the buffers, handing each full one to the writing
// goroutine.
func (w *directWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		if w.closed {
			return n, os.ErrClosed
		}
		k := copy(w.buf[len(w.buf):cap(w.buf)], p)
		w.buf = w.buf[:len(w.buf)+k]
		p, n = p[k:], n+k
		if len(w.buf) == cap(w.buf) {
			w.full <- directBlockRun{w.buf, w.off}
			w.off += int64(len(w.buf))
			w.buf = <-w.free
			if err := w.failed(); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// AvailableBuffer returns an empty slice with the room left in the buffer
// being filled, to append to and pass to an immediately following Write
// (as bufio.Writer's). Having it tells corpus.CopyKept that the writer
// buffers, so that the kept records come to Write straight from the
// input's mapped pages and are copied once, not through a buffer of the
// corpus.Writer's first.
func (w *directWriter) AvailableBuffer() []byte { return w.buf[len(w.buf):len(w.buf)] }

// close writes what is buffered (the whole blocks directly, the rest
// through the ordinary descriptor), waits for the writing goroutine and
// closes the direct descriptor; the file itself stays open (its
// atomicfile.File commits or aborts it). It returns the first error.
func (w *directWriter) close() error {
	if w.closed {
		return w.failed()
	}
	w.closed = true
	whole := len(w.buf) &^ (directBlock - 1)
	tail := w.buf[whole:]
	if whole > 0 {
		w.full <- directBlockRun{w.buf[:whole], w.off}
		w.off += int64(whole)
	}
	close(w.full)
	<-w.done
	err := w.failed()
	if err == nil && len(tail) > 0 {
		// The goroutine is done: tail, in the last buffer handed over,
		// is no longer read.
		_, err = w.plain.WriteAt(tail, w.off)
	}
	if w.direct != nil {
		w.direct.Close()
		w.direct = nil
	}
	return err
}

// createDirect starts the output file path, to be committed with the
// others, written through a directWriter; with the outputs' wrap, the
// returned io.Writer stands in front of it. Close the directWriter once
// done.
func (o *outputs) createDirect(path string) (io.Writer, *directWriter, error) {
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, nil, fmt.Errorf("dedup: %w", err)
	}
	o.files = append(o.files, f)
	direct, _ := openDirect(f.Name()) // nil where refused: written as usual
	dw := newDirectWriter(f.File, direct, directBufSize)
	if o.wrap != nil {
		return o.wrap(path, dw), dw, nil
	}
	return dw, dw, nil
}
