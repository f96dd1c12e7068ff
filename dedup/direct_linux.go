package dedup

import (
	"os"
	"syscall"
)

// openDirect opens the file name for writing with O_DIRECT.
func openDirect(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_WRONLY|syscall.O_DIRECT, 0)
}
