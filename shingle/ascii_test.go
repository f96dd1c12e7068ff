package shingle

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// asciiSpecs are all the specs that normalise ASCII text differently: every
// unit and every flag that matters to ASCII (NFKC does not).
func asciiSpecs() []Spec {
	var specs []Spec
	for _, u := range []Unit{Word, Char, Token} {
		for flags := range 16 {
			specs = append(specs, Spec{Unit: u, N: 5, CaseFold: flags&1 != 0, FoldPunct: flags&2 != 0, FoldSpace: flags&4 != 0, FoldDigits: flags&8 != 0})
		}
	}
	return specs
}

// tableFold is foldASCII without the vector path: the table loop alone.
func tableFold(s *Shingler, text []byte) []byte {
	var out []byte
	prev := uint8(1)
	for _, b := range text {
		if prev == 0 || s.sep[b] == 0 {
			out = append(out, s.out[b])
		}
		prev = s.sep[b]
	}
	if prev == 1 && len(out) > 0 {
		out = out[:len(out)-1]
	}
	return out
}

// TestFoldASCII checks foldASCII, whose 32-byte blocks take the vector path
// where the CPU has one, against the table loop for every spec, on random
// ASCII texts of every length up to 100 (so every tail), texts dense in
// separators (so every pattern of dropped separators) and every byte pair.
func TestFoldASCII(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	var texts [][]byte
	for n := range 100 {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(0x80))
		}
		texts = append(texts, b)
		d := make([]byte, n)
		for i := range d {
			d[i] = " ,.-'xA\t1_"[r.IntN(10)]
		}
		texts = append(texts, d)
	}
	for b1 := range 0x80 {
		var sb strings.Builder
		for b2 := range 0x80 {
			sb.WriteString("ab")
			sb.WriteByte(byte(b1))
			sb.WriteByte(byte(b2))
		}
		texts = append(texts, []byte(sb.String()))
	}
	for _, spec := range asciiSpecs() {
		s := MustNew(spec)
		for _, text := range texts {
			n, ok := s.foldASCII(text)
			if !ok {
				t.Fatalf("%v: ASCII text %q refused", spec, text)
			}
			if got, want := s.norm[:n], tableFold(s, text); !slices.Equal(got, want) {
				t.Fatalf("%v on %q:\ngot  %q\nwant %q", spec, text, got, want)
			}
			if pad := s.norm[n : n+slack]; string(pad) != "        " {
				t.Fatalf("%v: padding %q", spec, pad)
			}
		}
		// A byte ≥ 0x80 anywhere sends the text to the Unicode path.
		for _, at := range []int{0, 5, 31, 32, 40, 63, 64, 99} {
			text := append([]byte(nil), texts[len(texts)-1][:100]...)
			text[at] = 0xc3
			if _, ok := s.foldASCII(text); ok {
				t.Fatalf("%v: byte 0xc3 at %d not noticed", spec, at)
			}
		}
	}
}

// TestCharHashes checks the character n-gram kernels (vector where the CPU
// has them, and the Go loop) against xxh3 for every n they serve, several
// seeds and every length up to 80.
func TestCharHashes(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	p := make([]byte, 80+slack)
	for i := range p {
		p[i] = byte(r.IntN(0x80))
	}
	for n := 4; n <= 8; n++ {
		for _, seed := range []uint64{0, 1, 1 << 63, r.Uint64()} {
			k48 := seed48(seed)
			c := newCharConsts(n, k48)
			for total := 0; total <= 80-n; total++ {
				want := make([]uint64, total)
				for k := range want {
					want[k] = xxh3Seed(p[k:k+n], seed, k48)
				}
				got := make([]uint64, total)
				k := 0
				if c != nil {
					k = charHashesVec(got, p[:total+slack], c)
				}
				charHashes(got[k:], p[k:total+slack], n, k48)
				if !slices.Equal(got, want) {
					t.Fatalf("n=%d seed=%x total=%d: got %x; want %x", n, seed, total, got, want)
				}
			}
		}
	}
}

// TestUnitHashes checks the word and token hashing loop against xxh3 for
// units of every length from 1 to 40 (so every path: 1 to 3, 4 to 7, 8, 9 to
// 16, and more bytes), followed by every kind of neighbour.
func TestUnitHashes(t *testing.T) {
	letters := strings.Repeat("abcdefghijklmnopqrstuvwxyz", 2)
	for _, seed := range []uint64{0, 7, 1 << 40} {
		for l := 1; l <= 40; l++ {
			for _, next := range []string{"", "x", "xyzzy", letters} {
				unit := letters[:l]
				text := unit
				if next != "" {
					text += " " + next
				}
				p := []byte(text + "        ")
				th := make([]uint64, 4)
				k, rest := unitHashes(th, p, seed)
				want := []uint64{xxh3Seed([]byte(unit), seed, seed48(seed))}
				if next != "" {
					want = append(want, xxh3Seed([]byte(next), seed, seed48(seed)))
				}
				if !slices.Equal(th[:k], want) {
					t.Fatalf("seed %d, %q: got %x; want %x", seed, text, th[:k], want)
				}
				if len(rest) > slack {
					t.Fatalf("seed %d, %q: %d bytes left", seed, text, len(rest))
				}
			}
		}
	}
}

// TestUnitLengths checks word and token features, which take the vector
// unit hashing where the CPU has it and the Go loop otherwise, for units of
// every length from 1 to 40 in every position: with N = 1 each feature is
// fmix64 of one unit's xxh3.
func TestUnitLengths(t *testing.T) {
	letters := strings.Repeat("abcdefghijklmnopqrstuvwxyz", 2)
	for _, seed := range []uint64{0, 7} {
		s := MustNew(Spec{Unit: Word, N: 1, Seed: seed})
		var units []string
		for l := 1; l <= 40; l++ {
			units = append(units, letters[:l])
		}
		// Every length after every length, and a text long enough for
		// several blocks of units.
		var all []string
		for _, a := range units {
			for _, b := range units {
				all = append(all, a, b)
			}
		}
		text := strings.Join(all, " ")
		got := s.AppendFeatures(nil, []byte(text))
		if len(got) != len(all) {
			t.Fatalf("seed %d: %d features; want %d", seed, len(got), len(all))
		}
		for i, u := range all {
			if want := fmix64(xxh3Seed([]byte(u), seed, seed48(seed))); got[i] != want {
				t.Fatalf("seed %d, unit %d %q: got %x; want %x", seed, i, u, got[i], want)
			}
		}
	}
}
