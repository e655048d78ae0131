// Package wire is every byte layout that crosses a line between the rig and
// a device: framings that cut a byte stream into frames (line, SLIP, COBS,
// fixed size, idle gap), codecs that carry a model's coupling variables in
// a frame (CSV text, packed binary structs), and the rig wire protocol:
// numbered, time-stamped, CRC-checked messages in COBS frames carrying
// typed samples and commands, acknowledgements, time sync and heartbeats
// (Sender, Parse, Tracker, ClockEstimator; the layout byte by byte is in
// firmware/README.md).
//
// It depends on nothing but the standard library and avoids what TinyGo
// lacks (reflection, fmt on the per-frame paths), so that device-side code
// (the reference firmware, a lab's own) uses the very code the rig's
// drivers use, and a frame layout is written down once. Nothing on a
// per-frame path allocates.
package wire
