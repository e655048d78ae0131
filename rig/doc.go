// Package rig is hilrig's orchestrator: it loads profiles, drives the
// impairment engine in virtual time (sim) and records what happened to every
// frame (traces and summaries).
package rig
