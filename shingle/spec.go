package shingle

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dchest/siphash"
	"github.com/zeebo/xxh3"
	"golang.org/x/text/unicode/norm"
)

// Version is the version of the shingling definition implemented by this
// package. It is part of every Spec's canonical form and fingerprint: a change
// to how text becomes features that alters any feature value bumps it.
const Version = 1

// UnicodeVersion is the version of the Unicode tables (NFKC, case folding and
// character classes) that normalisation uses. It is part of the canonical form,
// so features made with other tables have another fingerprint.
const UnicodeVersion = norm.Version

// MaxN is the largest n-gram size a Spec accepts.
const MaxN = 64

// Unit is what a shingle is an n-gram of.
type Unit uint8

// The units a Spec can shingle by.
const (
	// Word units are maximal runs of word characters: Unicode letters (L),
	// marks (M), decimal digits (Nd) and connector punctuation (Pc, e.g. '_'),
	// the Unicode meaning of the regular expression \w. Everything else
	// separates words.
	Word Unit = iota + 1
	// Char units are Unicode code points of the normalised text, so CJK text,
	// which has no spaces, shingles naturally.
	Char
	// Token units are maximal runs of non-whitespace code points.
	Token
)

// String returns "word", "char" or "token".
func (u Unit) String() string {
	switch u {
	case Word:
		return "word"
	case Char:
		return "char"
	case Token:
		return "token"
	}
	return "unit(" + strconv.Itoa(int(u)) + ")"
}

func parseUnit(s string) (Unit, bool) {
	switch s {
	case "word":
		return Word, true
	case "char":
		return Char, true
	case "token":
		return Token, true
	}
	return 0, false
}

// Key is a secret 128-bit SipHash-2-4 key for keyed specs. A keyed spec resists
// adversarial input: without the key nobody can craft texts whose features
// collide or avoid the minima. The key is never written anywhere; specs,
// signatures and indexes carry only its fingerprint.
type Key [16]byte

// Fingerprint returns a 64-bit fingerprint of the key that reveals nothing
// useful about it: SipHash-2-4 under the key of the ASCII message
// "neardup shingle key fingerprint".
func (k *Key) Fingerprint() uint64 {
	k0, k1 := k.halves()
	return siphash.Hash(k0, k1, []byte("neardup shingle key fingerprint"))
}

func (k *Key) halves() (uint64, uint64) {
	var k0, k1 uint64
	for i := 7; i >= 0; i-- {
		k0 = k0<<8 | uint64(k[i])
		k1 = k1<<8 | uint64(k[8+i])
	}
	return k0, k1
}

// Spec fully defines how a text becomes a multiset of 64-bit features:
// normalisation, segmentation into units, n-gram size and the base hash.
// Two feature sets, and so two signatures, are comparable only when they were
// made under specs with the same Fingerprint.
//
// The zero Spec is not valid; start from a preset (Prose, Code, CJK, Web) or
// Parse. A Spec is a plain value: safe to copy and to share between goroutines.
type Spec struct {
	// Unit is what shingles are n-grams of. No default: required.
	Unit Unit
	// N is the n-gram size in units, 1 to MaxN. No default: required.
	N int
	// NFKC applies Unicode compatibility normalisation (NFKC) first, so
	// full-width forms, ligatures and composed/decomposed accents agree.
	// Default false (presets turn it on).
	NFKC bool
	// CaseFold applies Unicode full case folding (after NFKC). Default false.
	CaseFold bool
	// FoldPunct replaces every punctuation code point (Unicode category P)
	// with a space. Default false.
	FoldPunct bool
	// FoldSpace turns every run of whitespace into one ASCII space and drops
	// leading and trailing whitespace. Word and Token units always separate
	// on whitespace, so this matters for Char units. Default false.
	FoldSpace bool
	// FoldDigits replaces every decimal digit (Nd) with '0', so page
	// counters, dates and prices do not break duplicates. Default false.
	FoldDigits bool
	// Seed seeds the xxh3 base hash. Ignored when Key is set. Default 0.
	Seed uint64
	// Key, when non-nil, replaces xxh3 with SipHash-2-4 under this secret
	// key. Default nil (unkeyed xxh3).
	Key *Key
	// Boilerplate, when it holds lines, is the set of lines dropped from a
	// text before it is shingled (see doc.go, "Boilerplate lines"): its line
	// hashes must have been made under this spec's normalisation and hash
	// (Shingler.AppendLines of a spec without them). Its count and
	// fingerprint are part of the canonical form; the lines are not. Default
	// nil (no line is dropped; the spec's canonical form and fingerprint are
	// those of a spec without the field).
	Boilerplate *Boilerplate
}

