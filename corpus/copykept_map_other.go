//go:build !linux

package corpus

import (
	"errors"
	"os"
)

// Other systems than Linux copy kept records through read(2): see
// copykept_map_linux.go.

const canMap = false

func mapWindowOf(*os.File, int64, int) ([]byte, error) {
	return nil, errors.New("corpus: mapped windows are Linux only")
}

func unmapWindow([]byte) error { return nil }
