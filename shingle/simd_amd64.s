//go:build amd64 && gc && !purego

// AVX2 kernels for the ASCII fast paths of package shingle; simd_amd64.go
// says why they are assembly, and ascii.go holds the pure-Go equivalents.
//
// Every vector instruction here is VEX-encoded (VMOVQ, not MOVQ, into an X
// register): one legacy SSE instruction among them cost about 1,000 cycles per
// call on the EPYC this was measured on, more than folding a whole document.

#include "textflag.h"

// func foldAVX2(d, text *byte, n int, t *foldTables, sq *[256]uint64, r *foldResult)
//
// Normalises 32-byte blocks of text[:n] into d while they are ASCII, starting
// from r.prev (1 if the byte written before d is a separator). Each
// byte is classified with the nibble tables of t (space, separator, upper,
// zero), mapped, and the separators that follow separators are squeezed out
// eight bytes at a time with PSHUFB controls from sq. Writes i (bytes read),
// j (bytes written) and prev (1 if the last byte written is a separator) to r.
TEXT ·foldAVX2(SB), NOSPLIT, $0-48
	MOVQ d+0(FP), DI
	MOVQ text+8(FP), SI
	MOVQ n+16(FP), R11
	MOVQ t+24(FP), R13
	MOVQ sq+32(FP), R12
	SUBQ $32, R11            // last block start
	XORQ R8, R8              // i
	XORQ R9, R9              // j
	MOVQ r+40(FP), AX
	MOVQ 16(AX), R10         // prev: 1 if a separator was written last

	MOVQ $0x0f, AX
	VMOVQ AX, X15
	VPBROADCASTB X15, Y15    // low-nibble mask
	MOVQ $0x20, AX
	VMOVQ AX, X9
	VPBROADCASTB X9, Y9      // ' ', and the lower-case bit
	MOVQ $0x30, AX
	VMOVQ AX, X8
	VPBROADCASTB X8, Y8      // '0'
	MOVQ $0x08, AX
	VMOVQ AX, X6
	VPBROADCASTB X6, X6      // +8: PSHUFB controls for the upper group of a lane
	VPXOR Y7, Y7, Y7
	VBROADCASTI128 0(R13), Y14  // hi
	VBROADCASTI128 16(R13), Y13 // space
	VBROADCASTI128 32(R13), Y12 // sep
	VBROADCASTI128 48(R13), Y11 // upper
	VBROADCASTI128 64(R13), Y10 // zero

