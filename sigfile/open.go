package sigfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
)

// Reader reads the records of a signature file, or of several files (the
// shards of one output) as one stream, checking every block's checksum
// before returning any of its records and the trailer's count and file
// checksum at the end. A file cut anywhere, or with any byte changed, ends
// in an error wrapping ErrTruncated or ErrCorrupt that names the file and
// the offset; records returned before it passed their block's checksum, but
// a caller must treat such an error as failing the whole read.
//
// The zero value is not usable; make one with NewReader, Open or
// OpenFiles. A Reader is not safe for concurrent use. It reads records in
// file order, deterministically.
type Reader struct {
	s      *stream
	h      Header
	opts   *ReadOptions
	paths  []string // files after the current one, in order (Open, OpenFiles)
	heads  []Header // their headers, read when the Reader was made
	closer io.Closer
	total  int64
	err    error
}

// NewReader reads the header of the signature file in r and returns a
// Reader of its records; name (a path, "-" or "standard input") names it
// in errors. An old-format file is read only under opts.Legacy. Close does
// not close r.
func NewReader(r io.Reader, name string, opts *ReadOptions) (*Reader, error) {
	s, err := openStream(r, name, opts)
	if err != nil {
		return nil, err
	}
	return &Reader{s: s, h: s.h, opts: opts}, nil
}

// Open opens the signature file name for reading; name may also be a
// directory, whose files (except those whose names start with "." or "_")
// are the shards of one output, or a glob pattern (filepath.Match syntax)
// matching them. A set of files is read as OpenFiles reads it, in the
// order of their names.
func Open(name string, opts *ReadOptions) (*Reader, error) {
	paths, many, err := expand(name)
	if err != nil {
		return nil, err
	}
	if !many {
		return openFile(paths[0], opts)
	}
	return OpenFiles(paths, opts)
}

// expand lists the files name stands for, and whether it stands for a set.
func expand(name string) ([]string, bool, error) {
	if strings.ContainsAny(name, "*?[") {
		if _, err := os.Stat(name); err == nil {
			return []string{name}, false, nil // a file whose name has glob characters
		}
		m, err := filepath.Glob(name)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", name, err)
		}
		m = slices.DeleteFunc(m, func(p string) bool { return hidden(filepath.Base(p)) })
		if len(m) == 0 {
			return nil, false, fmt.Errorf("%s: no signature files match: %w", name, fs.ErrNotExist)
		}
		return m, true, nil
	}
	fi, err := os.Stat(name)
	if err != nil {
		return nil, false, err
	}
	if !fi.IsDir() {
		return []string{name}, false, nil
	}
	ents, err := os.ReadDir(name)
	if err != nil {
		return nil, false, err
	}
	var paths []string
	for _, e := range ents {
		if !hidden(e.Name()) && e.Type().IsRegular() {
			paths = append(paths, filepath.Join(name, e.Name()))
		}
	}
	if len(paths) == 0 {
		return nil, false, fmt.Errorf("%s: a directory without signature files: %w", name, fs.ErrNotExist)
	}
	return paths, true, nil
}

// hidden reports names a directory or glob of shards leaves out: temporary
// files (atomicfile's start with ".") and markers such as _SUCCESS.
func hidden(base string) bool { return strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") }

func openFile(path string, opts *ReadOptions) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f, path, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// OpenFiles opens the signature files paths as one stream. Their headers
// must agree on the sketch, spec and params (ErrSpecMismatch,
// ErrParamsMismatch or ErrSketchMismatch otherwise). If they are shards
// (Header.Shards > 0), they must be exactly the shards 0..n−1 of n, each
// once, and are read in shard order whatever the order of paths (ErrShards
// otherwise); unsharded files are read in the order given. Every file's
// header is read here; the files are then read one at a time.
func OpenFiles(paths []string, opts *ReadOptions) (*Reader, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: no files", ErrShards)
	}
	heads := make([]Header, len(paths))
	for i, p := range paths {
		r, err := openFile(p, opts)
		if err != nil {
			return nil, err
		}
		heads[i] = r.h
		r.Close()
		if i > 0 {
			if err := sameSignatures(paths[0], heads[0], p, heads[i]); err != nil {
				return nil, err
			}
		}
	}
	paths, heads, err := orderShards(paths, heads)
	if err != nil {
		return nil, err
	}
	r, err := openFile(paths[0], opts)
	if err != nil {
		return nil, err
	}
	if r.h != heads[0] {
		r.Close()
		return nil, fmt.Errorf("%w: %s changed while it was opened", ErrShards, paths[0])
	}
	r.paths, r.heads = paths[1:], heads[1:]
	return r, nil
}

// sameSignatures reports whether two files hold comparable signatures.
func sameSignatures(pa string, a Header, pb string, b Header) error {
	switch {
	case a.Sketch != b.Sketch:
		return fmt.Errorf("%w: %s holds %s signatures, %s %s", ErrSketchMismatch, pa, a.Sketch, pb, b.Sketch)
	case a.Spec != b.Spec:
		return fmt.Errorf("%w: %s has %s (fingerprint %016x), %s has %s (%016x)", ErrSpecMismatch, pa, a.Spec, a.SpecFingerprint(), pb, b.Spec, b.SpecFingerprint())
	case a.Params() != b.Params():
		return fmt.Errorf("%w: %s has %s (fingerprint %016x), %s has %s (%016x)", ErrParamsMismatch, pa, a.Params(), a.ParamsFingerprint(), pb, b.Params(), b.ParamsFingerprint())
	}
	return nil
}

