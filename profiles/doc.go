// Package profiles is hilrig's profile language: it parses and validates
// YAML profiles (hops, flows, traffic, schedule), reports every problem with
// its file, line and column, and turns a profile into an emulator.Config.
// It also embeds the shipped library of profiles, so they can be named
// without a path. The other languages are its subpackages (benchfile,
// modelfile, suitefile); the machinery they all share is profiles/lang.
package profiles
