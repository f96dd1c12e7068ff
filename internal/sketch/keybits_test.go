package sketch

import (
	"errors"
	"slices"
	"testing"

	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
)

// TestKeyBits: a MinHash sketch's keys are the band keys masked to
// Config.KeyBits (64 by default), its entries one word key | doc up to 32
// bits (AppendEntries' entries at 32) and two words above; widths outside
// MinKeyBits..64, and any width under SimHash, are refused.
func TestKeyBits(t *testing.T) {
	var p minhash.Params
	p.EnsureDefaults()
	bands := lsh.Params{Bands: 16, Rows: 8}
	for _, bits := range []int{0, 64, 48, 32, 8} {
		c := Config{Spec: mustSpec(t, "word:3"), Params: p, Bands: bands, KeyBits: bits}
		s, err := c.New()
		if err != nil {
			t.Fatal(err)
		}
		want := bits
		if bits == 0 {
			want = DefaultKeyBits
		}
		if s.KeyBits() != want || c.Keys() != want {
			t.Errorf("KeyBits %d: sketch says %d, config %d; want %d", bits, s.KeyBits(), c.Keys(), want)
		}
		sk, _ := s.NewSketcher()
		for i, text := range texts {
			sig, empty := sk.Sign(nil, []byte(text))
			if empty {
				continue
			}
			full, _ := c.AppendBandKeys(nil, nil, sig)
			keys := sk.AppendKeys(nil, sig)
			for j := range full {
				if keys[j] != full[j]&KeyMask(want) {
					t.Fatalf("KeyBits %d text %d: key %x; want band key %x masked", bits, i, keys[j], full[j])
				}
			}
			entries := AppendKeyEntries(nil, keys, uint32(i), want)
			if len(entries) != EntryWords(want)*len(keys) {
				t.Fatalf("KeyBits %d: %d entry words for %d keys", bits, len(entries), len(keys))
			}
			if want == BucketKeyBits {
				narrow := sk.AppendBucketKeys(nil, sig)
				if !slices.Equal(entries, AppendEntries(nil, narrow, uint32(i))) {
					t.Errorf("text %d: 32-bit entries differ from AppendEntries of the bucket keys", i)
				}
			}
		}
	}
	for _, bits := range []int{-1, 7, 65} {
		if _, err := (Config{Spec: mustSpec(t, "word:3"), Params: p, Bands: bands, KeyBits: bits}).New(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("KeyBits %d: %v; want ErrInvalidConfig", bits, err)
		}
	}
	if _, err := (Config{Spec: mustSpec(t, "word:3"), Kind: SimHash, KeyBits: 64}).New(); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("SimHash with KeyBits 64: %v; want ErrInvalidConfig", err)
	}
}
