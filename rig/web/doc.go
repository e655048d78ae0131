// Package web serves a running session over HTTP, so that a run can be
// watched and steered from another desk: a JSON API under /api/v1 to see
// the run and its profile and to change hops, trigger outages and mark
// phases while it runs; WebSocket telemetry at a rate each client
// chooses; Prometheus metrics at /metrics; and a dashboard at / that is
// embedded in the binary and works offline.
//
// Everything it shows comes from the session's record.Monitor, which the
// executor publishes into without locks or allocation, and everything it
// changes is posted to the executor (executor.Executor.Post) and applied
// between two of its events. However many clients there are and however
// slowly they read, the executor never waits for them: a client that
// falls behind by more than a bounded queue of messages is dropped.
//
// Security: a server on a loopback address may be used without a token
// (and then only by names of the loopback, against DNS rebinding); on any
// other address it needs one (Options.Token; CheckToken says what a token
// must be), checked on every HTTP and WebSocket request by comparing
// digests in constant time. Browsers may use it only from the dashboard's own
// origin, and a read-only server (Options.ReadOnly) refuses every change.
package web
