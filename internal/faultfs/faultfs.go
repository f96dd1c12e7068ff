// Package faultfs wraps a Pebble filesystem (vfs.FS) so that a test can fail
// or hold its writes: a disk that fills up, one remounted read-only, syncs
// that wait. It is a test helper, not a simulation of a disk: a hook decides,
// before each write-side operation, whether it fails. Unlike Pebble's
// vfs/errorfs it also wraps the files reused for writing (the recycled WAL
// logs) and tells each write's size.
package faultfs

import (
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Op is a write-side operation of a filesystem or of a file it opened.
type Op int

// The operations a Hook sees.
const (
	// Create is FS.Create or FS.ReuseForWrite (Event.Name is the new name).
	Create Op = iota
	// Open is FS.OpenReadWrite.
	Open
	// Rename is FS.Rename (Event.Name is the old name).
	Rename
	// Write is File.Write or File.WriteAt; Event.Bytes is the write's size.
	Write
	// Sync is File.Sync, File.SyncData or File.SyncTo.
	Sync
)

// String names the operation.
func (o Op) String() string {
	switch o {
	case Create:
		return "create"
	case Open:
		return "open"
	case Rename:
		return "rename"
	case Write:
		return "write"
	case Sync:
		return "sync"
	}
	return "op(?)"
}

// Event is one operation about to be made.
type Event struct {
	Op    Op
	Name  string // the file's name
	Bytes int    // the size of a Write; 0 otherwise
}

// FS is a vfs.FS whose write-side operations (Op) first call Hook: an error
// fails the operation with it, unmade; nil lets it through. A nil Hook lets
// everything through. Reads and the other operations go straight to the
// wrapped FS. The files that Create, ReuseForWrite and OpenReadWrite return
// are wrapped alike. FS is safe for concurrent use if the wrapped FS and
// Hook are; Hook may block (to hold a sync).
type FS struct {
	vfs.FS
	Hook func(Event) error
}

var (
	_ vfs.FS   = (*FS)(nil)
	_ vfs.File = (*file)(nil)
)

func (fs *FS) hook(op Op, name string, n int) error {
	if fs.Hook == nil {
		return nil
	}
	return fs.Hook(Event{Op: op, Name: name, Bytes: n})
}

func (fs *FS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &file{File: f, fs: fs, name: name}, nil
}

// Create implements vfs.FS.
func (fs *FS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	if err := fs.hook(Create, name, 0); err != nil {
		return nil, err
	}
	f, err := fs.FS.Create(name, c)
	return fs.wrap(name, f, err)
}

// ReuseForWrite implements vfs.FS.
func (fs *FS) ReuseForWrite(old, name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	if err := fs.hook(Create, name, 0); err != nil {
		return nil, err
	}
	f, err := fs.FS.ReuseForWrite(old, name, c)
	return fs.wrap(name, f, err)
}

// OpenReadWrite implements vfs.FS.
func (fs *FS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	if err := fs.hook(Open, name, 0); err != nil {
		return nil, err
	}
	f, err := fs.FS.OpenReadWrite(name, c, opts...)
	return fs.wrap(name, f, err)
}

// Rename implements vfs.FS.
func (fs *FS) Rename(old, name string) error {
	if err := fs.hook(Rename, old, 0); err != nil {
		return err
	}
	return fs.FS.Rename(old, name)
}

// file is a file of FS, its writes and syncs hooked.
type file struct {
	vfs.File
	fs   *FS
	name string
}

func (f *file) Write(p []byte) (int, error) {
	if err := f.fs.hook(Write, f.name, len(p)); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.hook(Write, f.name, len(p)); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f *file) Sync() error {
	if err := f.fs.hook(Sync, f.name, 0); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *file) SyncData() error {
	if err := f.fs.hook(Sync, f.name, 0); err != nil {
		return err
	}
	return f.File.SyncData()
}

func (f *file) SyncTo(n int64) (bool, error) {
	if err := f.fs.hook(Sync, f.name, 0); err != nil {
		return false, err
	}
	return f.File.SyncTo(n)
}