loop:
	CMPQ R8, R11
	JGT  done
	VMOVDQU (SI)(R8*1), Y0
	VPMOVMSKB Y0, AX
	TESTL AX, AX
	JNZ  done                // a byte ≥ 0x80: leave the block to the caller

	VPAND Y15, Y0, Y1        // low nibbles
	VPSRLW $4, Y0, Y2
	VPAND Y15, Y2, Y2
	VPSHUFB Y2, Y14, Y2      // 1 << high nibble

	VPSHUFB Y1, Y13, Y3
	VPAND Y2, Y3, Y3
	VPCMPEQB Y7, Y3, Y3      // 0xff where the byte does not become ' '
	VPSHUFB Y1, Y12, Y4
	VPAND Y2, Y4, Y4
	VPCMPEQB Y7, Y4, Y4      // 0xff where the byte is not a separator
	VPSHUFB Y1, Y11, Y5
	VPAND Y2, Y5, Y5
	VPCMPEQB Y7, Y5, Y5      // 0xff where the byte is not a folded upper-case letter
	VPANDN Y9, Y5, Y5
	VPOR Y5, Y0, Y0          // lower case
	VPSHUFB Y1, Y10, Y5
	VPAND Y2, Y5, Y5
	VPCMPEQB Y7, Y5, Y5      // 0xff where the byte is not a folded digit
	VPBLENDVB Y5, Y0, Y8, Y0 // digits to '0'
	VPBLENDVB Y3, Y0, Y9, Y0 // spaces

	// Separators that follow separators are dropped: keep = ^(sep & (sep<<1 | prev)).
	VPMOVMSKB Y4, BX
	NOTL BX                  // separators, bit k for byte k
	LEAL (BX)(BX*1), DX
	ORL  R10, DX
	ANDL BX, DX              // dropped
	SHRL $31, BX
	MOVL BX, R10             // the block's last byte is a separator
	NOTL DX                  // kept

	VEXTRACTI128 $1, Y0, X1

	MOVBLZX DL, AX           // bytes 0..7
	POPCNTL AX, BX
	VMOVQ (R12)(AX*8), X2
	VPSHUFB X2, X0, X3
	VMOVQ X3, (DI)(R9*1)
	ADDQ BX, R9

	MOVL DX, AX              // bytes 8..15
	SHRL $8, AX
	MOVBLZX AL, AX
	POPCNTL AX, BX
	VMOVQ (R12)(AX*8), X2
	VPADDB X6, X2, X2
	VPSHUFB X2, X0, X3
	VMOVQ X3, (DI)(R9*1)
	ADDQ BX, R9

	MOVL DX, AX              // bytes 16..23
	SHRL $16, AX
	MOVBLZX AL, AX
	POPCNTL AX, BX
	VMOVQ (R12)(AX*8), X2
	VPSHUFB X2, X1, X3
	VMOVQ X3, (DI)(R9*1)
	ADDQ BX, R9

	SHRL $24, DX             // bytes 24..31
	POPCNTL DX, BX
	VMOVQ (R12)(DX*8), X2
	VPADDB X6, X2, X2
	VPSHUFB X2, X1, X3
	VMOVQ X3, (DI)(R9*1)
	ADDQ BX, R9

	ADDQ $32, R8
	JMP  loop

done:
	MOVQ r+40(FP), AX
	MOVQ R8, 0(AX)
	MOVQ R9, 8(AX)
	MOVQ R10, 16(AX)
	VZEROUPPER
	RET

// The character n-gram kernels hash eight windows per iteration, four per
// YMM register: lane k holds the xxh3 4-to-8-byte input of window k,
// last<<0 | first<<32, which one PSHUFB gathers from a 16-byte load (Y15 for
// windows 0..3, Y14 for 4..7). Then, as hash4to8 in hash.go: the xor with the
// seeded key (Y12) and rrmxmx: rotations by 49 (two shifts) and 24 (a byte
// shuffle, Y13), two multiplications by its constant (MUL64X2, with Y10, Y9
// and Y8 as MUL64's lo, swap and hi32) and the length (Y11). The two
// registers' chains are interleaved so that they issue side by side (9% more
// windows per second than one after the other).

// MUL64 sets x to x·c mod 2^64: lo(x)·lo(c) + (hi(x)·lo(c) +
// lo(x)·hi(c))<<32, with lo the low 32 bits of c in each lane and swap c with
// its halves swapped. One VPMULLD makes both cross products, which are
// summed into the high half and masked with hi32 (0xffffffff00000000). AVX2
// has no 64-bit multiply; this is 10% faster than three VPMULUDQs.
#define MUL64(x, lo, swap, hi32, t1, t2) \
	VPMULLD  swap, x, t1 \
	VPSLLQ   $32, t1, t2 \
	VPADDQ   t2, t1, t1  \
	VPAND    hi32, t1, t1 \
	VPMULUDQ lo, x, x    \
	VPADDQ   t1, x, x

