// Package device is what the reference firmware shares: its hardware behind
// small interfaces (a clock, a UART, analog and digital pins), a Link that
// speaks the rig wire protocol over a UART, a fixed-rate Schedule, and
// Periodic, the loop of a link, a work schedule and a heartbeat that each
// reference firmware is built on.
//
// A firmware is single-threaded, as a microcontroller's main loop is: it
// takes the bytes that arrived (Poll, or Receive from a host's reader) and
// does its periodic work when due (Tick at Next). Nothing it does per loop
// allocates, and it uses nothing TinyGo lacks (no reflection, no maps, no
// fmt after set-up), so the same code runs on a microcontroller and, in
// firmware/cmd, on a Raspberry Pi or a host against a pseudo-terminal.
package device