// Presets. Each documents its choices; see doc.go for the reasoning.
var (
	// Prose is for natural-language text: word 5-grams over NFKC, case-folded
	// text with punctuation folded, the common choice for web and news
	// deduplication (RefinedWeb, FineWeb, text-dedup use word 5-grams).
	Prose = Spec{Unit: Word, N: 5, NFKC: true, CaseFold: true, FoldPunct: true, FoldSpace: true}
	// Code is for source code: word 5-grams where words keep '_' (\w runs,
	// as The Stack's deduplication splits on \W), case kept because
	// identifiers are case-sensitive, punctuation not folded.
	Code = Spec{Unit: Word, N: 5, NFKC: true, FoldSpace: true}
	// CJK is for Chinese, Japanese and Korean text, which has no spaces:
	// character 3-grams (a CJK character is about a morpheme, so three
	// carry roughly what two or three English words do), NFKC to unify
	// full-width and half-width forms, whitespace and punctuation folded.
	CJK = Spec{Unit: Char, N: 3, NFKC: true, CaseFold: true, FoldPunct: true, FoldSpace: true}
	// Web is Prose plus digit folding, for crawled pages whose copies differ
	// in dates, counters and prices (the normalisation datatrove and CCNet use).
	Web = Spec{Unit: Word, N: 5, NFKC: true, CaseFold: true, FoldPunct: true, FoldSpace: true, FoldDigits: true}
)

// Preset returns the named preset: "prose", "code", "cjk" or "web".
func Preset(name string) (Spec, bool) {
	switch name {
	case "prose":
		return Prose, true
	case "code":
		return Code, true
	case "cjk":
		return CJK, true
	case "web":
		return Web, true
	}
	return Spec{}, false
}

// Errors returned by Validate and Parse; check with errors.Is.
var (
	// ErrInvalidSpec reports a Spec that breaks a rule (unit, n).
	ErrInvalidSpec = errors.New("shingle: invalid spec")
)

// Validate reports whether the spec is usable. The error wraps ErrInvalidSpec
// and names the offending field.
func (s Spec) Validate() error {
	if _, ok := parseUnit(s.Unit.String()); !ok {
		return fmt.Errorf("%w: unit %d is not word, char or token", ErrInvalidSpec, s.Unit)
	}
	if s.N < 1 || s.N > MaxN {
		return fmt.Errorf("%w: n = %d, want 1..%d", ErrInvalidSpec, s.N, MaxN)
	}
	return nil
}

// String returns the spec's canonical form, for example
//
//	v1/word:5/nfkc,casefold,punct,space/xxh3:0/unicode:15.0.0
//
// Flags appear in the fixed order nfkc, casefold, punct, space, digits ("-"
// when none). A keyed spec shows "siphash:" and the key's fingerprint in hex,
// never the key. A spec that drops boilerplate lines ends in a sixth part,
// "boilerplate:<BoilerplateVersion>:<lines>:<set fingerprint in hex>", for
// example
//
//	v1/word:5/nfkc,casefold,punct,space/xxh3:0/unicode:15.0.0/boilerplate:1:52:9a0c5e31d2f47b86
//
// Parse accepts this form back except for keyed specs, whose key must be
// supplied separately, and specs with boilerplate lines, whose set must be
// (ParseCanonical takes both).
func (s Spec) String() string {
	var b strings.Builder
	b.WriteString("v")
	b.WriteString(strconv.Itoa(Version))
	b.WriteString("/")
	b.WriteString(s.Unit.String())
	b.WriteString(":")
	b.WriteString(strconv.Itoa(s.N))
	b.WriteString("/")
	flags := make([]string, 0, 5)
	for _, f := range []struct {
		on   bool
		name string
	}{{s.NFKC, "nfkc"}, {s.CaseFold, "casefold"}, {s.FoldPunct, "punct"}, {s.FoldSpace, "space"}, {s.FoldDigits, "digits"}} {
		if f.on {
			flags = append(flags, f.name)
		}
	}
	if len(flags) == 0 {
		b.WriteString("-")
	} else {
		b.WriteString(strings.Join(flags, ","))
	}
	b.WriteString("/")
	if s.Key != nil {
		b.WriteString("siphash:")
		b.WriteString(strconv.FormatUint(s.Key.Fingerprint(), 16))
	} else {
		b.WriteString("xxh3:")
		b.WriteString(strconv.FormatUint(s.Seed, 10))
	}
	b.WriteString("/unicode:")
	b.WriteString(UnicodeVersion)
	if s.Boilerplate.Len() > 0 {
		b.WriteString("/")
		b.WriteString(s.Boilerplate.canonical())
	}
	return b.String()
}

// Fingerprint returns the canonical 64-bit fingerprint of the spec: the xxh3-64
// (seed 0) of the bytes of String(). Features, signatures and indexes made under
// specs with different fingerprints must never be compared.
func (s Spec) Fingerprint() uint64 {
	return xxh3.HashString(s.String())
}

