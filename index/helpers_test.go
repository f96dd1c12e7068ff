package index

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/neardup/neardup/minhash"
)

// textGen makes reproducible texts: words drawn from a fixed vocabulary, and
// variants that change a few words (near duplicates under word shingles).
type textGen struct {
	rng   *rand.Rand
	vocab []string
}

func newTextGen(seed uint64) *textGen {
	rng := rand.New(rand.NewPCG(seed, 0x6e656172))
	vocab := make([]string, 5000)
	const letters = "abcdefghijklmnopqrstuvwxyz"
	for i := range vocab {
		n := 3 + rng.IntN(6)
		var b strings.Builder
		for range n {
			b.WriteByte(letters[rng.IntN(len(letters))])
		}
		vocab[i] = b.String()
	}
	return &textGen{rng: rng, vocab: vocab}
}

// text returns n random words.
func (g *textGen) text(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = g.vocab[g.rng.IntN(len(g.vocab))]
	}
	return strings.Join(w, " ")
}

// variant replaces changes words of text at random positions.
func (g *textGen) variant(text string, changes int) string {
	w := strings.Fields(text)
	for range changes {
		w[g.rng.IntN(len(w))] = g.vocab[g.rng.IntN(len(g.vocab))]
	}
	return strings.Join(w, " ")
}

// signOf signs texts under c.
func signOf(t testing.TB, c Config, text string) minhash.Signature {
	t.Helper()
	s, err := c.NewSigner()
	if err != nil {
		t.Fatal(err)
	}
	sig, empty := s.Sign(nil, []byte(text))
	if empty {
		t.Fatalf("text %q has no features", text)
	}
	return sig
}

func docOf(t testing.TB, c Config, id, text string) Doc {
	t.Helper()
	return Doc{ID: id, Sig: signOf(t, c, text)}
}
