// Package executor is hilrig's one loop, for virtual and real time alike.
//
// Each turn it takes the frames that arrived from endpoints, lets the
// impairment engine catch up with the clock (which releases the frames
// that are due to their egress: a device, or a model), steps the model
// endpoints whose exchange is due, publishes the live snapshot, and waits
// until the next thing it must do. Only the Clock differs between the two
// uses: a Virtual clock jumps to the next deadline at once, so that a run
// takes as long as the CPU needs and is reproducible bit for bit; a Real
// clock sleeps until the deadline on a real-time thread and measures how
// late it woke. A virtual-time run is thus the exact reference for a
// real-time one.
//
// Frames from an endpoint that speaks the rig wire protocol are followed
// as they enter (WireLink: their numbers, the device's clock from a time
// exchange a second, its heartbeat's changes as events; for another rig,
// the peer of a loop between two sites, its time requests answered, its
// clock asked every 100 ms, and its silence past a timeout an event);
// a model whose codec is the wire protocol numbers and stamps what it
// sends.
//
// The executor knows nothing of benches or devices: the rig binds a
// profile's flows to endpoints and models and hands it the result.
package executor
