package corpus

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/neardup/neardup/internal/atomicfile"
)

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// stream is an opened input: decompressed bytes and what to close after.
type stream struct {
	io.Reader
	closers []func() error // run last to first
	// plain: the bytes read are the file's as stored (a file, not standard
	// input, with no compression undone), so that a record's byte offset
	// in them is its offset in the file.
	plain bool
}

// Close runs the closers last to first and returns the first error.
func (s *stream) Close() error {
	var first error
	for i := len(s.closers) - 1; i >= 0; i-- {
		if err := s.closers[i](); err != nil && first == nil {
			first = err
		}
	}
	s.closers = nil
	return first
}

// openStream opens in (a file or standard input), counts stored bytes into
// read, and undoes its compression.
func openStream(in *input, stdin io.Reader, read *atomic.Int64) (*stream, error) {
	s := &stream{}
	var raw io.Reader
	if in.path == "-" {
		raw = stdin
	} else {
		f, err := os.Open(in.path)
		if err != nil {
			return nil, fmt.Errorf("corpus: %w", err)
		}
		s.closers = append(s.closers, f.Close)
		raw = f
	}
	s.Reader = countingReader{raw, read}
	layers := in.layers
	if in.sniff {
		// Standard input has no name to go by: recognise the magic bytes.
		br := bufio.NewReaderSize(s.Reader, 64<<10)
		s.Reader = br
		for {
			head, _ := br.Peek(4)
			var c compression
			switch {
			case bytes.HasPrefix(head, gzipMagic):
				c = compGzip
			case bytes.HasPrefix(head, zstdMagic):
				c = compZstd
			}
			if c == 0 {
				break
			}
			if err := s.push(c, in.name); err != nil {
				s.Close()
				return nil, err
			}
			br = bufio.NewReaderSize(s.Reader, 64<<10)
			s.Reader = br
		}
		layers = nil
	}
	for _, c := range layers {
		if err := s.push(c, in.name); err != nil {
			s.Close()
			return nil, err
		}
	}
	s.plain = in.path != "-" && len(s.closers) == 1 // the file's own closer only
	return s, nil
}

// push adds a decompression layer on top of s.
func (s *stream) push(c compression, name string) error {
	switch c {
	case compGzip:
		zr, err := gzip.NewReader(s.Reader)
		if err != nil {
			return fmt.Errorf("corpus: %s: gzip: %w", name, err)
		}
		s.Reader = zr
		s.closers = append(s.closers, zr.Close)
	case compZstd:
		// One goroutine: the asynchronous decoder (the default on more than
		// one core) was 3-4x slower on a busy 2-core machine, where parser
		// workers already use every core.
		zr, err := zstd.NewReader(s.Reader, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return fmt.Errorf("corpus: %s: zstd: %w", name, err)
		}
		s.Reader = zr
		s.closers = append(s.closers, func() error { zr.Close(); return nil })
	}
	return nil
}

// Create creates the file path for writing, compressing what is written with
// gzip or zstd when the name ends in .gz or .zst (stacked suffixes stack
// compressors, as Reader expects). The file is written under a temporary
// name in path's directory (internal/atomicfile) and appears under path only
// when Close succeeds: Close flushes the compressors and renames the file,
// and its error must be checked; Abort (or a failing Close) removes it,
// leaving path as it was.
func Create(path string) (*FileWriter, error) {
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	w := &FileWriter{layeredWriter: layeredWriter{Writer: f}, f: f}
	_, layers := peelCompression(path)
	// layers lists the outermost (last suffix) first: it wraps the file
	// directly, and each later layer wraps the one before.
	for _, c := range layers {
		switch c {
		case compGzip:
			zw := gzip.NewWriter(w.Writer)
			w.Writer = zw
			w.closers = append(w.closers, zw.Close)
		case compZstd:
			zw, err := zstd.NewWriter(w.Writer)
			if err != nil {
				w.Abort()
				return nil, fmt.Errorf("corpus: %s: zstd: %w", path, err)
			}
			w.Writer = zw
			w.closers = append(w.closers, zw.Close)
		}
	}
	return w, nil
}

// FileWriter is a file being written by Create. Write to it, then Close to
// give it its name or Abort to discard it. It is not safe for concurrent
// use.
type FileWriter struct {
	layeredWriter
	f *atomicfile.File
}

// Close flushes the compressors and gives the file its name; on error the
// file is removed and path left as it was.
func (w *FileWriter) Close() error {
	if err := w.layeredWriter.Close(); err != nil {
		w.f.Abort()
		return fmt.Errorf("corpus: write %s: %w", w.f.Path(), err)
	}
	if err := w.f.Commit(); err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	return nil
}

// Abort discards the file, leaving path as it was; it does nothing after
// Close, so it can be deferred.
func (w *FileWriter) Abort() error {
	w.layeredWriter.Close()
	return w.f.Abort()
}

type layeredWriter struct {
	io.Writer
	closers []func() error // run last to first
}

// Close runs the closers last to first, flushing the compression layers
// before the file is closed, and returns the first error.
func (w *layeredWriter) Close() error {
	var first error
	for i := len(w.closers) - 1; i >= 0; i-- {
		if err := w.closers[i](); err != nil && first == nil {
			first = err
		}
	}
	w.closers = nil
	return first
}

// SpoolSuffix ends the names of files made by Spool. The Reader reads a file
// with this suffix as it reads standard input: it is named StdinName in
// records and errors, its format is Options.Format or JSON Lines, and its
// compression is recognised by magic bytes.
const SpoolSuffix = ".stdin"

// Spool copies r (typically standard input) to a new file in dir (os.TempDir
// when dir is "") so that it can be read twice, as CopyKept needs. Pass the
// returned path to NewReader and CopyKept in place of "-": it reads exactly
// as standard input would (see SpoolSuffix), even as Parquet. Call cleanup to
// remove the file once done; it is safe to call more than once.
func Spool(r io.Reader, dir string) (path string, cleanup func() error, err error) {
	f, err := os.CreateTemp(dir, "neardup-*"+SpoolSuffix)
	if err != nil {
		return "", nil, fmt.Errorf("corpus: spool: %w", err)
	}
	path = f.Name()
	var once atomic.Bool
	cleanup = func() error {
		if !once.CompareAndSwap(false, true) {
			return nil
		}
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("corpus: spool: %w", err)
		}
		return nil
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		cleanup()
		return "", nil, fmt.Errorf("corpus: spool: %w", err)
	}
	return path, cleanup, nil
}

// isSpooled reports whether path names a Spool file.
func isSpooled(path string) bool {
	return strings.HasSuffix(filepath.Base(path), SpoolSuffix)
}
