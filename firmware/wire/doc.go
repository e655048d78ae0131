// Package wire is every byte layout that crosses a line between the rig and
// a device: framings that cut a byte stream into frames (line, SLIP, COBS,
// fixed size, idle gap) and codecs that carry a model's coupling variables
// in a frame (CSV text, packed binary structs).
//
// It depends on nothing but the standard library, so that device-side code
// (the reference firmware, a lab's own) uses the very code the rig's drivers
// use, and a frame layout is written down once.
package wire
