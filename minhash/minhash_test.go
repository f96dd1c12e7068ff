package minhash

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/neardup/neardup/shingle"
)

func randomSet(r *rand.Rand, n int) []uint64 {
	f := make([]uint64, n)
	for i := range f {
		f[i] = r.Uint64()
	}
	return f
}

func TestParamsValidate(t *testing.T) {
	var p *Params
	p = p.EnsureDefaults()
	if *p != (Params{K: 128, Scheme: OnePermutation, Bits: 32}) {
		t.Fatalf("defaults: got %+v", *p)
	}
	for _, bad := range []Params{{K: -1, Scheme: KHash, Bits: 32}, {K: MaxK + 1, Scheme: KHash, Bits: 32}, {K: 8, Scheme: 9, Bits: 32}, {K: 8, Scheme: KHash, Bits: 3}, {K: 8, Scheme: KHash, Bits: 128}} {
		if err := bad.Validate(); !errors.Is(err, ErrInvalidParams) {
			t.Errorf("%+v: err = %v; want ErrInvalidParams", bad, err)
		}
	}
	if _, err := ParseScheme("minhash"); !errors.Is(err, ErrInvalidParams) {
		t.Errorf("ParseScheme: err = %v", err)
	}
	a := Params{K: 128, Scheme: OnePermutation, Bits: 32}
	b := a
	b.Seed = 1
	if a.Fingerprint() == b.Fingerprint() {
		t.Error("seeds do not change the fingerprint")
	}
}

// TestSignatureProperties: order and repeats of features do not matter,
// identical sets agree everywhere, and disjoint sets (almost) nowhere.
func TestSignatureProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	set := randomSet(r, 300)
	other := randomSet(r, 300)
	for _, p := range []Params{{}, {Scheme: KHash}, {Bits: 64}, {Bits: 1}, {K: 100}, {K: 7, Scheme: KHash, Bits: 16}} {
		h := MustNewHasher(p)
		p = h.Params()
		a := h.Sign(nil, set)
		shuffled := slices.Clone(set)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		shuffled = append(shuffled, set[:50]...) // repeats
		if b := h.Sign(nil, shuffled); !slices.Equal(a, b) {
			t.Errorf("%s: order or repeats change the signature", p)
		}
		if len(a) != p.Words() {
			t.Errorf("%s: %d words; want %d", p, len(a), p.Words())
		}
		if got := p.Similarity(a, a); got != 1 {
			t.Errorf("%s: self-similarity %v", p, got)
		}
		if p.Bits >= 16 {
			if got := p.Similarity(a, h.Sign(nil, other)); got > 0.1 {
				t.Errorf("%s: disjoint sets similarity %v", p, got)
			}
		}
		// Pushing in two parts equals pushing at once.
		h.Reset()
		h.Push(set[:100])
		h.Push(set[100:])
		if b := h.AppendSignature(nil); !slices.Equal(a, b) {
			t.Errorf("%s: split push differs", p)
		}
		// Slots unpack to what Slot returns, within Bits.
		slots := p.AppendSlots(nil, a)
		for i, v := range slots {
			if v != p.Slot(a, i) || (p.Bits < 64 && v>>p.Bits != 0) {
				t.Fatalf("%s: slot %d = %x, Slot = %x", p, i, v, p.Slot(a, i))
			}
		}
	}
}

func TestMatchesAgainstSlots(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for _, bits := range []int{1, 2, 4, 8, 16, 32, 64} {
		for _, k := range []int{1, 7, 64, 100, 128} {
			p := Params{K: k, Scheme: OnePermutation, Bits: bits}
			a := make(Signature, p.Words())
			b := make(Signature, p.Words())
			for i := range a {
				a[i] = r.Uint64()
				b[i] = a[i] ^ (r.Uint64() & r.Uint64() & r.Uint64())
			}
			if pad := p.Words()*64 - k*bits; pad > 0 {
				a[len(a)-1] &= ^uint64(0) >> pad
				b[len(b)-1] &= ^uint64(0) >> pad
			}
			want := 0
			for i := 0; i < k; i++ {
				if p.Slot(a, i) == p.Slot(b, i) {
					want++
				}
			}
			if got := p.Matches(a, b); got != want {
				t.Errorf("bits %d k %d: Matches = %d; want %d", bits, k, got, want)
			}
		}
	}
}

func TestEmptySet(t *testing.T) {
	for _, p := range []Params{{}, {Scheme: KHash}} {
		h := MustNewHasher(p)
		s := h.Sign(nil, nil)
		for i := 0; i < h.Params().K; i++ {
			if h.Params().Slot(s, i) != 1<<32-1 {
				t.Fatalf("%s: empty set slot %d = %x; want all ones", h.Params(), i, h.Params().Slot(s, i))
			}
		}
		if m := h.Metrics(); m.EmptySets != 1 || m.Signatures != 1 {
			t.Errorf("%s: metrics %+v", h.Params(), m)
		}
	}
	// One feature: it owns every one-permutation slot after densification,
	// so repeats change nothing and another single feature shares no slot.
	h := MustNewHasher(Params{Bits: 64})
	s := h.Sign(nil, []uint64{42})
	if s2 := h.Sign(nil, []uint64{42, 42, 42}); !slices.Equal(s, s2) {
		t.Fatalf("single feature, repeated: signature changed")
	}
	if n := h.Params().Matches(s, h.Sign(nil, []uint64{43})); n != 0 {
		t.Fatalf("single features 42 and 43 share %d slots; want 0", n)
	}
}