// orderShards checks that sharded files form one complete output and puts
// them in shard order.
func orderShards(paths []string, heads []Header) ([]string, []Header, error) {
	n := heads[0].Shards
	for i, h := range heads {
		if (h.Shards == 0) != (n == 0) {
			return nil, nil, fmt.Errorf("%w: %s is %s, %s is %s", ErrShards, paths[0], shardDesc(heads[0]), paths[i], shardDesc(h))
		}
		if h.Shards != n {
			return nil, nil, fmt.Errorf("%w: %s is %s, %s is %s: shards of different outputs", ErrShards, paths[0], shardDesc(heads[0]), paths[i], shardDesc(h))
		}
	}
	if n == 0 {
		return paths, heads, nil
	}
	at := make([]int, n)
	for i := range at {
		at[i] = -1
	}
	for i, h := range heads {
		if j := at[h.Shard]; j >= 0 {
			return nil, nil, fmt.Errorf("%w: shard %d of %d is both %s and %s", ErrShards, h.Shard, n, paths[j], paths[i])
		}
		at[h.Shard] = i
	}
	var missing []string
	for s, i := range at {
		if i < 0 {
			missing = append(missing, fmt.Sprint(s))
		}
	}
	if len(missing) > 0 {
		if len(missing) > 10 {
			missing = append(missing[:10], "…")
		}
		return nil, nil, fmt.Errorf("%w: %d files of an output of %d shards; missing shard %s", ErrShards, len(paths), n, strings.Join(missing, ", "))
	}
	op, oh := make([]string, n), make([]Header, n)
	for s, i := range at {
		op[s], oh[s] = paths[i], heads[i]
	}
	return op, oh, nil
}

func shardDesc(h Header) string {
	if h.Shards == 0 {
		return "not a shard"
	}
	return fmt.Sprintf("shard %d of %d", h.Shard, h.Shards)
}

// ShardName returns the conventional name of shard i of n of an output
// named prefix, "prefix-00003-of-00016", which sorts in shard order for up
// to 100000 shards.
func ShardName(prefix string, i, n int) string {
	return fmt.Sprintf("%s-%05d-of-%05d", prefix, i, n)
}

// Header returns the file's header; for several files, the first one's
// (they agree on everything but Shard and BlockBytes).
func (r *Reader) Header() Header { return r.h }

// CheckMinHash is Header().CheckMinHash, its error prefixed with the name
// of the file.
func (r *Reader) CheckMinHash(spec shingle.Spec, p minhash.Params) error {
	if err := r.h.CheckMinHash(spec, p); err != nil {
		return fmt.Errorf("%s: %w", r.s.name, err)
	}
	return nil
}

// CheckSimHash is Header().CheckSimHash, its error prefixed with the name
// of the file.
func (r *Reader) CheckSimHash(spec shingle.Spec, p SimHashParams) error {
	if err := r.h.CheckSimHash(spec, p); err != nil {
		return fmt.Errorf("%s: %w", r.s.name, err)
	}
	return nil
}

// Next copies the next record into rec. At the end of the last file, once
// its trailer has checked, it returns io.EOF. After an error, every later
// call returns the same error.
func (r *Reader) Next(rec *Record) error {
	if r.err != nil {
		return r.err
	}
	for {
		err := r.s.nextRecord(rec)
		if err == nil {
			r.total++
			return nil
		}
		if err != io.EOF || len(r.paths) == 0 {
			r.err = err
			return err
		}
		if err := r.advance(); err != nil {
			r.err = err
			return err
		}
	}
}

// advance closes the current file and opens the next one.
func (r *Reader) advance() error {
	if r.closer != nil {
		r.closer.Close()
		r.closer = nil
	}
	path, want := r.paths[0], r.heads[0]
	r.paths, r.heads = r.paths[1:], r.heads[1:]
	next, err := openFile(path, r.opts)
	if err != nil {
		return err
	}
	if next.h != want {
		next.Close()
		return fmt.Errorf("%w: %s changed while it was read", ErrShards, path)
	}
	next.s.buf = r.s.buf[:0] // reuse the block buffer
	r.s, r.closer = next.s, next.closer
	return nil
}

// Count returns the number of records Next has returned.
func (r *Reader) Count() int64 { return r.total }

// Name returns the name of the file being read.
func (r *Reader) Name() string { return r.s.name }

// Close closes the file the Reader opened, if any; later calls to Next
// return ErrClosed.
func (r *Reader) Close() error {
	if errors.Is(r.err, ErrClosed) {
		return nil
	}
	r.err = ErrClosed
	r.paths, r.heads = nil, nil
	if r.closer != nil {
		err := r.closer.Close()
		r.closer = nil
		return err
	}
	return nil
}
