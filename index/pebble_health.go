package index

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// health records the storage faults a DB has met, so that they surface as
// errors of the operations that meet them and as DB.Health, never as an exit
// of the process (Pebble's default for a corruption or a fatal error):
//
//   - A corruption (a block whose checksum fails, reported by Pebble's
//     DataCorruption event) fails the reads of the damaged range with
//     ErrCorrupt; other reads and writes go on. It is counted and logged once
//     per file.
//   - A storage failure (a write, sync or file creation that failed with a
//     disk error: full, read-only, I/O error, permission) makes the DB refuse
//     writes with ErrStorage from then on: after a failed WAL write Pebble
//     panics on the next commit, and a failed flush stalls every writer. Reads
//     go on. Reopening the DB, once the cause is fixed, clears it.
//   - A Pebble fatal error (its Logger's Fatalf, or a panic of a commit) makes
//     the DB refuse every operation with ErrStorage.
//
// It is safe for concurrent use.
type health struct {
	log         *slog.Logger
	corruptions atomic.Uint64 // corruption events
	faults      atomic.Uint64 // storage failures met (write errors, fatal errors)
	failing     atomic.Bool   // failed is set: writes refused
	fatal       atomic.Bool   // everything refused
	poisoned    atomic.Bool   // Pebble panicked holding its commit lock: do not Close it

	mu      sync.Mutex
	corrupt error           // the first corruption
	failed  error           // the first storage failure
	logged  map[string]bool // files whose corruption was logged
}

func newHealth(log *slog.Logger) *health {
	if log == nil {
		log = slog.Default()
	}
	return &health{log: log, logged: map[string]bool{}}
}

// oneLine flattens a (Pebble) error message to one line, without the marker
// Pebble joins to corruption errors.
func oneLine(msg string) string {
	msg = strings.ReplaceAll(msg, "\n<corruption detail carrier>", "")
	return strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", "; ")), " ")
}

// corruption records a DataCorruption event and logs it, once per file.
func (h *health) corruption(info pebble.DataCorruptionInfo) {
	h.corruptions.Add(1)
	msg := oneLine(info.Details.Error())
	// Logged under mu, before Health reports it: whoever sees the state
	// finds the line in the log.
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.logged[info.Path] {
		h.logged[info.Path] = true
		h.log.Error("index: on-disk corruption; reads of the damaged range fail until the index is rebuilt or restored",
			"file", info.Path, "keys", info.Bounds.String(), "err", msg)
	}
	if h.corrupt == nil {
		h.corrupt = fmt.Errorf("%w: on-disk corruption in %s: %s", ErrCorrupt, info.Path, msg)
	}
}

// fail records a storage failure: from now on writes are refused.
func (h *health) fail(err error) {
	h.faults.Add(1)
	// Logged under mu, before writes are refused: whoever sees a refusal
	// finds the line in the log.
	h.mu.Lock()
	if h.failed == nil {
		h.log.Error("index: storage failure; writes are refused until the index is reopened", "err", oneLine(err.Error()))
		h.failed = err
	}
	h.mu.Unlock()
	h.failing.Store(true)
}

// die records a fatal error: from now on every operation is refused.
func (h *health) die(err error) {
	h.mu.Lock()
	if !h.fatal.Load() {
		h.log.Error("index: fatal storage error; every operation is refused until the index is reopened", "err", oneLine(err.Error()))
	}
	h.mu.Unlock()
	h.fatal.Store(true)
	h.fail(err)
}

// refuse returns the error an operation gets while the DB refuses it (write:
// a write), or nil.
func (h *health) refuse(write bool) error {
	if !h.failing.Load() || !write && !h.fatal.Load() {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	what := "writes are"
	if h.fatal.Load() {
		what = "every operation is"
	}
	return fmt.Errorf("%w: %s refused since %s; reopen the index once the cause is fixed", ErrStorage, what, oneLine(h.failed.Error()))
}

// err returns what is wrong, nil if nothing: a storage failure first, then
// a corruption.
func (h *health) err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.failed != nil:
		return fmt.Errorf("%w: %s", ErrStorage, oneLine(h.failed.Error()))
	case h.corrupt != nil:
		return h.corrupt
	}
	return nil
}

