package shingle

import (
	"strings"
	"unicode"

	"github.com/dchest/siphash"
	"github.com/zeebo/xxh3"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// reference computes the features of text under spec straight from the
// definition in doc.go, as slowly and plainly as possible, with library
// calls only: it shares no code with the Shingler, so agreement between the two
// is evidence that the fast paths implement the definition.
func reference(spec Spec, text []byte) []uint64 {
	if spec.Boilerplate.Len() > 0 {
		text = []byte(referenceStrip(spec, string(text)))
	}
	normalised := referenceNormalise(spec, text)
	return referenceFeatures(spec, normalised)
}

// referenceStrip drops the lines of text in spec.Boilerplate, as the
// definition says: each line ends at "\n" and is dropped, with its "\n",
// when its normalised form is not empty and its hash is in the set, unless
// that drops every line with a normalised form.
func referenceStrip(spec Spec, text string) string {
	var b strings.Builder
	lines := strings.SplitAfter(text, "\n")
	kept := 0
	for _, l := range lines {
		content := strings.TrimSuffix(l, "\n")
		n := referenceNormalise(spec, []byte(content))
		if n != "" && spec.Boilerplate.Contains(referenceHash(spec, n)) {
			continue
		}
		if n != "" {
			kept++
		}
		b.WriteString(l)
	}
	if kept == 0 {
		return text // every line is boilerplate (or there is none): kept whole
	}
	return b.String()
}

// referenceHash is the base hash H of the definition's step 6.
func referenceHash(spec Spec, b string) uint64 {
	if spec.Key != nil {
		k0, k1 := spec.Key.halves()
		return siphash.Hash(k0, k1, []byte(b))
	}
	return xxh3.HashStringSeed(b, spec.Seed)
}

// referenceNormalise is steps 1 to 5 of the definition: the normalised text.
func referenceNormalise(spec Spec, text []byte) string {
	// 1. Decoding: each invalid byte stands for U+FFFD.
	var runes []rune
	for _, r := range string(text) {
		runes = append(runes, r)
	}
	s := string(runes)
	// 2, 3.
	if spec.NFKC {
		s = norm.NFKC.String(s)
	}
	if spec.CaseFold {
		s = cases.Fold().String(s)
	}
	// 4, 5.
	var out []rune
	sepPending := false
	for _, c := range s {
		c, sep := referenceClass(spec, c)
		if sep {
			sepPending = true
			continue
		}
		if sepPending && len(out) > 0 {
			out = append(out, ' ')
		}
		sepPending = false
		out = append(out, c)
	}
	return string(out)
}

// referenceFeatures is step 6 of the definition.
func referenceFeatures(spec Spec, normalised string) []uint64 {
	H := func(b string) uint64 { return referenceHash(spec, b) }
	var feats []uint64
	if normalised == "" {
		return feats
	}
	if spec.Unit == Char {
		rs := []rune(normalised)
		if len(rs) <= spec.N {
			return append(feats, H(normalised))
		}
		for i := 0; i+spec.N <= len(rs); i++ {
			feats = append(feats, H(string(rs[i:i+spec.N])))
		}
		return feats
	}
	units := strings.Split(normalised, " ")
	combine := func(us []string) uint64 {
		var sum uint64
		for j, u := range us {
			p := uint64(1)
			for k := 0; k < len(us)-1-j; k++ {
				p *= 0x9e3779b97f4a7c15
			}
			sum += H(u) * p
		}
		// MurmurHash3 fmix64, written out again.
		sum ^= sum >> 33
		sum *= 0xff51afd7ed558ccd
		sum ^= sum >> 33
		sum *= 0xc4ceb9fe1a85ec53
		sum ^= sum >> 33
		return sum
	}
	if len(units) < spec.N {
		return append(feats, combine(units))
	}
	for i := 0; i+spec.N <= len(units); i++ {
		feats = append(feats, combine(units[i:i+spec.N]))
	}
	return feats
}

// referenceClass is steps 4 and 5 of the definition for one code point c of
// the normalised text: its folded form, and whether it separates units.
func referenceClass(spec Spec, c rune) (rune, bool) {
	if spec.FoldDigits && unicode.Is(unicode.Nd, c) {
		c = '0'
	}
	space := unicode.IsSpace(c)
	if !space && spec.FoldPunct && unicode.In(c, unicode.P) {
		c, space = ' ', true
	}
	sep := false
	switch spec.Unit {
	case Word:
		sep = space || !unicode.In(c, unicode.L, unicode.M, unicode.Nd, unicode.Pc)
	case Token:
		sep = space
	case Char:
		sep = space && spec.FoldSpace
	}
	return c, sep
}
