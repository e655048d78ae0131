// Package modelfile is the language of model files: a plant written in
// YAML as linear blocks joined by named signals, with its cuts, and the
// stimuli of its inputs, which bench files use too.
package modelfile
