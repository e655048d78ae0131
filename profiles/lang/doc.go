// Package lang is the machinery hilrig's YAML languages share (profiles,
// benches, model files, suites): a parser of the YAML they are written in
// into yaml.v4's node tree (yaml.v4 itself parses the rest, see
// fastParse), whose deeper levels, for a document only decoded, are
// parsed as the decoder reaches them (see lazyDepth), a decoder driven by a language's Go
// schema types (keys from struct tags, units that parse themselves: a
// Duration, a Rate, a Size, a Probability), the position of every value,
// every problem reported at once with its file, line and column in a
// bounded ErrorList, did-you-mean, overlays for extends and --set, the key
// reference generated from a schema, and size-capped reads of regular
// files only. It knows no language: each names its schema and how a file
// it extends is found (Decoder's Schema, ReadRef and RefNames).
package lang
