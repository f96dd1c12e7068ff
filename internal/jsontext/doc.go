// Package jsontext appends text as quoted JSON strings, byte for byte as
// encoding/json writes a Go string with HTML escaping off, but without
// reflection or allocations. It only encodes strings: it is neither a JSON
// encoder for other values nor a decoder.
//
// # Escaping
//
// The output is what encoding/json (Go 1.22 and later) writes through an
// Encoder with SetEscapeHTML(false), less the trailing newline:
//
//   - '"' and '\\' are escaped with a backslash; '\b', '\f', '\n', '\r' and
//     '\t' get their short escapes; other bytes below 0x20 become \u00XX;
//   - U+2028 and U+2029 become \u2028 and \u2029 (JSON allows them raw, but
//     JavaScript before ES2019 does not);
//   - each byte that does not begin a valid UTF-8 sequence becomes \ufffd
//     (U+FFFD), so the output is valid UTF-8 and valid JSON whatever the
//     input, and decodes to the input with invalid bytes replaced;
//   - everything else, '<', '>', '&' and DEL included, is copied as it is.
//
// The functions keep no state: they are safe for concurrent use and their
// output depends only on their input.
package jsontext
