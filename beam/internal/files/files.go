// Package files moves the Beam job's data to and from storage through Beam's
// filesystem layer, so that the same code writes local paths (Prism, tests)
// and object stores (gs:// on Dataflow): intermediate state as per-bundle
// blob files listed by a manifest, and small JSON results.
//
// Intermediate files are safe under retries: a bundle writes a file with a
// fresh random name and reports it from FinishBundle, and only the names that
// reach the manifest (the outputs of committed bundles) are read back; files
// of failed attempts are ignored.
package files

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local" // local paths
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/internal/atomicfile"
)

func init() {
	register.DoFn3x1[context.Context, []byte, func(string), error](&blobWriterFn{})
	register.DoFn3x1[context.Context, string, func([]byte), error](&blobReaderFn{})
	register.DoFn3x1[context.Context, int, func(*string) bool, error](&manifestFn{})
	register.DoFn3x1[context.Context, int, func(*[]byte) bool, error](&jsonWriterFn{})
	register.Emitter1[string]()
	register.Emitter1[[]byte]()
	register.Iter1[string]()
	register.Iter1[[]byte]()
}

// Join joins a directory (local path or URL such as gs://bucket/dir) and a
// name with a '/'.
func Join(dir, name string) string {
	if strings.Contains(dir, "://") {
		return strings.TrimSuffix(dir, "/") + "/" + name
	}
	return path.Join(dir, name)
}

// WriteBlobs writes the []byte elements of col as files under dir named
// name-<random>.bin (each element length-prefixed with a uvarint), one file
// per bundle, and the manifest dir/name.manifest listing those files, one a
// line. The manifest is written, possibly empty, once every file is.
func WriteBlobs(s beam.Scope, dir, name string, col beam.PCollection) {
	s = s.Scope("files.WriteBlobs." + name)
	names := beam.ParDo(s, &blobWriterFn{Dir: dir, Name: name}, col)
	names = beam.Flatten(s, names, beam.Create(s, "")) // so that the manifest is written when col is empty
	beam.ParDo0(s, &manifestFn{Path: Join(dir, name+".manifest")}, beam.GroupByKey(s, beam.AddFixedKey(s, names)))
}

// ReadBlobs reads back, at pipeline construction, the manifest WriteBlobs
// wrote under dir and returns the PCollection of its blobs, spread over
// workers file by file.
func ReadBlobs(ctx context.Context, s beam.Scope, dir, name string) (beam.PCollection, error) {
	s = s.Scope("files.ReadBlobs." + name)
	data, err := ReadFile(ctx, Join(dir, name+".manifest"))
	if err != nil {
		return beam.PCollection{}, err
	}
	var list []string
	for _, l := range strings.Split(string(data), "\n") {
		if l != "" {
			list = append(list, Join(dir, l))
		}
	}
	if len(list) == 0 {
		return beam.ParDo(s, &blobReaderFn{}, beam.CreateList(s, []string{})), nil
	}
	return beam.ParDo(s, &blobReaderFn{}, beam.Reshuffle(s, beam.CreateList(s, list))), nil
}

// blobWriterFn writes the blobs of one bundle to one file.
type blobWriterFn struct {
	Dir, Name string

	fs   filesystem.Interface
	file string
	wc   io.WriteCloser
	w    *bufio.Writer
	n    [binary.MaxVarintLen64]byte
}

func (f *blobWriterFn) ProcessElement(ctx context.Context, blob []byte, emit func(string)) error {
	if f.w == nil {
		var id [12]byte
		if _, err := rand.Read(id[:]); err != nil {
			return err
		}
		f.file = f.Name + "-" + hex.EncodeToString(id[:]) + ".bin"
		fs, err := filesystem.New(ctx, f.Dir)
		if err != nil {
			return err
		}
		wc, err := fs.OpenWrite(ctx, Join(f.Dir, f.file))
		if err != nil {
			fs.Close()
			return fmt.Errorf("files: %w", err)
		}
		f.fs, f.wc, f.w = fs, wc, bufio.NewWriterSize(wc, 1<<20)
	}
	k := binary.PutUvarint(f.n[:], uint64(len(blob)))
	f.w.Write(f.n[:k])
	_, err := f.w.Write(blob)
	return err
}

