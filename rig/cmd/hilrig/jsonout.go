package main

import (
	"bytes"
	"encoding/json"
	"io"
)

// The JSON hilrig writes (a run's summary, above all) is encoding/json's
// Encoder with SetIndent("", "  "), byte for byte, as scripts and the
// tests' golden files read it. That encoder re-indents its output through
// its validating scanner a byte at a time into a buffer it grows by
// doubling: for the summary of 10 000 flows (5.5 MB) that cost more than
// the marshalling and 36 MB of allocations. json.Marshal's output is
// valid compact JSON, so the indenting needs no scanner: one pass that
// copies strings and literals whole, writing in chunks.

// writeJSON writes v as indented JSON, as json.NewEncoder(w) with
// SetIndent("", "  ") would: the same bytes (HTML characters escaped, a
// newline at the end), and nothing written when v cannot be marshalled.
func writeJSON(w io.Writer, v any) error {
	compact, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeIndented(w, compact)
}

// indentChunk is how much indented JSON writeIndented holds before it
// writes: a few pipe buffers, not the whole summary.
const indentChunk = 256 << 10

// writeIndented writes compact, which must be valid JSON without
// whitespace (json.Marshal's), to w indented by two spaces a level, as
// json.Indent(dst, compact, "", "  ") does (empty objects and arrays stay
// {} and []), and a newline.
func writeIndented(w io.Writer, compact []byte) error {
	out := make([]byte, 0, min(len(compact)+len(compact)/2, indentChunk)+64)
	depth := 0
	// opened: the last byte opened an object or an array, whose newline
	// waits until it is known not to be empty.
	opened := false
	for i := 0; i < len(compact); {
		if len(out) >= indentChunk {
			if _, err := w.Write(out); err != nil {
				return err
			}
			out = out[:0]
		}
		c := compact[i]
		if opened && c != '}' && c != ']' {
			opened = false
			depth++
			out = appendNewline(out, depth)
		}
		switch c {
		case '"':
			end := stringEnd(compact, i)
			out = append(out, compact[i:end]...)
			i = end
			continue
		case '{', '[':
			opened = true
			out = append(out, c)
		case ',':
			out = appendNewline(append(out, c), depth)
		case ':':
			out = append(out, ':', ' ')
		case '}', ']':
			if opened {
				opened = false
			} else {
				depth--
				out = appendNewline(out, depth)
			}
			out = append(out, c)
		default: // a number, true, false or null: up to the next punctuation
			end := i + 1
			for end < len(compact) && !isPunctuation(compact[end]) {
				end++
			}
			out = append(out, compact[i:end]...)
			i = end
			continue
		}
		i++
	}
	_, err := w.Write(append(out, '\n'))
	return err
}

// stringEnd is the index just past the string that starts with the quote
// at compact[start]: past the first quote after it not escaped by an odd
// run of backslashes.
func stringEnd(compact []byte, start int) int {
	i := start + 1
	for {
		q := bytes.IndexByte(compact[i:], '"')
		if q < 0 {
			return len(compact) // not valid JSON: copied as it is
		}
		i += q
		backslashes := 0
		for j := i - 1; j > start && compact[j] == '\\'; j-- {
			backslashes++
		}
		i++
		if backslashes%2 == 0 {
			return i
		}
	}
}

func isPunctuation(c byte) bool {
	switch c {
	case '"', '{', '}', '[', ']', ',', ':':
		return true
	}
	return false
}

// indentSpaces is the indent of the deepest level appendNewline writes
// without growing it; deeper levels append it again.
const indentSpaces = "                                                                "

// appendNewline appends a newline and depth levels of two spaces.
func appendNewline(out []byte, depth int) []byte {
	out = append(out, '\n')
	for n := 2 * depth; n > 0; {
		k := min(n, len(indentSpaces))
		out = append(out, indentSpaces[:k]...)
		n -= k
	}
	return out
}