// XXH48X2 hashes the gathered inputs in a and b, with temporaries a1, a2,
// b1, b2.
#define XXH48X2(a, b, a1, a2, b1, b2) \
	VPXOR    Y12, a, a   \
	VPXOR    Y12, b, b   \
	VPSLLQ   $49, a, a1  \
	VPSLLQ   $49, b, b1  \
	VPSRLQ   $15, a, a2  \
	VPSRLQ   $15, b, b2  \
	VPOR     a1, a2, a1  \
	VPOR     b1, b2, b1  \
	VPSHUFB  Y13, a, a2  \
	VPSHUFB  Y13, b, b2  \
	VPXOR    a1, a2, a1  \
	VPXOR    b1, b2, b1  \
	VPXOR    a1, a, a    \
	VPXOR    b1, b, b    \
	MUL64X2(a, b, a1, a2, b1, b2) \
	VPSRLQ   $35, a, a1  \
	VPSRLQ   $35, b, b1  \
	VPADDQ   Y11, a1, a1 \
	VPADDQ   Y11, b1, b1 \
	VPXOR    a1, a, a    \
	VPXOR    b1, b, b    \
	MUL64X2(a, b, a1, a2, b1, b2) \
	VPSRLQ   $28, a, a1  \
	VPSRLQ   $28, b, b1  \
	VPXOR    a1, a, a    \
	VPXOR    b1, b, b

// MUL64X2 is MUL64 by rrmxmx's multiplier (Y10, Y9, Y8) on a and b,
// interleaved.
#define MUL64X2(a, b, a1, a2, b1, b2) \
	VPMULLD  Y9, a, a1   \
	VPMULLD  Y9, b, b1   \
	VPSLLQ   $32, a1, a2 \
	VPSLLQ   $32, b1, b2 \
	VPADDQ   a2, a1, a1  \
	VPADDQ   b2, b1, b1  \
	VPAND    Y8, a1, a1  \
	VPAND    Y8, b1, b1  \
	VPMULUDQ Y10, a, a   \
	VPMULUDQ Y10, b, b   \
	VPADDQ   a1, a, a    \
	VPADDQ   b1, b, b

// LOADCHAR loads the constants of a *charConsts in R13.
#define LOADCHAR \
	VMOVDQU 0(R13), Y15   \
	VMOVDQU 32(R13), Y14  \
	VMOVDQU 64(R13), Y13  \
	VMOVDQU 96(R13), Y12  \
	VMOVDQU 128(R13), Y11 \
	VMOVDQU 160(R13), Y10 \
	VMOVDQU 192(R13), Y9  \
	VMOVDQU 224(R13), Y8

// BIN multiplies the hash at off(SP) by the one-permutation multiplier (R12)
// and puts the value v into its bin of DI (bin = v >> CL) if it is below the
// bin's minimum, without a branch.
#define BIN(off) \
	MOVQ    off(SP), AX   \
	IMULQ   R12, AX       \
	MOVQ    AX, BX        \
	SHRQ    CX, BX        \
	MOVQ    (DI)(BX*8), DX \
	CMPQ    AX, DX        \
	CMOVQCS AX, DX        \
	MOVQ    DX, (DI)(BX*8)

// func charHashesAVX2(out *uint64, p *byte, count int, c *charConsts)
//
// Sets out[k] to the xxh3 of the window of n bytes at p[k], for k < count, a
// multiple of 8; p must hold count+8 bytes.
TEXT ·charHashesAVX2(SB), NOSPLIT, $0-32
	MOVQ out+0(FP), DI
	MOVQ p+8(FP), SI
	MOVQ count+16(FP), R11
	MOVQ c+24(FP), R13
	LOADCHAR
	XORQ R8, R8

hloop:
	CMPQ R8, R11
	JGE  hdone
	VBROADCASTI128 (SI)(R8*1), Y0
	VPSHUFB Y15, Y0, Y1
	VPSHUFB Y14, Y0, Y2
	XXH48X2(Y1, Y2, Y3, Y4, Y5, Y6)
	VMOVDQU Y1, (DI)(R8*8)
	VMOVDQU Y2, 32(DI)(R8*8)
	ADDQ $8, R8
	JMP  hloop

hdone:
	VZEROUPPER
	RET