// surface turns an error Pebble returned into the error the caller gets: a
// corruption wraps ErrCorrupt, on one line with the damaged file; a disk
// error wraps ErrStorage (and is recorded as a storage failure if the
// filesystem wrapper did not see it first).
func (h *health) surface(err error) error {
	switch {
	case err == nil || errors.Is(err, ErrCorrupt) || errors.Is(err, ErrStorage):
		return err
	case pebble.IsCorruptionError(err):
		where := ""
		if info := pebble.ExtractDataCorruptionInfo(err); info != nil {
			where = " in " + info.Path
		}
		return fmt.Errorf("%w: on-disk corruption%s: %s", ErrCorrupt, where, oneLine(err.Error()))
	case isDiskError(err):
		h.fail(err)
		return fmt.Errorf("%w: %s", ErrStorage, oneLine(err.Error()))
	}
	return err
}

// isDiskError reports whether err is a failure of the disk rather than of
// the request: full, read-only, an I/O error, a permission refused.
func isDiskError(err error) bool {
	for _, e := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS, syscall.EIO, syscall.EACCES, syscall.EPERM} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// eventListener routes Pebble's corruption and background-error events to h
// instead of Pebble's defaults (a fatal error for a corruption).
func (h *health) eventListener() *pebble.EventListener {
	return &pebble.EventListener{
		DataCorruption: h.corruption,
		BackgroundError: func(err error) {
			if isDiskError(err) {
				h.fail(err)
				return
			}
			if !pebble.IsCorruptionError(err) { // a corruption is logged once, by corruption
				h.log.Error("index: pebble background error", "err", oneLine(err.Error()))
			}
		},
	}
}

// pebbleLogger is Pebble's Logger: informational messages are dropped,
// errors logged on one line, and a fatal error recorded (the DB then refuses
// every operation) rather than exiting the process.
type pebbleLogger struct{ h *health }

var _ pebble.Logger = pebbleLogger{}

// Infof drops Pebble's informational message.
func (pebbleLogger) Infof(string, ...any) {}

// Errorf logs Pebble's error message on one line.
func (l pebbleLogger) Errorf(format string, args ...any) {
	l.h.log.Error("index: pebble: " + oneLine(fmt.Sprintf(format, args...)))
}

// Fatalf records Pebble's fatal error; it does not exit. A fatal error
// caused by a disk error (a MANIFEST write on a full disk) is a storage
// failure: writes are refused, reads go on (Pebble keeps the version it had
// in memory). Any other (a broken invariant) refuses every operation.
func (l pebbleLogger) Fatalf(format string, args ...any) {
	err := fmt.Errorf("pebble fatal error: %s", oneLine(fmt.Sprintf(format, args...)))
	for _, a := range args {
		if e, ok := a.(error); ok && isDiskError(e) {
			l.Errorf(format, args...)
			l.h.fail(err)
			return
		}
	}
	l.h.die(err)
}

// guard runs f, a call into Pebble's write path, and turns a panic of
// Pebble's into a fatal storage failure (Pebble panics when a commit follows
// a failed WAL write; its commit lock is then held for good, so the DB is
// not closed either).
func (h *health) guard(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			h.poisoned.Store(true)
			err = fmt.Errorf("pebble panicked: %v", r)
			h.die(err)
			err = fmt.Errorf("%w: %w", ErrStorage, err)
		}
	}()
	return f()
}

// faultFS is the index's filesystem as Pebble sees it: it passes every call
// on to the real one, and records a disk error of a write, a sync or a file
// creation as a storage failure the moment it happens, before Pebble acts on
// it (so that no further commit reaches a WAL writer that has failed).
type faultFS struct {
	vfs.FS
	h *health
}

var _ vfs.FS = (*faultFS)(nil)

func (fs *faultFS) check(err error) error {
	if err != nil && isDiskError(err) {
		fs.h.fail(err)
	}
	return err
}

// file wraps a file opened for writing as name. A write-ahead log that
// cannot be made for a disk error is given as a file whose every write and
// sync fails with that error: Pebble, which cannot create the log it
// rotates to, panics in a state that cannot be recovered (a mutex unlocked
// twice), where a log that fails makes the commit fail (and the DB, which
// has recorded the failure, refuses the next ones).
func (fs *faultFS) file(name string, f vfs.File, err error) (vfs.File, error) {
	if fs.check(err) != nil {
		if isDiskError(err) && strings.HasSuffix(name, ".log") {
			return &failedFile{name: fs.PathBase(name), err: err}, nil
		}
		return f, err
	}
	return &faultFile{File: f, fs: fs}, nil
}

