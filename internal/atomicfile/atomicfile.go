// Package atomicfile writes files that appear under their final name only
// when complete: a File is written under a temporary name in the destination's
// directory and renamed over the destination by Commit. A run that fails, is
// killed or fills the disk leaves the destination as it was (absent, or the
// previous complete version) and at most a temporary file whose name starts
// with ".", ends with TempSuffix and is removed by Abort.
//
// It is not a transaction over several files: each file is replaced
// atomically on POSIX file systems, and a caller writing several outputs
// commits them once all are written, so a failure while writing leaves none
// of them.
package atomicfile

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// TempSuffix ends the name of every temporary file Create makes.
const TempSuffix = ".tmp"

// ErrDone reports a write, Commit or second Commit on a File already committed
// or aborted; check with errors.Is.
var ErrDone = errors.New("atomicfile: file already committed or aborted")

// File is an output file being written under a temporary name. Write to it
// (it embeds *os.File), then Commit or Abort; deferring Abort after Create is
// safe, since Abort after Commit does nothing. Not safe for concurrent use.
type File struct {
	*os.File
	path   string
	done   bool
	direct bool // path is a device or pipe, written in place
}

// Create starts writing path: it creates a new temporary file
// ".<base>.<random>.tmp" in path's directory with mode 0666 (before umask).
//
// A path that exists and is neither a regular file nor a directory (a
// character device such as /dev/null or /dev/stdout, a named pipe, a socket)
// is written in place instead: renaming a temporary file over it would
// replace the device with a regular file (one holding the whole output, on
// /dev's in-memory file system). Commit then only closes it, and Abort cannot
// take back what was written.
func Create(path string) (*File, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("atomicfile: create %s: %w", path, err)
		}
		return &File{File: f, path: path, direct: true}, nil
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	// Not os.CreateTemp: it makes the file 0600, and an output file gets
	// the mode os.Create gives (0666 less the umask).
	for range 100 {
		name := filepath.Join(dir, "."+base+"."+strconv.FormatUint(rand.Uint64(), 36)+TempSuffix)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("atomicfile: create %s: %w", path, err)
		}
		return &File{File: f, path: path}, nil
	}
	return nil, fmt.Errorf("atomicfile: create %s: no free temporary name", path)
}

// Path returns the final name the file gets on Commit.
func (f *File) Path() string { return f.path }

// Commit flushes the file to stable storage, closes it and renames it to its
// final name, replacing any file there. On error the temporary file is
// removed and the final name is left as it was.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("%w: %s", ErrDone, f.path)
	}
	f.done = true
	if f.direct {
		if err := f.Close(); err != nil {
			return fmt.Errorf("atomicfile: write %s: %w", f.path, err)
		}
		return nil
	}
	tmp := f.Name()
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, f.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("atomicfile: write %s: %w", f.path, err)
	}
	return nil
}

// Abort closes and removes the temporary file, leaving the final name as it
// was. It does nothing after Commit or a first Abort, and returns no error
// then, so it can be deferred.
func (f *File) Abort() error {
	if f.done {
		return nil
	}
	f.done = true
	f.Close()
	if f.direct {
		return nil
	}
	if err := os.Remove(f.Name()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("atomicfile: abort %s: %w", f.path, err)
	}
	return nil
}

// WriteFile writes data to path as os.WriteFile does (mode 0666 before
// umask), but through a temporary file renamed by Commit: path holds either
// its earlier content or all of data, never part of it.
func WriteFile(path string, data []byte) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return fmt.Errorf("atomicfile: write %s: %w", path, err)
	}
	return f.Commit()
}

// SyncDir makes the entries of dir durable: a rename into it, or out of it,
// survives a crash once SyncDir returns.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
