// Package e2e holds the end-to-end tests of the reference firmware: the
// PID and the plant node closing a loop through real pseudo-terminals, in
// virtual time and, as host programs, in real time; and the builds for a
// Raspberry Pi. It has no code of its own.
package e2e
