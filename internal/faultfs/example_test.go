package faultfs_test

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/neardup/neardup/internal/faultfs"
)

// A disk of 10 bytes: writes past them fail with ENOSPC.
func Example() {
	left := 10
	fs := &faultfs.FS{FS: vfs.NewMem(), Hook: func(ev faultfs.Event) error {
		if ev.Op == faultfs.Write {
			if left -= ev.Bytes; left < 0 {
				return syscall.ENOSPC
			}
		}
		return nil
	}}
	f, err := fs.Create("log", vfs.WriteCategoryUnspecified)
	if err != nil {
		panic(err)
	}
	_, err = f.Write([]byte("12345678"))
	fmt.Println(err)
	_, err = f.Write([]byte("9abc"))
	fmt.Println(errors.Is(err, syscall.ENOSPC))
	// Output:
	// <nil>
	// true
}
