// Command oracle runs the upstream OCM and KubeFleet schedulers on conformance cases.
//
// It reads cases as JSON Lines on stdin (one casefile.Case per line) and writes one
// casefile.Result per line on stdout, in the same order, flushing after each, so a caller can
// keep one process and send cases one at a time.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"fleetui.local/conformance/internal/casefile"
	"fleetui.local/conformance/internal/fleetoracle"
	"fleetui.local/conformance/internal/ocmoracle"
)

// maxLine bounds one case; generated cases stay far below it.
const maxLine = 64 << 20

func main() {
	if err := serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "oracle:", err)
		os.Exit(2)
	}
}

func serve(in io.Reader, out io.Writer) error {
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 1<<20), maxLine)
	writer := bufio.NewWriter(out)
	encoder := json.NewEncoder(writer)
	for scanner.Scan() {
		var c casefile.Case
		if err := json.Unmarshal(scanner.Bytes(), &c); err != nil {
			return fmt.Errorf("reading a case: %w", err)
		}
		if err := encoder.Encode(run(&c)); err != nil {
			return err
		}
		if err := writer.Flush(); err != nil {
			return err
		}
	}
	return scanner.Err()
}

func run(c *casefile.Case) casefile.Result {
	switch c.Family {
	case "ocm":
		return ocmoracle.Run(c)
	case "fleet":
		return fleetoracle.Run(c)
	default:
		return casefile.Result{ID: c.ID, Error: fmt.Sprintf("unknown family %q (want ocm or fleet)", c.Family)}
	}
}
