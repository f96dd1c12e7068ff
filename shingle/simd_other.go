//go:build !amd64 || !gc || purego

package shingle

// Without the vector kernels (simd_amd64.go), the pure-Go paths do all the
// work.

type foldTables struct{}

func newFoldTables(out *[256]byte, sep *[256]uint8) *foldTables { return nil }

func foldBlocks(d, text []byte, t *foldTables, prev uint8) (int, int, uint8) {
	return 0, 0, prev
}

type charConsts struct{}

func newCharConsts(n int, k48 uint64) *charConsts { return nil }

func charHashesVec(out []uint64, p []byte, c *charConsts) int { return 0 }

func charBinsVec(p []byte, total int, c *charConsts, mins []uint64, mult uint64, shift uint) int {
	return 0
}

type unitConsts struct{}

type unitSpans struct{}

func newUnitConsts(seed uint64) *unitConsts { return nil }

func (s *Shingler) unitHashesVec(th []uint64, buf []byte, i int) (int, int) { return 0, i }