// Create creates a file, watching its writes.
func (fs *faultFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	return fs.file(name, f, err)
}

// OpenReadWrite opens a file for writing, watching its writes.
func (fs *faultFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, c, opts...)
	return fs.file(name, f, err)
}

// ReuseForWrite renames a file for reuse, watching its writes.
func (fs *faultFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, c)
	return fs.file(newname, f, err)
}

// OpenDir opens a directory, watching its syncs.
func (fs *faultFS) OpenDir(name string) (vfs.File, error) {
	f, err := fs.FS.OpenDir(name)
	return fs.file(name, f, err)
}

// Link links a file, recording a disk error.
func (fs *faultFS) Link(oldname, newname string) error {
	return fs.check(fs.FS.Link(oldname, newname))
}

// Rename renames a file, recording a disk error.
func (fs *faultFS) Rename(oldname, newname string) error {
	return fs.check(fs.FS.Rename(oldname, newname))
}

// MkdirAll makes a directory, recording a disk error.
func (fs *faultFS) MkdirAll(dir string, perm os.FileMode) error {
	return fs.check(fs.FS.MkdirAll(dir, perm))
}

// failedFile stands for a write-ahead log that could not be created: every
// read, write and sync fails with err. Nothing written to it is ever
// acknowledged.
type failedFile struct {
	name string
	err  error
}

var _ vfs.File = (*failedFile)(nil)

func (f *failedFile) Close() error                       { return nil }
func (f *failedFile) Read([]byte) (int, error)           { return 0, f.err }
func (f *failedFile) ReadAt([]byte, int64) (int, error)  { return 0, f.err }
func (f *failedFile) Write([]byte) (int, error)          { return 0, f.err }
func (f *failedFile) WriteAt([]byte, int64) (int, error) { return 0, f.err }
func (f *failedFile) Preallocate(int64, int64) error     { return f.err }
func (f *failedFile) Stat() (vfs.FileInfo, error)        { return failedInfo{f.name}, nil }
func (f *failedFile) Sync() error                        { return f.err }
func (f *failedFile) SyncTo(int64) (bool, error)         { return false, f.err }
func (f *failedFile) SyncData() error                    { return f.err }
func (f *failedFile) Prefetch(int64, int64) error        { return nil }
func (f *failedFile) Fd() uintptr                        { return vfs.InvalidFd }

// failedInfo describes a failedFile: empty.
type failedInfo struct{ name string }

func (i failedInfo) Name() string           { return i.name }
func (i failedInfo) Size() int64            { return 0 }
func (i failedInfo) Mode() os.FileMode      { return 0o644 }
func (i failedInfo) ModTime() time.Time     { return time.Time{} }
func (i failedInfo) IsDir() bool            { return false }
func (i failedInfo) Sys() any               { return nil }
func (i failedInfo) DeviceID() vfs.DeviceID { return vfs.DeviceID{} }

// faultFile is a file of faultFS.
type faultFile struct {
	vfs.File
	fs *faultFS
}

var (
	_ vfs.File    = (*faultFile)(nil)
	_ io.WriterAt = (*faultFile)(nil)
)

// Write writes p, recording a disk error.
func (f *faultFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	return n, f.fs.check(err)
}

// WriteAt writes p at off, recording a disk error.
func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	return n, f.fs.check(err)
}

// Preallocate reserves space, recording a disk error.
func (f *faultFile) Preallocate(off, n int64) error { return f.fs.check(f.File.Preallocate(off, n)) }

// Sync syncs the file, recording a disk error.
func (f *faultFile) Sync() error { return f.fs.check(f.File.Sync()) }

// SyncData syncs the file's data, recording a disk error.
func (f *faultFile) SyncData() error { return f.fs.check(f.File.SyncData()) }

// SyncTo syncs the file up to n bytes, recording a disk error.
func (f *faultFile) SyncTo(n int64) (bool, error) {
	full, err := f.File.SyncTo(n)
	return full, f.fs.check(err)
}
