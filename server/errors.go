package server

import (
	"errors"
	"fmt"
	"net/http"
)

// Error codes: the stable "code" of every error response. Clients branch on
// the code, never on the message. Each has one HTTP status.
const (
	CodeBadJSON          = "bad_json"               // 400: the body is not the JSON the endpoint takes
	CodeInvalidUTF8      = "invalid_utf8"           // 400: the body is not valid UTF-8
	CodeInvalidID        = "invalid_id"             // 400: id missing, empty or too long
	CodeEmptyText        = "empty_text"             // 400: text empty, or no features under the index's spec
	CodeInvalidParameter = "invalid_parameter"      // 400: threshold, limit or meta out of range
	CodeUnauthorized     = "unauthorized"           // 401: missing or wrong bearer token
	CodeNotFound         = "not_found"              // 404: no such document, or no such route
	CodeMethodNotAllowed = "method_not_allowed"     // 405
	CodeDuplicateID      = "duplicate_id"           // 409: the id is already stored
	CodeBodyTooLarge     = "body_too_large"         // 413: body over the limit
	CodeTextTooLong      = "text_too_long"          // 413: a document's text over the limit
	CodeBatchTooLarge    = "batch_too_large"        // 413: more documents than a batch may hold
	CodeUnsupportedType  = "unsupported_media_type" // 415: wrong Content-Type
	CodeRateLimited      = "rate_limited"           // 429: over the client's rate
	CodeInternal         = "internal"               // 500
	CodeUnavailable      = "unavailable"            // 503: shutting down, or the index is unavailable
	CodeTimeout          = "timeout"                // 503: the request ran out of time before it was done
)

// codeStatus maps each code to its HTTP status.
var codeStatus = map[string]int{
	CodeBadJSON: http.StatusBadRequest, CodeInvalidUTF8: http.StatusBadRequest, CodeInvalidID: http.StatusBadRequest,
	CodeEmptyText: http.StatusBadRequest, CodeInvalidParameter: http.StatusBadRequest,
	CodeUnauthorized: http.StatusUnauthorized, CodeNotFound: http.StatusNotFound,
	CodeMethodNotAllowed: http.StatusMethodNotAllowed, CodeDuplicateID: http.StatusConflict,
	CodeBodyTooLarge: http.StatusRequestEntityTooLarge, CodeTextTooLong: http.StatusRequestEntityTooLarge,
	CodeBatchTooLarge: http.StatusRequestEntityTooLarge, CodeUnsupportedType: http.StatusUnsupportedMediaType,
	CodeRateLimited: http.StatusTooManyRequests, CodeInternal: http.StatusInternalServerError,
	CodeUnavailable: http.StatusServiceUnavailable, CodeTimeout: http.StatusServiceUnavailable,
}

// apiError is an error with its code, as a handler returns it.
type apiError struct {
	code string
	msg  string
}

// Error returns the code and the message.
func (e *apiError) Error() string { return e.code + ": " + e.msg }

func errorf(code, format string, args ...any) *apiError {
	return &apiError{code: code, msg: fmt.Sprintf(format, args...)}
}

// APIError is an error response as the Client reports it. Check with
// errors.As; Code is one of the Code constants.
type APIError struct {
	// Status is the response's HTTP status code.
	Status int
	// Code is the response's error code. When the body is not a JSON error
	// response it is "http_" and the status for Check, Insert, Get and
	// Delete, and empty for Batch.
	Code string
	// Message is the response's error message, or for Check, Insert, Get
	// and Delete the body's text when it is not a JSON error response.
	Message string
}

// Error returns the status, code and message, prefixed "server: ".
func (e *APIError) Error() string {
	return fmt.Sprintf("server: %d %s: %s", e.Status, e.Code, e.Message)
}

// Errors of this package; check with errors.Is.
var (
	// ErrInvalidOptions reports Options that break a rule.
	ErrInvalidOptions = errors.New("server: invalid options")
)
