//go:build !linux

package dedup

import (
	"errors"
	"os"
)

// openDirect reports that O_DIRECT is not used on this system: the file is
// written through its ordinary descriptor.
func openDirect(string) (*os.File, error) {
	return nil, errors.New("dedup: O_DIRECT is used on Linux only")
}
