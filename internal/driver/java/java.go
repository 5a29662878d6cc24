// Package java is the Java runtime: JShell's own engine (the JDK's
// jdk.jshell API) evaluating cells in an embedded worker, Worker.java, run
// by the JDK's java in source-file mode, in the worker driver family. A
// worker rather than a driven jshell prompt gives exact output, real
// interrupts (jshell itself stops a cell only on a terminal's Ctrl-C) and
// structured values and errors, each shown as jshell shows it.
package java

import (
	"bytes"
	_ "embed"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
)

//go:embed Worker.java
var serve []byte

// Vars.java and VarPath.java are the worker's looks (Inspects): more
// classes of the same program, appended to Worker.java (a program run in
// source-file mode is one file), using its imports.
var (
	//go:embed Vars.java
	looks []byte
	//go:embed VarPath.java
	paths []byte
)

// source is the worker program, joined when a session starts
// (worker.Runtime.Source).
func source() []byte { return bytes.Join([][]byte{serve, looks, paths}, []byte("\n")) }

// Runtime is Java's worker runtime. It keeps the worker family's default
// interrupt: SIGINT, which the worker turns into JShell's stop.
var Runtime = &worker.Runtime{
	Info: driver.Info{
		Exit: "System.exit()",
		Name: "java", Family: "worker", Ext: ".jsh",
		Exes: []string{"java"}, EnvVar: "POLYREPL_JAVA",
		Needs:  "a JDK 17 or newer, with jshell (Debian: openjdk-17-jdk-headless)",
		NoFork: "the JVM's garbage collector and compilers run on threads, which a fork does not copy",
		Limits: "cells run in the worker's JVM (JShell's local engine), so System.exit ends " +
			"the session; System.in reads ask (status input); an " +
			"interrupt stops the cell with Thread.stop, which Java 20 and " +
			"later no longer allow (kill the session there); a look's toString (polyrepl vars) " +
			"past its 0.2 s is stopped the same way, and on Java 20 and later left running, its " +
			"output dropped; jshell's /commands are not " +
			"available; starting takes seconds (a JVM and the compiler)",
		VersionArgs: []string{"-version"},
		ValueFormat: "{name} ==> {v}", // as jshell shows it
	},
	Source:   source,
	FileName: "java-worker.java",
	Args:     []string{"-XX:+UseSerialGC"},
	// The end marker is not on the command line, and results echo each
	// exec's nonce (Worker.java).
	SentinelEnv: true,
	CellNonce:   true,
	// System.in (Scanner, readLine) and a subprocess reading stdin ask.
	// The JVM reads on the cell's thread, not its first; Thread.stop
	// cannot free a thread blocked in that read, so an interrupt also
	// sends an empty line.
	Console:              true,
	ConsoleThreads:       true,
	ConsoleInterruptLine: true,
	// polyrepl vars: JShell's variables, methods and types, and what a
	// path (a.b, a[0], m["k"]) names, from their structure (Vars.java).
	Inspects: true,
}

func init() { driver.Register(worker.Driver{R: Runtime}) }
