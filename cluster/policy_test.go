package cluster

import (
	"errors"
	"testing"
)

func TestParsePolicy(t *testing.T) {
	tests := []struct {
		in   string
		want Policy
		ok   bool
	}{
		{"first", Policy{Kind: KeepFirst}, true},
		{"  First ", Policy{Kind: KeepFirst}, true},
		{"longest", Policy{Kind: KeepLongest}, true},
		{"LONGEST", Policy{Kind: KeepLongest}, true},
		{"field:score", Policy{Kind: KeepField, Field: "score"}, true},
		{"Field:Page Rank", Policy{Kind: KeepField, Field: "Page Rank"}, true},
		{"field:a:b", Policy{Kind: KeepField, Field: "a:b"}, true},
		{"field:", Policy{}, false},
		{"field", Policy{}, false},
		{"first:x", Policy{}, false},
		{"longest:", Policy{}, false},
		{"", Policy{}, false},
		{"newest", Policy{}, false},
	}
	for _, tt := range tests {
		got, err := ParsePolicy(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParsePolicy(%q) = %+v, %v; want %+v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("ParsePolicy(%q) error %v does not wrap ErrInvalidPolicy", tt.in, err)
		}
	}
}

func TestPolicyText(t *testing.T) {
	for _, p := range []Policy{{Kind: KeepFirst}, {Kind: KeepLongest}, {Kind: KeepField, Field: "score"}} {
		b, err := p.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var q Policy
		if err := q.UnmarshalText(b); err != nil || q != p {
			t.Errorf("UnmarshalText(MarshalText(%+v) = %q) = %+v, %v", p, b, q, err)
		}
	}
	if _, err := (Policy{Kind: 7}).MarshalText(); !errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("MarshalText of an unknown kind: error %v; want ErrInvalidPolicy", err)
	}
	q := Policy{Kind: KeepLongest}
	if err := q.UnmarshalText([]byte("bogus")); err == nil || q.Kind != KeepLongest {
		t.Errorf("UnmarshalText(bogus) = %v and changed the policy to %+v", err, q)
	}
}

// FuzzParsePolicy checks that every accepted string round-trips through
// String and that parsing never panics.
func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{"first", "longest", "field:score", "field:", " FIELD:x ", "", "field:a:b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePolicy(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidPolicy) {
				t.Fatalf("ParsePolicy(%q) error %v does not wrap ErrInvalidPolicy", s, err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("ParsePolicy(%q) = %+v, which does not validate: %v", s, p, err)
		}
		q, err := ParsePolicy(p.String())
		if err != nil || q != p {
			t.Fatalf("ParsePolicy(%q) = %+v; reparsing %q gives %+v, %v", s, p, p.String(), q, err)
		}
	})
}