// func charBinsAVX2(p *byte, count int, c *charConsts, mins *uint64, mult, shift uint64)
//
// Adds the windows of n bytes at p[k], k < count (a multiple of 8, at least
// 8), to the one-permutation bins mins: v = xxh3·mult, bin v >> shift. The
// multiplication by mult is scalar (IMULQ): one instruction instead of seven
// vector ones for a 64-bit product, on ports the vector code leaves idle.
TEXT ·charBinsAVX2(SB), NOSPLIT, $64-48
	MOVQ p+0(FP), SI
	MOVQ count+8(FP), R11
	MOVQ c+16(FP), R13
	MOVQ mins+24(FP), DI
	MOVQ mult+32(FP), R12
	MOVQ shift+40(FP), CX
	LOADCHAR

	// Software-pipelined: each iteration hashes windows i..i+7 while it
	// bins windows i-8..i-1, whose hashes the previous iteration left at
	// 0(SP), so the scalar binning does not wait for the vector chain.
	VBROADCASTI128 (SI), Y0
	VPSHUFB Y15, Y0, Y1
	VPSHUFB Y14, Y0, Y2
	XXH48X2(Y1, Y2, Y3, Y4, Y5, Y6)
	VMOVDQU Y1, 0(SP)
	VMOVDQU Y2, 32(SP)
	MOVQ $8, R8

bloop:
	CMPQ R8, R11
	JGE  bdone
	VBROADCASTI128 (SI)(R8*1), Y0
	VPSHUFB Y15, Y0, Y1
	VPSHUFB Y14, Y0, Y2
	XXH48X2(Y1, Y2, Y3, Y4, Y5, Y6)
	BIN(0)
	BIN(8)
	BIN(16)
	BIN(24)
	BIN(32)
	BIN(40)
	BIN(48)
	BIN(56)
	VMOVDQU Y1, 0(SP)
	VMOVDQU Y2, 32(SP)
	ADDQ $8, R8
	JMP  bloop

bdone:
	BIN(0)
	BIN(8)
	BIN(16)
	BIN(24)
	BIN(32)
	BIN(40)
	BIN(48)
	BIN(56)
	VZEROUPPER
	RET

// func spaceBitsAVX2(bm *uint64, p *byte, blocks int)
//
// Sets bm[k] to the mask of the spaces in p[64k:64k+64], for k < blocks.
TEXT ·spaceBitsAVX2(SB), NOSPLIT, $0-24
	MOVQ bm+0(FP), DI
	MOVQ p+8(FP), SI
	MOVQ blocks+16(FP), CX
	MOVQ $0x20, AX
	VMOVQ AX, X2
	VPBROADCASTB X2, Y2

sloop:
	TESTQ CX, CX
	JZ    sdone
	VPCMPEQB (SI), Y2, Y0
	VPCMPEQB 32(SI), Y2, Y1
	VPMOVMSKB Y0, AX
	VPMOVMSKB Y1, DX
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, (DI)
	ADDQ $64, SI
	ADDQ $8, DI
	DECQ CX
	JMP  sloop

sdone:
	VZEROUPPER
	RET

// func unitHashesAVX2(th *uint64, starts, lens *uint32, n int, p *byte, c *unitConsts)
//
// Sets th[k] to the xxh3 of the unit p[starts[k]:starts[k]+lens[k]] for
// k < n, a multiple of 4, when the unit has 1 to 8 bytes (th[k] is garbage
// for longer units; the caller hashes those). Four units per YMM register:
// each lane gathers the 8 bytes at its unit's start, and both xxh3 paths, for
// 1 to 3 bytes and for 4 to 8, are computed with per-lane shifts by the
// length; a compare against 4 picks one per lane.
TEXT ·unitHashesAVX2(SB), NOSPLIT, $0-48
	MOVQ th+0(FP), DI
	MOVQ starts+8(FP), R8
	MOVQ lens+16(FP), R9
	MOVQ n+24(FP), CX
	MOVQ p+32(FP), SI
	MOVQ c+40(FP), R13
	VMOVDQU 0(R13), Y15      // k48
	VMOVDQU 32(R13), Y14     // k13
	VMOVDQU 64(R13), Y13     // rrmxmx multiplier, low 32 bits
	VMOVDQU 96(R13), Y12     //   halves swapped
	VMOVDQU 512(R13), Y8     // hi32
	VMOVDQU 128(R13), Y11    // rot24
	XORQ BX, BX

