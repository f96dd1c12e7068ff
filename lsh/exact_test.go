package lsh

import (
	"math/big"
)

// Exact reference arithmetic for the tests: P is a polynomial in s with
// integer coefficients, so its values and integrals at rational points are
// rational and can be computed exactly with math/big.

// poly is a polynomial with rational coefficients; poly[n] multiplies s^n.
type poly []*big.Rat

func polyConst(c int64) poly { return poly{big.NewRat(c, 1)} }

func (p poly) mul(q poly) poly {
	out := make(poly, len(p)+len(q)-1)
	for i := range out {
		out[i] = new(big.Rat)
	}
	t := new(big.Rat)
	for i, a := range p {
		if a.Sign() == 0 {
			continue
		}
		for j, b := range q {
			out[i+j].Add(out[i+j], t.Mul(a, b))
		}
	}
	return out
}

func (p poly) add(q poly) poly {
	n := max(len(p), len(q))
	out := make(poly, n)
	for i := range out {
		out[i] = new(big.Rat)
		if i < len(p) {
			out[i].Add(out[i], p[i])
		}
		if i < len(q) {
			out[i].Add(out[i], q[i])
		}
	}
	return out
}

func (p poly) scale(c *big.Rat) poly {
	out := make(poly, len(p))
	for i, a := range p {
		out[i] = new(big.Rat).Mul(a, c)
	}
	return out
}

func (p poly) pow(n int) poly {
	out := polyConst(1)
	for range n {
		out = out.mul(p)
	}
	return out
}

// eval returns p(x) exactly.
func (p poly) eval(x *big.Rat) *big.Rat {
	acc := new(big.Rat)
	for i := len(p) - 1; i >= 0; i-- {
		acc.Mul(acc, x)
		acc.Add(acc, p[i])
	}
	return acc
}

// integral returns ∫ₐᶜ p(s) ds exactly.
func (p poly) integral(a, c *big.Rat) *big.Rat {
	sum := new(big.Rat)
	pa, pc := new(big.Rat).Set(a), new(big.Rat).Set(c) // a^(n+1), c^(n+1)
	for n, coef := range p {
		d := new(big.Rat).Sub(pc, pa)
		d.Mul(d, coef)
		d.Quo(d, big.NewRat(int64(n+1), 1))
		sum.Add(sum, d)
		pa.Mul(pa, a)
		pc.Mul(pc, c)
	}
	return sum
}

// exactPolys returns the polynomials P(s) and 1 − P(s) of p.
func exactPolys(p Params) (prob, miss poly) {
	s := poly{big.NewRat(0, 1), big.NewRat(1, 1)}          // s
	oneMinusS := poly{big.NewRat(1, 1), big.NewRat(-1, 1)} // 1 − s
	q := polyConst(0)
	for i := 0; i <= p.Probe; i++ {
		term := s.pow(p.Rows - i).mul(oneMinusS.pow(i)).scale(new(big.Rat).SetInt(new(big.Int).Binomial(int64(p.Rows), int64(i))))
		q = q.add(term)
	}
	miss = polyConst(1).add(q.scale(big.NewRat(-1, 1))).pow(p.Bands)
	prob = polyConst(1).add(miss.scale(big.NewRat(-1, 1)))
	return prob, miss
}

func ratFloat(r *big.Rat) float64 {
	f, _ := r.Float64()
	return f
}
