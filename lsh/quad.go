package lsh

import "math"

// Gauss–Kronrod 7/15-point rule on [−1, 1] (QUADPACK qk15): the Kronrod
// abscissae xgk (positive half, the odd-indexed ones are the Gauss nodes),
// their weights wgk, and the 7-point Gauss weights wg for xgk[1], xgk[3],
// xgk[5] and xgk[7] = 0.
var (
	xgk = [8]float64{
		0.991455371120812639206854697526329,
		0.949107912342758524526189684047851,
		0.864864423359769072789712788640926,
		0.741531185599394439863864773280788,
		0.586087235467691130294144845693013,
		0.405845151377397166906606412076961,
		0.207784955007898467600689403773245,
		0,
	}
	wgk = [8]float64{
		0.022935322010529224963732008058970,
		0.063092092629978553290700663189204,
		0.104790010322250183839876322541518,
		0.140653259715525918745189590510238,
		0.169004726639267902826583426598550,
		0.190350578064785409913256402421014,
		0.204432940075298892414161999234649,
		0.209482141084727828012999174891714,
	}
	wg = [4]float64{
		0.129484966168869693270611432679082,
		0.279705391489276667901467771423780,
		0.381830050505118944950369775488975,
		0.417959183673469387755102040816327,
	}
)

const (
	// quadTol is the absolute error target of integrate over the whole
	// interval; the integrands here lie in [0, 1] on intervals within [0, 1].
	quadTol = 1e-13
	// quadDepth bounds the bisection depth (a panel of width 2⁻⁴⁰).
	quadDepth = 40
)

// integrate returns ∫ₐᵇ f by adaptive Gauss–Kronrod quadrature: a panel is
// accepted when its 15-point and 7-point estimates differ by at most its
// share of quadTol, else it is bisected. The result is deterministic.
func integrate(f func(float64) float64, a, b float64) float64 {
	if !(b > a) {
		return 0
	}
	return adapt(f, a, b, quadTol, quadDepth)
}

func adapt(f func(float64) float64, a, b, tol float64, depth int) float64 {
	k, g := gk15(f, a, b)
	if math.Abs(k-g) <= tol || depth == 0 {
		return k
	}
	m := a + (b-a)/2
	return adapt(f, a, m, tol/2, depth-1) + adapt(f, m, b, tol/2, depth-1)
}

// gk15 returns the 15-point Kronrod and 7-point Gauss estimates of ∫ₐᵇ f.
func gk15(f func(float64) float64, a, b float64) (kronrod, gauss float64) {
	c, h := (a+b)/2, (b-a)/2
	fc := f(c)
	kronrod = wgk[7] * fc
	gauss = wg[3] * fc
	for i := range 7 {
		dx := h * xgk[i]
		s := f(c-dx) + f(c+dx)
		kronrod += wgk[i] * s
		if i%2 == 1 {
			gauss += wg[i/2] * s
		}
	}
	return kronrod * h, gauss * h
}