uloop:
	CMPQ BX, CX
	JGE  udone
	VPMOVZXDQ (R9)(BX*4), Y0      // L
	VMOVDQU (R8)(BX*4), X1
	VPCMPEQQ Y10, Y10, Y10
	VPXOR Y9, Y9, Y9
	VPGATHERDQ Y10, (SI)(X1*1), Y9 // W: the 8 bytes at each unit's start
	VPSLLQ $3, Y0, Y2             // 8L

	// 4 to 8 bytes: x = last | first<<32 ^ k48, then rrmxmx(x, L).
	VPSUBQ 160(R13), Y2, Y3       // 8L − 32
	VPSRLVQ Y3, Y9, Y3
	VPAND 192(R13), Y3, Y3        // last four bytes
	VPSLLQ $32, Y9, Y4
	VPOR Y4, Y3, Y3
	VPXOR Y15, Y3, Y3
	VPSLLQ $49, Y3, Y4
	VPSRLQ $15, Y3, Y5
	VPOR Y4, Y5, Y4
	VPSHUFB Y11, Y3, Y5
	VPXOR Y4, Y5, Y4
	VPXOR Y4, Y3, Y3
	MUL64(Y3, Y13, Y12, Y8, Y4, Y5)
	VPSRLQ $35, Y3, Y4
	VPADDQ Y0, Y4, Y4
	VPXOR Y4, Y3, Y3
	MUL64(Y3, Y13, Y12, Y8, Y4, Y5)
	VPSRLQ $28, Y3, Y4
	VPXOR Y4, Y3, Y3

	// 1 to 3 bytes: c = first two<<16 | last byte | L<<8 ^ k13, then
	// avalancheSmall; the first two bytes are bytes 0 and 1, or 0 twice
	// for one byte.
	VPAND 224(R13), Y9, Y4        // byte 0
	VPSLLQ $8, Y4, Y5
	VPOR Y5, Y4, Y4               // byte 0 twice
	VPAND 256(R13), Y9, Y5        // bytes 0 and 1
	VPCMPEQQ 288(R13), Y0, Y6     // L == 1
	VPBLENDVB Y6, Y4, Y5, Y4
	VPSLLQ $16, Y4, Y4
	VPSUBQ 320(R13), Y2, Y5       // 8L − 8
	VPSRLVQ Y5, Y9, Y5
	VPAND 224(R13), Y5, Y5        // the last byte
	VPOR Y5, Y4, Y4
	VPSLLQ $8, Y0, Y5
	VPOR Y5, Y4, Y4
	VPXOR Y14, Y4, Y4
	VPSRLQ $33, Y4, Y5
	VPXOR Y5, Y4, Y4
	VMOVDQU 352(R13), Y7
	VMOVDQU 384(R13), Y10
	MUL64(Y4, Y7, Y10, Y8, Y5, Y6)
	VPSRLQ $29, Y4, Y5
	VPXOR Y5, Y4, Y4
	VMOVDQU 416(R13), Y7
	VMOVDQU 448(R13), Y10
	MUL64(Y4, Y7, Y10, Y8, Y5, Y6)
	VPSRLQ $32, Y4, Y5
	VPXOR Y5, Y4, Y4

	VMOVDQU 480(R13), Y5          // 4
	VPCMPGTQ Y0, Y5, Y6           // L < 4
	VPBLENDVB Y6, Y4, Y3, Y3
	VMOVDQU Y3, (DI)(BX*8)
	ADDQ $4, BX
	JMP  uloop

udone:
	VZEROUPPER
	RET
