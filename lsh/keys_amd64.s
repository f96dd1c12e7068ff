//go:build amd64 && gc && !purego

// The AVX-512 kernel of the band keys of 32-bit slots; keys_amd64.go says
// why it is assembly, keys.go holds the key function and the Go loops.

#include "textflag.h"

// xxHash64's round of eight accumulators H with eight values X (clobbers X):
// H = rotl64(H + X·P2, 31)·P1, P2 in Z10 and P1 in Z11.
#define ROUND(X, H) \
	VPMULLQ Z10, X, X; \
	VPADDQ  X, H, H; \
	VPROLQ  $31, H, H; \
	VPMULLQ Z11, H, H

// func keys0Packed32AVX512(out, packed, bases *uint64, t *permTable, groups, w int)
//
// Group g is bands 8g … 8g+7, whose rows are the 8·w words from
// packed[8g·w] on: lane k of H is band 8g+k's hash, started at
// bases[8g+k]. Word j of the eight bands is gathered from the group's w
// registers of words by the permutes of t (see permTable; a permute whose
// mask is empty is skipped); each word is two slots, the lower half first.
// Vector permutes, not VPGATHERQQ: the gathers took half the kernel's time.
TEXT ·keys0Packed32AVX512(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ packed+8(FP), SI
	MOVQ bases+16(FP), DX
	MOVQ t+24(FP), AX
	MOVQ groups+32(FP), CX
	MOVQ w+40(FP), BX

	MOVQ $0xC2B2AE3D27D4EB4F, R8   // P2
	VPBROADCASTQ R8, Z10
	MOVQ $0x9E3779B185EBCA87, R8   // P1
	VPBROADCASTQ R8, Z11
	MOVQ $0x165667B19E3779F9, R8   // P3
	VPBROADCASTQ R8, Z12
	MOVQ $0xffffffff, R8
	VPBROADCASTQ R8, Z13           // the lower slot of a word
	MOVQ BX, R8
	SHLQ $6, R8                    // bytes of a group's words: 8 bands · w · 8

group:
	VMOVDQU64 (DX), Z0             // H
	MOVQ AX, R9                    // t.idx[j]
	LEAQ 512(AX), R10              // t.mask[j]
	MOVQ BX, R11                   // words left

word:
	VMOVDQU64 (R9), Z9
	VPXORQ Z1, Z1, Z1              // no dependency on the last word's permutes
	MOVQ SI, R12                   // register t of the group's words
	XORQ R13, R13                  // t

reg:
	KMOVB (R10)(R13*1), K1
	KORTESTB K1, K1
	JZ   nextreg
	VPERMQ (R12), Z9, K1, Z1

nextreg:
	ADDQ $64, R12
	INCQ R13
	CMPQ R13, BX
	JB   reg

	VPANDQ  Z13, Z1, Z2            // lower slot
	VPSRLQ  $32, Z1, Z3            // upper slot
	ROUND(Z2, Z0)
	ROUND(Z3, Z0)
	ADDQ $64, R9
	ADDQ $8, R10
	DECQ R11
	JNZ  word

	// xxHash64's avalanche.
	VPSRLQ  $33, Z0, Z1
	VPXORQ  Z1, Z0, Z0
	VPMULLQ Z10, Z0, Z0
	VPSRLQ  $29, Z0, Z1
	VPXORQ  Z1, Z0, Z0
	VPMULLQ Z12, Z0, Z0
	VPSRLQ  $32, Z0, Z1
	VPXORQ  Z1, Z0, Z0
	VMOVDQU64 Z0, (DI)

	ADDQ $64, DI
	ADDQ $64, DX
	ADDQ R8, SI
	DECQ CX
	JNZ  group

	VZEROUPPER
	RET