func TestSignTextMatchesSign(t *testing.T) {
	sh := shingle.MustNew(shingle.Prose)
	texts := [][]byte{nil, []byte("short"), bytes.Repeat([]byte("lorem ipsum dolor sit amet consectetur "), 200), []byte("日本語のテキスト and mixed text é")}
	for _, p := range []Params{{}, {Scheme: KHash, Bits: 8}} {
		h := MustNewHasher(p)
		for _, text := range texts {
			want := h.Sign(nil, sh.AppendFeatures(nil, text))
			if got := h.SignText(nil, sh, text); !slices.Equal(got, want) {
				t.Errorf("%s: SignText differs from Sign on %q", h.Params(), text[:min(20, len(text))])
			}
		}
	}
	h := MustNewHasher(Params{})
	dst := make(Signature, 0, 8)
	text := texts[2]
	if a := testing.AllocsPerRun(50, func() { dst = h.SignText(dst[:0], sh, text) }); a != 0 {
		t.Errorf("SignText: %v allocations; want 0", a)
	}
}

func TestMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	a, b := randomSet(r, 200), randomSet(r, 300)
	p := Params{Scheme: KHash, Bits: 64}
	h := MustNewHasher(p)
	sa, sb := h.Sign(nil, a), h.Sign(nil, b)
	if err := h.Params().Merge(sa, sb); err != nil {
		t.Fatal(err)
	}
	if want := h.Sign(nil, append(slices.Clone(a), b...)); !slices.Equal(sa, want) {
		t.Error("merged khash signature differs from the union's")
	}
	for _, q := range []Params{{}, {Scheme: KHash, Bits: 32}} {
		q.EnsureDefaults()
		if err := q.Merge(make(Signature, q.Words()), make(Signature, q.Words())); !errors.Is(err, ErrMergeUnsupported) {
			t.Errorf("%s: Merge err = %v; want ErrMergeUnsupported", q, err)
		}
	}
}

// TestStreaming: concurrent Adds from many goroutines, in any interleaving,
// end in the same signature as one Hasher over all features; Merge of two
// streams equals the stream of the union, for both schemes.
func TestStreaming(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	all := randomSet(r, 5000)
	for _, p := range []Params{{}, {Scheme: KHash, Bits: 16}, {K: 100, Bits: 64}} {
		s, err := NewStreaming(p)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for i := g; i < len(all); i += 8 {
					s.Add(all[i])
					if i%997 == 0 {
						s.Snapshot(nil)
					}
				}
			}(g)
		}
		wg.Wait()
		want := MustNewHasher(p).Sign(nil, all)
		if got := s.Snapshot(nil); !slices.Equal(got, want) {
			t.Errorf("%s: streaming signature differs", s.Params())
		}
		x, _ := NewStreaming(p)
		y, _ := NewStreaming(p)
		x.Add(all[:10]...) // short: many empty bins before merging
		y.Add(all[2500:]...)
		if err := x.Merge(y); err != nil {
			t.Fatal(err)
		}
		union := append(slices.Clone(all[:10]), all[2500:]...)
		if got, want := x.Snapshot(nil), MustNewHasher(p).Sign(nil, union); !slices.Equal(got, want) {
			t.Errorf("%s: merged stream differs from the union's signature", s.Params())
		}
	}
	x, _ := NewStreaming(Params{})
	y, _ := NewStreaming(Params{Seed: 1})
	if err := x.Merge(y); !errors.Is(err, ErrParamsMismatch) {
		t.Errorf("merge across seeds: err = %v", err)
	}
}

func TestWireRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	specFP := shingle.Prose.Fingerprint()
	var stream []byte
	type rec struct {
		id  []byte
		sig Signature
	}
	var recs []rec
	for _, p := range []Params{{}, {K: 100, Bits: 1}, {K: 7, Scheme: KHash, Bits: 64}, {K: 13, Bits: 4}} {
		h := MustNewHasher(p)
		p = h.Params()
		for i, id := range [][]byte{nil, []byte(""), []byte("doc-1"), bytes.Repeat([]byte("x"), 300)} {
			sig := h.Sign(nil, randomSet(r, 10+i*50))
			enc := AppendBinary(nil, p, specFP, id, sig)
			if want := HeaderSize + p.Bytes(); id == nil && len(enc) != want {
				t.Errorf("%s: %d bytes; want %d", p, len(enc), want)
			}
			gotID, got, rest, err := Decode(nil, append(enc, 0xAA), p, specFP)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if !bytes.Equal(gotID, id) || (id == nil) != (gotID == nil) || !slices.Equal(got, sig) || !bytes.Equal(rest, []byte{0xAA}) {
				t.Fatalf("%s id %q: round trip got id %q sig %x rest %x", p, id, gotID, got, rest)
			}
			// Another spec or other params: a clear error, never a signature.
			if _, _, _, err := Decode(nil, enc, p, specFP+1); !errors.Is(err, ErrSpecMismatch) {
				t.Errorf("spec mismatch: err = %v", err)
			}
			q := p
			q.Seed++
			if _, _, _, err := Decode(nil, enc, q, specFP); !errors.Is(err, ErrParamsMismatch) {
				t.Errorf("params mismatch: err = %v", err)
			}
			for cut := 0; cut < len(enc); cut += 1 + len(enc)/17 {
				if _, _, _, err := Decode(nil, enc[:cut], p, specFP); err == nil {
					t.Errorf("truncated at %d decoded", cut)
				}
			}
			if p == (Params{K: 128, Scheme: OnePermutation, Bits: 32}) {
				stream = append(stream, enc...)
				recs = append(recs, rec{id, sig})
			}
		}
	}
	rd := NewReader(bytes.NewReader(stream), Params{}, specFP)
	for i, want := range recs {
		id, sig, err := rd.Next()
		if err != nil || !bytes.Equal(id, want.id) || !slices.Equal(sig, want.sig) {
			t.Fatalf("record %d: id %q err %v", i, id, err)
		}
	}
	if _, _, err := rd.Next(); err != io.EOF {
		t.Errorf("after the last record: err = %v; want io.EOF", err)
	}
	rd = NewReader(bytes.NewReader(stream[:len(stream)-3]), Params{}, specFP)
	var err error
	for err == nil {
		_, _, err = rd.Next()
	}
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated stream: err = %v; want ErrCorrupt", err)
	}
}

func FuzzDecode(f *testing.F) {
	specFP := shingle.Prose.Fingerprint()
	// The params sets decoded against (which % len): every slot width the
	// wire format packs differently, both schemes, K not a multiple of 64.
	params := []Params{
		{K: 13, Bits: 4},
		{K: 128, Bits: 32},
		{K: 64, Bits: 64, Scheme: KHash},
		{K: 100, Bits: 1},
		{K: 7, Bits: 2},
		{K: 128, Bits: 8},
		{K: 9, Bits: 16, Scheme: KHash},
	}
	for i := range params {
		params[i].EnsureDefaults()
		p := params[i]
		h := MustNewHasher(p)
		f.Add(AppendBinary(nil, p, specFP, []byte("id"), h.Sign(nil, []uint64{1, 2, 3})), uint8(i))
		f.Add(AppendBinary(nil, p, specFP, nil, h.Sign(nil, nil)), uint8(i))
	}
	f.Add([]byte("NDMH"), uint8(0))
	f.Add([]byte{}, uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		p := params[int(which)%len(params)]
		id, sig, rest, err := Decode(nil, data, p, specFP)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes to the same bytes.
		enc := AppendBinary(nil, p, specFP, id, sig)
		if !bytes.Equal(enc, data[:len(data)-len(rest)]) {
			t.Fatalf("%+v: re-encoding differs:\n%x\n%x", p, enc, data[:len(data)-len(rest)])
		}
	})
}

func TestNonCanonicalIDLength(t *testing.T) {
	p := Params{K: 8, Bits: 8}
	p.EnsureDefaults()
	enc := AppendBinary(nil, p, 1, []byte{}, make(Signature, p.Words()))
	// Replace the one-byte length 0 with the two-byte 0x80 0x00.
	bad := append(append(slices.Clone(enc[:HeaderSize]), 0x80, 0x00), enc[HeaderSize+1:]...)
	if _, _, _, err := Decode(nil, bad, p, 1); !errors.Is(err, ErrCorrupt) {
		t.Errorf("non-canonical id length: err = %v; want ErrCorrupt", err)
	}
}

// TestAppendSlotsReference checks AppendSlots against Slot, one slot at a
// time, for every width and for slot counts that end mid-word (the padding
// past them not zero), after a prefix in dst.
func TestAppendSlotsReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, bits := range []int{1, 2, 4, 8, 16, 32, 64} {
		for _, k := range []int{1, 2, 3, 7, 63, 64, 65, 100, 127, 128, 256} {
			p := Params{K: k, Scheme: OnePermutation, Bits: bits}
			sig := make(Signature, p.Words())
			for i := range sig {
				sig[i] = r.Uint64()
			}
			// The padding past K is left random: slots are read within
			// their bits, as Slot reads them.
			got := p.AppendSlots([]uint64{42}, sig)
			if len(got) != 1+k || got[0] != 42 {
				t.Fatalf("%s: AppendSlots after a prefix gave %d values starting %x; want 42 and %d slots", p, len(got), got[:1], k)
			}
			for i, v := range got[1:] {
				if v != p.Slot(sig, i) {
					t.Fatalf("%s: slot %d = %x; Slot = %x", p, i, v, p.Slot(sig, i))
				}
			}
		}
	}
}
