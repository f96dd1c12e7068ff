package dedup

import (
	"bufio"
	"fmt"
	"io"
	"slices"

	"github.com/neardup/neardup/internal/atomicfile"
)

// outputs are a run's output files: each is written under a temporary name
// in its directory (internal/atomicfile) and none gets its final name until
// every one is complete, so that a run that fails (a full disk, a bad record
// met late, a cancelled context) leaves no output, not a truncated kept.jsonl
// beside complete pairs.tsv and clusters.jsonl.
type outputs struct {
	files []*atomicfile.File
	// wrap, if not nil, stands between each file and its buffer: the tests
	// inject write errors with it.
	wrap func(path string, w io.Writer) io.Writer
}

// create starts the output file path, to be committed with the others.
func (o *outputs) create(path string) (io.Writer, error) {
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, fmt.Errorf("dedup: %w", err)
	}
	o.files = append(o.files, f)
	if o.wrap != nil {
		return o.wrap(path, f), nil
	}
	return f, nil
}

// write writes the output file path through a buffer filled by fn.
func (o *outputs) write(path string, fn func(*bufio.Writer) error) error {
	f, err := o.create(path)
	if err != nil {
		return err
	}
	return fill(path, f, fn)
}

// fill writes f, the output file path (from create), through a buffer
// filled by fn.
func fill(path string, f io.Writer, fn func(*bufio.Writer) error) error {
	w := bufio.NewWriterSize(f, 1<<20)
	if err := fn(w); err != nil {
		return fmt.Errorf("dedup: write %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("dedup: write %s: %w", path, err)
	}
	return nil
}

// sync flushes the output files of paths (from create) to stable storage
// ahead of the commit.
func (o *outputs) sync(paths ...string) error {
	for _, f := range o.files {
		if slices.Contains(paths, f.Path()) {
			if err := f.Sync(); err != nil {
				return fmt.Errorf("dedup: write %s: %w", f.Path(), err)
			}
		}
	}
	return nil
}

// commit gives every file its final name: all are flushed to stable storage
// first, so that what can fail (a full disk, an I/O error) fails before any
// is renamed.
func (o *outputs) commit() error {
	for _, f := range o.files {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("dedup: write %s: %w", f.Path(), err)
		}
	}
	for i, f := range o.files {
		if err := f.Commit(); err != nil {
			o.files = o.files[i+1:]
			return err
		}
	}
	o.files = nil
	return nil
}

// abort removes the temporary files of the outputs not committed; it can be
// deferred.
func (o *outputs) abort() {
	for _, f := range o.files {
		f.Abort()
	}
	o.files = nil
}