// Parse reads a spec from a preset name ("prose", "code", "cjk", "web"), a
// short form "word:N", "char:N" or "token:N" (with the Prose normalisation:
// nfkc, casefold, punct, space), or the canonical form produced by String for
// unkeyed specs. A keyed spec cannot be parsed: set Key on the result instead.
func Parse(text string) (Spec, error) {
	if p, ok := Preset(text); ok {
		return p, nil
	}
	if unit, n, ok := strings.Cut(text, ":"); ok && !strings.Contains(text, "/") {
		u, ok := parseUnit(unit)
		if !ok {
			return Spec{}, fmt.Errorf("%w: %q: unit %q is not word, char or token", ErrInvalidSpec, text, unit)
		}
		nn, err := strconv.Atoi(n)
		if err != nil {
			return Spec{}, fmt.Errorf("%w: %q: n %q is not a number", ErrInvalidSpec, text, n)
		}
		s := Prose
		s.Unit, s.N = u, nn
		return s, s.Validate()
	}
	parts := strings.Split(text, "/")
	if len(parts) == 6 && strings.HasPrefix(parts[5], "boilerplate:") {
		return Spec{}, fmt.Errorf("%w: %q: the boilerplate lines of a spec are not in its canonical form; supply them (ParseCanonical)", ErrInvalidSpec, text)
	}
	if len(parts) != 5 || parts[0] != "v"+strconv.Itoa(Version) {
		return Spec{}, fmt.Errorf("%w: %q: want a preset (prose, code, cjk, web), word:N, char:N, token:N or a v%d canonical form", ErrInvalidSpec, text, Version)
	}
	var s Spec
	unit, n, _ := strings.Cut(parts[1], ":")
	u, ok := parseUnit(unit)
	if !ok {
		return Spec{}, fmt.Errorf("%w: %q: unit %q is not word, char or token", ErrInvalidSpec, text, unit)
	}
	nn, err := strconv.Atoi(n)
	if err != nil {
		return Spec{}, fmt.Errorf("%w: %q: n %q is not a number", ErrInvalidSpec, text, n)
	}
	s.Unit, s.N = u, nn
	if parts[2] != "-" {
		for _, f := range strings.Split(parts[2], ",") {
			switch f {
			case "nfkc":
				s.NFKC = true
			case "casefold":
				s.CaseFold = true
			case "punct":
				s.FoldPunct = true
			case "space":
				s.FoldSpace = true
			case "digits":
				s.FoldDigits = true
			default:
				return Spec{}, fmt.Errorf("%w: %q: unknown normalisation %q", ErrInvalidSpec, text, f)
			}
		}
	}
	hash, seed, _ := strings.Cut(parts[3], ":")
	if hash != "xxh3" {
		return Spec{}, fmt.Errorf("%w: %q: hash %q cannot be parsed (keyed specs take their key from the caller)", ErrInvalidSpec, text, hash)
	}
	if s.Seed, err = strconv.ParseUint(seed, 10, 64); err != nil {
		return Spec{}, fmt.Errorf("%w: %q: seed %q is not a number", ErrInvalidSpec, text, seed)
	}
	if parts[4] != "unicode:"+UnicodeVersion {
		return Spec{}, fmt.Errorf("%w: %q: made with Unicode tables %q, this build has %s", ErrInvalidSpec, text, parts[4], UnicodeVersion)
	}
	return s, s.Validate()
}

// ParseCanonical rebuilds the spec whose canonical form (String) is text,
// given the key of a keyed spec and the boilerplate set of a spec that drops
// lines (each ignored, and may be nil, when the form shows none). It checks
// that they are the ones the form names: a key of another fingerprint, or a
// set of another size or fingerprint, is an error wrapping ErrInvalidSpec,
// as is any text that is not a canonical form.
func ParseCanonical(text string, key *Key, bp *Boilerplate) (Spec, error) {
	parts := strings.Split(text, "/")
	hasBP := len(parts) == 6 && strings.HasPrefix(parts[5], "boilerplate:")
	keyed := len(parts) >= 5 && strings.HasPrefix(parts[3], "siphash:")
	switch {
	case hasBP && bp.Len() == 0:
		return Spec{}, fmt.Errorf("%w: %q drops boilerplate lines; their set is needed", ErrInvalidSpec, text)
	case keyed && key == nil:
		return Spec{}, fmt.Errorf("%w: %q is keyed; its key is needed", ErrInvalidSpec, text)
	}
	base := parts
	if hasBP {
		base = parts[:5]
	}
	if keyed {
		base = slices.Clone(base)
		base[3] = "xxh3:0"
	}
	if len(base) != 5 {
		return Spec{}, fmt.Errorf("%w: %q is not a canonical form", ErrInvalidSpec, text)
	}
	spec, err := Parse(strings.Join(base, "/"))
	if err != nil {
		return Spec{}, err
	}
	if keyed {
		spec.Seed, spec.Key = 0, key
	}
	if hasBP {
		spec.Boilerplate = bp
	}
	if got := spec.String(); got != text {
		return Spec{}, fmt.Errorf("%w: %q: the key and lines given make %q", ErrInvalidSpec, text, got)
	}
	return spec, nil
}
