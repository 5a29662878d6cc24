//go:build !linux

package holder

var titleRoom = ""

// setTitle does nothing where argv cannot be rewritten in place.
func setTitle(args []string, name string) {}
