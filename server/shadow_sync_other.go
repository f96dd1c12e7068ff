//go:build !linux

// fdatasync elsewhere: a full sync (fdatasync is not portable).

package server

import "os"

func fdatasync(f *os.File) error { return f.Sync() }
