package server

import (
	"math"
	"strconv"

	"github.com/neardup/neardup/internal/jsontext"
)

// appendCheckResult appends r as JSON, byte for byte what encoding/json
// writes (with HTML escaping off), without its reflection: answers are the
// hot path of the service.
func appendCheckResult(dst []byte, r *CheckResult) []byte {
	dst = append(dst, `{"id":`...)
	dst = jsontext.AppendString(dst, r.ID)
	dst = append(dst, `,"status":`...)
	dst = jsontext.AppendString(dst, r.Status)
	dst = append(dst, `,"duplicates":[`...)
	for i, d := range r.Duplicates {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"id":`...)
		dst = jsontext.AppendString(dst, d.ID)
		dst = append(dst, `,"similarity":`...)
		dst = appendFloat(dst, d.Similarity)
		if len(d.Meta) > 0 {
			dst = append(dst, `,"meta":`...)
			dst = append(dst, d.Meta...)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	if r.Line != 0 {
		dst = append(dst, `,"line":`...)
		dst = strconv.AppendInt(dst, int64(r.Line), 10)
	}
	if r.Error != nil {
		dst = append(dst, `,"error":{"code":`...)
		dst = jsontext.AppendString(dst, r.Error.Code)
		dst = append(dst, `,"message":`...)
		dst = jsontext.AppendString(dst, r.Error.Message)
		dst = append(dst, '}')
	}
	return append(dst, '}', '\n')
}

// appendFloat formats f as encoding/json does.
func appendFloat(dst []byte, f float64) []byte {
	abs := math.Abs(f)
	fmt := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		fmt = 'e'
	}
	dst = strconv.AppendFloat(dst, f, fmt, -1, 64)
	if fmt == 'e' {
		// Clean up e-09 to e-9.
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}
