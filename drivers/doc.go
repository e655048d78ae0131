// Package drivers is hilrig's I/O: serial ports (framed by firmware/wire), GPIO
// pins, UDP and TCP sockets, and the virtual stand-ins used by tests and
// demos (pseudo-terminal pairs, wired fake pins). Each endpoint turns what
// arrives from its device into timestamped frames, and writes frames back,
// each in one attempt that never waits for the device.
package drivers
