package fmi

// Platforms names the binaries/ directories whose shared libraries run on
// goos/goarch (Go's names), most fitting first. FMI 2 names x86 platforms
// linux32/linux64 (win, darwin alike) and no ARM ones; for ARM hilrig
// looks where FMI 3 puts them (aarch64-linux, aarch32-linux), as exporters
// that build FMI 2 FMUs for ARM do. FMI 3 names a platform
// <architecture>-<system>.
func Platforms(v Version, goos, goarch string) []string {
	arch := map[string]string{"amd64": "x86_64", "386": "x86", "arm64": "aarch64", "arm": "aarch32"}[goarch]
	if arch == "" {
		return nil
	}
	system := map[string]string{"linux": "linux", "darwin": "darwin", "windows": "windows"}[goos]
	if system == "" {
		return nil
	}
	fmi3 := arch + "-" + system
	if v == FMI3 {
		return []string{fmi3}
	}
	prefix := map[string]string{"linux": "linux", "darwin": "darwin", "windows": "win"}[goos]
	switch goarch {
	case "amd64":
		return []string{prefix + "64"}
	case "386":
		return []string{prefix + "32"}
	}
	return []string{fmi3}
}

// LibraryName is the file name of an FMU's shared library on goos.
func LibraryName(goos, modelIdentifier string) string {
	switch goos {
	case "darwin":
		return modelIdentifier + ".dylib"
	case "windows":
		return modelIdentifier + ".dll"
	}
	return modelIdentifier + ".so"
}
