//go:build amd64 && gc && !purego && !race

#include "textflag.h"

// func storeRelease(p *atomic.Uint32, v uint32)
TEXT ·storeRelease(SB), NOSPLIT|NOFRAME, $0-12
	MOVQ p+0(FP), AX
	MOVL v+8(FP), BX
	MOVL BX, (AX)
	RET
