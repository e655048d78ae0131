// Package web serves a running session over HTTP, so that a run can be
// watched and steered from another desk: a JSON API under /api/v1 to see
// the run and its profile and to change hops, trigger outages and mark
// phases while it runs; WebSocket telemetry at a rate each client
// chooses; Prometheus metrics at /metrics; and a dashboard at / that is
// embedded in the binary and works offline. The server keeps the run's
// history, bounded whatever the run's length (history.go), so that a
// client that comes late is sent the run from its start.
//
// A server is linked to its session (link.go): hilrig runs it in a child
// process of the rig (Dial, on the server's side; Host, on the rig's), so
// that no client, and none of the server's garbage, goroutines or locks,
// can move a release; tests link both in one process (New). Everything it
// shows comes from the session's snapshots, which the executor publishes
// into a record.Monitor without locks or allocation and the host sends
// over the link; everything it changes is asked of the host, which posts
// it to the executor (executor.Executor.Post) to be applied between two of
// its events. However many clients there are and however slowly they
// read, the executor never waits for them: a client that falls behind by
// more than a bounded queue of messages is dropped, and the server serves
// a bounded number of requests at once and of changes a second, refusing
// the rest at once (limits.go).
//
// Security: a server on a loopback address may be used without a token
// (and then only by names of the loopback, against DNS rebinding); on any
// other address it needs one (Options.Token; CheckToken says what a token
// must be), checked on every HTTP and WebSocket request by comparing
// digests in constant time. Browsers may use it only from the dashboard's own
// origin, and a read-only server (Options.ReadOnly) refuses every change.
package web
