// Package all links every runtime's driver into the binary: importing it
// registers them all. Adding a runtime adds one import here.
package all

import (
	// Each runtime registers itself from its package's init.
	_ "github.com/polyrepl/polyrepl/internal/driver/bash"
	_ "github.com/polyrepl/polyrepl/internal/driver/cling"
	_ "github.com/polyrepl/polyrepl/internal/driver/clojure"
	_ "github.com/polyrepl/polyrepl/internal/driver/ghci"
	_ "github.com/polyrepl/polyrepl/internal/driver/gnuplot"
	_ "github.com/polyrepl/polyrepl/internal/driver/ipython"
	_ "github.com/polyrepl/polyrepl/internal/driver/java"
	_ "github.com/polyrepl/polyrepl/internal/driver/julia"
	_ "github.com/polyrepl/polyrepl/internal/driver/jupyter"
	_ "github.com/polyrepl/polyrepl/internal/driver/lfortran"
	_ "github.com/polyrepl/polyrepl/internal/driver/matlab"
	_ "github.com/polyrepl/polyrepl/internal/driver/node"
	_ "github.com/polyrepl/polyrepl/internal/driver/octave"
	_ "github.com/polyrepl/polyrepl/internal/driver/python"
	_ "github.com/polyrepl/polyrepl/internal/driver/r"
	_ "github.com/polyrepl/polyrepl/internal/driver/ruby"
	_ "github.com/polyrepl/polyrepl/internal/driver/sh"
)
