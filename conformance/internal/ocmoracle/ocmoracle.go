// Package ocmoracle runs the upstream scheduler on one case. Scaffold: the helper building this
// family replaces this file.
package ocmoracle

import "fleetui.local/conformance/internal/casefile"

// Run schedules every placement of the case with the upstream code.
func Run(c *casefile.Case) casefile.Result {
	return casefile.Result{ID: c.ID, Error: "ocm oracle not built yet"}
}
