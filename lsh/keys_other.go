//go:build !amd64 || !gc || purego

package lsh

// useAVX512 is false off amd64: the Go loops make every key.
var useAVX512 = false

// appendKeys0Packed32Vec does no band here (see keys_amd64.go).
func appendKeys0Packed32Vec(out, packed []uint64, b, r int) int { return 0 }