func (f *blobWriterFn) FinishBundle(ctx context.Context, emit func(string)) error {
	if f.w == nil {
		return nil
	}
	err := f.w.Flush()
	if cerr := f.wc.Close(); err == nil {
		err = cerr
	}
	f.fs.Close()
	f.fs, f.wc, f.w = nil, nil, nil
	if err != nil {
		return fmt.Errorf("files: write %s: %w", f.file, err)
	}
	emit(f.file)
	return nil
}

// manifestFn writes the sorted file names of one WriteBlobs.
type manifestFn struct{ Path string }

func (f *manifestFn) ProcessElement(ctx context.Context, _ int, names func(*string) bool) error {
	var list []string
	var n string
	for names(&n) {
		if n != "" {
			list = append(list, n)
		}
	}
	slices.Sort(list)
	var b strings.Builder
	for _, n := range list {
		b.WriteString(n)
		b.WriteByte('\n')
	}
	return WriteFile(ctx, f.Path, []byte(b.String()))
}

// blobReaderFn emits the blobs of one file.
type blobReaderFn struct{}

func (f *blobReaderFn) ProcessElement(ctx context.Context, file string, emit func([]byte)) error {
	fs, err := filesystem.New(ctx, file)
	if err != nil {
		return err
	}
	defer fs.Close()
	rc, err := fs.OpenRead(ctx, file)
	if err != nil {
		return fmt.Errorf("files: %w", err)
	}
	defer rc.Close()
	r := bufio.NewReaderSize(rc, 1<<20)
	for {
		n, err := binary.ReadUvarint(r)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("files: %s: %w", file, err)
		}
		blob := make([]byte, n)
		if _, err := io.ReadFull(r, blob); err != nil {
			return fmt.Errorf("files: %s cut short: %w", file, err)
		}
		emit(blob)
	}
}

// WriteJSON writes the single []byte element of col (a JSON document, as
// json.Marshal makes it) to the file at path. It is an error if col holds more
// than one element; if it holds none, no file is written.
func WriteJSON(s beam.Scope, path string, col beam.PCollection) {
	s = s.Scope("files.WriteJSON")
	beam.ParDo0(s, &jsonWriterFn{Path: path}, beam.GroupByKey(s, beam.AddFixedKey(s, col)))
}

type jsonWriterFn struct{ Path string }

func (f *jsonWriterFn) ProcessElement(ctx context.Context, _ int, docs func(*[]byte) bool) error {
	var doc, next []byte
	if !docs(&doc) {
		return nil
	}
	if docs(&next) {
		return fmt.Errorf("files: more than one document for %s", f.Path)
	}
	return WriteFile(ctx, f.Path, doc)
}

// ReadFile reads a whole file through Beam's filesystem layer.
func ReadFile(ctx context.Context, path string) ([]byte, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	b, err := filesystem.Read(ctx, fs, path)
	if err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	return b, nil
}

// WriteFile writes a whole file through Beam's filesystem layer; a local
// file is written under a temporary name in its directory and renamed when
// complete (internal/atomicfile), so that it never holds part of data.
func WriteFile(ctx context.Context, path string, data []byte) error {
	if !strings.Contains(path, "://") {
		if err := atomicfile.WriteFile(path, data); err != nil {
			return fmt.Errorf("files: %w", err)
		}
		return nil
	}
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return err
	}
	defer fs.Close()
	if err := filesystem.Write(ctx, fs, path, data); err != nil {
		return fmt.Errorf("files: write %s: %w", path, err)
	}
	return nil
}

// ReadJSON reads the JSON file at path into v.
func ReadJSON(ctx context.Context, path string, v any) error {
	b, err := ReadFile(ctx, path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("files: %s: %w", path, err)
	}
	return nil
}

// RemoveAll removes, as far as the filesystem allows, the files directly
// under dir (the layout WriteBlobs and WriteJSON make), for cleaning up
// state on remote storage; errors are ignored.
func RemoveAll(ctx context.Context, dir string) {
	fs, err := filesystem.New(ctx, dir)
	if err != nil {
		return
	}
	defer fs.Close()
	rm, ok := fs.(filesystem.Remover)
	if !ok {
		return
	}
	list, _ := fs.List(ctx, Join(dir, "*"))
	for _, f := range list {
		rm.Remove(ctx, f)
	}
}
